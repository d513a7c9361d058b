//! SCORM packages (`.zip` with an `imsmanifest.xml`): every HTML page
//! (`.html`, `.htm`) and XML file (generic XML with ITS) of the package is
//! translated by its own filter; in `imsmanifest.xml` only the titles and
//! descriptions (`title`, and the LOM `string`/`langstring` text) are —
//! not LOM vocabulary terms (a `source` or `value`, or text in `x-none`),
//! which learning systems match as written.
//! Scripts, style sheets, media and every other entry are copied byte for
//! byte, in their order, with their compression; an entry whose filter
//! cannot read it is copied as it is. The package checks of the Office
//! formats apply (unsafe paths, oversized or encrypted entries refused).

use std::io::{Cursor, Write};

use zip::{ZipArchive, ZipWriter};

use crate::package::{self, Package};
use crate::{DocumentFormat, Extracted, FormatError};

/// The manifest every SCORM package has.
const MANIFEST: &str = "imsmanifest.xml";

static SCORM: Package = Package {
    kind: "SCORM",
    legacy: "legacy",
    main: MANIFEST,
    is_part: |_| false,
    dialect: |_| &package::PLAIN,
    embedded: package::no_embedded,
};

/// The package and its translated entries.
pub(crate) struct Skeleton {
    input: Vec<u8>,
    /// Entry index, its extracted document, where its segments start.
    entries: Vec<(usize, Extracted, usize)>,
}

impl std::fmt::Debug for Skeleton {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skeleton")
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

/// The filter of an entry, by its name.
fn filter_of(name: &str) -> Option<DocumentFormat> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with('/') {
        return None;
    }
    if lower == MANIFEST {
        return Some(DocumentFormat::Xml);
    }
    match lower.rsplit_once('.')?.1 {
        "html" | "htm" => Some(DocumentFormat::Html),
        "xml" => Some(DocumentFormat::Xml),
        _ => None,
    }
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let mut archive = package::open_archive(&SCORM, input)?;
    let names: Vec<(usize, String)> = (0..archive.len())
        .filter_map(|i| {
            archive
                .name_for_index(i)
                .and_then(Result::ok)
                .map(|n| (i, n.into_owned()))
        })
        .collect();
    if !names.iter().any(|(_, n)| n == MANIFEST) {
        return Err(FormatError::corrupt(
            "The file is a ZIP archive but not a SCORM package (imsmanifest.xml is missing)",
        ));
    }
    let mut segments = Vec::new();
    let mut entries = Vec::new();
    for (index, name) in names {
        let Some(format) = filter_of(&name) else {
            continue;
        };
        let bytes = package::read_entry("SCORM", &mut archive, index, &name)?;
        let extracted = if name == MANIFEST {
            crate::its::extract_only(&bytes, &["title", "string", "langstring"])
                .map(|read| Extracted::of(format, read.into()))
        } else {
            crate::extract(format, &bytes)
        };
        // A page or file its filter cannot read is kept as it is.
        let Ok(extracted) = extracted else { continue };
        if extracted.segments().is_empty() {
            continue;
        }
        let start = segments.len();
        segments.extend(extracted.segments().iter().cloned());
        entries.push((index, extracted, start));
    }
    Ok((
        segments,
        Skeleton {
            input: input.to_vec(),
            entries,
        },
    ))
}

impl crate::filter::Skeleton for Skeleton {
    fn merge(
        &self,
        _source: &[String],
        translated: &[String],
        _lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        let mut archive = ZipArchive::new(Cursor::new(self.input.as_slice()))
            .map_err(|e| package::zip_error("SCORM", e))?;
        let mut writer = ZipWriter::new(Cursor::new(Vec::with_capacity(self.input.len())));
        let write_error = |e: &dyn std::fmt::Display| FormatError::Write(e.to_string());
        for index in 0..archive.len() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| package::zip_error("SCORM", e))?;
            let Some((_, extracted, start)) = self.entries.iter().find(|(i, ..)| *i == index)
            else {
                writer.raw_copy_file(entry).map_err(|e| write_error(&e))?;
                continue;
            };
            let count = extracted.segments().len();
            let slice = translated
                .get(*start..start + count)
                .ok_or(FormatError::Mismatch {
                    expected: start + count,
                    got: translated.len(),
                })?;
            if slice == extracted.segments() {
                writer.raw_copy_file(entry).map_err(|e| write_error(&e))?;
                continue;
            }
            let bytes = extracted.merge(slice)?;
            let name = entry
                .name()
                .map_err(|e| package::zip_error("SCORM", e))?
                .into_owned();
            let options = entry.options();
            drop(entry);
            writer
                .start_file(name, options)
                .map_err(|e| write_error(&e))?;
            writer.write_all(&bytes).map_err(|e| write_error(&e))?;
        }
        let cursor = writer.finish().map_err(|e| write_error(&e))?;
        Ok(cursor.into_inner())
    }
}

#[cfg(test)]
mod tests;
