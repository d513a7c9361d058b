//! Generic XML (`.xml`) with the ITS 2.0 translate data category, and DITA
//! topics and maps (`.dita`, `.ditamap`).
//!
//! An element whose own content holds text is a block: its whole content is
//! one segment, child elements with an end tag spans of it, empty ones (and
//! comments) placeholders. Elements whose content is only elements are
//! walked through. Attributes are not translated (the ITS default).
//!
//! Not translated, with everything inside them kept byte for byte:
//! elements with `its:translate="no"` (any prefix bound to the ITS
//! namespace), or with DITA's `translate="no"`; elements an ITS global rule
//! (`<its:translateRule selector="//name" translate="no"/>`, selectors of
//! the `//name` and `//prefix:name` forms) names; and DITA's code elements
//! (`codeblock`, `codeph`, `pre`, `screen`, `msgblock`, `systemoutput`,
//! `userinput`, `varname`, `filepath`, `cmdname`, `apiname`, `draft-comment`,
//! `required-cleanup`) — inline ones become placeholders of their segment.
//! A `translate="yes"` inside an untranslated element turns translation back
//! on. A DOCTYPE naming an external DTD (as DITA files have) is kept and
//! never fetched; one declaring entities is refused (no entity expansion).

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{self, SegmentBuilder};
use crate::xml::{self, Elem, Tags, TextKind, XNode};

/// The ITS namespace.
const ITS: &str = "http://www.w3.org/2005/11/its";

/// DITA elements holding code or notes for writers: never translated.
const DITA_CODE: &[&str] = &[
    "codeblock",
    "codeph",
    "pre",
    "screen",
    "msgblock",
    "systemoutput",
    "userinput",
    "varname",
    "filepath",
    "cmdname",
    "apiname",
    "draft-comment",
    "required-cleanup",
];

/// The document around its blocks.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    blocks: Vec<Block>,
}

#[derive(Debug)]
struct Block {
    /// The element's content (between its tags).
    range: Range<usize>,
    segment: usize,
    tags: Tags,
}

struct Walk<'s> {
    src: &'s str,
    /// Only elements of these local names are blocks (a SCORM manifest's
    /// titles); `None`: every element holding text.
    only: Option<&'s [&'s str]>,
    /// Prefixes bound to the ITS namespace (`its`).
    its_prefixes: Vec<String>,
    /// Element names global rules keep untranslated.
    rule_no: Vec<String>,
    segments: Vec<String>,
    blocks: Vec<Block>,
}

fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    extract_only(input, &[])
}

/// [`extract`], with only the elements of the local names `only` as blocks
/// (all elements when `only` is empty).
pub(crate) fn extract_only(
    input: &[u8],
    only: &[&str],
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, None);
    let tree = xml::parse_with(&source, true)
        .map_err(|e| FormatError::corrupt(format!("The file is not valid XML: it {e}")))?;
    let root = tree
        .iter()
        .find_map(|n| match n {
            XNode::Elem(e) => Some(e),
            XNode::Text(..) => None,
        })
        .ok_or_else(|| FormatError::corrupt("The XML file has no root element"))?;
    let mut walk = Walk {
        src: &source,
        only: (!only.is_empty()).then_some(only),
        its_prefixes: Vec::new(),
        rule_no: Vec::new(),
        segments: Vec::new(),
        blocks: Vec::new(),
    };
    walk.namespaces(root);
    walk.rules(root);
    walk.element(root, true);
    let Walk {
        segments, blocks, ..
    } = walk;
    Ok((
        segments,
        Skeleton {
            source,
            form,
            blocks,
        },
    ))
}

impl Walk<'_> {
    /// The prefixes bound to the ITS namespace anywhere in the document.
    fn namespaces(&mut self, elem: &Elem<'_>) {
        for (key, value) in elem.attrs(self.src) {
            if value == ITS
                && let Some(prefix) = key.strip_prefix("xmlns:")
                && !self.its_prefixes.iter().any(|p| p == prefix)
            {
                self.its_prefixes.push(prefix.to_owned());
            }
        }
        for child in elem.elems() {
            self.namespaces(child);
        }
    }

    fn is_its(&self, name: &str) -> bool {
        name.split_once(':')
            .is_some_and(|(p, _)| self.its_prefixes.iter().any(|q| q == p))
    }

    /// Global `its:translateRule`s with `//name` selectors.
    fn rules(&mut self, elem: &Elem<'_>) {
        if self.is_its(elem.name) && local(elem.name) == "translateRule" {
            let selector = elem.attr(self.src, "selector").unwrap_or_default();
            if elem.attr(self.src, "translate").as_deref() == Some("no")
                && let Some(name) = selector.strip_prefix("//")
                && !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, ':' | '-' | '_' | '.'))
            {
                self.rule_no.push(name.to_owned());
            }
        }
        for child in elem.elems() {
            self.rules(child);
        }
    }

    /// Whether `elem` is translated, given its parent's state.
    fn translatable(&self, elem: &Elem<'_>, inherited: bool) -> bool {
        if self.is_its(elem.name) {
            return false; // its:rules and the like
        }
        for (key, value) in elem.attrs(self.src) {
            let its_attr = key
                .split_once(':')
                .is_some_and(|(p, l)| l == "translate" && self.its_prefixes.iter().any(|q| q == p));
            if its_attr || key == "translate" {
                return value != "no";
            }
        }
        if self.rule_no.iter().any(|n| n == elem.name) || DITA_CODE.contains(&local(elem.name)) {
            return false;
        }
        inherited
    }

    fn has_text(&self, elem: &Elem<'_>) -> bool {
        elem.children.iter().any(|c| match c {
            XNode::Text(range, kind) => {
                *kind != TextKind::Other && !xml::is_blank(self.src, range, *kind)
            }
            XNode::Elem(_) => false,
        })
    }

    fn element(&mut self, elem: &Elem<'_>, inherited: bool) {
        let translate = self.translatable(elem, inherited);
        let wanted = self
            .only
            .is_none_or(|names| names.contains(&local(elem.name)));
        if translate && wanted && self.has_text(elem) {
            self.block(elem);
            return;
        }
        for child in elem.elems() {
            self.element(child, translate);
        }
    }

    /// `elem`'s content as one segment (untranslatable children as
    /// placeholders).
    fn block(&mut self, elem: &Elem<'_>) {
        let Some(end) = &elem.end else { return };
        let mut builder = SegmentBuilder::new();
        let mut tags = Vec::new();
        let paired = |e: &Elem<'_>| self.translatable(e, true);
        xml::inline_segment(self.src, &elem.children, &paired, &mut builder, &mut tags);
        if !inline::plain_text(builder.peek())
            .chars()
            .any(char::is_alphabetic)
        {
            return;
        }
        self.blocks.push(Block {
            range: elem.start.end..end.start,
            segment: self.segments.len(),
            tags,
        });
        self.segments.push(builder.finish());
    }
}

impl Skeleton {
    pub(crate) fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let mut out = String::with_capacity(self.source.len() + self.source.len() / 4);
        inline::splice_blocks(
            &mut out,
            &self.source,
            0,
            &self.blocks,
            |b| (b.range.clone(), b.segment),
            (source, translated),
            |out, translation, block| {
                inline::write_tags(out, translation, &block.tags, inline::escape_into);
            },
        );
        self.form.encode(&out, true)
    }
}

#[cfg(test)]
mod tests;
