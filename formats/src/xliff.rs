//! XLIFF 1.2 (`trans-unit`) and 2.0/2.1 (`unit`/`segment`), found by the
//! root's `version`.
//!
//! Every translatable source becomes a segment and gets a target: an
//! existing `<target>` is replaced, else one is written after the source
//! (indented like it). Units, groups and files with `translate="no"`, 2.x
//! `<ignorable>`, notes and any other module stay as they are. Inline codes
//! become tags of the segment: paired ones (`g`, `mrk` in 1.2; `pc`, `mrk`
//! in 2.x) spans, every other element (`x`, `bx`, `ex`, `ph`, `bpt`, `ept`,
//! `it` in 1.2; `ph`, `sc`, `ec`, `sm`, `em` in 2.x) a placeholder written
//! back exactly, with its native code. An ICU plural or select message in a
//! source (Angular's `{VAR_PLURAL, plural, =0 {…} other {…}}`) keeps its
//! keywords, variable and selectors; only its branches' words are
//! translated. A 1.2 `seg-source` segmented into
//! `<mrk mtype="seg">` gives one segment per `mrk`, and the target repeats
//! that segmentation. A source without text is copied to the target as it
//! is. In Windows resources (a 1.2 file whose `datatype` is `winres`, `rc` or
//! `resx`, or whose `original` is such a file) and in menu and control units
//! (`restype` `menuitem`, `button`, `checkbox`…), a label's access key
//! (`E&amp;xit`) leaves the text the engine sees and is marked again in the
//! translation.
//!
//! States: 1.2 targets get `state="translated"` (and, holding translated
//! text, `state-qualifier="leveraged-mt"`), 2.x segments
//! `state="translated"`. With the target language known
//! ([`crate::Extracted::with_target_language`]), 1.2 `file/@target-language`
//! and new targets' `xml:lang`, and 2.x `xliff/@trgLang`, are set to it —
//! or kept when the file names a variant of it (`es-ES` for `ES`, memoQ's
//! `spa`).
//!
//! SDL Trados files (`.sdlxliff`: XLIFF 1.2 with the `sdl` namespace) keep
//! everything of theirs; a segment Trados locked or whose translation is
//! confirmed (`sdl:seg` `locked="true"`, `conf` `Translated`,
//! `ApprovedTranslation`, `ApprovedSignOff`) keeps its target, and the
//! segments translated here are marked `conf="Draft" origin="mt"`. A
//! DOCTYPE is refused (no entity expansion). The encoding (UTF-8, UTF-16 with
//! a byte-order mark) is kept.

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{self, SegmentBuilder};
use crate::placeholders::Accelerator;
use crate::xml::{self, Elem, TextKind, XNode, local, prefix};

/// XLIFF 1.x or 2.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// The document and the edits the merge makes to it.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    /// In document order, not overlapping.
    edits: Vec<Edit>,
}

#[derive(Debug)]
enum Edit {
    /// `range` (an existing target, or an empty range after the source)
    /// becomes `open`, the template, `close`.
    Target {
        range: Range<usize>,
        open: String,
        /// Add `xml:lang` with the target language to `open`.
        lang: bool,
        close: String,
        template: Vec<Piece>,
    },
    /// The start tag at `range` gets attribute `name` = the target language.
    Lang {
        range: Range<usize>,
        name: &'static str,
        /// The attribute's value before.
        existing: Option<String>,
    },
    /// `range` becomes `text`.
    Fixed { range: Range<usize>, text: String },
}

/// A target's content: source markup kept as it is, and translated segments.
#[derive(Debug)]
enum Piece {
    Raw(String),
    Slot {
        segment: usize,
        /// Tag `id` is `tags[id - 1]`: (open markup, close markup).
        tags: Vec<(String, Option<String>)>,
        /// The access key taken out of the segment (`E&amp;xit`), put back
        /// into the translation.
        key: Option<Accelerator>,
    },
}

