//! The fonts translated PDFs are set in: every TrueType and OpenType file
//! below the configured folders (Debian's fonts-liberation2 and
//! fonts-dejavu-core by default; fonts-noto-* for other scripts), read
//! once, when the first PDF needs them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tolk_formats::Fonts;

/// Where fonts are read from when nothing else is configured.
pub const DEFAULT_DIRS: &str = "/usr/share/fonts/truetype:/usr/share/fonts/opentype";

/// A font file larger than this is left out (a whole-CJK collection would
/// hold that much memory in every worker).
const MAX_FILE: u64 = 48 << 20;

/// The fonts of some folders, read on first use; cheap to clone.
#[derive(Clone)]
pub struct PdfFonts {
    dirs: Arc<Vec<PathBuf>>,
    loaded: Arc<OnceLock<Fonts>>,
}

impl Default for PdfFonts {
    fn default() -> Self {
        Self::new(std::env::split_paths(DEFAULT_DIRS).collect())
    }
}

impl PdfFonts {
    /// The fonts below `dirs` (searched recursively).
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        Self {
            dirs: Arc::new(dirs),
            loaded: Arc::new(OnceLock::new()),
        }
    }

    /// The fonts, read the first time (blocking: call it off the async
    /// threads).
    pub fn get(&self) -> Fonts {
        self.loaded
            .get_or_init(|| {
                let mut files = Vec::new();
                for dir in self.dirs.iter() {
                    collect(dir, 0, &mut files);
                }
                let fonts = Fonts::from_files(files);
                tracing::info!(families = ?fonts.families(), "fonts for PDF output read");
                fonts
            })
            .clone()
    }
}

fn collect(dir: &Path, depth: usize, files: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.is_dir() && depth < 8 {
            collect(&path, depth + 1, files);
            continue;
        }
        let font = path.extension().is_some_and(|e| {
            ["ttf", "otf", "ttc"]
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x))
        });
        if font && meta.len() <= MAX_FILE {
            match std::fs::read(&path) {
                Ok(bytes) => files.push(bytes),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "a font could not be read")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_fonts_gives_none() {
        let dir = std::env::temp_dir().join(format!("tolk-no-fonts-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/readme.ttf"), b"not a font").unwrap();
        assert!(PdfFonts::new(vec![dir]).get().is_empty());
    }
}
