//! Generic XML (`.xml`) with the ITS 2.0 translate data category, and DITA
//! topics and maps (`.dita`, `.ditamap`).
//!
//! An element whose own content holds text is a block: its whole content is
//! one segment, child elements with an end tag spans of it, empty ones (and
//! comments) placeholders. Elements whose content is only elements are
//! walked through. Attributes are not translated (the ITS default).
//!
//! Whether an element is translated follows ITS 2.0: its own
//! `its:translate` (any prefix bound to the ITS namespace) or DITA's
//! `translate`; else the last global rule
//! (`<its:translateRule selector="…" translate="yes|no"/>`) whose selector
//! selects it — XPath 1.0 location paths with predicates ([`crate::xpath`]);
//! else DITA's code elements (`codeblock`, `codeph`, `pre`, `screen`,
//! `msgblock`, `systemoutput`, `userinput`, `varname`, `filepath`,
//! `cmdname`, `apiname`; the programming domain's `parmname`, `option`,
//! `kwd`, `synph`, `syntaxdiagram`, `delim`, `oper`, `sep`, `coderef`; the
//! software domain's `msgnum`, `msgph`; the XML mention domain's
//! `xmlelement`, `xmlatt`, `xmlnsname`, `xmlpi`, `textentity`,
//! `numcharref`, `parameterentity`; `draft-comment`, `required-cleanup`)
//! are not; else
//! its parent's state. Untranslated elements are kept byte for byte (inline
//! ones become placeholders of their segment). Attributes a rule selects
//! with `translate="yes"` (`//img/@alt`) are segments of their own, on
//! elements outside a segment and on a segment's own element; a selector
//! outside that XPath refuses the document, naming it. A DOCTYPE naming an external DTD (as DITA files have) is kept and
//! never fetched; one declaring entities is refused (no entity expansion).

use std::ops::Range;

use std::collections::HashMap;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{self, SegmentBuilder};
use crate::xml::{self, Elem, Tags, TextKind, XNode, local};
use crate::xpath::{self, Selector};

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
    "parmname",
    "option",
    "kwd",
    "synph",
    "syntaxdiagram",
    "delim",
    "oper",
    "sep",
    "coderef",
    "msgnum",
    "msgph",
    "xmlelement",
    "xmlatt",
    "xmlnsname",
    "xmlpi",
    "textentity",
    "numcharref",
    "parameterentity",
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
    /// The element's content (between its tags), or an attribute's value
    /// (between its quotes).
    range: Range<usize>,
    segment: usize,
    tags: Tags,
    /// The quote around an attribute's value.
    quote: Option<char>,
}

