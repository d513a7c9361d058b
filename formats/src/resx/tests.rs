use crate::testdoc::{python_snippet, test_folder, uppercase_merge};
use crate::{DocumentFormat, FormatError, extract};

const RESX: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<root>
  <xsd:schema id="root" xmlns="" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><xsd:element name="root"/></xsd:schema>
  <resheader name="resmimetype"><value>text/microsoft-resx</value></resheader>
  <resheader name="version"><value>2.0</value></resheader>
  <data name="Greeting" xml:space="preserve">
    <value>Hello {0}, you have {1:N0} new messages &amp; alerts.</value>
    <comment>Shown after sign-in.</comment>
  </data>
  <data name="$this.Text" xml:space="preserve"><value>Settings</value></data>
  <data name="exitToolStripMenuItem.Text" xml:space="preserve"><value>E&amp;xit</value></data>
  <data name="&gt;&gt;button1.Name" xml:space="preserve"><value>button1</value></data>
  <data name="button1.Size" type="System.Drawing.Size, System.Drawing"><value>75, 23</value></data>
  <data name="Logo" type="System.Resources.ResXFileRef, System.Windows.Forms"><value>logo.png;System.Byte[]</value></data>
  <data name="Icon" mimetype="application/x-microsoft.net.object.bytearray.base64"><value>AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQAAAAIAAAAAEAIAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAD</value></data>
  <data name="ConfigKey"><value>app.settings.main</value></data>
</root>
"#;

#[test]
fn text_values_are_segments_typed_binary_and_designer_entries_never() {
    let d = extract(DocumentFormat::Resx, RESX.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            r#"Hello <x id="1"/>, you have <x id="2"/> new messages &amp; alerts."#,
            "Settings",
            "Exit",
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), RESX.as_bytes(), "identity");
}

/// lxml reads the translated file: every entry is still there with its
/// attributes, the text values upper-cased with their placeholders and
/// access keys, the others byte for byte.
#[test]
fn lxml_reads_the_translated_values() {
    let d = extract(DocumentFormat::Resx, RESX.as_bytes()).unwrap();
    let out = uppercase_merge(&d);
    let path = test_folder("resx").join("upper.resx");
    std::fs::write(&path, &out).unwrap();
    let read: serde_json::Value =
        serde_json::from_str(&python_snippet(
            "import json, sys\nfrom lxml import etree\nroot = etree.parse(sys.argv[1]).getroot()\n\
             print(json.dumps({d.get('name'): [d.findtext('value'), d.get('type'), d.findtext('comment')] for d in root.iter('data')}))",
            &[&path],
        ))
        .unwrap();
    assert_eq!(
        read,
        serde_json::json!({
            "Greeting": ["HELLO {0}, YOU HAVE {1:N0} NEW MESSAGES & ALERTS.", null, "Shown after sign-in."],
            "$this.Text": ["SETTINGS", null, null],
            "exitToolStripMenuItem.Text": ["E&XIT", null, null],
            ">>button1.Name": ["button1", null, null],
            "button1.Size": ["75, 23", "System.Drawing.Size, System.Drawing", null],
            "Logo": ["logo.png;System.Byte[]", "System.Resources.ResXFileRef, System.Windows.Forms", null],
            "Icon": ["AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQAAAAIAAAAAEAIAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAD", null, null],
            "ConfigKey": ["app.settings.main", null, null],
        })
    );
}

#[test]
fn broken_and_foreign_files_are_refused() {
    for (name, input) in [
        ("doctype", "<!DOCTYPE root [<!ENTITY a \"b\">]><root/>"),
        ("truncated", &RESX[..200]),
        ("other xml", "<xliff version=\"1.2\"/>"),
    ] {
        assert!(
            matches!(
                extract(DocumentFormat::Resx, input.as_bytes()),
                Err(FormatError::Corrupt(_))
            ),
            "{name}"
        );
    }
}
