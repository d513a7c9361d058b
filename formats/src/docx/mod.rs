//! Word documents (`.docx`): the ZIP package.
//!
//! The translatable parts — `word/document.xml`, then `word/header*.xml`,
//! `word/footer*.xml`, `word/footnotes.xml` and `word/endnotes.xml` in archive
//! order — are read into skeletons (see [`paragraph`]). On merge those parts
//! are rewritten (compressed like the original entries) and every other entry
//! is copied raw — byte-identical, compressed data included — in the original
//! entry order.

mod paragraph;
mod skeleton;
mod xml;

#[cfg(test)]
mod testdoc;
#[cfg(test)]
mod tests;

use std::io::{Cursor, Read, Write};

use zip::result::ZipError;
use zip::{ZipArchive, ZipWriter};

use crate::archive::EntryProblem;

use crate::FormatError;
use crate::slots::{SlotMap, Slots, Texts};
use skeleton::{Node, NodeList};

/// Larger XML parts are refused (a guard against ZIP bombs).
const MAX_PART_SIZE: u64 = 256 << 20;

/// Magic number of OLE compound files: legacy `.doc` and encrypted Office files.
const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

const DAMAGED: &str =
    "The file is not a valid DOCX document: the ZIP archive is truncated or damaged";

/// The package and the skeletons of its translatable parts.
#[derive(Debug)]
pub(crate) struct Skeleton {
    input: Vec<u8>,
    parts: Vec<PartSkeleton>,
    map: SlotMap,
}

#[derive(Debug)]
struct PartSkeleton {
    /// Index of the entry in the archive.
    index: usize,
    /// Whether the part started with a UTF-8 byte-order mark (not in `src`).
    bom: bool,
    src: String,
    nodes: Vec<Node>,
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let mut archive = open_archive(input)?;
    let mut names = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        match archive.name_for_index(index) {
            Some(Ok(name)) => names.push((index, name.into_owned())),
            Some(Err(e)) => return Err(zip_error(e)),
            None => return Err(FormatError::corrupt(DAMAGED)),
        }
    }
    let Some(document) = names.iter().position(|(_, n)| n == "word/document.xml") else {
        return Err(FormatError::corrupt(
            "The file is a ZIP archive but not a DOCX document (word/document.xml is missing)",
        ));
    };
    let others = names
        .iter()
        .enumerate()
        .filter(|&(i, (_, name))| i != document && is_translatable_part(name));
    let order: Vec<(usize, String)> = std::iter::once(&names[document])
        .chain(others.map(|(_, entry)| entry))
        .cloned()
        .collect();

    let mut slots = Slots::default();
    let mut parts = Vec::with_capacity(order.len());
    for (index, name) in order {
        let text = read_part(&mut archive, index, &name)?;
        let (bom, src) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest.to_owned()),
            None => (false, text),
        };
        let nodes = {
            let tree = xml::parse(&src).map_err(|detail| {
                FormatError::corrupt(format!(
                    "The file is not a valid DOCX document: {name} is not well-formed XML ({detail})"
                ))
            })?;
            let mut out = NodeList::default();
            paragraph::PartExtractor::new(&src, &mut slots).copy_nodes(&tree, &mut out);
            out.0
        };
        parts.push(PartSkeleton {
            index,
            bom,
            src,
            nodes,
        });
    }
    let (segments, map) = slots.finish();
    Ok((
        segments,
        Skeleton {
            input: input.to_vec(),
            parts,
            map,
        },
    ))
}

/// Headers, footers, footnotes and endnotes of the main document.
fn is_translatable_part(name: &str) -> bool {
    let Some(file) = name.strip_prefix("word/") else {
        return false;
    };
    !file.contains('/')
        && file.ends_with(".xml")
        && (file.starts_with("header")
            || file.starts_with("footer")
            || file == "footnotes.xml"
            || file == "endnotes.xml")
}

