//! A PDF's translation written back: on each page, the original text of its
//! translated paragraphs removed from the content stream and the
//! translations drawn in their boxes; the outline's titles, the Title and
//! Subject, and the catalog's `Lang` set.

use rustybuzz::ttf_parser;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document as Pdf, Object, ObjectId};

use super::decode::{deref, number};
use super::embed::{self, Embedder};
use super::tags::Tagged;
use super::text::{Color, Show};
use super::typeset::{Set, Span, typeset};
use super::{Block, CONTENT_LIMIT, Field, Removed, Skeleton};
use crate::{FormatError, inline};

/// The translated PDF.
pub(super) fn merge(
    skeleton: &Skeleton,
    source: &[String],
    translated: &[String],
    lang: Option<&str>,
) -> Result<Vec<u8>, FormatError> {
    let mut pdf = skeleton.pdf.clone();
    let fonts = &skeleton.fonts;
    let mut embedder = Embedder::default();
    let mut page_fonts: Vec<(ObjectId, BTreeSet<String>)> = Vec::new();
    for page in &skeleton.pages {
        let content = pdf
            .get_page_content_with_limit(page.id, CONTENT_LIMIT)
            .map_err(|e| FormatError::Write(format!("a page could not be read again: {e}")))?;
        let mut ops = Content::decode(&content)
            .map_err(|e| FormatError::Write(format!("a page could not be read again: {e}")))?
            .operations;
        // A scanned page's own text layer goes when a translation is
        // painted over it.
        let painted = page.scans.iter().any(|s| s.changed(source, translated));
        let mut removed: Vec<&Removed> = page.removed.iter().collect();
        if painted {
            removed.extend(&page.layer);
            removed.sort_by_key(|r| r.op);
        }
        let removed_ops: BTreeSet<usize> = removed.iter().map(|r| r.op).collect();
        let mut tagged = Tagged::of(&pdf, page.id, &ops, &removed_ops);
        let mut out = Vec::with_capacity(ops.len() + removed.len() * 2);
        let mut removed = removed.into_iter().peekable();
        for (index, op) in ops.drain(..).enumerate() {
            match removed.next_if(|r| r.op == index) {
                Some(r) => out.extend(painting_nothing(r)),
                None => out.push(match &tagged {
                    Some(tagged) => tagged.content(op),
                    None => op,
                }),
            }
        }
        let mut names = BTreeSet::new();
        let mut drawn = Vec::new();
        for block in &page.paragraphs {
            let spans = spans(&translated[block.segment], block);
            let Some(set) = typeset(fonts, &spans, &block.paragraph, page.center) else {
                return Err(FormatError::Write(
                    "no font is installed to write the translation in (fonts-liberation2, fonts-dejavu-core)".to_owned(),
                ));
            };
            let ops = draw(&set, &mut embedder, fonts, &mut names);
            drawn.extend(match &mut tagged {
                Some(tagged) => tagged.mark(&mut pdf, &block.marking, &block.mcids, ops),
                None => ops,
            });
        }
        for scan in &page.scans {
            drawn.extend(super::scan::write(
                &mut pdf,
                scan,
                source,
                translated,
                fonts,
                &mut embedder,
                &mut names,
            )?);
        }
        let mut bytes = b"q\n".to_vec();
        bytes.extend(encode(out)?);
        bytes.extend(b"\nQ\n");
        bytes.extend(encode(drawn)?);
        let stream = pdf.add_object(embed::compressed(Dictionary::new(), bytes));
        pdf.get_dictionary_mut(page.id)
            .map_err(write_error)?
            .set("Contents", Object::Reference(stream));
        page_fonts.push((page.id, names));
    }
    let embedded: BTreeMap<String, ObjectId> =
        embedder.finish(&mut pdf, fonts)?.into_iter().collect();
    for (page, names) in page_fonts {
        let fonts: Vec<(&String, ObjectId)> = names
            .iter()
            .filter_map(|n| embedded.get(n).map(|id| (n, *id)))
            .collect();
        add_fonts(&mut pdf, page, &fonts)?;
    }
    let (mut title, mut subject) = (None, None);
    for (field, segment) in &skeleton.fields {
        let plain = inline::plain_text(&translated[*segment]);
        match field {
            Field::Info(b"Title") => title = Some(plain.clone()),
            Field::Info(_) => subject = Some(plain.clone()),
            Field::Outline(_) => {}
        }
        let text = lopdf::text_string(&plain);
        match field {
            Field::Outline(id) => {
                if let Ok(item) = pdf.get_dictionary_mut(*id) {
                    item.set("Title", text);
                }
            }
            Field::Info(key) => {
                if let Some(id) = info_id(&pdf)
                    && let Ok(info) = pdf.get_dictionary_mut(id)
                {
                    info.set(*key, text);
                } else if let Ok(Object::Dictionary(info)) = pdf.trailer.get_mut(b"Info") {
                    info.set(*key, text);
                }
            }
        }
    }
    super::xmp::update(&mut pdf, title.as_deref(), subject.as_deref());
    if let Some(lang) = lang
        && let Ok(catalog) = pdf.catalog_mut()
    {
        catalog.set("Lang", Object::string_literal(lang));
    }
    pdf.prune_objects();
    let mut out = Vec::new();
    pdf.save_to(&mut out)
        .map_err(|e| FormatError::Write(e.to_string()))?;
    Ok(out)
}

