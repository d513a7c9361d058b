//! ZIP packages of XML parts — Office Open XML (Word, PowerPoint, Excel),
//! OpenDocument and InDesign — translated part by part and, within a part,
//! a chunk at a time ([`chunks`]), with paragraphs as segments.
//!
//! A [`Package`] names the translatable parts of its kind and the
//! [`Dialect`] of each ([`dialect`]). Those parts are read into skeletons
//! (see [`paragraph`]); on merge they are rewritten (compressed like the
//! original entries) and every other entry is copied raw — byte-identical,
//! compressed data included — in the original entry order ([`entries`]).

mod atoms;
mod chunks;
mod dialect;
mod edit;
mod entries;
mod paragraph;
mod pieces;
mod prescan;
mod skeleton;

use std::io::{Cursor, Read, Write};

use zip::ZipWriter;

use crate::FormatError;
use crate::slots::{Slots, Texts};
use crate::stream::Translator;
use crate::xml;
use skeleton::NodeList;

pub(crate) use dialect::{
    Breaks, CORE_PROPERTIES, DRAWING, Dialect, IDML, LangMark, OPEN_DOCUMENT, PLAIN, SPREADSHEET,
    WORD,
};
pub(crate) use edit::{Edit, append_child};
use entries::{MAX_PART_SIZE, damaged, open_entry, too_large};
pub(crate) use entries::{open_archive, read_entry, zip_error};

/// One kind of Office Open XML package: which parts are translated, in
/// which dialect, and the words of its errors.
pub(crate) struct Package {
    /// The format's name in messages (`DOCX`).
    pub kind: &'static str,
    /// What an OLE compound file of this extension is, for its refusal.
    pub legacy: &'static str,
    /// The part every package of the kind has (`word/document.xml`).
    pub main: &'static str,
    /// The other translatable parts, by name (translated in archive order).
    pub is_part: fn(&str) -> bool,
    /// The dialect of a translatable part, by name.
    pub dialect: fn(&str) -> &'static Dialect,
    /// The package of an entry that is a package of its own translated with
    /// this one (the workbook holding a chart's data), by name; packages
    /// embedded in an embedded one are copied as they are.
    pub embedded: fn(&str) -> Option<&'static Package>,
}

/// No entry of the package is a package translated with it.
pub(crate) fn no_embedded(_: &str) -> Option<&'static Package> {
    None
}

/// How [`translate`] goes through a package.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pass<'a> {
    /// Runs marked with another language than this one are kept.
    pub source: Option<&'a str>,
    /// Translated runs are marked with this language (BCP 47).
    pub lang: Option<&'a str>,
    /// Bytes of a part's XML a chunk holds before it is cut.
    pub chunk_size: usize,
    /// Whether the package is written (else only its segments are read).
    pub write: bool,
}

/// Bytes of a part's XML a chunk holds before it is cut ([`chunks`]): what a
/// translation holds of a part at a time, besides the output.
pub(crate) const CHUNK_SIZE: usize = 128 << 10;

/// A package read by [`extract`], translated again from its bytes on merge.
pub(crate) struct Skeleton {
    package: &'static Package,
    input: Vec<u8>,
    source: Option<String>,
    chunk_size: usize,
}

/// Why [`translate`] stopped.
#[derive(Debug)]
pub(crate) enum Stop<E> {
    /// The package could not be read or written.
    Format(FormatError),
    /// The translator failed.
    Translator(E),
}

impl<E> From<FormatError> for Stop<E> {
    fn from(e: FormatError) -> Self {
        Stop::Format(e)
    }
}

/// Reads the translatable parts of a `package` into segments; runs marked
/// with another language than `source` (when given) are kept.
pub(crate) fn extract(
    package: &'static Package,
    input: &[u8],
    source: Option<&str>,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    extract_in_chunks(package, input, source, CHUNK_SIZE)
}

