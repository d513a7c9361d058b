//! The markup languages of the packages' translatable parts: one [`Dialect`]
//! each (WordprocessingML, DrawingML, SpreadsheetML, OpenDocument's mixed
//! content, InDesign stories, plain elements), naming its paragraphs, runs,
//! text, breaks, containers, markers and language marks.

use super::pieces::{self, Pieces};

/// The vocabulary of paragraphs in one markup language of Office Open XML.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// The elements that are paragraphs (`w:p`).
    pub paragraphs: &'static [&'static str],
    /// Its properties, first child (`w:pPr`).
    pub paragraph_props: &'static str,
    /// A run (`w:r`).
    pub run: &'static str,
    /// A run's properties (`w:rPr`).
    pub run_props: &'static str,
    /// A run's text (`w:t`).
    pub text: &'static str,
    /// A run written for translated text, open and close.
    pub run_open: &'static str,
    /// See [`Dialect::run_open`].
    pub run_close: &'static str,
    /// The text element written, open and close.
    pub text_open: &'static str,
    /// See [`Dialect::text_open`].
    pub text_close: &'static str,
    /// How a translation's line breaks and tabs are written.
    pub breaks: Breaks,
    /// Whether text elements may stand in a paragraph without a run (the
    /// plain strings of SpreadsheetML).
    pub bare_text: bool,
    /// Whether paragraphs hold their text as character data, with spans as
    /// containers (OpenDocument's mixed content), instead of in text elements.
    pub mixed: bool,
    /// Elements standing for spaces in mixed content (`text:s`, with its
    /// `text:c` count), read as spaces.
    pub spaces: &'static [&'static str],
    /// Elements whose content is part of the paragraph's text flow.
    pub containers: &'static [&'static str],
    /// Run children that may be dropped if a translation loses them.
    pub droppable: &'static [&'static str],
    /// Run properties (elements or attributes) ignored when deciding whether
    /// two runs look the same.
    pub ignored_props: &'static [&'static str],
    /// Markers dropped from translated paragraphs (spell-check marks, layout
    /// hints).
    pub dropped: &'static [&'static str],
    /// Attributes whose values are text to translate, by element: alt text.
    pub attributes: &'static [(&'static str, &'static str)],
    /// Elements holding text, not paragraphs, with translatable pieces in
    /// it: formulas' structured references, chart caches' values.
    pub pieces: &'static [(&'static str, &'static Pieces)],
    /// Text bodies (`p:txBody`) whose properties (`a:bodyPr`) get a font
    /// scale when their translation is longer than the source.
    pub text_bodies: &'static [&'static str],
    /// Named styles that mark code (pandoc's `VerbatimChar`, Word's
    /// `HTMLCode`, LibreOffice's `Source Text`): a run, span or paragraph in
    /// one is kept as it is.
    pub code_styles: &'static [&'static str],
    /// Zero-width markers (bookmarks, comment ranges): one that falls inside a
    /// word is moved to the word's end, so the engine sees the word whole.
    pub markers: &'static [&'static str],
    /// Hard breaks (line breaks, positional tabs): a segment ends at each
    /// one standing directly in the paragraph.
    pub hard_breaks: &'static [&'static str],
    /// Tracked changes holding text (`w:ins`): a word cut by their boundary
    /// is made whole outside them, so the engine sees it whole.
    pub revisions: &'static [&'static str],
    /// How a translated run is marked with the target language.
    pub lang: Option<LangMark>,
    /// Whether a run's own attributes are part of its style, not only its
    /// properties element (IDML's `CharacterStyleRange`).
    pub run_attributes: bool,
}

/// How a dialect marks the language of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LangMark {
    /// A child of the run properties (`<w:lang w:val="…"/>`), written before
    /// the first of `before` (the schema's order).
    Element {
        /// The element.
        name: &'static str,
        /// Its attribute holding the language.
        attr: &'static str,
        /// Run properties that follow it.
        before: &'static [&'static str],
    },
    /// An attribute of the run properties (DrawingML's `lang`).
    Attribute(&'static str),
}

/// How a dialect writes the line breaks and tabs of translated text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Breaks {
    /// As elements inside the run (`w:br`, `w:tab`).
    InRun {
        /// The line break.
        line: &'static str,
        /// The tab.
        tab: &'static str,
    },
    /// Line breaks sit between runs (DrawingML's `a:br`): a newline becomes a
    /// space; a tab stays a character.
    Between,
    /// As characters of the text (SpreadsheetML).
    InText,
}