/// A translated segment as stretches of one look: inside a tag, the look
/// of the run it stood for; elsewhere the paragraph's.
fn spans(segment: &str, block: &Block) -> Vec<Span> {
    let p = &block.paragraph;
    let mut open: Vec<u32> = Vec::new();
    let mut out: Vec<Span> = Vec::new();
    for piece in inline::parse(segment) {
        match piece {
            inline::Piece::Open(id) => open.push(id),
            inline::Piece::Close(_) => {
                open.pop();
            }
            inline::Piece::Placeholder(_) => {}
            inline::Piece::Text(text) => {
                let look = open
                    .last()
                    .and_then(|id| block.tags.iter().find(|(t, _)| t == id))
                    .map_or((p.style, p.color), |(_, run)| (run.style, run.color));
                match out.last_mut() {
                    Some((t, style, color)) if (*style, *color) == look => t.push_str(&text),
                    _ => out.push((text, look.0, look.1)),
                }
            }
        }
    }
    out
}

fn write_error(e: lopdf::Error) -> FormatError {
    FormatError::Write(e.to_string())
}

fn encode(ops: Vec<Operation>) -> Result<Vec<u8>, FormatError> {
    Content { operations: ops }.encode().map_err(write_error)
}

/// What replaces a removed show operator: one that moves the text position
/// as far (and to the next line first, as `'` and `"` do) and paints
/// nothing.
fn painting_nothing(r: &Removed) -> Vec<Operation> {
    let mut ops = Vec::new();
    if let Show::Spaced(word, char) = r.kind {
        ops.push(Operation::new("Tw", vec![Object::Real(word)]));
        ops.push(Operation::new("Tc", vec![Object::Real(char)]));
    }
    if r.kind != Show::Plain {
        ops.push(Operation::new("T*", vec![]));
    }
    let moves = match r.scale.abs() > f32::EPSILON {
        true => vec![Object::Real(-r.advance * 1000.0 / r.scale)],
        false => Vec::new(),
    };
    ops.push(Operation::new("TJ", vec![Object::Array(moves)]));
    ops
}

/// The operator that paints in `color`.
fn fill(color: Color) -> Operation {
    match color {
        Color::Gray(g) => Operation::new("g", vec![Object::Real(g)]),
        Color::Rgb(r, g, b) => Operation::new(
            "rg",
            vec![Object::Real(r), Object::Real(g), Object::Real(b)],
        ),
        Color::Cmyk(c, m, y, k) => {
            Operation::new("k", [c, m, y, k].into_iter().map(Object::Real).collect())
        }
    }
}