/// [`extract`] cutting parts into chunks of `chunk_size` bytes (the
/// segments are the same whatever the size).
pub(crate) fn extract_in_chunks(
    package: &'static Package,
    input: &[u8],
    source: Option<&str>,
    chunk_size: usize,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let mut segments = Vec::new();
    let mut collect = |batch: &[String], _: f32| {
        segments.extend_from_slice(batch);
        Ok::<_, std::convert::Infallible>(Vec::new())
    };
    let pass = Pass {
        source,
        lang: None,
        chunk_size,
        write: false,
    };
    match translate(package, input, pass, &mut collect) {
        Ok(_) => {}
        Err(Stop::Format(e)) => return Err(e),
        Err(Stop::Translator(never)) => match never {},
    }
    let skeleton = Skeleton {
        package,
        input: input.to_vec(),
        source: source.map(str::to_owned),
        chunk_size,
    };
    Ok((segments, skeleton))
}

impl crate::filter::Skeleton for Skeleton {
    /// Writes the package with the translated parts (one translation per
    /// segment of [`extract`], in order), translated runs marked with `lang`
    /// (BCP 47) where given; every other entry is copied raw.
    fn merge(
        &self,
        _source: &[String],
        translated: &[String],
        lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        let expected = translated.len();
        let mut rest = translated;
        let mut seen = 0;
        let mut take = |batch: &[String], _: f32| {
            seen += batch.len();
            if batch.len() > rest.len() {
                return Err(FormatError::Mismatch {
                    expected: seen,
                    got: expected,
                });
            }
            let (now, later) = rest.split_at(batch.len());
            rest = later;
            Ok(now.to_vec())
        };
        let pass = Pass {
            source: self.source.as_deref(),
            lang,
            chunk_size: self.chunk_size,
            write: true,
        };
        let out = match translate(self.package, &self.input, pass, &mut take) {
            Ok(out) => out.unwrap_or_default(),
            Err(Stop::Format(e) | Stop::Translator(e)) => return Err(e),
        };
        if !rest.is_empty() {
            return Err(FormatError::Mismatch {
                expected: expected - rest.len(),
                got: expected,
            });
        }
        Ok(out)
    }
}

/// Translates a `package` part by part and, within a part, a chunk at a time
/// ([`chunks`], of about `chunk_size` bytes): each chunk's segments go to
/// `translator`, and (when `write`) the chunk is written to the output as its translations come back, so
/// what is held besides the output is one chunk, whatever the file's size.
/// Parts are taken in archive order; every other entry is copied raw
/// (compressed bytes included), as is a part the translation leaves as it
/// was. Runs marked with another language than `source` (when given) are
/// kept; translated runs are marked with `lang`. An embedded package
/// ([`Package::embedded`]) is translated in its turn, as a part; one that
/// cannot be read is copied as it is. A package the translation leaves as it
/// was is written back byte for byte.
pub(crate) fn translate<E>(
    package: &Package,
    input: &[u8],
    pass: Pass<'_>,
    translator: &mut Translator<'_, E>,
) -> Result<Option<Vec<u8>>, Stop<E>> {
    let written = walk(package, input, pass, true, translator)?;
    Ok(written.map(|(bytes, changed)| if changed { bytes } else { input.to_vec() }))
}

