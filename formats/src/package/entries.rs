//! A package's ZIP archive: opened with its checks (empty, legacy or
//! encrypted Office files, unsafe entry paths), entries read within a size
//! bound whatever their headers claim, and ZIP errors in words.

use std::io::{Cursor, Read, Write};

use zip::result::ZipError;
use zip::{ZipArchive, ZipWriter};

use super::Package;
use crate::FormatError;
use crate::archive::EntryProblem;

/// Larger XML parts are refused (a guard against ZIP bombs).
pub(super) const MAX_PART_SIZE: u64 = 256 << 20;

/// Magic number of OLE compound files: legacy `.doc` and encrypted Office files.
const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// The message of a truncated or damaged package.
pub(super) fn damaged(kind: &str) -> FormatError {
    FormatError::corrupt(format!(
        "The file is not a valid {kind} document: the ZIP archive is truncated or damaged"
    ))
}

pub(crate) fn open_archive<'i>(
    package: &Package,
    input: &'i [u8],
) -> Result<ZipArchive<Cursor<&'i [u8]>>, FormatError> {
    let kind = package.kind;
    if input.is_empty() {
        return Err(FormatError::corrupt("The file is empty"));
    }
    if input.starts_with(&OLE_MAGIC) {
        return Err(FormatError::unsupported(format!(
            "The file is a password-protected or {} document; only unprotected .{} \
             documents can be translated",
            package.legacy,
            kind.to_ascii_lowercase()
        )));
    }
    let mut archive = ZipArchive::new(Cursor::new(input)).map_err(|e| {
        if input.starts_with(b"PK") {
            zip_error(kind, e)
        } else {
            FormatError::corrupt(format!(
                "The file is not a valid {kind} document: it is not a ZIP archive"
            ))
        }
    })?;
    match crate::archive::check_entries(&mut archive) {
        Ok(()) => Ok(archive),
        Err(EntryProblem::Unreadable(e)) => Err(zip_error(kind, e)),
        Err(EntryProblem::UnsafePath(name)) => Err(FormatError::corrupt(format!(
            "The file is not a valid {kind} document: its entry {name:?} has an unsafe path \
             (absolute or climbing out of the package)"
        ))),
    }
}

pub(crate) fn zip_error(kind: &str, error: ZipError) -> FormatError {
    match error {
        ZipError::InvalidPassword => {
            FormatError::unsupported(format!("The {kind} document is password-protected"))
        }
        ZipError::UnsupportedArchive(what) => FormatError::unsupported(format!(
            "The {kind} document uses an unsupported ZIP feature ({what})"
        )),
        ZipError::CompressionMethodNotSupported(method) => FormatError::unsupported(format!(
            "The {kind} document uses an unsupported ZIP compression method ({method})"
        )),
        _ => damaged(kind),
    }
}

/// The message of a part larger than [`MAX_PART_SIZE`].
pub(super) fn too_large(kind: &str, name: &str) -> FormatError {
    FormatError::unsupported(format!(
        "The {kind} document is too large to translate ({name} is over {} MiB)",
        MAX_PART_SIZE >> 20
    ))
}

/// Entry `index` (`name`) opened for reading, refused when encrypted or
/// when its header claims more than [`MAX_PART_SIZE`] (reading it stops
/// past that, whatever the header claims).
pub(super) fn open_entry<'a>(
    kind: &str,
    archive: &'a mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
) -> Result<impl Read + 'a, FormatError> {
    let file = archive.by_index(index).map_err(|e| zip_error(kind, e))?;
    if file.encrypted() {
        return Err(FormatError::unsupported(format!(
            "The {kind} document is password-protected"
        )));
    }
    if file.size() > MAX_PART_SIZE {
        return Err(too_large(kind, name));
    }
    Ok(file.take(MAX_PART_SIZE + 1))
}

/// The bytes of entry `index` (`name`), refused when encrypted or larger
/// than [`MAX_PART_SIZE`] (whatever its header claims).
pub(crate) fn read_entry(
    kind: &str,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
) -> Result<Vec<u8>, FormatError> {
    let mut bytes = Vec::new();
    open_entry(kind, archive, index, name)?
        .read_to_end(&mut bytes)
        .map_err(|_| damaged(kind))?;
    if bytes.len() as u64 > MAX_PART_SIZE {
        return Err(too_large(kind, name));
    }
    Ok(bytes)
}

/// The names of the package's entries, in archive order; refused when the
/// package's main part is missing.
pub(super) fn names(
    package: &Package,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
) -> Result<Vec<String>, FormatError> {
    let kind = package.kind;
    let mut names = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        match archive.name_for_index(index) {
            Some(Ok(name)) => names.push(name.into_owned()),
            Some(Err(e)) => return Err(zip_error(kind, e)),
            None => return Err(damaged(kind)),
        }
    }
    if !names.iter().any(|n| n == package.main) {
        return Err(FormatError::corrupt(format!(
            "The file is a ZIP archive but not a {kind} document ({} is missing)",
            package.main
        )));
    }
    Ok(names)
}

/// The package could not be written.
pub(super) fn write_error(e: impl std::fmt::Display) -> FormatError {
    FormatError::Write(e.to_string())
}

/// Copies entry `index` to `writer` raw: compressed bytes and all.
pub(super) fn copy(
    kind: &str,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    writer: &mut ZipWriter<Cursor<Vec<u8>>>,
) -> Result<(), FormatError> {
    let entry = archive
        .by_index_raw(index)
        .map_err(|e| zip_error(kind, e))?;
    writer.raw_copy_file(entry).map_err(write_error)
}

/// Starts entry `index` (`name`) in `writer`, with its original options
/// (compression, times).
pub(super) fn start(
    kind: &str,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
    writer: &mut ZipWriter<Cursor<Vec<u8>>>,
) -> Result<(), FormatError> {
    let entry = archive
        .by_index_raw(index)
        .map_err(|e| zip_error(kind, e))?;
    let options = entry.options();
    drop(entry);
    writer.start_file(name, options).map_err(write_error)
}

/// Writes entry `index` (`name`) anew as `bytes`, with its original
/// options.
pub(super) fn write(
    kind: &str,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
    bytes: &[u8],
    writer: &mut ZipWriter<Cursor<Vec<u8>>>,
) -> Result<(), FormatError> {
    start(kind, archive, index, name, writer)?;
    writer.write_all(bytes).map_err(write_error)
}
