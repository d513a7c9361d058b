//! The benchmark's documents: the same generated paragraphs as a minimal
//! file of each format (every third paragraph with a bold first sentence
//! where the format has inline markup).

use std::io::Write as _;

use anyhow::{Context, Result};

/// The office formats the documents benchmark can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Word: paragraphs in `word/document.xml`.
    Docx,
    /// PowerPoint: ten paragraphs per slide, in one text box.
    Pptx,
    /// Excel: one shared string per paragraph, a column of cells.
    Xlsx,
    /// OpenDocument text: paragraphs in `content.xml`.
    Odt,
    /// XLIFF 1.2: one `trans-unit` per paragraph, bold as `<g>`.
    Xliff,
    /// JSON: one string value per paragraph.
    Json,
    /// SubRip: one cue per paragraph, bold as `<b>`.
    Srt,
    /// Markdown: one paragraph per paragraph, bold as `**`.
    Md,
    /// A Rails locale file: one value per paragraph under `en:`.
    Yaml,
    /// Java properties: one `key = value` per paragraph.
    Properties,
    /// Apple .strings: one `"key" = "value";` per paragraph.
    Strings,
    /// HTML: one `<p>` per paragraph, bold as `<b>`.
    Html,
    /// .NET resources: one `data` entry per paragraph.
    Resx,
    /// Android string resources: one `string` per paragraph.
    Android,
    /// A DITA topic: one `p` per paragraph in its body.
    Dita,
    /// RTF: one `\\par` per paragraph, bold as `\\b`.
    Rtf,
    /// FrameMaker MIF: one `Para` per paragraph in one text flow, bold as a
    /// `Font` change.
    Mif,
    /// PDF: lines of Helvetica, ten points, paragraphs a gap apart, pages
    /// of US Letter.
    Pdf,
    /// A PNG picture of an A4 page at 150 dpi: paragraphs of 28-pixel
    /// Liberation Sans, black on white (read by OCR).
    Png,
}