/// [`translate`], with the embedded packages when `embeds`; the package
/// written (when `pass.write`) and whether any part changed.
fn walk<E>(
    package: &Package,
    input: &[u8],
    pass: Pass<'_>,
    embeds: bool,
    translator: &mut Translator<'_, E>,
) -> Result<Option<(Vec<u8>, bool)>, Stop<E>> {
    let Pass {
        source,
        lang,
        chunk_size,
        write,
    } = pass;
    let kind = package.kind;
    let mut archive = open_archive(package, input)?;
    let names = entries::names(package, &mut archive)?;
    let embedded = |name: &str| (package.embedded)(name).filter(|_| embeds);
    let is_part = |name: &str| name == package.main || (package.is_part)(name);
    let mut total = 0u64;
    for (index, name) in names.iter().enumerate() {
        if is_part(name) || embedded(name).is_some() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| zip_error(kind, e))?;
            total += entry.size();
        }
    }
    let total = total.max(1) as f32;

    let mut writer = None;
    if write {
        let mut w = ZipWriter::new(Cursor::new(Vec::with_capacity(
            input.len() + input.len() / 4,
        )));
        if !archive.comment().is_empty() {
            w.set_raw_comment(archive.comment().into())
                .map_err(entries::write_error)?;
        }
        writer = Some(w);
    }
    let mut done = 0u64;
    let mut any_changed = false;
    for (index, name) in names.iter().enumerate() {
        if let Some(inner) = embedded(name) {
            let bytes = read_entry(kind, &mut archive, index, name)?;
            let share = (done as f32, bytes.len() as f32, total);
            let out = translate_embedded(inner, &bytes, pass, share, translator)?;
            done += bytes.len() as u64;
            any_changed |= out.is_some();
            if let Some(w) = writer.as_mut() {
                match out {
                    Some(out) => entries::write(kind, &mut archive, index, name, &out, w)?,
                    None => entries::copy(kind, &mut archive, index, w)?,
                }
            }
            continue;
        }
        if !is_part(name) {
            if let Some(w) = writer.as_mut() {
                entries::copy(kind, &mut archive, index, w)?;
            }
            continue;
        }
        let dialect = (package.dialect)(name);
        let part_source = match source {
            Some(source) => {
                let file = open_entry(kind, &mut archive, index, name)?;
                prescan::marks_language(file, dialect, source).then_some(source)
            }
            None => None,
        };
        if let Some(w) = writer.as_mut() {
            entries::start(kind, &mut archive, index, name, w)?;
        }
        let mut code_styles: Vec<String> = dialect
            .code_styles
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        if dialect.mixed && !code_styles.is_empty() {
            let file = open_entry(kind, &mut archive, index, name)?;
            code_styles.extend(prescan::derived_styles(file, dialect.code_styles));
        }
        let file = open_entry(kind, &mut archive, index, name)?;
        let mut chunks = chunks::Chunker::new(file, dialect, chunk_size, MAX_PART_SIZE);
        let part = Part {
            kind,
            name,
            dialect,
            code_styles: &code_styles,
            source: part_source,
            lang,
            done,
            total,
        };
        let changed = part.translate(&mut chunks, writer.as_mut(), translator)?;
        any_changed |= changed;
        done += chunks.position();
        drop(chunks);
        if let Some(w) = writer.as_mut()
            && !changed
        {
            // A part the translation leaves as it was keeps its compressed bytes.
            w.abort_file().map_err(entries::write_error)?;
            entries::copy(kind, &mut archive, index, w)?;
        }
    }
    match writer {
        Some(w) => {
            let cursor = w.finish().map_err(entries::write_error)?;
            Ok(Some((cursor.into_inner(), any_changed)))
        }
        None => Ok(None),
    }
}

/// An embedded package translated with its host ([`Package::embedded`]):
/// its output when the translation changed it; `None` when it did not, or
/// the package cannot be read (it is then copied as it is). Progress is
/// reported within the host's: `share` is where the entry starts, its size,
/// and the host's total.
fn translate_embedded<E>(
    inner: &Package,
    bytes: &[u8],
    pass: Pass<'_>,
    share: (f32, f32, f32),
    translator: &mut Translator<'_, E>,
) -> Result<Option<Vec<u8>>, Stop<E>> {
    let (start, size, total) = share;
    let mut within = |batch: &[String], read: f32| translator(batch, (start + read * size) / total);
    match walk(inner, bytes, pass, false, &mut within) {
        Ok(Some((out, true))) => Ok(Some(out)),
        Ok(_) | Err(Stop::Format(_)) => Ok(None),
        Err(Stop::Translator(e)) => Err(Stop::Translator(e)),
    }
}

/// One translatable part being translated.
struct Part<'a> {
    kind: &'static str,
    name: &'a str,
    dialect: &'static Dialect,
    /// The source language, when the part's language marks are trusted.
    source: Option<&'a str>,
    /// Styles marking code: the dialect's and those derived from them
    /// ([`prescan::derived_styles`]).
    code_styles: &'a [String],
    lang: Option<&'a str>,
    /// Bytes of the package's translatable parts read before this one, and
    /// in all (the translator's progress).
    done: u64,
    total: f32,
}

