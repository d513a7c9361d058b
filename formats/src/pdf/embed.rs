//! The faces a translation is set in, embedded in the PDF as subsets
//! (subsetter) of the glyphs used: each a Type0 font over a CIDFontType2
//! (or CIDFontType0 for CFF outlines) with identity CIDs, its widths, its
//! descriptor and a `ToUnicode` map, so the translated text can be copied,
//! searched and read aloud.

use rustybuzz::ttf_parser;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use lopdf::{Dictionary, Document, Object, ObjectId, Stream, StringFormat};
use subsetter::GlyphRemapper;

use super::fonts::{Class, Fonts};
use crate::FormatError;

/// A face in use: the glyphs taken from it, renumbered in order of use.
struct Used {
    face: usize,
    glyphs: GlyphRemapper,
    unicode: BTreeMap<u16, String>,
}

/// The faces a document's translation uses.
#[derive(Default)]
pub(crate) struct Embedder {
    used: Vec<Used>,
}

impl Embedder {
    /// The resource name a face is drawn with (`TolkF0`, `TolkF1`…).
    pub(crate) fn resource(&mut self, face: usize) -> String {
        let slot = match self.used.iter().position(|u| u.face == face) {
            Some(slot) => slot,
            None => {
                self.used.push(Used {
                    face,
                    glyphs: GlyphRemapper::new(),
                    unicode: BTreeMap::new(),
                });
                self.used.len() - 1
            }
        };
        resource_name(slot)
    }

    /// The CID of glyph `gid` of `face` (already [`Embedder::resource`]d),
    /// standing for `text`.
    pub(crate) fn cid(&mut self, face: usize, gid: u16, text: &str) -> u16 {
        let Some(used) = self.used.iter_mut().find(|u| u.face == face) else {
            return 0;
        };
        let cid = used.glyphs.remap(gid);
        if !text.is_empty() {
            used.unicode.entry(cid).or_insert_with(|| text.to_owned());
        }
        cid
    }

    /// Adds a font object for each face in use; their resource names and
    /// ids.
    pub(crate) fn finish(
        self,
        doc: &mut Document,
        fonts: &Fonts,
    ) -> Result<Vec<(String, ObjectId)>, FormatError> {
        let mut out = Vec::new();
        for (slot, used) in self.used.iter().enumerate() {
            let id = embed(doc, fonts, used, slot)?;
            out.push((resource_name(slot), id));
        }
        Ok(out)
    }
}

fn resource_name(slot: usize) -> String {
    format!("TolkF{slot}")
}

/// The width of a glyph in the font's `W` array: thousandths of an em.
pub(crate) fn width_of(advance: i32, units_per_em: u16) -> f32 {
    (advance as f32 * 1000.0 / f32::from(units_per_em.max(1))).round()
}