struct Walk<'s> {
    src: &'s str,
    /// Only elements of these local names are blocks (a SCORM manifest's
    /// titles); `None`: every element holding text.
    only: Option<&'s [&'s str]>,
    /// Prefixes bound to the ITS namespace (`its`).
    its_prefixes: Vec<String>,
    /// Every prefix the document binds (`""`: the default namespace).
    namespaces: HashMap<String, String>,
    /// Global rules in document order: the selector, the namespaces where
    /// it was written, and whether it translates.
    rules: Vec<(Selector, HashMap<String, String>, bool)>,
    segments: Vec<String>,
    blocks: Vec<Block>,
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
    let Decoded { text: source, form } = encoding::decode(input, encoding::xml_declared(input));
    let tree = xml::parse_with(&source, true)
        .map_err(|e| FormatError::corrupt(format!("The file is not valid XML: it {e}")))?;
    let root =
        xml::root(&tree).ok_or_else(|| FormatError::corrupt("The XML file has no root element"))?;
    let mut walk = Walk {
        src: &source,
        only: (!only.is_empty()).then_some(only),
        its_prefixes: Vec::new(),
        namespaces: HashMap::new(),
        rules: Vec::new(),
        segments: Vec::new(),
        blocks: Vec::new(),
    };
    walk.namespaces(root);
    walk.rules(root, &HashMap::new())?;
    walk.element(root, true, &mut Vec::new());
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
    /// The prefixes bound anywhere in the document, those bound to the ITS
    /// namespace apart.
    fn namespaces(&mut self, elem: &Elem<'_>) {
        for (key, value) in elem.attrs(self.src) {
            if value == ITS
                && let Some(prefix) = key.strip_prefix("xmlns:")
                && !self.its_prefixes.iter().any(|p| p == prefix)
            {
                self.its_prefixes.push(prefix.to_owned());
            }
            if key == "xmlns" {
                self.namespaces.entry(String::new()).or_insert(value);
            } else if let Some(prefix) = key.strip_prefix("xmlns:") {
                self.namespaces.entry(prefix.to_owned()).or_insert(value);
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

    /// The global `its:translateRule`s, with the namespaces in scope where
    /// each is written (`scope`: those of the elements above).
    fn rules(
        &mut self,
        elem: &Elem<'_>,
        scope: &HashMap<String, String>,
    ) -> Result<(), FormatError> {
        let mut scope = scope.clone();
        for (key, value) in elem.attrs(self.src) {
            if let Some(prefix) = key.strip_prefix("xmlns:") {
                scope.insert(prefix.to_owned(), value);
            }
        }
        if self.is_its(elem.name) && local(elem.name) == "translateRule" {
            let selector = elem.attr(self.src, "selector").unwrap_or_default();
            let parsed = Selector::parse(&selector).map_err(|e| {
                FormatError::unsupported(format!(
                    "The ITS rule selector {selector:?} is not supported ({e})"
                ))
            })?;
            let translate = elem.attr(self.src, "translate").as_deref() != Some("no");
            self.rules.push((parsed, scope.clone(), translate));
        }
        for child in elem.elems() {
            self.rules(child, &scope)?;
        }
        Ok(())
    }

    /// What the last global rule selecting `chain[0]` says (`attribute`:
    /// about that attribute of it), if one does.
    fn rule(&self, chain: &[&Elem<'_>], attribute: Option<&str>) -> Option<bool> {
        let node = xpath::Node {
            chain,
            src: self.src,
        };
        self.rules
            .iter()
            .rev()
            .find_map(|(selector, rules, translate)| {
                let scope = xpath::Scope {
                    rules,
                    document: &self.namespaces,
                };
                let selected = match attribute {
                    None => selector.selects(&node, &scope),
                    Some(name) => selector.attributes(&node, &scope).iter().any(|a| a == name),
                };
                selected.then_some(*translate)
            })
    }

    /// Whether `chain[0]` is translated, given its parent's state.
    fn translatable(&self, chain: &[&Elem<'_>], inherited: bool) -> bool {
        let elem = chain[0];
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
        if let Some(rule) = self.rule(chain, None) {
            return rule;
        }
        if DITA_CODE.contains(&local(elem.name)) {
            return false;
        }
        inherited
    }

    /// The attributes of `chain[0]` rules make translatable, as segments.
    fn attributes(&mut self, chain: &[&Elem<'_>]) {
        if self.rules.iter().all(|(_, _, translate)| !translate) {
            return;
        }
        let elem = chain[0];
        for (range, quote, name) in xml::attribute_values(self.src, elem) {
            if self.rule(chain, Some(&name)) != Some(true) {
                continue;
            }
            let raw = &self.src[range.clone()];
            let value = quick_xml::escape::unescape(raw)
                .map_or_else(|_| raw.to_owned(), |v| v.into_owned());
            if !value.chars().any(char::is_alphabetic) {
                continue;
            }
            self.blocks.push(Block {
                range,
                segment: self.segments.len(),
                tags: Tags::default(),
                quote: Some(quote),
            });
            self.segments.push(inline::escape(&value));
        }
    }

    /// Whether `chain[0]` (a manifest's LOM string) is a vocabulary term —
    /// inside a `source` or `value` (`<value><langstring>yes</langstring>`),
    /// or in the language `x-none` — which tools match as written.
    fn is_vocabulary(&self, chain: &[&Elem<'_>]) -> bool {
        let none = |key: &str| chain[0].attr(self.src, key).is_some_and(|l| l == "x-none");
        none("xml:lang")
            || none("language")
            || chain[1..]
                .iter()
                .any(|e| matches!(local(e.name), "source" | "value"))
    }

    fn has_text(&self, elem: &Elem<'_>) -> bool {
        elem.children.iter().any(|c| match c {
            XNode::Text(range, kind) => {
                *kind != TextKind::Other && !xml::is_blank(self.src, range, *kind)
            }
            XNode::Elem(_) => false,
        })
    }

    /// Walks `elem`, below the elements of `above` (its parent first).
    fn element<'t>(&mut self, elem: &'t Elem<'t>, inherited: bool, above: &mut Vec<&'t Elem<'t>>) {
        above.insert(0, elem);
        let translate = self.translatable(above, inherited);
        self.attributes(above);
        let wanted = self
            .only
            .is_none_or(|names| names.contains(&local(elem.name)) && !self.is_vocabulary(above));
        if translate && wanted && self.has_text(elem) {
            self.block(above);
        } else {
            for child in elem.elems() {
                self.element(child, translate, above);
            }
        }
        above.remove(0);
    }

    /// `elem`'s content as one segment (untranslatable children as
    /// placeholders).
    fn block(&mut self, chain: &[&Elem<'_>]) {
        let elem = chain[0];
        let Some(end) = &elem.end else { return };
        let mut builder = SegmentBuilder::new();
        let mut tags = Vec::new();
        let paired = |e: &Elem<'_>, parents: &[&Elem<'_>]| {
            let mut inner = vec![e];
            inner.extend_from_slice(parents);
            inner.extend_from_slice(chain);
            self.translatable(&inner, true)
        };
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
            quote: None,
        });
        self.segments.push(builder.finish());
    }
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let mut out = String::with_capacity(self.source.len() + self.source.len() / 4);
        inline::splice_blocks(
            &mut out,
            &self.source,
            0,
            &self.blocks,
            |b| (b.range.clone(), b.segment),
            (source, translated),
            |out, translation, block| match block.quote {
                None => inline::write_tags(out, translation, &block.tags, inline::escape_into),
                Some(quote) => inline::write_tags(out, translation, &block.tags, |out, text| {
                    xml::escape_attribute_into(out, text, quote);
                }),
            },
        );
        self.form.encode(&out, true)
    }
}

#[cfg(test)]
mod tests;