impl Format {
    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Docx => "docx",
            Format::Pptx => "pptx",
            Format::Xlsx => "xlsx",
            Format::Odt => "odt",
            Format::Xliff => "xlf",
            Format::Json => "json",
            Format::Srt => "srt",
            Format::Md => "md",
            Format::Yaml => "yml",
            Format::Properties => "properties",
            Format::Strings => "strings",
            Format::Html => "html",
            Format::Resx => "resx",
            Format::Android => "xml",
            Format::Dita => "dita",
            Format::Rtf => "rtf",
            Format::Mif => "mif",
            Format::Pdf => "pdf",
            Format::Png => "png",
        }
    }

    /// Whether a file of this format whose bytes are not UTF-8 is read as
    /// windows-1252 (a legacy text file rather than markup declaring its
    /// encoding).
    pub fn read_as_windows_1252(self) -> bool {
        matches!(
            self,
            Format::Json | Format::Srt | Format::Md | Format::Yaml | Format::Strings
        )
    }

    /// A document of this format holding `paragraphs`.
    pub fn build(self, paragraphs: &[String]) -> Result<Vec<u8>> {
        match self {
            Format::Docx => docx(paragraphs),
            Format::Pptx => pptx(paragraphs),
            Format::Xlsx => xlsx(paragraphs),
            Format::Odt => odt(paragraphs),
            Format::Xliff => Ok(xliff(paragraphs).into_bytes()),
            Format::Json => Ok(serde_json::to_vec_pretty(&json(paragraphs))?),
            Format::Srt => Ok(srt(paragraphs).into_bytes()),
            Format::Md => Ok(markdown(paragraphs).into_bytes()),
            Format::Yaml => Ok(lines("en:\n", paragraphs, "", |i, p| {
                format!(
                    "  p{i}: \"{}\"\n",
                    p.replace('\\', "\\\\").replace('"', "\\\"")
                )
            })),
            Format::Properties => Ok(lines("# Benchmark\n", paragraphs, "", |i, p| {
                format!("p{i} = {p}\n")
            })),
            Format::Strings => Ok(lines("/* Benchmark */\n", paragraphs, "", |i, p| {
                format!("\"p{i}\" = \"{}\";\n", p.replace('"', "\\\""))
            })),
            Format::Html => Ok(lines(
                "<!DOCTYPE html>\n<html><head><title>Benchmark</title></head><body>\n",
                paragraphs,
                "</body></html>\n",
                paragraph_element,
            )),
            Format::Android => Ok(lines(
                &format!("{XML_DECL}<resources>\n"),
                paragraphs,
                "</resources>\n",
                |i, p| {
                    format!(
                        "    <string name=\"p{i}\">{}</string>\n",
                        xml_escape(p).replace('\'', "\\'")
                    )
                },
            )),
            Format::Dita => Ok(lines(
                &format!("{XML_DECL}<topic id=\"bench\"><title>Benchmark</title><body>\n"),
                paragraphs,
                "</body></topic>\n",
                paragraph_element,
            )),
            Format::Rtf => Ok(lines(
                "{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Times;}}\n",
                paragraphs,
                "}\n",
                |i, p| {
                    let p = p
                        .replace('\\', "\\\\")
                        .replace('{', "\\{")
                        .replace('}', "\\}");
                    match bold_first(i, &p) {
                        Some((first, rest)) => format!("{{\\b {first}.}} {rest}\\par\n"),
                        None => format!("{p}\\par\n"),
                    }
                },
            )),
            Format::Pdf => pdf(paragraphs),
            Format::Png => png(paragraphs),
            Format::Mif => Ok(lines(
                "<MIFFile 2015> # Benchmark\n<TextFlow\n <TFTag `A'>\n",
                paragraphs,
                "> # end of TextFlow\n",
                |i, p| {
                    let p = p
                        .replace('\\', "\\\\")
                        .replace('\'', "\\q")
                        .replace('>', "\\>");
                    let strings = match bold_first(i, &p) {
                        Some((first, rest)) => format!(
                            "   <Font <FWeight `Bold'>>\n   <String `{first}.'>\n   <Font <FWeight `Regular'>>\n   <String ` {rest}'>\n"
                        ),
                        None => format!("   <String `{p}'>\n"),
                    };
                    format!(
                        " <Para\n  <PgfTag `Body'>\n  <ParaLine\n{strings}  > # end of ParaLine\n > # end of Para\n"
                    )
                },
            )),
            Format::Resx => Ok(lines(
                &format!("{XML_DECL}<root>\n"),
                paragraphs,
                "</root>\n",
                |i, p| {
                    format!(
                        "  <data name=\"p{i}\" xml:space=\"preserve\"><value>{}</value></data>\n",
                        xml_escape(p)
                    )
                },
            )),
        }
    }
}

/// Paragraph `i` split at its first sentence when it is one of every third
/// (bold where the format marks it).
fn bold_first(i: usize, p: &str) -> Option<(&str, &str)> {
    i.is_multiple_of(3).then(|| p.split_once(". ")).flatten()
}

fn xliff(paragraphs: &[String]) -> String {
    let mut out = format!(
        "{XML_DECL}<xliff version=\"1.2\" xmlns=\"urn:oasis:names:tc:xliff:document:1.2\">\n<file original=\"bench\" datatype=\"plaintext\" source-language=\"en\" target-language=\"es\">\n<body>\n"
    );
    for (i, p) in paragraphs.iter().enumerate() {
        let source = match bold_first(i, p) {
            Some((first, rest)) => format!(
                "<g id=\"1\">{}.</g> {}",
                xml_escape(first),
                xml_escape(rest)
            ),
            None => xml_escape(p),
        };
        out.push_str(&format!(
            "  <trans-unit id=\"p{i}\">\n    <source>{source}</source>\n  </trans-unit>\n"
        ));
    }
    out.push_str("</body>\n</file>\n</xliff>\n");
    out
}

