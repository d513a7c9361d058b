//! Checks every ZIP-based package (docx, and the Office and OpenDocument
//! formats after it) needs before its entries are read or written back.

use std::io::{Read, Seek};

use zip::ZipArchive;
use zip::result::ZipError;

/// What makes a package unusable before any of it is translated.
#[derive(Debug)]
pub(crate) enum EntryProblem {
    /// An entry's local header cannot be read (the output copies every entry
    /// it does not translate, so one it could not copy fails the whole job
    /// after its translation).
    Unreadable(ZipError),
    /// An entry's path is unsafe to carry into an output package: absolute
    /// (`/x`, `\x`, `C:x`), climbing (`..` as a component, with `/` or `\`
    /// as separator) or holding a NUL. Such entries are never part of a valid
    /// package; they are how "zip slip" reaches a file system that unpacks
    /// the output.
    UnsafePath(String),
}

/// Checks every entry of `archive` (see [`EntryProblem`]).
pub(crate) fn check_entries<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
) -> Result<(), EntryProblem> {
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(EntryProblem::Unreadable)?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        if is_unsafe(&name) {
            return Err(EntryProblem::UnsafePath(name));
        }
    }
    Ok(())
}

fn is_unsafe(name: &str) -> bool {
    let bytes = name.as_bytes();
    name.starts_with(['/', '\\'])
        || name.contains('\0')
        || (bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':')
        || name.split(['/', '\\']).any(|part| part == "..")
}

#[cfg(test)]
mod tests {
    use super::is_unsafe;

    #[test]
    fn climbing_and_absolute_names_are_unsafe() {
        for name in [
            "../evil.xml",
            "word/../../x",
            "/etc/passwd",
            "\\x",
            "C:evil",
            "a\\..\\b",
            "a\0b",
        ] {
            assert!(is_unsafe(name), "{name}");
        }
        for name in [
            "word/document.xml",
            "[Content_Types].xml",
            "a..b/c",
            "docProps/core.xml",
        ] {
            assert!(!is_unsafe(name), "{name}");
        }
    }
}