fn embed(
    doc: &mut Document,
    fonts: &Fonts,
    used: &Used,
    slot: usize,
) -> Result<ObjectId, FormatError> {
    let (data, index) = fonts.face(used.face);
    let face = ttf_parser::Face::parse(data, index)
        .map_err(|e| FormatError::Write(format!("a font could not be read: {e}")))?;
    let subset = subsetter::subset(data, index, &used.glyphs)
        .map_err(|e| FormatError::Write(format!("a font could not be subset: {e}")))?;
    let upem = face.units_per_em();
    let scale = |v: f32| (v * 1000.0 / f32::from(upem.max(1))).round() as i64;
    let postscript = face
        .names()
        .into_iter()
        .filter(|n| n.name_id == ttf_parser::name_id::POST_SCRIPT_NAME)
        .find_map(|n| n.to_string())
        .unwrap_or_else(|| fonts.family(used.face).replace(' ', ""));
    // A subset's name starts with six capitals of its own (ISO 32000-1 §9.6.4).
    let tag: String = (0..6)
        .map(|i| char::from(b'A' + ((slot / 26usize.pow(i)) % 26) as u8))
        .collect();
    let base_font = format!("{tag}+{postscript}");
    let cff = face.tables().cff.is_some();

    let widths: Vec<Object> = used
        .glyphs
        .remapped_gids()
        .map(|gid| {
            let advance = face
                .glyph_hor_advance(ttf_parser::GlyphId(gid))
                .map_or(0, i32::from);
            Object::Integer(width_of(advance, upem) as i64)
        })
        .collect();

    let style = fonts.style(used.face);
    let mut flags = 32; // non-symbolic
    if style.class == Class::Mono {
        flags |= 1;
    }
    if style.class == Class::Serif {
        flags |= 2;
    }
    if style.italic {
        flags |= 64;
    }
    let bbox = face.global_bounding_box();
    let mut file = Dictionary::new();
    if cff {
        file.set("Subtype", Object::Name(b"OpenType".to_vec()));
    }
    let file_id = doc.add_object(compressed(file, subset));
    let mut descriptor = Dictionary::new();
    descriptor.set("Type", Object::Name(b"FontDescriptor".to_vec()));
    descriptor.set("FontName", Object::Name(base_font.clone().into_bytes()));
    descriptor.set("Flags", Object::Integer(flags));
    descriptor.set(
        "FontBBox",
        Object::Array(
            [bbox.x_min, bbox.y_min, bbox.x_max, bbox.y_max]
                .iter()
                .map(|v| Object::Integer(scale(f32::from(*v))))
                .collect(),
        ),
    );
    descriptor.set("ItalicAngle", Object::Real(face.italic_angle()));
    descriptor.set("Ascent", Object::Integer(scale(f32::from(face.ascender()))));
    descriptor.set(
        "Descent",
        Object::Integer(scale(f32::from(face.descender()))),
    );
    descriptor.set(
        "CapHeight",
        Object::Integer(scale(f32::from(
            face.capital_height().unwrap_or(face.ascender()),
        ))),
    );
    descriptor.set("StemV", Object::Integer(if style.bold { 140 } else { 80 }));
    descriptor.set(
        if cff { "FontFile3" } else { "FontFile2" },
        Object::Reference(file_id),
    );
    let descriptor_id = doc.add_object(descriptor);

    let mut system = Dictionary::new();
    system.set("Registry", Object::string_literal("Adobe"));
    system.set("Ordering", Object::string_literal("Identity"));
    system.set("Supplement", Object::Integer(0));
    let mut cid_font = Dictionary::new();
    cid_font.set("Type", Object::Name(b"Font".to_vec()));
    cid_font.set(
        "Subtype",
        Object::Name(if cff {
            b"CIDFontType0".to_vec()
        } else {
            b"CIDFontType2".to_vec()
        }),
    );
    cid_font.set("BaseFont", Object::Name(base_font.clone().into_bytes()));
    cid_font.set("CIDSystemInfo", Object::Dictionary(system));
    cid_font.set("FontDescriptor", Object::Reference(descriptor_id));
    cid_font.set("DW", Object::Integer(1000));
    cid_font.set(
        "W",
        Object::Array(vec![Object::Integer(0), Object::Array(widths)]),
    );
    if !cff {
        cid_font.set("CIDToGIDMap", Object::Name(b"Identity".to_vec()));
    }
    let cid_font_id = doc.add_object(cid_font);

    let to_unicode = doc.add_object(compressed(Dictionary::new(), to_unicode(&used.unicode)));
    let mut font = Dictionary::new();
    font.set("Type", Object::Name(b"Font".to_vec()));
    font.set("Subtype", Object::Name(b"Type0".to_vec()));
    font.set("BaseFont", Object::Name(base_font.into_bytes()));
    font.set("Encoding", Object::Name(b"Identity-H".to_vec()));
    font.set(
        "DescendantFonts",
        Object::Array(vec![Object::Reference(cid_font_id)]),
    );
    font.set("ToUnicode", Object::Reference(to_unicode));
    Ok(doc.add_object(font))
}

/// A stream of `content`, deflated.
pub(crate) fn compressed(dict: Dictionary, content: Vec<u8>) -> Stream {
    let mut stream = Stream::new(dict, content);
    // A stream that does not deflate stays as it is.
    let _ = stream.compress();
    stream
}

/// A `ToUnicode` CMap of CIDs (two bytes) to their text.
fn to_unicode(map: &BTreeMap<u16, String>) -> Vec<u8> {
    let mut out = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    let entries: Vec<(&u16, &String)> = map.iter().collect();
    for chunk in entries.chunks(100) {
        let _ = writeln!(out, "{} beginbfchar", chunk.len());
        for (cid, text) in chunk {
            let hex: String = text.encode_utf16().map(|u| format!("{u:04X}")).collect();
            let _ = writeln!(out, "<{cid:04X}> <{hex}>");
        }
        out.push_str("endbfchar\n");
    }
    out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    out.into_bytes()
}

/// A hexadecimal string object of CIDs.
pub(crate) fn cid_string(cids: &[u16]) -> Object {
    Object::String(
        cids.iter().flat_map(|c| c.to_be_bytes()).collect(),
        StringFormat::Hexadecimal,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_unicode_maps_each_cid_to_its_text() {
        let map = BTreeMap::from([(1, "A".to_owned()), (2, "fi".to_owned())]);
        let cmap = String::from_utf8(to_unicode(&map)).unwrap();
        assert!(cmap.contains("2 beginbfchar\n<0001> <0041>\n<0002> <00660069>\n"));
    }
}