fn json(paragraphs: &[String]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = paragraphs
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("p{i}"), serde_json::Value::String(p.clone())))
        .collect();
    serde_json::Value::Object(map)
}

fn srt(paragraphs: &[String]) -> String {
    let time = |ms: usize| {
        format!(
            "{:02}:{:02}:{:02},{:03}",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        )
    };
    let mut out = String::new();
    for (i, p) in paragraphs.iter().enumerate() {
        let text = match bold_first(i, p) {
            Some((first, rest)) => format!("<b>{first}.</b> {rest}"),
            None => p.clone(),
        };
        out.push_str(&format!(
            "{}\n{} --> {}\n{text}\n\n",
            i + 1,
            time(i * 4000),
            time(i * 4000 + 3500)
        ));
    }
    out
}

fn markdown(paragraphs: &[String]) -> String {
    let mut out = String::from("# Benchmark\n\n");
    for (i, p) in paragraphs.iter().enumerate() {
        match bold_first(i, p) {
            Some((first, rest)) => out.push_str(&format!("**{first}.** {rest}\n\n")),
            None => out.push_str(&format!("{p}\n\n")),
        }
    }
    out
}

/// Paragraph `i` as a `<p>` element (HTML, DITA), its bold first sentence in
/// `<b>`.
fn paragraph_element(i: usize, p: &str) -> String {
    match bold_first(i, p) {
        Some((first, rest)) => format!(
            "<p><b>{}.</b> {}</p>\n",
            xml_escape(first),
            xml_escape(rest)
        ),
        None => format!("<p>{}</p>\n", xml_escape(p)),
    }
}

/// `head`, one line (or more) per paragraph by `line`, `tail`, as bytes.
fn lines(
    head: &str,
    paragraphs: &[String],
    tail: &str,
    line: impl Fn(usize, &str) -> String,
) -> Vec<u8> {
    let mut out = String::from(head);
    for (i, p) in paragraphs.iter().enumerate() {
        out.push_str(&line(i, p));
    }
    out.push_str(tail);
    out.into_bytes()
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

const XML_DECL: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";

/// Writes a ZIP package of `(name, content)` entries, deflated, except the
/// first one when `stored_first` (OpenDocument's `mimetype`).
fn package(entries: &[(&str, String)], stored_first: bool) -> Result<Vec<u8>> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut buf);
    for (i, (name, data)) in entries.iter().enumerate() {
        let opts = zip::write::SimpleFileOptions::default();
        let opts = if i == 0 && stored_first {
            opts.compression_method(zip::CompressionMethod::Stored)
        } else {
            opts
        };
        zip.start_file(*name, opts)?;
        zip.write_all(data.as_bytes())?;
    }
    zip.finish()?;
    Ok(buf.into_inner())
}

fn content_types(overrides: &[(&str, &str)]) -> String {
    let mut out = format!(
        "{XML_DECL}<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/>"
    );
    for (part, kind) in overrides {
        out.push_str(&format!(
            "<Override PartName=\"/{part}\" ContentType=\"application/vnd.openxmlformats-officedocument.{kind}\"/>"
        ));
    }
    out.push_str("</Types>");
    out
}

