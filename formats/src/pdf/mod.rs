//! PDF: translated in place, page by page. Each page's content stream is
//! read for the text it shows ([`text`]), its glyphs grouped into lines and
//! paragraphs ([`layout`]): one segment per paragraph, then the document
//! outline's titles and the document's Title and Subject. Writing back
//! ([`write`]) removes the original text of every translated paragraph from
//! the content stream (its operators replaced by ones that move as far and
//! paint nothing) and sets the translation in the paragraph's box
//! ([`typeset`]) in an embedded subset of the closest installed face
//! ([`fonts`], [`embed`]). Pages, their sizes, images, vector art, links,
//! annotations and form fields stay as they are; in a tagged PDF the
//! translation joins the structure of its original ([`tags`]).
//!
//! A page that shows no text but an image covering most of it is a scan:
//! its image is read by OCR and the translation painted over it, with an
//! invisible text layer ([`scan`]).
//!
//! Left as they are (and so in the source language): text in form XObjects,
//! rotated or invisible text, text in Type3 fonts or in composite fonts
//! without a `ToUnicode` map. Each reason but invisibility is a note of
//! the document ([`crate::Extracted::notes`]) with the pages it is on.

mod decode;
mod embed;
pub(crate) mod fonts;
mod grid;
mod layout;
pub(crate) mod reflow;
mod scan;
mod tags;
mod text;
mod typeset;
pub(crate) mod watermark;
mod write;
mod xmp;
mod xobjects;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::rc::Rc;

use lopdf::content::Content;
use lopdf::{Document as Pdf, LoadOptions, ObjectId};

use crate::filter::Document;
use crate::{ExtractOptions, FormatError, inline};
use decode::PdfFont;
use fonts::Fonts;
use layout::{Paragraph, Run};
use text::{Left, Marking, Show};

/// The most a page's content may inflate to.
const CONTENT_LIMIT: usize = 64 << 20;
/// The most any stream may inflate to while the file is read.
const STREAM_LIMIT: usize = 64 << 20;
/// The most pages a PDF may have.
pub const MAX_PAGES: usize = 2000;

/// A show operator whose text is removed, and how it still moves.
#[derive(Debug, Clone)]
struct Removed {
    op: usize,
    kind: Show,
    advance: f32,
    scale: f32,
}

impl Removed {
    fn of(shown: &text::Shown) -> Self {
        Removed {
            op: shown.op,
            kind: shown.kind,
            advance: shown.advance,
            scale: shown.scale,
        }
    }
}

/// A translated paragraph: its segment, and the look of each tag in it.
struct Block {
    paragraph: Paragraph,
    segment: usize,
    tags: Vec<(u32, Run)>,
    /// Where its original text lay in the marked content: the first
    /// sequence with an id, and whether all of it was an artifact.
    marking: Marking,
    /// The ids of all the sequences its original text lay in, in order.
    mcids: Vec<i64>,
}

/// What a page's translation needs: its translated paragraphs and the
/// operators their text came from.
struct Page {
    id: ObjectId,
    paragraphs: Vec<Block>,
    removed: Vec<Removed>,
    center: f32,
    /// The page's scanned images, read by OCR.
    scans: Vec<scan::Scan>,
    /// The show operators of the text layer a scanned page had (removed
    /// when a translation is painted over it).
    layer: Vec<Removed>,
}

/// Where a segment outside the pages goes.
enum Field {
    /// An outline item's title.
    Outline(ObjectId),
    /// An entry of the document information dictionary.
    Info(&'static [u8]),
}

/// Everything of a PDF but its translatable text.
struct Skeleton {
    pdf: Pdf,
    pages: Vec<Page>,
    fields: Vec<(Field, usize)>,
    fonts: Fonts,
}

/// Reads a PDF: one segment per paragraph of its pages, then its outline's
/// titles, Title and Subject.
pub(crate) fn extract(input: &[u8], options: &ExtractOptions) -> Result<Document, FormatError> {
    let pdf = load(input)?;
    let fonts = options.fonts.clone().unwrap_or_default();
    let mut reader = Reader {
        pdf: &pdf,
        options,
        fonts: &fonts,
        segments: Vec::new(),
        scanned: HashSet::new(),
        left: BTreeMap::new(),
    };
    let mut pages = Vec::new();
    for (number, id) in pdf.get_pages() {
        if let Some(page) = reader.page(number, id)? {
            pages.push(page);
        }
    }
    let notes = notes(&reader.left);
    let mut segments = reader.segments;
    let mut fields = Vec::new();
    for item in write::outline_items(&pdf) {
        if let Some(title) = pdf
            .get_dictionary(item)
            .ok()
            .and_then(|d| d.get(b"Title").ok())
            .and_then(|t| lopdf::decode_text_string(t).ok())
        {
            push_text(&mut segments, &mut fields, Field::Outline(item), &title);
        }
    }
    if let Some(info) = write::info(&pdf) {
        for key in [&b"Title"[..], b"Subject"] {
            if let Some(text) = info
                .get(key)
                .ok()
                .and_then(|t| pdf.dereference(t).ok())
                .and_then(|(_, t)| lopdf::decode_text_string(t).ok())
            {
                let key: &'static [u8] = if key == b"Title" {
                    b"Title"
                } else {
                    b"Subject"
                };
                push_text(&mut segments, &mut fields, Field::Info(key), &text);
            }
        }
    }
    Ok(Document::new(
        segments,
        Skeleton {
            pdf,
            pages,
            fields,
            fonts,
        },
    )
    .with_notes(notes))
}