pub(crate) fn extract(
    input: &[u8],
    options: &crate::ExtractOptions,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, encoding::xml_declared(input));
    let tree = xml::parse(&source)
        .map_err(|e| FormatError::corrupt(format!("The file is not valid XLIFF: it {e}")))?;
    let root = xml::root(&tree)
        .ok_or_else(|| FormatError::corrupt("The file is not valid XLIFF: no root element"))?;
    if local(root.name) != "xliff" {
        return Err(FormatError::corrupt(format!(
            "The file is not XLIFF: its root element is <{}>",
            root.name
        )));
    }
    let version = match root.attr(&source, "version").as_deref() {
        Some(v) if v.starts_with("1.") => Version::V1,
        Some(v) if v.starts_with("2.") => Version::V2,
        Some(v) => {
            return Err(FormatError::unsupported(format!(
                "XLIFF version {v} is not supported (1.2, 2.0 and 2.1 are)"
            )));
        }
        None => return Err(FormatError::corrupt("The XLIFF root has no version")),
    };
    let mut walk = Walk {
        src: &source,
        version,
        segments: Vec::new(),
        edits: Vec::new(),
        requested: options.target_language.clone(),
        overwrite: options.overwrite_targets,
        keep: !options.overwrite_targets,
        file_keys: false,
        unit_keys: false,
    };
    if version == Version::V2 {
        walk.keep = walk.keeps_targets_in(root.attr(&source, "trgLang").as_deref());
        walk.edits.push(Edit::Lang {
            range: root.start.clone(),
            name: "trgLang",
            existing: root.attr(&source, "trgLang"),
        });
    }
    walk.element(root, true);
    let Walk {
        segments, edits, ..
    } = walk;
    Ok((
        segments,
        Skeleton {
            source,
            form,
            edits,
        },
    ))
}

struct Walk<'s> {
    src: &'s str,
    version: Version,
    segments: Vec<String>,
    edits: Vec<Edit>,
    /// The language asked for (a DeepL code), when known.
    requested: Option<String>,
    /// Every target is translated anew (`xliff-targets:overwrite`).
    overwrite: bool,
    /// Whether settled targets of the current file are kept: not when
    /// overwriting, nor when the file's targets are in another language
    /// than the one asked for.
    keep: bool,
    /// Whether the current file holds Windows resources, whose labels mark
    /// an access key with `&` ([`access_keys_in_file`]).
    file_keys: bool,
    /// Whether `&` before a letter marks an access key in the current unit.
    unit_keys: bool,
}

/// Whether a 1.2 `file` holds Windows resources (`datatype` `winres`, `rc`,
/// `resx`, or an original `.rc`/`.resx`/`.dlg`), whose menu and control
/// labels mark their access key with `&` (`E&xit`).
fn access_keys_in_file(datatype: Option<&str>, original: Option<&str>) -> bool {
    let datatype = datatype.unwrap_or("").to_ascii_lowercase();
    let original = original.unwrap_or("").to_ascii_lowercase();
    matches!(
        datatype.trim_start_matches("x-"),
        "winres" | "rc" | "resx" | "mfc"
    ) || [".rc", ".resx", ".dlg"]
        .iter()
        .any(|ext| original.ends_with(ext))
}

/// 1.2 `restype`s of menus and controls, whose labels mark an access key
/// with `&` whatever the file holds.
const CONTROL_RESTYPES: &[&str] = &[
    "menuitem",
    "checkboxmenuitem",
    "radiobuttonmenuitem",
    "popupmenu",
    "button",
    "pushbutton",
    "defpushbutton",
    "checkbox",
    "autocheckbox",
    "radio",
    "autoradiobutton",
    "label",
    "ltext",
    "groupbox",
];