/// The operators drawing a set translation, each glyph in its face and
/// colour; the resource names of the faces used go to `names`.
pub(super) fn draw(
    set: &Set,
    embedder: &mut Embedder,
    fonts: &super::fonts::Fonts,
    names: &mut BTreeSet<String>,
) -> Vec<Operation> {
    let mut parsed: BTreeMap<usize, Option<ttf_parser::Face<'_>>> = BTreeMap::new();
    let mut ops = vec![Operation::new("BT", vec![])];
    let mut look: Option<(usize, Color)> = None;
    for line in &set.lines {
        ops.push(Operation::new(
            "Tm",
            [1.0, 0.0, 0.0, 1.0, line.x, line.y]
                .into_iter()
                .map(Object::Real)
                .collect(),
        ));
        let mut items = Vec::new();
        let mut run: Vec<u16> = Vec::new();
        for glyph in &line.glyphs {
            if look != Some((glyph.face, glyph.color)) {
                if !run.is_empty() {
                    items.push(embed::cid_string(&std::mem::take(&mut run)));
                }
                if !items.is_empty() {
                    ops.push(Operation::new(
                        "TJ",
                        vec![Object::Array(std::mem::take(&mut items))],
                    ));
                }
                if look.is_none_or(|(face, _)| face != glyph.face) {
                    let name = embedder.resource(glyph.face);
                    ops.push(Operation::new(
                        "Tf",
                        vec![
                            Object::Name(name.as_bytes().to_vec()),
                            Object::Real(set.size),
                        ],
                    ));
                    names.insert(name);
                }
                if look.is_none_or(|(_, color)| color != glyph.color) {
                    ops.push(fill(glyph.color));
                }
                look = Some((glyph.face, glyph.color));
            }
            run.push(embedder.cid(glyph.face, glyph.gid, &glyph.text));
            let face = parsed.entry(glyph.face).or_insert_with(|| {
                let (data, index) = fonts.face(glyph.face);
                ttf_parser::Face::parse(data, index).ok()
            });
            let natural = face.as_ref().map_or(0.0, |face| {
                let advance = face
                    .glyph_hor_advance(ttf_parser::GlyphId(glyph.gid))
                    .map_or(0, i32::from);
                embed::width_of(advance, face.units_per_em())
            });
            // The W array holds the natural width; kerning moves by the rest.
            let mut adjust = natural - glyph.advance as f32;
            if glyph.text == " " && line.word_gap > 0.0 {
                adjust -= line.word_gap * 1000.0 / set.size;
            }
            if adjust != 0.0 {
                items.push(embed::cid_string(&std::mem::take(&mut run)));
                items.push(Object::Real(adjust));
            }
        }
        if !run.is_empty() {
            items.push(embed::cid_string(&run));
        }
        if !items.is_empty() {
            ops.push(Operation::new("TJ", vec![Object::Array(items)]));
        }
    }
    ops.push(Operation::new("ET", vec![]));
    ops
}

/// Adds fonts to a page's resources (its own, or the dictionary it refers
/// to; inherited ones copied into the page first).
pub(super) fn add_fonts(
    pdf: &mut Pdf,
    page: ObjectId,
    fonts: &[(&String, ObjectId)],
) -> Result<(), FormatError> {
    if fonts.is_empty() {
        return Ok(());
    }
    let resources_ref = match pdf
        .get_dictionary(page)
        .map_err(write_error)?
        .get(b"Resources")
    {
        Ok(Object::Reference(id)) => Some(*id),
        Ok(Object::Dictionary(_)) => None,
        _ => {
            let inherited = pdf
                .get_page_resources(page)
                .ok()
                .and_then(|(direct, ids)| {
                    direct.cloned().or_else(|| {
                        ids.first()
                            .and_then(|id| pdf.get_dictionary(*id).ok().cloned())
                    })
                })
                .unwrap_or_default();
            pdf.get_dictionary_mut(page)
                .map_err(write_error)?
                .set("Resources", Object::Dictionary(inherited));
            None
        }
    };
    let resources = match resources_ref {
        Some(id) => pdf.get_dictionary(id).map_err(write_error)?,
        None => pdf
            .get_dictionary(page)
            .and_then(|p| p.get(b"Resources"))
            .and_then(Object::as_dict)
            .map_err(write_error)?,
    };
    let font_ref = match resources.get(b"Font") {
        Ok(Object::Reference(id)) => Some(*id),
        _ => None,
    };
    let target: &mut Dictionary = match (font_ref, resources_ref) {
        (Some(id), _) => pdf.get_dictionary_mut(id).map_err(write_error)?,
        (None, Some(id)) => font_dict(pdf.get_dictionary_mut(id).map_err(write_error)?)?,
        (None, None) => font_dict(
            pdf.get_dictionary_mut(page)
                .and_then(|p| p.get_mut(b"Resources"))
                .and_then(Object::as_dict_mut)
                .map_err(write_error)?,
        )?,
    };
    for (name, id) in fonts {
        target.set(name.as_bytes(), Object::Reference(*id));
    }
    Ok(())
}