/// WordprocessingML (`word/*.xml`).
pub(crate) static WORD: Dialect = Dialect {
    paragraphs: &["w:p"],
    paragraph_props: "w:pPr",
    run: "w:r",
    run_props: "w:rPr",
    text: "w:t",
    run_open: "<w:r>",
    run_close: "</w:r>",
    text_open: "<w:t xml:space=\"preserve\">",
    text_close: "</w:t>",
    breaks: Breaks::InRun {
        line: "<w:br/>",
        tab: "<w:tab/>",
    },
    bare_text: false,
    mixed: false,
    spaces: &[],
    containers: &[
        "w:hyperlink",
        "w:ins",
        "w:moveTo",
        "w:smartTag",
        "w:customXml",
        "w:fldSimple",
        "w:sdt",
        "w:sdtContent",
        "w:dir",
        "w:bdo",
    ],
    droppable: &["w:tab", "w:cr", "w:noBreakHyphen", "w:softHyphen"],
    ignored_props: &["w:lang", "w:noProof"],
    dropped: &["w:proofErr", "w:lastRenderedPageBreak"],
    attributes: &[("wp:docPr", "descr"), ("wp:docPr", "title")],
    pieces: &[],
    text_bodies: &[],
    code_styles: &[
        "VerbatimChar",
        "SourceCode",
        "HTMLCode",
        "HTMLKeyboard",
        "HTMLSample",
        "HTMLTypewriter",
        "HTMLPreformatted",
        "SourceText",
        "Teletype",
        "PreformattedText",
    ],
    markers: &[
        "w:bookmarkStart",
        "w:bookmarkEnd",
        "w:commentRangeStart",
        "w:commentRangeEnd",
        "w:permStart",
        "w:permEnd",
        "w:del",
        "w:moveFrom",
    ],
    hard_breaks: &["w:br", "w:cr", "w:ptab"],
    revisions: &["w:ins", "w:moveTo"],
    lang: Some(LangMark::Element {
        name: "w:lang",
        attr: "w:val",
        before: &["w:eastAsianLayout", "w:specVanish", "w:oMath"],
    }),
    run_attributes: false,
};

/// DrawingML text (`a:p` in slides, notes, shapes, charts, diagrams).
pub(crate) static DRAWING: Dialect = Dialect {
    paragraphs: &["a:p"],
    paragraph_props: "a:pPr",
    run: "a:r",
    run_props: "a:rPr",
    text: "a:t",
    run_open: "<a:r>",
    run_close: "</a:r>",
    text_open: "<a:t>",
    text_close: "</a:t>",
    breaks: Breaks::Between,
    bare_text: false,
    mixed: false,
    spaces: &[],
    containers: &[],
    droppable: &[],
    ignored_props: &[
        "lang", "altLang", "dirty", "err", "noProof", "smtClean", "smtId",
    ],
    dropped: &[],
    attributes: &[
        ("p:cNvPr", "descr"),
        ("p:cNvPr", "title"),
        ("xdr:cNvPr", "descr"),
    ],
    pieces: &[("c:v", &pieces::CACHED_TEXT)],
    text_bodies: &["p:txBody"],
    code_styles: &[],
    markers: &[],
    hard_breaks: &["a:br"],
    revisions: &[],
    lang: Some(LangMark::Attribute("lang")),
    run_attributes: false,
};

/// SpreadsheetML strings: shared strings (`si`), inline strings (`is`) and
/// the text of cell comments (`text`), plain (`t`) or rich (`r`).
pub(crate) static SPREADSHEET: Dialect = Dialect {
    paragraphs: &["si", "is", "text"],
    paragraph_props: "",
    run: "r",
    run_props: "rPr",
    text: "t",
    run_open: "<r>",
    run_close: "</r>",
    text_open: "<t xml:space=\"preserve\">",
    text_close: "</t>",
    breaks: Breaks::InText,
    bare_text: true,
    mixed: false,
    spaces: &[],
    containers: &[],
    droppable: &[],
    ignored_props: &[],
    dropped: &[],
    attributes: &[
        ("tableColumn", "name"),
        ("tableColumn", "totalsRowLabel"),
        ("cacheField", "name"),
        ("s", "v"),
        ("dataField", "name"),
    ],
    pieces: &[
        ("f", &pieces::STRUCTURED_REFERENCES),
        ("definedName", &pieces::STRUCTURED_REFERENCES),
        ("calculatedColumnFormula", &pieces::STRUCTURED_REFERENCES),
        ("totalsRowFormula", &pieces::STRUCTURED_REFERENCES),
        ("oddHeader", &pieces::HEADER_FOOTER),
        ("oddFooter", &pieces::HEADER_FOOTER),
        ("evenHeader", &pieces::HEADER_FOOTER),
        ("evenFooter", &pieces::HEADER_FOOTER),
        ("firstHeader", &pieces::HEADER_FOOTER),
        ("firstFooter", &pieces::HEADER_FOOTER),
    ],
    text_bodies: &[],
    code_styles: &[],
    markers: &[],
    hard_breaks: &[],
    revisions: &[],
    lang: None,
    run_attributes: false,
};