/// 1.2 target states whose target is still to be translated.
const V1_OPEN_STATES: &[&str] = &["new", "needs-translation"];
/// 1.2 state qualifiers of a suggestion (a target without a state that
/// carries one was proposed by a tool, not settled by a translator).
const V1_SUGGESTIONS: &[&str] = &[
    "mt-suggestion",
    "tm-suggestion",
    "fuzzy-match",
    "leveraged-mt",
    "leveraged-tm",
    "leveraged-glossary",
    "leveraged-inherited",
];
/// 2.x segment states whose target is still to be translated.
const V2_OPEN_STATES: &[&str] = &["initial"];
/// memoQ's status of a unit not worked on yet, and the one it gives a unit
/// pre-translated by a machine.
const MEMOQ_NOT_STARTED: &str = "NotStarted";
const MEMOQ_PRE_TRANSLATED: &str = "PreTranslated";

impl Walk<'_> {
    /// Whether the settled targets of a file whose target language is
    /// `declared` are kept (see [`Walk::keep`]).
    fn keeps_targets_in(&self, declared: Option<&str>) -> bool {
        !self.overwrite
            && match (declared, self.requested.as_deref()) {
                (Some(declared), Some(requested)) if !declared.trim().is_empty() => {
                    tolk_lang::same_language(declared, requested)
                }
                _ => true,
            }
    }

    /// Whether `elem` holds text (not only white space or empty codes).
    fn has_text(&self, elem: &Elem<'_>) -> bool {
        !elem.text(self.src).trim().is_empty()
    }

    /// Whether a 1.2 unit's translation is settled and kept: the unit is
    /// approved or memoQ-locked, or its target holds text and its state
    /// (`state`, memoQ's `mq:status`) is not one still to be translated.
    fn settled_v1(&self, unit: &Elem<'_>, target: Option<&Elem<'_>>) -> bool {
        if !self.keep {
            return false;
        }
        if unit.attr(self.src, "mq:locked").as_deref() == Some("locked") {
            return true;
        }
        let Some(target) = target.filter(|t| self.has_text(t)) else {
            return false;
        };
        if unit.attr(self.src, "approved").as_deref() == Some("yes") {
            return true;
        }
        let open_state = match target.attr(self.src, "state") {
            Some(state) => V1_OPEN_STATES.contains(&state.as_str()),
            None => target
                .attr(self.src, "state-qualifier")
                .is_some_and(|q| V1_SUGGESTIONS.contains(&q.as_str())),
        };
        let not_started = unit.attr(self.src, "mq:status").as_deref() == Some(MEMOQ_NOT_STARTED);
        !open_state && !not_started
    }

    fn text(&self, range: &Range<usize>) -> &str {
        self.src.get(range.clone()).unwrap_or("")
    }

    fn translatable(&self, elem: &Elem<'_>, inherited: bool) -> bool {
        match elem.attr(self.src, "translate").as_deref() {
            Some("no") => false,
            Some("yes") => true,
            _ => inherited,
        }
    }

    fn element(&mut self, elem: &Elem<'_>, inherited: bool) {
        let translate = self.translatable(elem, inherited);
        match (self.version, local(elem.name)) {
            (Version::V1, "file") => {
                let declared = elem.attr(self.src, "target-language");
                self.keep = self.keeps_targets_in(declared.as_deref());
                self.file_keys = access_keys_in_file(
                    elem.attr(self.src, "datatype").as_deref(),
                    elem.attr(self.src, "original").as_deref(),
                );
                self.edits.push(Edit::Lang {
                    range: elem.start.clone(),
                    name: "target-language",
                    existing: declared,
                });
            }
            (Version::V1, "trans-unit") => {
                if translate {
                    self.unit_v1(elem);
                }
                return;
            }
            (Version::V2, "unit") => {
                if translate {
                    for child in elem.elems() {
                        if local(child.name) == "segment" {
                            self.segment_v2(child);
                        }
                    }
                }
                return;
            }
            _ => {}
        }
        for child in elem.elems() {
            self.element(child, translate);
        }
    }

    /// A 1.2 `trans-unit`.
    fn unit_v1(&mut self, unit: &Elem<'_>) {
        let child = |name: &str| unit.elems().find(|e| local(e.name) == name);
        let Some(source) = child("source") else {
            return;
        };
        let seg_source = child("seg-source").filter(|s| self.has_seg_mrk(s));
        let defs = SegDefs::of(self.src, child("seg-defs"));
        let existing = child("target");
        if seg_source.is_none() && self.settled_v1(unit, existing) {
            return;
        }
        self.unit_keys = self.file_keys
            || unit
                .attr(self.src, "restype")
                .is_some_and(|t| CONTROL_RESTYPES.contains(&t.trim_start_matches("x-")));
        let mut translated_mids = Vec::new();
        let template = match seg_source {
            Some(seg) => {
                let mut out = Vec::new();
                self.segmented(
                    &seg.children,
                    &defs,
                    existing,
                    &mut translated_mids,
                    &mut out,
                );
                out
            }
            None => self.template(source),
        };
        let translates = template.iter().any(|p| matches!(p, Piece::Slot { .. }));
        // Every segment of a segmented unit settled: the unit stays as it is.
        if seg_source.is_some() && !translates {
            return;
        }
        // memoQ: a unit translated here is pre-translated, no longer new.
        if translates && unit.attr(self.src, "mq:status").is_some() {
            self.edits.push(Edit::Fixed {
                range: unit.start.clone(),
                text: set_attr(self.text(&unit.start), "mq:status", MEMOQ_PRE_TRANSLATED),
            });
        }
        let after = seg_source.map_or(source.span().end, |s| s.span().end.max(source.span().end));
        // Trados keeps its states in `sdl:seg`, not on the target.
        let states_on_target = defs.0.is_empty();
        self.target(unit, source, existing, after, template, states_on_target);
        // Trados: the segments translated here are machine-translated drafts.
        for (mid, seg) in &defs.0 {
            if translated_mids.contains(mid) {
                let tag = set_attr(self.text(&seg.start), "conf", "Draft");
                self.edits.push(Edit::Fixed {
                    range: seg.start.clone(),
                    text: set_attr(&tag, "origin", "mt"),
                });
            }
        }
    }

    /// A 2.x `segment`: its state set, its target written.
    fn segment_v2(&mut self, segment: &Elem<'_>) {
        let Some(source) = segment.elems().find(|e| local(e.name) == "source") else {
            return;
        };
        let existing = segment.elems().find(|e| local(e.name) == "target");
        let open_state = segment
            .attr(self.src, "state")
            .is_none_or(|s| V2_OPEN_STATES.contains(&s.as_str()));
        if self.keep && !open_state && existing.is_some_and(|t| self.has_text(t)) {
            return;
        }
        let template = self.template(source);
        self.edits.push(Edit::Fixed {
            range: segment.start.clone(),
            text: set_attr(self.text(&segment.start), "state", "translated"),
        });
        self.target(
            segment,
            source,
            existing,
            source.span().end,
            template,
            false,
        );
    }

    /// The target edit of `parent`: `existing` replaced, else a new target
    /// after byte `after`, indented like `source`.
    fn target(
        &mut self,
        parent: &Elem<'_>,
        source: &Elem<'_>,
        existing: Option<&Elem<'_>>,
        after: usize,
        template: Vec<Piece>,
        state_on_target: bool,
    ) {
        let name = format!(
            "{}{}target",
            prefix(source.name),
            if prefix(source.name).is_empty() {
                ""
            } else {
                ":"
            }
        );
        // Machine-translated text is marked so (1.2's `state-qualifier`); a
        // source without text is copied as it is.
        let machine = template.iter().any(|p| matches!(p, Piece::Slot { .. }));
        let edit = match existing {
            Some(target) => {
                let mut open = self.text(&target.start).to_owned();
                if target.end.is_none() {
                    open = format!(
                        "{}>",
                        open.trim_end_matches('>').trim_end_matches('/').trim_end()
                    );
                }
                if state_on_target {
                    open = set_attr(&open, "state", "translated");
                    if machine {
                        open = set_attr(&open, "state-qualifier", "leveraged-mt");
                    }
                }
                let close = match &target.end {
                    Some(end) => self.text(end).to_owned(),
                    None => format!("</{}>", target.name),
                };
                // A replaced target that names its language names the new one.
                let lang = target.attr(self.src, "xml:lang").is_some();
                Edit::Target {
                    range: target.span(),
                    open,
                    lang,
                    close,
                    template,
                }
            }
            None => {
                let indent = indent_before(self.src, parent, source);
                let state = match (state_on_target, machine) {
                    (true, true) => " state=\"translated\" state-qualifier=\"leveraged-mt\"",
                    (true, false) => " state=\"translated\"",
                    (false, _) => "",
                };
                Edit::Target {
                    range: after..after,
                    open: format!("{indent}<{name}{state}>"),
                    lang: state_on_target,
                    close: format!("</{name}>"),
                    template,
                }
            }
        };
        self.edits.push(edit);
    }

    /// A source's content as one slot (or as itself when it has no text).
    fn template(&mut self, source: &Elem<'_>) -> Vec<Piece> {
        vec![self.slot(source)]
    }

    /// Whether `elem` holds a `<mrk mtype="seg">`, at any depth (Trados
    /// nests them in the paragraph's `g`).
    fn has_seg_mrk(&self, elem: &Elem<'_>) -> bool {
        elem.elems()
            .any(|e| self.is_seg_mrk(e) || self.has_seg_mrk(e))
    }

    fn is_seg_mrk(&self, elem: &Elem<'_>) -> bool {
        local(elem.name) == "mrk" && elem.attr(self.src, "mtype").as_deref() == Some("seg")
    }

    /// The content of a `seg-source` into `out`: each `<mrk mtype="seg">` a
    /// slot, elements around them (Trados' `g`) written around their slots,
    /// the rest as it is. A segment Trados locked or confirmed (`sdl:seg`)
    /// keeps its target `mrk` when it has one; the mids of the slots go to
    /// `translated`.
    fn segmented(
        &mut self,
        children: &[XNode<'_>],
        defs: &SegDefs<'_, '_>,
        target: Option<&Elem<'_>>,
        translated: &mut Vec<String>,
        out: &mut Vec<Piece>,
    ) {
        for child in children {
            match child {
                XNode::Elem(m) if self.is_seg_mrk(m) => {
                    let mid = m.attr(self.src, "mid").unwrap_or_default();
                    let kept = target
                        .filter(|_| self.keep && defs.settled(self.src, &mid))
                        .and_then(|t| seg_mrk(self.src, t, &mid))
                        .filter(|t| !t.text(self.src).trim().is_empty());
                    if let Some(kept) = kept {
                        out.push(Piece::Raw(self.text(&kept.span()).to_owned()));
                        continue;
                    }
                    out.push(Piece::Raw(self.text(&m.start).to_owned()));
                    if let Some(end) = &m.end {
                        let slot = self.slot(m);
                        if matches!(slot, Piece::Slot { .. }) {
                            translated.push(mid);
                        }
                        out.push(slot);
                        out.push(Piece::Raw(self.text(end).to_owned()));
                    }
                }
                XNode::Elem(e) if e.end.is_some() && self.has_seg_mrk(e) => {
                    out.push(Piece::Raw(self.text(&e.start).to_owned()));
                    self.segmented(&e.children, defs, target, translated, out);
                    if let Some(end) = &e.end {
                        out.push(Piece::Raw(self.text(end).to_owned()));
                    }
                }
                XNode::Elem(e) => out.push(Piece::Raw(self.text(&e.span()).to_owned())),
                XNode::Text(range, _) => out.push(Piece::Raw(self.text(range).to_owned())),
            }
        }
    }

    /// The content of `elem` as a segment with its tags, or as raw markup
    /// when it holds no text.
    fn slot(&mut self, elem: &Elem<'_>) -> Piece {
        let mut builder = SegmentBuilder::new();
        let mut tags = Vec::new();
        let version = self.version;
        let paired = move |e: &Elem<'_>, _: &[&Elem<'_>]| match version {
            Version::V1 => matches!(local(e.name), "g" | "mrk"),
            Version::V2 => matches!(local(e.name), "pc" | "mrk"),
        };
        xml::inline_segment(self.src, &elem.children, &paired, &mut builder, &mut tags);
        if !builder.has_text() {
            let inner = match &elem.end {
                Some(end) => self.src.get(elem.start.end..end.start).unwrap_or(""),
                None => "",
            };
            return Piece::Raw(inner.to_owned());
        }
        let mut text = builder.finish();
        // An ICU message (Angular's plurals and selects) keeps its skeleton.
        if let Some((with, message_tags)) = crate::placeholders::with_messages(&text, &tags) {
            (text, tags) = (with, message_tags);
        }
        // A control's label: its access key leaves the text the engine sees.
        let mut key = None;
        if self.unit_keys
            && tags.is_empty()
            && let Some((stripped, found)) = Accelerator::find(&inline::plain_text(&text))
        {
            text = inline::escape(&stripped);
            key = Some(found);
        }
        let segment = self.segments.len();
        self.segments.push(text);
        Piece::Slot { segment, tags, key }
    }
}

