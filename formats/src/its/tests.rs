use crate::testdoc::{python_snippet, test_folder, uppercase_merge};
use crate::{DocumentFormat, FormatError, extract};

const DITA: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topic PUBLIC "-//OASIS//DTD DITA Topic//EN" "topic.dtd">
<topic id="install">
  <title>Installing the <ph>Tolk</ph> server</title>
  <body>
    <p>Run <codeph>tolk up</codeph> and open the <xref href="https://example.com">web page</xref>.</p>
    <codeblock>cargo build --release</codeblock>
    <p translate="no">Tolk Cloud Inc.</p>
    <ul>
      <li>First <b>step</b></li>
      <li><ph>Second step</ph></li>
    </ul>
    <draft-comment>Check this with the team.</draft-comment>
  </body>
</topic>
"#;

const ITS_XML: &str = r#"<doc xmlns:its="http://www.w3.org/2005/11/its" its:version="2.0">
  <its:rules version="2.0">
    <its:translateRule selector="//code" translate="no"/>
  </its:rules>
  <para>The house is <em>very</em> big.</para>
  <code>let house = big;</code>
  <para its:translate="no">Do not touch</para>
  <section its:translate="no"><para its:translate="yes">Translate me again</para></section>
  <para><!-- a comment -->With a comment &amp; an entity.</para>
</doc>
"#;