/// A sentence for each reason text was left as it is, with its pages.
fn notes(left: &BTreeMap<Left, Vec<u32>>) -> Vec<String> {
    const LISTED: usize = 10;
    left.iter()
        .map(|(why, pages)| {
            let mut listed: Vec<String> = pages.iter().take(LISTED).map(u32::to_string).collect();
            let more = pages.len().saturating_sub(LISTED);
            let last = match more {
                0 => listed.pop().unwrap_or_default(),
                n => format!("{n} more"),
            };
            let pages = match (listed.is_empty(), pages.len()) {
                (true, 1) => format!("page {last}"),
                (true, _) => format!("pages {last}"),
                (false, _) => format!("pages {} and {last}", listed.join(", ")),
            };
            format!("{} was left untranslated on {pages}.", why.what())
        })
        .collect()
}

fn push_text(
    segments: &mut Vec<String>,
    fields: &mut Vec<(Field, usize)>,
    field: Field,
    text: &str,
) {
    if text.chars().any(char::is_alphabetic) {
        fields.push((field, segments.len()));
        segments.push(inline::escape(text.trim()));
    }
}

/// A PDF read with bounds on what its streams inflate to; a damaged one (or
/// one lopdf cannot read) is a clear error, a password-protected one too.
fn load(input: &[u8]) -> Result<Pdf, FormatError> {
    let options = LoadOptions {
        max_decompressed_size: Some(STREAM_LIMIT),
        ..LoadOptions::default()
    };
    let loaded = std::panic::catch_unwind(|| Pdf::load_mem_with_options(input, options));
    let pdf = match loaded {
        Ok(Ok(pdf)) => pdf,
        Ok(Err(lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword)) => {
            return Err(protected());
        }
        Ok(Err(e)) => {
            return Err(FormatError::corrupt(format!(
                "The file is not a readable PDF ({e})."
            )));
        }
        Err(_) => return Err(FormatError::corrupt("The file is not a readable PDF.")),
    };
    if pdf.is_encrypted() {
        return Err(protected());
    }
    let pages = pdf.get_pages().len();
    if pages == 0 {
        return Err(FormatError::corrupt("The PDF has no pages."));
    }
    if pages > MAX_PAGES {
        return Err(FormatError::unsupported(format!(
            "The PDF has {pages} pages; at most {MAX_PAGES} are translated in one document."
        )));
    }
    Ok(pdf)
}

/// The number of pages a PDF says it has, read from its trailer and page
/// tree without loading the rest; `None` when that cannot be read (the
/// worker says why).
pub fn page_count(input: &[u8]) -> Option<usize> {
    std::panic::catch_unwind(|| lopdf::Document::load_metadata_mem(input))
        .ok()?
        .ok()
        .map(|m| m.page_count as usize)
}

fn protected() -> FormatError {
    FormatError::unsupported(
        "The PDF is protected with a password: remove the password (or upload a copy without it) and try again.",
    )
}

/// What reading a PDF's pages gathers.
struct Reader<'a> {
    pdf: &'a Pdf,
    options: &'a ExtractOptions,
    fonts: &'a Fonts,
    segments: Vec<String>,
    /// The images read as scans (each is read once).
    scanned: HashSet<ObjectId>,
    /// The pages where text is left as it is, by why.
    left: BTreeMap<Left, Vec<u32>>,
}