/// Trados' segment definitions of a unit (`sdl:seg-defs`): each `sdl:seg`
/// by its id.
struct SegDefs<'a, 't>(Vec<(String, &'a Elem<'t>)>);

impl<'a, 't> SegDefs<'a, 't> {
    fn of(src: &str, defs: Option<&'a Elem<'t>>) -> Self {
        SegDefs(
            defs.into_iter()
                .flat_map(|d| d.elems())
                .filter(|e| local(e.name) == "seg")
                .filter_map(|e| Some((e.attr(src, "id")?, e)))
                .collect(),
        )
    }

    /// Whether segment `mid` is locked or its translation confirmed.
    fn settled(&self, src: &str, mid: &str) -> bool {
        self.0.iter().any(|(id, seg)| {
            id == mid
                && (seg.attr(src, "locked").as_deref() == Some("true")
                    || matches!(
                        seg.attr(src, "conf").as_deref(),
                        Some("Translated" | "ApprovedTranslation" | "ApprovedSignOff")
                    ))
        })
    }
}

/// The `<mrk mtype="seg" mid="…">` of a target, at any depth.
fn seg_mrk<'a, 't>(src: &str, target: &'a Elem<'t>, mid: &str) -> Option<&'a Elem<'t>> {
    target.elems().find_map(|m| {
        if local(m.name) == "mrk"
            && m.attr(src, "mtype").as_deref() == Some("seg")
            && m.attr(src, "mid").as_deref() == Some(mid)
        {
            Some(m)
        } else {
            seg_mrk(src, m, mid)
        }
    })
}

