//! The same-shape format tests as one table: a file made in the test (by
//! hand or by a tool), uploaded EN→target, downloaded, read back by the
//! format's own reader, and what must hold of what it printed. Each row is a
//! test of its own, named by the behaviour it checks.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::Value;

use super::{platform, testdata_script, translated};
use crate::support::{World, python};

/// One row: a file through the queue and what must hold of it.
pub(crate) struct Case {
    /// The uploaded file's name (its extension picks the format).
    pub file: &'static str,
    /// How the file is made.
    pub made: Made,
    /// Upload fields besides the file.
    pub fields: &'static [(&'static str, &'static str)],
    /// The download's Content-Type.
    pub content_type: &'static str,
    /// How the translated file is read as its tool reads it; the checks see
    /// the file's text (when it is UTF-8), then a line `---`, then what the
    /// reader printed.
    pub reader: Option<Reader>,
    /// What must hold.
    pub holds: &'static [Holds],
}

/// How a row's file is made.
pub(crate) enum Made {
    /// This content, as it is.
    Text(&'static str),
    /// Python writing the file to `sys.argv[1]`.
    Python(&'static str),
    /// A script of `formats/testdata` (the filters' own test documents)
    /// with these arguments, `{}` standing for the file.
    Testdata(&'static str, &'static [&'static str]),
    /// A file of the repository, by its path from the repository's root.
    Repository(&'static str),
}

/// How a row's file is read back.
pub(crate) enum Reader {
    /// Python reading the file `sys.argv[1]` and printing what it sees.
    Python(&'static str),
    /// A script of `formats/testdata` with these arguments, `{}` standing
    /// for the file.
    Testdata(&'static str, &'static [&'static str]),
}

/// A check of what a row's reader saw.
pub(crate) enum Holds {
    /// This text occurs, as it is.
    Has(&'static str),
    /// This (lower-case) text occurs, case ignored: a translated word.
    Word(&'static str),
    /// The file starts with this text.
    Starts(&'static str),
    /// This text does not occur.
    Lacks(&'static str),
    /// The file is ASCII (non-ASCII written as escapes).
    Ascii,
    /// The reader prints JSON, and the value at this JSON pointer is the
    /// same for the source file and the translation.
    Same(&'static str),
}

const EN_ES: &[(&str, &str)] = &[("target_lang", "ES"), ("source_lang", "EN")];

impl Made {
    /// The file's bytes, made in `world`'s folder as `path`.
    async fn bytes(&self, path: &Path) -> Result<Vec<u8>> {
        match self {
            Made::Text(text) => return Ok(text.as_bytes().to_vec()),
            Made::Python(script) => {
                python(script, &[path]).await?;
            }
            Made::Testdata(script, args) => {
                run_testdata(script, args, path).await?;
            }
            Made::Repository(file) => {
                return Ok(std::fs::read(
                    Path::new(env!("CARGO_MANIFEST_DIR")).join(file),
                )?);
            }
        }
        Ok(std::fs::read(path)?)
    }
}

impl Reader {
    /// What the reader prints of the file at `path`.
    async fn read(&self, path: &Path) -> Result<String> {
        match self {
            Reader::Python(script) => python(script, &[path]).await,
            Reader::Testdata(script, args) => run_testdata(script, args, path).await,
        }
    }
}

/// `formats/testdata/{script}` with `args`, `{}` standing for `file`.
async fn run_testdata(script: &str, args: &[&str], file: &Path) -> Result<String> {
    let args: Vec<PathBuf> = args
        .iter()
        .map(|a| match *a {
            "{}" => file.to_owned(),
            a => PathBuf::from(a),
        })
        .collect();
    let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
    testdata_script(script, &args).await
}

/// Runs a row on a platform of its own, named after the test `name` (its
/// first 20 characters: database names are short).
pub(crate) async fn run(name: &str, case: &Case) -> Result<()> {
    let tag: String = name.chars().take(20).collect();
    let (world, api, key) = platform(&tag).await?;
    let file_name = case.file.replace('/', "_");
    let source_path = world.path(&format!("source-{file_name}"));
    let source = case.made.bytes(&source_path).await?;
    let (content_type, bytes) =
        translated(&api, &key, case.file, source.clone(), case.fields).await?;
    anyhow::ensure!(
        content_type == case.content_type,
        "{}: served as {content_type}",
        case.file
    );
    let text = String::from_utf8(bytes.clone()).unwrap_or_default();
    let (seen, reads) = match &case.reader {
        Some(reader) => {
            let read = read_as(&world, reader, &format!("translated-{file_name}"), &bytes).await?;
            (format!("{text}\n---\n{read}"), Some(read))
        }
        None => (text.clone(), None),
    };
    for check in case.holds {
        let holds = match check {
            Holds::Has(s) => seen.contains(s),
            Holds::Word(s) => seen.to_lowercase().contains(s),
            Holds::Starts(s) => bytes.starts_with(s.as_bytes()),
            Holds::Lacks(s) => !seen.contains(s),
            Holds::Ascii => bytes.is_ascii(),
            Holds::Same(pointer) => {
                let (Some(reader), Some(read)) = (&case.reader, &reads) else {
                    anyhow::bail!("{}: Same({pointer:?}) needs a reader", case.file);
                };
                let before = read_as(&world, reader, &format!("read-{file_name}"), &source).await?;
                let at = |json: &str| -> Result<Value> {
                    let value: Value = serde_json::from_str(json)?;
                    Ok(value.pointer(pointer).cloned().unwrap_or(Value::Null))
                };
                let (before, after) = (at(&before)?, at(read)?);
                !before.is_null() && before == after
            }
        };
        let what = match check {
            Holds::Has(s)
            | Holds::Word(s)
            | Holds::Starts(s)
            | Holds::Lacks(s)
            | Holds::Same(s) => *s,
            Holds::Ascii => "ASCII",
        };
        anyhow::ensure!(holds, "{}: {what:?} does not hold of:\n{seen}", case.file);
    }
    Ok(())
}

/// What `reader` prints of `bytes`, written to `name` in `world`'s folder.
async fn read_as(world: &World, reader: &Reader, name: &str, bytes: &[u8]) -> Result<String> {
    let path = world.path(name);
    std::fs::write(&path, bytes)?;
    reader.read(&path).await
}

/// One `#[tokio::test]` per row.
macro_rules! rows {
    ($($(#[doc = $doc:literal])* $test:ident => $case:expr;)*) => {
        $(
            $(#[doc = $doc])*
            #[tokio::test]
            async fn $test() -> Result<()> {
                run(stringify!($test), &$case).await
            }
        )*
    };
}

rows! {
    /// Markdown: headings and paragraphs Spanish, code and links as they were.
    markdown_blocks_are_translated_and_code_kept => Case {
        file: "readme.md",
        made: Made::Text("# The house\n\nThe dog sleeps in the [garden](https://example.com/).\n\n```\nThe code stays.\n```\n"),
        fields: EN_ES,
        content_type: "text/markdown",
        reader: None,
        holds: &[
            Holds::Starts("# "),
            Holds::Word("casa"),
            Holds::Has("](https://example.com/)"),
            Holds::Has("```\nThe code stays.\n```\n"),
        ],
    };
    /// Java properties: values Spanish and written as ISO-8859-1-safe
    /// escapes, keys, comments and placeholders as they were.
    properties_values_are_translated_with_keys_and_placeholders_kept => Case {
        file: "messages.properties",
        made: Made::Text("# Labels\ntitle = The house is big\ngreeting = The dog sleeps, {0}\n"),
        fields: EN_ES,
        content_type: "text/x-java-properties",
        reader: None,
        holds: &[
            Holds::Starts("# Labels\ntitle = "),
            Holds::Word("casa"),
            Holds::Has("{0}"),
            Holds::Has("\ngreeting = "),
            Holds::Ascii,
        ],
    };
    /// Apple .strings: values Spanish, keys, comments and format specifiers
    /// as they were.
    apple_strings_values_are_translated_with_specifiers_kept => Case {
        file: "Localizable.strings",
        made: Made::Text("/* Labels */\n\"title\" = \"The house is big\";\n\"greeting\" = \"The dog sleeps, %@\";\n"),
        fields: EN_ES,
        content_type: "text/plain",
        reader: None,
        holds: &[
            Holds::Starts("/* Labels */\n\"title\" = \""),
            Holds::Word("casa"),
            Holds::Has("%@\";\n"),
        ],
    };
    /// XLIFF 1.2: each source gets a Spanish target after it with its inline
    /// codes and state, the file its target language, a `translate="no"`
    /// unit nothing; lxml reads the result.
    xliff_sources_get_spanish_targets_with_their_codes => Case {
        file: "app.xlf",
        made: Made::Text(r#"<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app" source-language="en" datatype="plaintext">
    <body>
      <trans-unit id="1"><source>The house is <g id="b">big</g>.</source></trans-unit>
      <trans-unit id="2" translate="no"><source>The dog</source></trans-unit>
    </body>
  </file>
</xliff>
"#),
        fields: EN_ES,
        content_type: "application/x-xliff+xml",
        reader: Some(Reader::Python(
            "import sys\nfrom lxml import etree\nns = {'x': 'urn:oasis:names:tc:xliff:document:1.2'}\n\
             doc = etree.parse(sys.argv[1])\n\
             print('language=' + doc.find('x:file', ns).get('target-language'))\n\
             for u in doc.iterfind('.//x:trans-unit', ns):\n    \
                 print(u.get('id') + '=' + ''.join(etree.tostring(t, encoding='unicode', with_tail=False) for t in u.findall('x:target', ns)))",
        )),
        holds: &[
            Holds::Has("\nlanguage=es\n"),
            Holds::Has("\n1=<target"),
            Holds::Word("casa"),
            Holds::Has("<g id=\"b\">"),
            Holds::Has("state=\"translated\""),
            Holds::Has("\n2=\n"),
        ],
    };
    /// A Rails locale file: PyYAML reads it with the top-level key `es`, the
    /// values Spanish, the interpolations, numbers and comments as they were.
    rails_yaml_becomes_a_spanish_locale_file => Case {
        file: "config/locales/en.yml",
        made: Made::Text("en:\n  house:\n    title: The house is big  # the page title\n    greeting: 'The dog sleeps, %{name}'\n    rooms: 4\n"),
        fields: EN_ES,
        content_type: "application/yaml",
        reader: Some(Reader::Python(
            "import sys, yaml\nhouse = yaml.safe_load(open(sys.argv[1]))['es']['house']\n\
             print('title=' + house['title'])\nprint('greeting=' + house['greeting'])\nprint('rooms=' + repr(house['rooms']))",
        )),
        holds: &[
            Holds::Has("# the page title"),
            Holds::Has("\ngreeting="),
            Holds::Has("%{name}"),
            Holds::Has("\nrooms=4\n"),
            Holds::Word("\ntitle=la casa"),
            Holds::Lacks("\ntitle=The house"),
        ],
    };
    /// A DITA topic (with its DOCTYPE): lxml reads the title and paragraphs
    /// in Spanish, the code phrase, the parameter name, the option and the
    /// `translate="no"` paragraph as they were.
    dita_topics_are_translated_with_code_kept => Case {
        file: "house.dita",
        made: Made::Text(r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topic PUBLIC "-//OASIS//DTD DITA Topic//EN" "topic.dtd">
<topic id="t"><title>The big house</title><body>
<p>The dog sleeps, run <codeph>make dog</codeph> now.</p>
<p>The dog runs with <parmname>--verbose</parmname> and the option <option>quiet</option>.</p>
<p translate="no">The cat</p></body></topic>
"#),
        fields: EN_ES,
        content_type: "application/dita+xml",
        reader: Some(Reader::Python(
            "import sys\nfrom lxml import etree\nroot = etree.parse(sys.argv[1]).getroot()\n\
             for e in root.iter('title', 'p'):\n    print(etree.tostring(e, encoding='unicode', with_tail=False))",
        )),
        holds: &[
            Holds::Starts("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topic PUBLIC"),
            Holds::Word("\n<title>la casa grande</title>\n"),
            Holds::Word("perro"),
            Holds::Has("<codeph>make dog</codeph>"),
            Holds::Has("<parmname>--verbose</parmname>"),
            Holds::Has("<option>quiet</option>"),
            Holds::Has("\n<p translate=\"no\">The cat</p>"),
        ],
    };

    /// A JSON localization file written by Python's json module, read back
    /// by it: values Spanish; keys, numbers, placeholders and the ICU
    /// skeleton as they were.
    json_values_are_translated_and_keys_placeholders_kept => Case {
        file: "strings.json",
        made: Made::Python(MAKE_JSON),
        fields: EN_ES,
        content_type: "application/json",
        reader: Some(Reader::Python(READ_JSON)),
        holds: &[
            Holds::Word("\"title\": \"la casa"),
            Holds::Has("{name}"),
            Holds::Word("perro"),
            Holds::Has("\"files\": \"{count, plural, one {#"),
            Holds::Has("} other {#"),
            Holds::Has("}}\""),
            Holds::Word("\"items\": [\"el gato"),
            Holds::Has("\"count\": 3"),
        ],
    };
    /// `json-placeholders:translate`: a JSON value's placeholder is text,
    /// translated with the rest.
    json_placeholders_are_translated_on_request => Case {
        file: "strings.json",
        made: Made::Python(MAKE_JSON),
        fields: &[
            ("target_lang", "ES"),
            ("source_lang", "EN"),
            ("input_conversion_options", "version:1,json-placeholders:translate"),
        ],
        content_type: "application/json",
        reader: Some(Reader::Python(READ_JSON)),
        holds: &[Holds::Lacks("{name}"), Holds::Word("perro")],
    };
    /// An InDesign package (written from the IDML specification: no free
    /// tool writes one) comes back with its stories in Spanish, read by
    /// Python's zipfile and xml.dom: the same breaks and special characters,
    /// `mimetype` still first and stored, the same entries.
    idml_stories_are_translated_and_the_package_kept => Case {
        file: "book.idml",
        made: Made::Testdata("make_idml.py", &["write", "{}"]),
        fields: EN_ES,
        content_type: "application/vnd.adobe.indesign-idml-package",
        reader: Some(Reader::Testdata("make_idml.py", &["read", "{}"])),
        holds: &[
            Holds::Has("\"first\": [\"mimetype\", true]"),
            Holds::Same("/entries"),
            Holds::Same("/stories/Stories~1Story_u1.xml/counts/Br"),
            Holds::Same("/stories/Stories~1Story_u1.xml/counts/Table"),
            Holds::Same("/stories/Stories~1Story_u1.xml/counts/Cell"),
            Holds::Same("/stories/Stories~1Story_u1.xml/counts/Footnote"),
            Holds::Same("/stories/Stories~1Story_u1.xml/links/0/0"),
            Holds::Same("/stories/Stories~1Story_u1.xml/special"),
            Holds::Word("informe anual"),
            Holds::Word("perro"),
            Holds::Word("agua"),
            Holds::Word("nota"),
            Holds::Word("casa"),
            Holds::Lacks("The annual report"),
        ],
    };
    /// A FrameMaker MIF file comes back with its paragraphs (text flow,
    /// table cell, footnote) in Spanish, read by a Python reader of its own
    /// (`formats/testdata/read_mif.py`), every statement still there.
    mif_paragraphs_are_translated_and_the_statements_kept => Case {
        file: "report.mif",
        made: Made::Repository("formats/testdata/report.mif"),
        fields: EN_ES,
        content_type: "application/vnd.mif",
        reader: Some(Reader::Testdata("read_mif.py", &["{}", "utf-8"])),
        holds: &[
            Holds::Same("/counts"),
            Holds::Word("agua"),
            Holds::Word("nota"),
            Holds::Word("informe anual"),
            Holds::Word("casa"),
        ],
    };
    /// A SCORM package made by Python's zipfile, read back by it: the lesson
    /// page and the manifest title Spanish, the page's script and the
    /// package's JavaScript file byte for byte.
    scorm_packages_translate_their_pages_and_keep_the_rest => Case {
        file: "course.zip",
        made: Made::Python(
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n\
             z.writestr('imsmanifest.xml', '<manifest><organizations><organization><title>The big house</title></organization></organizations></manifest>')\n\
             z.writestr('lesson.html', '<html><body><p>The dog sleeps in the house.</p><script>var t = \"The dog\";</script></body></html>')\n\
             z.writestr('api.js', 'function f() { return \"The dog\"; }')\n\
             z.close()",
        ),
        fields: EN_ES,
        content_type: "application/zip",
        reader: Some(Reader::Python(
            "import json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n\
             print(json.dumps({n: z.read(n).decode() for n in z.namelist()}, ensure_ascii=False))",
        )),
        holds: &[
            Holds::Same("/api.js"),
            Holds::Word("<title>la casa"),
            Holds::Word("perro"),
            Holds::Has("var t = \\\"The dog\\\""),
            Holds::Lacks("The dog sleeps"),
        ],
    };
    /// A workbook written by openpyxl comes back with its text cells and
    /// comment in Spanish, read back by openpyxl; numbers, the formula and
    /// the sheet names as they were.
    xlsx_cells_and_comments_are_translated_and_numbers_kept => Case {
        file: "book.xlsx",
        made: Made::Testdata("make_xlsx.py", &["{}"]),
        fields: EN_ES,
        content_type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        reader: Some(Reader::Python(READ_XLSX)),
        holds: &[
            Holds::Same("/sheets"),
            Holds::Has("\"Sales!A1\": \"La casa es pequeña.\""),
            Holds::Has("\"Sales!A2\": \"La ciudad\""),
            Holds::Has("\"Summary!A1\": \"El país\""),
            Holds::Same("/cells/Sales!B1"),
            Holds::Same("/cells/Sales!B3"),
            Holds::Has("\"Sales!B3\": \"=SUM(B1:B2)\""),
            Holds::Lacks("\"comments\": []"),
            Holds::Lacks("The number"),
        ],
    };
}

/// A localization file, written by Python's json module.
const MAKE_JSON: &str = r#"
import json, sys
json.dump({
    "title": "The house is big",
    "greeting": "Hello {name}, the dog sleeps",
    "files": "{count, plural, one {# file} other {# files}}",
    "items": ["The cat", "The garden"],
    "count": 3,
}, open(sys.argv[1], "w", encoding="utf-8"), indent=2, ensure_ascii=False)
"#;

/// Python's json module reading a JSON file back.
const READ_JSON: &str = "import json, sys\n\
    print(json.dumps(json.load(open(sys.argv[1], encoding='utf-8')), ensure_ascii=False))";

/// openpyxl reading a workbook back: its sheet names, every cell with a
/// value and every comment, as JSON.
const READ_XLSX: &str = r#"
import sys, json, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
out = {"sheets": wb.sheetnames, "cells": {}, "comments": []}
for ws in wb.worksheets:
    for row in ws.iter_rows():
        for c in row:
            if c.value is not None:
                out["cells"][ws.title + "!" + c.coordinate] = str(c.value)
            if c.comment is not None:
                out["comments"].append(c.comment.text)
print(json.dumps(out, ensure_ascii=False))
"#;
