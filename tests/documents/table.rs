//! The same-shape format tests as one table: a file made in the test (by
//! hand or by a tool), uploaded EN→target, downloaded, read back by the
//! format's own reader, and what must hold of what it printed. Each row is a
//! test of its own, named by the behaviour it checks.

use anyhow::Result;

use super::{platform, translated};
use crate::support::python;

/// One row: a file through the queue and what must hold of it.
pub(crate) struct Case {
    /// The uploaded file's name (its extension picks the format).
    pub file: &'static str,
    /// The file's content.
    pub source: &'static str,
    /// Upload fields besides the file.
    pub fields: &'static [(&'static str, &'static str)],
    /// The download's Content-Type.
    pub content_type: &'static str,
    /// Python reading the translated file (`sys.argv[1]`) as its tool does
    /// and printing what it sees; the checks see the file's text, then a
    /// line `---`, then what the reader printed.
    pub reader: Option<&'static str>,
    /// What must hold.
    pub holds: &'static [Holds],
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
}

const EN_ES: &[(&str, &str)] = &[("target_lang", "ES"), ("source_lang", "EN")];

/// Runs a row on a platform of its own, named after the test `name` (its
/// first 20 characters: database names are short).
pub(crate) async fn run(name: &str, case: &Case) -> Result<()> {
    let tag: String = name.chars().take(20).collect();
    let (world, api, key) = platform(&tag).await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        case.file,
        case.source.as_bytes().to_vec(),
        case.fields,
    )
    .await?;
    anyhow::ensure!(
        content_type == case.content_type,
        "{}: served as {content_type}",
        case.file
    );
    let text = String::from_utf8(bytes)?;
    let seen = match case.reader {
        Some(reader) => {
            let path = world.path(&format!("translated-{}", case.file.replace('/', "_")));
            std::fs::write(&path, &text)?;
            format!("{text}\n---\n{}", python(reader, &[&path]).await?)
        }
        None => text.clone(),
    };
    for check in case.holds {
        let holds = match check {
            Holds::Has(s) => seen.contains(s),
            Holds::Word(s) => seen.to_lowercase().contains(s),
            Holds::Starts(s) => text.starts_with(s),
            Holds::Lacks(s) => !seen.contains(s),
            Holds::Ascii => text.is_ascii(),
        };
        let what = match check {
            Holds::Has(s) | Holds::Word(s) | Holds::Starts(s) | Holds::Lacks(s) => *s,
            Holds::Ascii => "ASCII",
        };
        anyhow::ensure!(holds, "{}: {what:?} does not hold of:\n{seen}", case.file);
    }
    Ok(())
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
        source: "# The house\n\nThe dog sleeps in the [garden](https://example.com/).\n\n```\nThe code stays.\n```\n",
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
        source: "# Labels\ntitle = The house is big\ngreeting = The dog sleeps, {0}\n",
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
        source: "/* Labels */\n\"title\" = \"The house is big\";\n\"greeting\" = \"The dog sleeps, %@\";\n",
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
        source: r#"<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app" source-language="en" datatype="plaintext">
    <body>
      <trans-unit id="1"><source>The house is <g id="b">big</g>.</source></trans-unit>
      <trans-unit id="2" translate="no"><source>The dog</source></trans-unit>
    </body>
  </file>
</xliff>
"#,
        fields: EN_ES,
        content_type: "application/x-xliff+xml",
        reader: Some(
            "import sys\nfrom lxml import etree\nns = {'x': 'urn:oasis:names:tc:xliff:document:1.2'}\n\
             doc = etree.parse(sys.argv[1])\n\
             print('language=' + doc.find('x:file', ns).get('target-language'))\n\
             for u in doc.iterfind('.//x:trans-unit', ns):\n    \
                 print(u.get('id') + '=' + ''.join(etree.tostring(t, encoding='unicode', with_tail=False) for t in u.findall('x:target', ns)))",
        ),
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
        source: "en:\n  house:\n    title: The house is big  # the page title\n    greeting: 'The dog sleeps, %{name}'\n    rooms: 4\n",
        fields: EN_ES,
        content_type: "application/yaml",
        reader: Some(
            "import sys, yaml\nhouse = yaml.safe_load(open(sys.argv[1]))['es']['house']\n\
             print('title=' + house['title'])\nprint('greeting=' + house['greeting'])\nprint('rooms=' + repr(house['rooms']))",
        ),
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
        source: r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topic PUBLIC "-//OASIS//DTD DITA Topic//EN" "topic.dtd">
<topic id="t"><title>The big house</title><body>
<p>The dog sleeps, run <codeph>make dog</codeph> now.</p>
<p>The dog runs with <parmname>--verbose</parmname> and the option <option>quiet</option>.</p>
<p translate="no">The cat</p></body></topic>
"#,
        fields: EN_ES,
        content_type: "application/dita+xml",
        reader: Some(
            "import sys\nfrom lxml import etree\nroot = etree.parse(sys.argv[1]).getroot()\n\
             for e in root.iter('title', 'p'):\n    print(etree.tostring(e, encoding='unicode', with_tail=False))",
        ),
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
}