/// The white space before `source` inside `parent` (its indentation), with
/// the line break before it; empty when `source` follows other content.
fn indent_before(src: &str, parent: &Elem<'_>, source: &Elem<'_>) -> String {
    let mut previous: Option<&XNode<'_>> = None;
    for child in &parent.children {
        if let XNode::Elem(e) = child
            && e.start == source.start
        {
            break;
        }
        previous = Some(child);
    }
    match previous {
        Some(XNode::Text(range, TextKind::Chars)) => {
            let ws = src.get(range.clone()).unwrap_or("");
            if ws.trim().is_empty() {
                ws.rfind('\n').map_or(ws, |i| &ws[i..]).to_owned()
            } else {
                String::new()
            }
        }
        _ => String::new(),
    }
}

/// `tag` (a start tag) with attribute `name` set to `value` (added before
/// the tag's end when it is missing).
fn set_attr(tag: &str, name: &str, value: &str) -> String {
    let escaped = value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;");
    let bytes = tag.as_bytes();
    let mut from = 0;
    while let Some(found) = tag[from..].find(name) {
        let at = from + found;
        let before_ok = at > 0 && bytes[at - 1].is_ascii_whitespace();
        let rest = tag[at + name.len()..].trim_start();
        if before_ok && rest.starts_with('=') {
            let value_start = tag.len() - rest.len() + 1;
            let after_eq = tag[value_start..].trim_start();
            let quote_at = tag.len() - after_eq.len();
            if let Some(quote) = after_eq.chars().next().filter(|q| *q == '"' || *q == '\'')
                && let Some(close) = tag[quote_at + 1..].find(quote)
            {
                let end = quote_at + 1 + close;
                return format!("{}{escaped}{}", &tag[..quote_at + 1], &tag[end..]);
            }
        }
        from = at + name.len();
    }
    let body_end = if tag.ends_with("/>") {
        tag.len() - 2
    } else {
        tag.len().saturating_sub(1)
    };
    let head = tag[..body_end].trim_end();
    format!("{head} {name}=\"{escaped}\"{}", &tag[body_end..])
}