impl Part<'_> {
    /// Translates the part's chunks, writing each to `writer` (the part's
    /// entry, started); whether the output differs from the part.
    fn translate<R: Read, E>(
        &self,
        chunks: &mut chunks::Chunker<R>,
        mut writer: Option<&mut ZipWriter<Cursor<Vec<u8>>>>,
        translator: &mut Translator<'_, E>,
    ) -> Result<bool, Stop<E>> {
        let mut changed = false;
        let mut first = true;
        while let Some(chunk) = chunks.next_chunk().map_err(|e| self.chunk_error(e))? {
            let tree = xml::parse(&chunk.text).map_err(|detail| self.parse_error(&detail))?;
            let mut slots = Slots::default();
            let mut nodes = NodeList::default();
            paragraph::PartExtractor::new(
                self.dialect,
                &chunk.text,
                &mut slots,
                self.source,
                self.code_styles,
            )
            .copy_nodes(&tree, &mut nodes);
            drop(tree);
            let (segments, map) = slots.finish();
            let translated = if segments.is_empty() {
                Vec::new()
            } else {
                let read = (self.done + chunks.position()) as f32 / self.total;
                translator(&segments, read).map_err(Stop::Translator)?
            };
            let Some(writer) = writer.as_deref_mut() else {
                continue;
            };
            if translated.len() != segments.len() {
                return Err(FormatError::Mismatch {
                    expected: segments.len(),
                    got: translated.len(),
                }
                .into());
            }
            let mut xml = String::with_capacity(chunk.text.len() + chunk.text.len() / 4);
            let prefix_len = chunk.body.start;
            skeleton::Writer {
                dialect: self.dialect,
                src: &chunk.text,
                texts: Texts::new(&map, &segments, &translated),
                lang: self.lang,
            }
            .render(&mut xml, &nodes.0);
            let suffix = &chunk.text[chunk.body.end..];
            // The wrapper's tags are copied as written: only the body is the part's.
            let body = xml
                .get(prefix_len..)
                .and_then(|rest| rest.strip_suffix(suffix))
                .filter(|_| xml.get(..prefix_len) == chunk.text.get(..prefix_len))
                .ok_or_else(|| {
                    FormatError::Write(format!("{} was rewritten outside its text", self.name))
                })?;
            changed |= body != &chunk.text[chunk.body.clone()];
            let head = if first && chunks.bom { "\u{feff}" } else { "" };
            writer
                .write_all(head.as_bytes())
                .and_then(|()| writer.write_all(body.as_bytes()))
                .map_err(|e| FormatError::Write(e.to_string()))?;
            first = false;
        }
        Ok(changed)
    }

    fn chunk_error(&self, error: chunks::ChunkError) -> FormatError {
        let (kind, name) = (self.kind, self.name);
        match error {
            chunks::ChunkError::Read => damaged(kind),
            chunks::ChunkError::TooLarge => too_large(kind, name),
            chunks::ChunkError::Encoding { utf16: true } => FormatError::unsupported(format!(
                "The {kind} document stores {name} as UTF-16, which is not supported"
            )),
            chunks::ChunkError::Encoding { utf16: false } => FormatError::corrupt(format!(
                "The file is not a valid {kind} document: {name} is not valid UTF-8"
            )),
            chunks::ChunkError::TooDeep => self.parse_error("elements nested too deeply"),
            chunks::ChunkError::Unclosed(open) => self.parse_error(&format!(
                "the document ends before <{open}> is closed (the file may be truncated)"
            )),
        }
    }

    fn parse_error(&self, detail: &str) -> FormatError {
        let (kind, name) = (self.kind, self.name);
        FormatError::corrupt(if detail == xml::DOCTYPE {
            format!(
                "The file is not a valid {kind} document: {name} declares a DOCTYPE \
                 (entity declarations are not allowed in documents)"
            )
        } else {
            format!(
                "The file is not a valid {kind} document: {name} is not well-formed XML ({detail})"
            )
        })
    }
}