fn relationships(rels: &[(&str, &str)]) -> String {
    let mut out = format!(
        "{XML_DECL}<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    );
    for (i, (kind, target)) in rels.iter().enumerate() {
        out.push_str(&format!(
            "<Relationship Id=\"rId{}\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/{kind}\" Target=\"{target}\"/>",
            i + 1
        ));
    }
    out.push_str("</Relationships>");
    out
}

/// The markup around bold and plain text: (open, close) each.
type Runs<'a> = ((&'a str, &'a str), (&'a str, &'a str));

/// Paragraph `i` as runs: the first sentence bold for every third one.
fn runs(i: usize, p: &str, ((bold, bold_end), (plain, plain_end)): Runs<'_>) -> String {
    if i.is_multiple_of(3) {
        let (first, rest) = p.split_once(". ").unwrap_or((p, ""));
        format!(
            "{bold}{}. {bold_end}{plain}{}{plain_end}",
            xml_escape(first),
            xml_escape(rest)
        )
    } else {
        format!("{plain}{}{plain_end}", xml_escape(p))
    }
}

fn docx(paragraphs: &[String]) -> Result<Vec<u8>> {
    let mut body = String::new();
    for (i, p) in paragraphs.iter().enumerate() {
        body.push_str("<w:p>");
        body.push_str(&runs(
            i,
            p,
            (
                (
                    "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">",
                    "</w:t></w:r>",
                ),
                ("<w:r><w:t xml:space=\"preserve\">", "</w:t></w:r>"),
            ),
        ));
        body.push_str("</w:p>");
    }
    let document = format!(
        "{XML_DECL}<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}<w:sectPr/></w:body></w:document>"
    );
    package(
        &[
            (
                "[Content_Types].xml",
                content_types(&[("word/document.xml", "wordprocessingml.document.main+xml")]),
            ),
            (
                "_rels/.rels",
                relationships(&[("officeDocument", "word/document.xml")]),
            ),
            ("word/document.xml", document),
        ],
        false,
    )
}

fn pptx(paragraphs: &[String]) -> Result<Vec<u8>> {
    const NS: &str = "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" xmlns:p=\"http://schemas.openxmlformats.org/presentationml/2006/main\"";
    let slides: Vec<String> = paragraphs
        .chunks(10)
        .enumerate()
        .map(|(s, chunk)| {
            let mut body = String::new();
            for (i, p) in chunk.iter().enumerate() {
                body.push_str("<a:p>");
                body.push_str(&runs(
                    s * 10 + i,
                    p,
                    (
                        ("<a:r><a:rPr lang=\"en-US\" b=\"1\"/><a:t>", "</a:t></a:r>"),
                        ("<a:r><a:rPr lang=\"en-US\"/><a:t>", "</a:t></a:r>"),
                    ),
                ));
                body.push_str("</a:p>");
            }
            format!(
                "{XML_DECL}<p:sld {NS}><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id=\"1\" name=\"\"/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/><p:sp><p:nvSpPr><p:cNvPr id=\"2\" name=\"Text\"/><p:cNvSpPr txBox=\"1\"/><p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr><a:normAutofit/></a:bodyPr><a:lstStyle/>{body}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
            )
        })
        .collect();
    let names: Vec<String> = (1..=slides.len())
        .map(|n| format!("ppt/slides/slide{n}.xml"))
        .collect();
    let mut ids = String::new();
    for n in 0..slides.len() {
        ids.push_str(&format!(
            "<p:sldId id=\"{}\" r:id=\"rId{}\"/>",
            256 + n,
            n + 1
        ));
    }
    let presentation = format!(
        "{XML_DECL}<p:presentation {NS}><p:sldIdLst>{ids}</p:sldIdLst><p:sldSz cx=\"9144000\" cy=\"6858000\"/><p:notesSz cx=\"6858000\" cy=\"9144000\"/></p:presentation>"
    );
    let targets: Vec<String> = (1..=slides.len())
        .map(|n| format!("slides/slide{n}.xml"))
        .collect();
    let slide_rels: Vec<(&str, &str)> = targets.iter().map(|t| ("slide", t.as_str())).collect();
    let mut overrides = vec![(
        "ppt/presentation.xml",
        "presentationml.presentation.main+xml",
    )];
    overrides.extend(
        names
            .iter()
            .map(|n| (n.as_str(), "presentationml.slide+xml")),
    );
    let mut entries = vec![
        ("[Content_Types].xml", content_types(&overrides)),
        (
            "_rels/.rels",
            relationships(&[("officeDocument", "ppt/presentation.xml")]),
        ),
        ("ppt/presentation.xml", presentation),
        (
            "ppt/_rels/presentation.xml.rels",
            relationships(&slide_rels),
        ),
    ];
    entries.extend(names.iter().map(String::as_str).zip(slides));
    package(&entries, false)
}

fn xlsx(paragraphs: &[String]) -> Result<Vec<u8>> {
    const NS: &str = "xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"";
    let mut strings = String::new();
    let mut rows = String::new();
    for (i, p) in paragraphs.iter().enumerate() {
        strings.push_str("<si>");
        if i.is_multiple_of(3) {
            strings.push_str(&runs(
                i,
                p,
                (
                    ("<r><rPr><b/></rPr><t xml:space=\"preserve\">", "</t></r>"),
                    ("<r><t xml:space=\"preserve\">", "</t></r>"),
                ),
            ));
        } else {
            strings.push_str(&format!("<t>{}</t>", xml_escape(p)));
        }
        strings.push_str("</si>");
        rows.push_str(&format!(
            "<row r=\"{r}\"><c r=\"A{r}\" t=\"s\"><v>{i}</v></c><c r=\"B{r}\"><v>{i}</v></c></row>",
            r = i + 1
        ));
    }
    let n = paragraphs.len();
    let shared = format!("{XML_DECL}<sst {NS} count=\"{n}\" uniqueCount=\"{n}\">{strings}</sst>");
    let sheet = format!("{XML_DECL}<worksheet {NS}><sheetData>{rows}</sheetData></worksheet>");
    let workbook = format!(
        "{XML_DECL}<workbook {NS} xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><sheets><sheet name=\"Text\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>"
    );
    package(
        &[
            (
                "[Content_Types].xml",
                content_types(&[
                    ("xl/workbook.xml", "spreadsheetml.sheet.main+xml"),
                    ("xl/worksheets/sheet1.xml", "spreadsheetml.worksheet+xml"),
                    ("xl/sharedStrings.xml", "spreadsheetml.sharedStrings+xml"),
                ]),
            ),
            (
                "_rels/.rels",
                relationships(&[("officeDocument", "xl/workbook.xml")]),
            ),
            ("xl/workbook.xml", workbook),
            (
                "xl/_rels/workbook.xml.rels",
                relationships(&[
                    ("worksheet", "worksheets/sheet1.xml"),
                    ("sharedStrings", "sharedStrings.xml"),
                ]),
            ),
            ("xl/worksheets/sheet1.xml", sheet),
            ("xl/sharedStrings.xml", shared),
        ],
        false,
    )
}

fn odt(paragraphs: &[String]) -> Result<Vec<u8>> {
    let mut body = String::new();
    for (i, p) in paragraphs.iter().enumerate() {
        body.push_str("<text:p>");
        body.push_str(&runs(
            i,
            p,
            (
                ("<text:span text:style-name=\"Bold\">", "</text:span>"),
                ("", ""),
            ),
        ));
        body.push_str("</text:p>");
    }
    let content = format!(
        "{XML_DECL}<office:document-content xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\" xmlns:fo=\"urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0\" office:version=\"1.3\"><office:automatic-styles><style:style style:name=\"Bold\" style:family=\"text\"><style:text-properties fo:font-weight=\"bold\"/></style:style></office:automatic-styles><office:body><office:text>{body}</office:text></office:body></office:document-content>"
    );
    let manifest = format!(
        "{XML_DECL}<manifest:manifest xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\" manifest:version=\"1.3\"><manifest:file-entry manifest:full-path=\"/\" manifest:media-type=\"application/vnd.oasis.opendocument.text\"/><manifest:file-entry manifest:full-path=\"content.xml\" manifest:media-type=\"text/xml\"/></manifest:manifest>"
    );
    package(
        &[
            (
                "mimetype",
                "application/vnd.oasis.opendocument.text".to_owned(),
            ),
            ("content.xml", content),
            ("META-INF/manifest.xml", manifest),
        ],
        true,
    )
}

/// Characters a line of the PDF holds.
const PDF_LINE: usize = 95;

/// A PDF of `paragraphs`: each wrapped into lines of at most [`PDF_LINE`]
/// characters, one `Tj` a line, as a word processor writes them.
fn pdf(paragraphs: &[String]) -> Result<Vec<u8>> {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    let mut ops: Vec<Operation> = Vec::new();
    let mut y = 740.0;
    let mut finish = |doc: &mut Document, ops: &mut Vec<Operation>| -> Result<()> {
        let content = Content {
            operations: std::mem::take(ops),
        }
        .encode()?;
        let stream = doc.add_object(Stream::new(dictionary! {}, content));
        kids.push(Object::Reference(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => stream,
            "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        })));
        Ok(())
    };
    for paragraph in paragraphs {
        let mut line = String::new();
        let mut lines = Vec::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > PDF_LINE {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
        for text in lines {
            if y < 60.0 {
                finish(&mut doc, &mut ops)?;
                y = 740.0;
            }
            let bytes = encoding_rs::WINDOWS_1252.encode(&text).0.into_owned();
            ops.extend([
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 10.into()]),
                Operation::new("Td", vec![56.into(), Object::Real(y)]),
                Operation::new("Tj", vec![Object::string_literal(bytes)]),
                Operation::new("ET", vec![]),
            ]);
            y -= 12.0;
        }
        y -= 6.0;
    }
    if !ops.is_empty() {
        finish(&mut doc, &mut ops)?;
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out)?;
    Ok(out)
}

/// The face the PNG pages are drawn in.
const PNG_FONT: &str = "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf";

/// A page picture holding `paragraphs` (as many as fit; a bench document
/// is a page of about 250 words).
fn png(paragraphs: &[String]) -> Result<Vec<u8>> {
    use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
    let data = std::fs::read(PNG_FONT)
        .with_context(|| format!("{PNG_FONT} (fonts-liberation2: scripts/setup.sh)"))?;
    let font = FontRef::try_from_slice(&data)?;
    let (width, height, margin, size) = (1240u32, 1754u32, 80.0f32, 28.0f32);
    let scaled = font.as_scaled(PxScale::from(size));
    let mut page = image::GrayImage::from_pixel(width, height, image::Luma([255]));
    let measure = |s: &str| {
        s.chars()
            .map(|c| scaled.h_advance(scaled.glyph_id(c)))
            .sum::<f32>()
    };
    let mut y = margin + scaled.ascent();
    'page: for paragraph in paragraphs {
        let mut line = String::new();
        let mut lines = Vec::new();
        for word in paragraph.split_whitespace() {
            let next = if line.is_empty() {
                word.to_owned()
            } else {
                format!("{line} {word}")
            };
            if measure(&next) > width as f32 - 2.0 * margin && !line.is_empty() {
                lines.push(std::mem::replace(&mut line, word.to_owned()));
            } else {
                line = next;
            }
        }
        lines.push(line);
        for text in lines {
            if y > height as f32 - margin {
                break 'page;
            }
            let mut x = margin;
            for c in text.chars() {
                let glyph = scaled.scaled_glyph(c);
                let advance = scaled.h_advance(glyph.id);
                let glyph = glyph
                    .id
                    .with_scale_and_position(size, ab_glyph::point(x, y));
                x += advance;
                let Some(outlined) = font.outline_glyph(glyph) else {
                    continue;
                };
                let bounds = outlined.px_bounds();
                outlined.draw(|gx, gy, coverage| {
                    let (px, py) = (bounds.min.x as u32 + gx, bounds.min.y as u32 + gy);
                    if px < width && py < height {
                        let ink = 255.0 * (1.0 - coverage.clamp(0.0, 1.0));
                        page.put_pixel(px, py, image::Luma([ink as u8]));
                    }
                });
            }
            y += size * 1.4;
        }
        y += size;
    }
    let mut out = std::io::Cursor::new(Vec::new());
    page.write_to(&mut out, image::ImageFormat::Png)?;
    Ok(out.into_inner())
}
