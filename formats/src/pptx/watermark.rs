//! The machine-translation mark of a presentation: a small grey text box at
//! the bottom left of every slide, drawn over the slide's other shapes, and
//! a custom document property.

use super::PACKAGE;
use crate::FormatError;
use crate::package::{Edit, append_child};
use crate::xml::{self, Elem, local, prefix};

const PRESENTATION: &str = "ppt/presentation.xml";
const DRAWING_NS: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const PRESENTATION_NS: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
/// PowerPoint's default slide size (10 × 7.5 in), in EMU.
const DEFAULT_SIZE: (i64, i64) = (9_144_000, 6_858_000);

/// The presentation with `mark` on every slide and as the custom property
/// `property`.
pub(crate) fn mark(input: &[u8], mark: &str, property: &str) -> Result<Vec<u8>, FormatError> {
    let mut edit = Edit::open(&PACKAGE, input)?;
    let size = match edit.read(PRESENTATION)? {
        Some(presentation) => slide_size(&presentation).unwrap_or(DEFAULT_SIZE),
        None => DEFAULT_SIZE,
    };
    let slides: Vec<String> = edit
        .names()
        .iter()
        .filter(|n| {
            n.strip_prefix("ppt/slides/")
                .is_some_and(|f| !f.contains('/') && f.starts_with("slide") && f.ends_with(".xml"))
        })
        .cloned()
        .collect();
    for slide in slides {
        let Some(src) = edit.read(&slide)? else {
            continue;
        };
        let tree = xml::parse(&src).map_err(|e| edit.unreadable(&slide, &e))?;
        let Some(tree_elem) = xml::root(&tree)
            .and_then(|root| child(root, "cSld"))
            .and_then(|c| child(c, "spTree"))
        else {
            continue;
        };
        let id = max_shape_id(&src, tree_elem) + 1;
        let shape = text_box(prefix(tree_elem.name), id, size, mark);
        edit.put(&slide, append_child(&src, tree_elem, &shape));
    }
    edit.set_custom_property(property, mark)?;
    edit.finish()
}

/// The slide size (`p:sldSz`), in EMU.
fn slide_size(src: &str) -> Option<(i64, i64)> {
    let tree = xml::parse(src).ok()?;
    let size = child(xml::root(&tree)?, "sldSz")?;
    let cx = size.attr(src, "cx")?.parse().ok()?;
    let cy = size.attr(src, "cy")?.parse().ok()?;
    Some((cx, cy))
}

/// The largest shape id of a slide's shape tree (ids are unique per slide).
fn max_shape_id(src: &str, elem: &Elem<'_>) -> u32 {
    elem.elems()
        .map(|e| {
            let own = if local(e.name) == "cNvPr" {
                e.attr(src, "id").and_then(|v| v.parse().ok()).unwrap_or(0)
            } else {
                0
            };
            own.max(max_shape_id(src, e))
        })
        .max()
        .unwrap_or(0)
}

/// The text box holding the mark, at the slide's bottom left: 10 pt grey
/// text on no fill, a line high, half the slide wide.
fn text_box(prefix: &str, id: u32, (cx, cy): (i64, i64), mark: &str) -> String {
    let (p, declared) = if prefix.is_empty() {
        ("p", format!(r#" xmlns:p="{PRESENTATION_NS}""#))
    } else {
        (prefix, String::new())
    };
    let (x, y) = (cx / 50, cy - cy / 20);
    let (width, height) = (cx / 2, cy / 25);
    let mut text = String::new();
    xml::escape_attribute_into(&mut text, mark, '"');
    format!(
        r#"<{p}:sp{declared} xmlns:a="{DRAWING_NS}"><{p}:nvSpPr><{p}:cNvPr id="{id}" name="Machine translation mark" descr="{text}"/><{p}:cNvSpPr txBox="1"/><{p}:nvPr/></{p}:nvSpPr><{p}:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{width}" cy="{height}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/></{p}:spPr><{p}:txBody><a:bodyPr wrap="none" lIns="0" tIns="0" rIns="0" bIns="0" anchor="b"/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US" sz="1000"><a:solidFill><a:srgbClr val="808080"/></a:solidFill></a:rPr><a:t>{text}</a:t></a:r></a:p></{p}:txBody></{p}:sp>"#
    )
}

fn child<'e, 'a>(elem: &'e Elem<'a>, name: &str) -> Option<&'e Elem<'a>> {
    elem.elems().find(|e| local(e.name) == name)
}