/// Writes text escaped for XML character data.
fn escape(out: &mut String, text: &str) {
    inline::escape_into(out, text);
}

impl crate::filter::Skeleton for Skeleton {
    fn merge(
        &self,
        _source: &[String],
        translated: &[String],
        language: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        let language = language.map(|l| self.specific(l));
        let language = language.as_deref();
        let src = &self.source;
        let mut out = String::with_capacity(src.len() + src.len() / 2);
        let mut at = 0;
        for edit in &self.edits {
            let range = match edit {
                Edit::Target { range, .. }
                | Edit::Lang { range, .. }
                | Edit::Fixed { range, .. } => range,
            };
            if range.start < at {
                continue;
            }
            out.push_str(&src[at..range.start]);
            match edit {
                Edit::Target {
                    open,
                    lang,
                    close,
                    template,
                    ..
                } => {
                    match (lang, language) {
                        (true, Some(l)) => out.push_str(&set_attr(open, "xml:lang", l)),
                        _ => out.push_str(open),
                    }
                    for piece in template {
                        match piece {
                            Piece::Raw(raw) => out.push_str(raw),
                            Piece::Slot { segment, tags, key } => {
                                let translation =
                                    translated.get(*segment).map_or("", String::as_str);
                                match key {
                                    Some(key) => escape(
                                        &mut out,
                                        &key.place(&inline::plain_text(translation)),
                                    ),
                                    None => inline::write_tags(&mut out, translation, tags, escape),
                                }
                            }
                        }
                    }
                    out.push_str(close);
                }
                Edit::Lang { existing, .. } if existing.as_deref() == language => {
                    out.push_str(&src[range.clone()]);
                }
                Edit::Lang { name, .. } => {
                    let tag = &src[range.clone()];
                    match language {
                        Some(l) => out.push_str(&set_attr(tag, name, l)),
                        None => out.push_str(tag),
                    }
                }
                Edit::Fixed { text, .. } => out.push_str(text),
            }
            at = range.end;
        }
        out.push_str(&src[at..]);
        Ok(self.form.encode(&out, true))
    }
}

impl Skeleton {
    /// The target language to write: `lang`, or the document's own target
    /// language when it is a variant of it (a Trados project's `es-ES` for
    /// `es`), so tools that check it still open the file.
    fn specific(&self, lang: &str) -> String {
        if lang.contains('-') {
            return lang.to_owned();
        }
        self.edits
            .iter()
            .find_map(|e| match e {
                Edit::Lang {
                    existing: Some(existing),
                    ..
                } if tolk_lang::same_language(existing, lang) => Some(existing.clone()),
                _ => None,
            })
            .unwrap_or_else(|| lang.to_owned())
    }
}

#[cfg(test)]
mod tests;