impl Reader<'_> {
    /// Page `number`'s paragraphs as segments (or, for a scanned page, those
    /// OCR reads in its image); `None` when it has none (or its content
    /// cannot be read, which leaves it as it is).
    fn page(&mut self, number: u32, id: ObjectId) -> Result<Option<Page>, FormatError> {
        let pdf = self.pdf;
        let Some(ops) = page_operations(pdf, id) else {
            return Ok(None);
        };
        let (shows, paragraphs) = page_text(pdf, id, &ops, self.fonts);
        let mut left: BTreeSet<Left> = shows.iter().filter_map(|s| s.left).collect();
        if xobjects::draws_form_text(pdf, id, &ops) {
            left.insert(Left::InForm);
        }
        for why in left {
            self.left.entry(why).or_default().push(number);
        }
        let translated = translated_paragraphs(&paragraphs, shows.len());
        let mut removed_shows = BTreeSet::new();
        let mut kept = Vec::new();
        for (index, paragraph) in paragraphs.into_iter().enumerate() {
            if !translated.contains(&index) {
                continue;
            }
            let own: Vec<&text::Shown> = paragraph
                .lines
                .iter()
                .flat_map(|l| &l.shows)
                .filter_map(|&i| shows.get(i))
                .collect();
            let marking = Marking {
                mcid: own.iter().find_map(|s| s.marking.mcid.clone()),
                artifact: own.iter().all(|s| s.marking.artifact),
            };
            let mut mcids: Vec<i64> = Vec::new();
            for id in own
                .iter()
                .filter_map(|s| s.marking.mcid.as_ref().map(|m| m.1))
            {
                if !mcids.contains(&id) {
                    mcids.push(id);
                }
            }
            for line in &paragraph.lines {
                removed_shows.extend(line.shows.iter().copied());
            }
            let (segment, tags) = segment_of(&paragraph);
            self.segments.push(segment);
            kept.push(Block {
                paragraph,
                segment: self.segments.len() - 1,
                tags,
                marking,
                mcids,
            });
        }
        let mut scans = Vec::new();
        let mut layer = Vec::new();
        if shows.iter().all(|s| s.invisible || s.glyphs.is_empty()) {
            scans = scan::read(
                pdf,
                id,
                &ops,
                self.options,
                &mut self.scanned,
                &mut self.segments,
            )?;
            if !scans.is_empty() {
                layer = shows
                    .iter()
                    .filter(|s| s.invisible)
                    .map(Removed::of)
                    .collect();
            }
        }
        if kept.is_empty() && scans.is_empty() {
            return Ok(None);
        }
        let removed = removed_shows
            .into_iter()
            .map(|i| Removed::of(&shows[i]))
            .collect();
        let (x0, _, x1, _) = write::media_box(pdf, id);
        Ok(Some(Page {
            id,
            paragraphs: kept,
            removed,
            center: (x0 + x1) / 2.0,
            scans,
            layer,
        }))
    }
}

/// A page's content operators; `None` when they cannot be read (or
/// inflate beyond the bound).
fn page_operations(pdf: &Pdf, id: ObjectId) -> Option<Vec<lopdf::content::Operation>> {
    let content = pdf.get_page_content_with_limit(id, CONTENT_LIMIT).ok()?;
    Some(Content::decode(&content).ok()?.operations)
}

/// A page's text: what each show operator paints, and the paragraphs its
/// lines make.
fn page_text(
    pdf: &Pdf,
    id: ObjectId,
    ops: &[lopdf::content::Operation],
    fonts: &Fonts,
) -> (Vec<text::Shown>, Vec<Paragraph>) {
    let resources = pdf.get_page_fonts(id).unwrap_or_default();
    let shows = text::shown(ops, |name| {
        let dict = resources.get(name)?;
        Some(Rc::new(PdfFont::read(pdf, dict, Some(fonts))))
    });
    let lines = layout::lines(&shows);
    (shows, layout::paragraphs(lines))
}

/// A paragraph's segment: its text, each run that looks other than the
/// paragraph (a bold word, a link's colour) a `<g>` span; the look of each
/// span's id.
fn segment_of(p: &Paragraph) -> (String, Vec<(u32, Run)>) {
    let mut builder = inline::SegmentBuilder::new();
    let mut tags = Vec::new();
    for (i, run) in p.runs.iter().enumerate() {
        let end = p.runs.get(i + 1).map_or(p.text.len(), |r| r.at);
        let Some(text) = p.text.get(run.at..end) else {
            continue;
        };
        if run.style == p.style && run.color == p.color {
            builder.text(text);
        } else {
            let id = builder.open();
            builder.text(text);
            builder.close();
            tags.push((id, *run));
        }
    }
    (builder.finish(), tags)
}

/// The paragraphs translated: those with a letter, and those sharing a show
/// operator with one (its text is removed as a whole).
fn translated_paragraphs(paragraphs: &[Paragraph], shows: usize) -> BTreeSet<usize> {
    let mut of_show: Vec<Vec<usize>> = vec![Vec::new(); shows];
    for (index, p) in paragraphs.iter().enumerate() {
        for line in &p.lines {
            for &s in &line.shows {
                if let Some(list) = of_show.get_mut(s)
                    && !list.contains(&index)
                {
                    list.push(index);
                }
            }
        }
    }
    let mut translated: BTreeSet<usize> = paragraphs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.text.chars().any(char::is_alphabetic))
        .map(|(i, _)| i)
        .collect();
    loop {
        let before = translated.len();
        for list in &of_show {
            if list.iter().any(|p| translated.contains(p)) {
                translated.extend(list.iter().copied());
            }
        }
        if translated.len() == before {
            break translated;
        }
    }
}

impl crate::filter::Skeleton for Skeleton {
    fn merge(
        &self,
        source: &[String],
        translated: &[String],
        lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        write::merge(self, source, translated, lang)
    }
}

#[cfg(test)]
pub(crate) mod tests;