#[test]
fn dita_blocks_are_segments_and_code_is_kept() {
    let d = extract(DocumentFormat::Dita, DITA.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            r#"Installing the <g id="1">Tolk</g> server"#,
            r#"Run <x id="1"/> and open the <g id="2">web page</g>."#,
            r#"First <g id="1">step</g>"#,
            "Second step",
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), DITA.as_bytes());
    let out = String::from_utf8(uppercase_merge(&d)).unwrap();
    assert!(
        out.contains("<title>INSTALLING THE <ph>TOLK</ph> SERVER</title>"),
        "{out}"
    );
    assert!(out.contains(r#"<p>RUN <codeph>tolk up</codeph> AND OPEN THE <xref href="https://example.com">WEB PAGE</xref>.</p>"#), "{out}");
    assert!(out.contains("<codeblock>cargo build --release</codeblock>"));
    assert!(out.contains(r#"<p translate="no">Tolk Cloud Inc.</p>"#));
    assert!(out.contains("<draft-comment>Check this with the team.</draft-comment>"));
}

#[test]
fn its_local_and_global_rules_are_honoured() {
    let d = extract(DocumentFormat::Xml, ITS_XML.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            r#"The house is <g id="1">very</g> big."#,
            "Translate me again",
            r#"<x id="1"/>With a comment &amp; an entity."#,
        ]
    );
}

#[test]
fn broken_xml_is_refused() {
    for input in [
        "<doc><p>open",
        "<!DOCTYPE d [<!ENTITY e \"x\">]><d>&e;</d>",
        "not xml at all",
    ] {
        assert!(
            matches!(
                extract(DocumentFormat::Xml, input.as_bytes()),
                Err(FormatError::Corrupt(_))
            ),
            "{input}"
        );
    }
}

/// lxml reads the translated DITA topic: the same elements in the same
/// order, the text of the translatable ones upper-cased, the code and the
/// untranslatable ones as they were.
#[test]
fn lxml_reads_the_translated_topic_with_the_same_elements() {
    let path = test_folder("its").join("topic.dita");
    let d = extract(DocumentFormat::Dita, DITA.as_bytes()).unwrap();
    std::fs::write(&path, uppercase_merge(&d)).unwrap();
    let read: serde_json::Value = serde_json::from_str(&python_snippet(
        "import json, sys\nfrom lxml import etree\nroot = etree.parse(sys.argv[1]).getroot()\n\
             print(json.dumps([[e.tag, (e.text or '').strip()] for e in root.iter()]))",
        &[&path],
    ))
    .unwrap();
    assert_eq!(
        read,
        serde_json::json!([
            ["topic", ""],
            ["title", "INSTALLING THE"],
            ["ph", "TOLK"],
            ["body", ""],
            ["p", "RUN"],
            ["codeph", "tolk up"],
            ["xref", "WEB PAGE"],
            ["codeblock", "cargo build --release"],
            ["p", "Tolk Cloud Inc."],
            ["ul", ""],
            ["li", "FIRST"],
            ["b", "STEP"],
            ["li", ""],
            ["ph", "SECOND STEP"],
            ["draft-comment", "Check this with the team."]
        ])
    );
}

const ITS_RULES: &str = r#"<?xml version="1.0"?>
<manual xmlns:its="http://www.w3.org/2005/11/its" xmlns:m="urn:example:markup">
  <its:rules version="2.0" xmlns:x="urn:example:markup">
    <its:translateRule selector="//p[@class='legal']" translate="no"/>
    <its:translateRule selector="//x:term | //section[@audience='internal']/p" translate="no"/>
    <its:translateRule selector="//img/@alt | //p/@title" translate="yes"/>
    <its:translateRule selector="//p[@class='legal'][last()]" translate="yes"/>
  </its:rules>
  <section>
    <p title="A tip">Save the file <m:term>Ctrl+S</m:term> often.</p>
    <p class="legal">Copyright notice one.</p>
    <p class="legal">The last legal paragraph.</p>
    <img src="house.png" alt="The big house"/>
  </section>
  <section audience="internal"><p>For the team only.</p></section>
</manual>
"#;

/// XPath selectors with predicates, unions, prefixes bound where the rules
/// are and attributes: what they select is kept, or translated, and lxml
/// reads the result with the same elements and attributes.
#[test]
fn its_rules_select_with_xpath_and_translate_attributes() {
    let d = extract(DocumentFormat::Xml, ITS_RULES.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            "A tip",
            r#"Save the file <x id="1"/> often."#,
            "The last legal paragraph.",
            "The big house",
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), ITS_RULES.as_bytes());
    let translated = [
        "Un \"consejo\"",
        r#"Guarde el archivo <x id="1"/> a menudo."#,
        "El último párrafo legal.",
        "La casa grande",
    ]
    .map(str::to_owned);
    let out = d.merge(&translated).unwrap();
    let path = test_folder("its-rules").join("manual.xml");
    std::fs::write(&path, &out).unwrap();
    let read: serde_json::Value = serde_json::from_str(&python_snippet(
        "import json, sys\nfrom lxml import etree\nroot = etree.parse(sys.argv[1]).getroot()\n\
             print(json.dumps([[etree.QName(e).localname, (e.text or '').strip(), dict(e.attrib)] \
             for e in root.iter() if isinstance(e.tag, str) and 'rules' not in e.tag and 'Rule' not in e.tag]))",
        &[&path],
    ))
    .unwrap();
    assert_eq!(
        read,
        serde_json::json!([
            ["manual", "", {}],
            ["section", "", {}],
            ["p", "Guarde el archivo", {"title": "Un \"consejo\""}],
            ["term", "Ctrl+S", {}],
            ["p", "Copyright notice one.", {"class": "legal"}],
            ["p", "El último párrafo legal.", {"class": "legal"}],
            ["img", "", {"src": "house.png", "alt": "La casa grande"}],
            ["section", "", {"audience": "internal"}],
            ["p", "For the team only.", {}]
        ])
    );
}

#[test]
fn an_unsupported_selector_is_refused_by_name() {
    let xml = r#"<d xmlns:its="http://www.w3.org/2005/11/its"><its:rules version="2.0"><its:translateRule selector="//p[count(b) > 1]" translate="no"/></its:rules><p>x</p></d>"#;
    match extract(DocumentFormat::Xml, xml.as_bytes()) {
        Err(FormatError::Unsupported(m)) => {
            assert!(
                m.contains("//p[count(b) > 1]") && m.contains("count"),
                "{m}"
            );
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}