/// The `Font` dictionary of a resource dictionary, made when missing.
fn font_dict(resources: &mut Dictionary) -> Result<&mut Dictionary, FormatError> {
    if !matches!(resources.get(b"Font"), Ok(Object::Dictionary(_))) {
        resources.set("Font", Object::Dictionary(Dictionary::new()));
    }
    resources
        .get_mut(b"Font")
        .and_then(Object::as_dict_mut)
        .map_err(write_error)
}

/// A page's media box (inherited through the page tree), as `x0 y0 x1 y1`;
/// US Letter when it has none.
pub(super) fn media_box(pdf: &Pdf, page: ObjectId) -> (f32, f32, f32, f32) {
    page_box(pdf, page, b"MediaBox").unwrap_or((0.0, 0.0, 612.0, 792.0))
}

/// A box of a page (`MediaBox`, `CropBox`), inherited through the page
/// tree, as `x0 y0 x1 y1`.
pub(super) fn page_box(pdf: &Pdf, page: ObjectId, key: &[u8]) -> Option<(f32, f32, f32, f32)> {
    if let Some(Object::Array(b)) = inherited(pdf, page, key)
        && let [x0, y0, x1, y1] = b.as_slice()
        && let (Some(x0), Some(y0), Some(x1), Some(y1)) =
            (number(x0), number(y0), number(x1), number(y1))
    {
        return Some((x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)));
    }
    None
}

/// An entry of a page, or of the nearest node above it in the page tree
/// that has it (`MediaBox`, `CropBox`, `Rotate`, `Resources`), dereferenced.
pub(super) fn inherited<'a>(pdf: &'a Pdf, page: ObjectId, key: &[u8]) -> Option<&'a Object> {
    let mut id = page;
    for _ in 0..32 {
        let dict = pdf.get_dictionary(id).ok()?;
        if let Some(value) = dict.get(key).ok().and_then(|v| deref(pdf, v)) {
            return Some(value);
        }
        match dict.get(b"Parent") {
            Ok(Object::Reference(parent)) => id = *parent,
            _ => return None,
        }
    }
    None
}

/// The items of the document outline (bookmarks), depth first.
pub(super) fn outline_items(pdf: &Pdf) -> Vec<ObjectId> {
    let mut items = Vec::new();
    let Some(first) = pdf
        .catalog()
        .ok()
        .and_then(|c| c.get(b"Outlines").ok())
        .and_then(|o| deref(pdf, o))
        .and_then(|o| o.as_dict().ok())
        .and_then(|o| o.get(b"First").ok())
        .and_then(|f| f.as_reference().ok())
    else {
        return items;
    };
    let mut seen = HashSet::new();
    let mut stack = vec![first];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) || items.len() >= 100_000 {
            continue;
        }
        let Ok(item) = pdf.get_dictionary(id) else {
            continue;
        };
        items.push(id);
        if let Ok(next) = item.get(b"Next").and_then(Object::as_reference) {
            stack.push(next);
        }
        if let Ok(child) = item.get(b"First").and_then(Object::as_reference) {
            stack.push(child);
        }
    }
    items
}

pub(super) fn info_id(pdf: &Pdf) -> Option<ObjectId> {
    pdf.trailer.get(b"Info").ok()?.as_reference().ok()
}

/// The document information dictionary.
pub(super) fn info(pdf: &Pdf) -> Option<&Dictionary> {
    let object = pdf.trailer.get(b"Info").ok()?;
    deref(pdf, object)?.as_dict().ok()
}