fn open_archive(input: &[u8]) -> Result<ZipArchive<Cursor<&[u8]>>, FormatError> {
    if input.is_empty() {
        return Err(FormatError::corrupt("The file is empty"));
    }
    if input.starts_with(&OLE_MAGIC) {
        return Err(FormatError::unsupported(
            "The file is a password-protected or legacy Word (.doc) document; \
             only unprotected .docx documents can be translated",
        ));
    }
    let mut archive = ZipArchive::new(Cursor::new(input)).map_err(|e| {
        if input.starts_with(b"PK") {
            zip_error(e)
        } else {
            FormatError::corrupt("The file is not a valid DOCX document: it is not a ZIP archive")
        }
    })?;
    match crate::archive::check_entries(&mut archive) {
        Ok(()) => Ok(archive),
        Err(EntryProblem::Unreadable(e)) => Err(zip_error(e)),
        Err(EntryProblem::UnsafePath(name)) => Err(FormatError::corrupt(format!(
            "The file is not a valid DOCX document: its entry {name:?} has an unsafe path \
             (absolute or climbing out of the package)"
        ))),
    }
}

fn zip_error(error: ZipError) -> FormatError {
    match error {
        ZipError::InvalidPassword => {
            FormatError::unsupported("The DOCX document is password-protected")
        }
        ZipError::UnsupportedArchive(what) => FormatError::unsupported(format!(
            "The DOCX document uses an unsupported ZIP feature ({what})"
        )),
        ZipError::CompressionMethodNotSupported(method) => FormatError::unsupported(format!(
            "The DOCX document uses an unsupported ZIP compression method ({method})"
        )),
        _ => FormatError::corrupt(DAMAGED),
    }
}

/// Reads a part as text.
fn read_part(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
) -> Result<String, FormatError> {
    let file = archive.by_index(index).map_err(zip_error)?;
    if file.encrypted() {
        return Err(FormatError::unsupported(
            "The DOCX document is password-protected",
        ));
    }
    let too_large = || {
        FormatError::unsupported(format!(
            "The DOCX document is too large to translate ({name} is over {} MiB)",
            MAX_PART_SIZE >> 20
        ))
    };
    if file.size() > MAX_PART_SIZE {
        return Err(too_large());
    }
    let capacity = usize::try_from(file.size()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    file.take(MAX_PART_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| FormatError::corrupt(DAMAGED))?;
    if bytes.len() as u64 > MAX_PART_SIZE {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            FormatError::unsupported(format!(
                "The DOCX document stores {name} as UTF-16, which is not supported"
            ))
        } else {
            FormatError::corrupt(format!(
                "The file is not a valid DOCX document: {name} is not valid UTF-8"
            ))
        }
    })
}

impl Skeleton {
    pub(crate) fn merge(
        &self,
        source: &[String],
        translated: &[String],
    ) -> Result<Vec<u8>, FormatError> {
        let texts = Texts::new(&self.map, source, translated);
        let mut archive = ZipArchive::new(Cursor::new(self.input.as_slice())).map_err(zip_error)?;
        let mut writer = ZipWriter::new(Cursor::new(Vec::with_capacity(
            self.input.len() + self.input.len() / 4,
        )));
        let write_error = |e: &dyn std::fmt::Display| FormatError::Write(e.to_string());
        if !archive.comment().is_empty() {
            writer
                .set_raw_comment(archive.comment().into())
                .map_err(|e| write_error(&e))?;
        }
        for index in 0..archive.len() {
            let entry = archive.by_index_raw(index).map_err(zip_error)?;
            let Some(part) = self.parts.iter().find(|p| p.index == index) else {
                writer.raw_copy_file(entry).map_err(|e| write_error(&e))?;
                continue;
            };
            let name = entry.name().map_err(zip_error)?.into_owned();
            let options = entry.options();
            drop(entry);
            let mut xml = String::with_capacity(part.src.len() + part.src.len() / 4 + 3);
            if part.bom {
                xml.push('\u{feff}');
            }
            skeleton::render(&mut xml, &part.src, &part.nodes, texts);
            writer
                .start_file(name, options)
                .map_err(|e| write_error(&e))?;
            writer
                .write_all(xml.as_bytes())
                .map_err(|e| write_error(&e))?;
        }
        let cursor = writer.finish().map_err(|e| write_error(&e))?;
        Ok(cursor.into_inner())
    }
}