/// Markup whose paragraphs hold character data directly (no runs, no text
/// elements): the base of [`OPEN_DOCUMENT`] and [`PLAIN`].
const MIXED_CONTENT: Dialect = Dialect {
    paragraphs: &[],
    paragraph_props: "",
    run: "",
    run_props: "",
    text: "",
    run_open: "",
    run_close: "",
    text_open: "",
    text_close: "",
    breaks: Breaks::InText,
    bare_text: true,
    mixed: true,
    spaces: &[],
    containers: &[],
    droppable: &[],
    ignored_props: &[],
    dropped: &[],
    attributes: &[],
    pieces: &[],
    text_bodies: &[],
    code_styles: &[],
    markers: &[],
    hard_breaks: &[],
    revisions: &[],
    lang: None,
    run_attributes: false,
};

/// OpenDocument text (`text:p`, `text:h` in `content.xml` and `styles.xml`
/// of odt, odp and ods): character data in paragraphs and spans.
pub(crate) static OPEN_DOCUMENT: Dialect = Dialect {
    paragraphs: &["text:p", "text:h"],
    breaks: Breaks::InRun {
        line: "<text:line-break/>",
        tab: "<text:tab/>",
    },
    spaces: &["text:s"],
    containers: &["text:span", "text:a", "text:meta"],
    code_styles: &["Source_20_Text", "Teletype", "Preformatted_20_Text"],
    dropped: &["text:soft-page-break"],
    markers: &[
        "text:bookmark",
        "text:bookmark-start",
        "text:bookmark-end",
        "office:annotation-end",
    ],
    hard_breaks: &["text:line-break"],
    ..MIXED_CONTENT
};

/// Adobe InDesign stories (`Stories/Story_*.xml` of IDML): paragraphs
/// (`ParagraphStyleRange`) of runs (`CharacterStyleRange`, their style in
/// their attributes and `Properties`) holding `Content`; a `Br` ends a
/// paragraph within a range, so it ends a segment.
pub(crate) static IDML: Dialect = Dialect {
    paragraphs: &["ParagraphStyleRange"],
    paragraph_props: "Properties",
    run: "CharacterStyleRange",
    run_props: "Properties",
    text: "Content",
    run_open: "<CharacterStyleRange>",
    run_close: "</CharacterStyleRange>",
    text_open: "<Content>",
    text_close: "</Content>",
    breaks: Breaks::InText,
    bare_text: false,
    mixed: false,
    spaces: &[],
    containers: &["XMLElement", "HyperlinkTextSource", "Change"],
    droppable: &[],
    ignored_props: &["AppliedLanguage"],
    dropped: &[],
    attributes: &[],
    pieces: &[],
    text_bodies: &[],
    code_styles: &[],
    markers: &["HyperlinkTextDestination"],
    hard_breaks: &["Br"],
    revisions: &[],
    lang: None,
    run_attributes: true,
};

/// Document properties and plain-text comments: elements holding only
/// character data (`dc:title`, `dc:subject`, `dc:description`,
/// `cp:keywords` in `docProps/core.xml`, `meta:keyword` in OpenDocument's
/// `meta.xml`, `p:text` of PowerPoint's comments, `text` of Excel's threaded
/// comments).
pub(crate) static PLAIN: Dialect = Dialect {
    paragraphs: &[
        "dc:title",
        "dc:subject",
        "dc:description",
        "cp:keywords",
        "meta:keyword",
        "p:text",
        "text",
    ],
    ..MIXED_CONTENT
};

/// The document properties part of every Office Open XML package.
pub(crate) const CORE_PROPERTIES: &str = "docProps/core.xml";
