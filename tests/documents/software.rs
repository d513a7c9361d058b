//! Software strings and bilingual files end to end: JSON, Markdown,
//! properties, Apple strings, XLIFF, YAML and Android resources, read back by
//! their own tools.

use super::*;

/// XLIFF 2.0 and 1.2 files written by a real tool (npm `xliff`, locize's
/// writer) come back with Spanish targets that the same tool reads: inline
/// placeholder and span intact, the file's `es-ES` kept.
#[tokio::test]
async fn xliff_from_a_real_writer_is_read_back_by_it() -> Result<()> {
    let (world, api, key) = platform("xliff_tool").await?;
    let node = crate::support::node_packages("xliff")?;
    let tool = |args: Vec<std::ffi::OsString>| {
        let node = node.clone();
        async move {
            let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/clients/xliff_tool.mjs");
            let out = tokio::process::Command::new("node")
                .arg(script)
                .args(args)
                .env("TOLK_TEST_NODE", node)
                .output()
                .await?;
            anyhow::ensure!(
                out.status.success(),
                "xliff tool: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            anyhow::Ok(String::from_utf8(out.stdout)?)
        }
    };
    let dir = world.path("xliff");
    std::fs::create_dir_all(&dir)?;
    tool(vec!["write".into(), dir.clone().into()]).await?;
    for (name, version) in [("app-2.0.xlf", "2.0"), ("app-1.2.xlf", "1.2")] {
        let (_, bytes) = translated(
            &api,
            &key,
            name,
            std::fs::read(dir.join(name))?,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
        let result = dir.join(format!("translated-{name}"));
        std::fs::write(&result, &bytes)?;
        let read: Value = serde_json::from_str(&tool(vec!["read".into(), result.into()]).await?)?;
        assert_eq!(read["version"], version);
        assert_eq!(read["targetLanguage"], "es-ES", "{read}");
        let units = &read["units"];
        assert!(
            units["greeting"]["target"]
                .as_str()
                .is_some_and(|t| t.contains("casa")),
            "{read}"
        );
        let welcome = units["welcome"]["target"].to_string();
        assert!(
            welcome.contains("perro") && welcome.contains(r#""id":"name""#),
            "{read}"
        );
        let bold = units["bold"]["target"].to_string();
        assert!(bold.contains(r#""id":"b""#), "{read}");
    }
    Ok(())
}

/// A translator's XLIFF through the queue: approved and final targets stay
/// as they are (translate-toolkit reads them approved), only the new one is
/// translated; `xliff-targets:overwrite` translates them all; a Trados
/// TagEditor file is refused naming what to upload instead.
#[tokio::test]
async fn xliff_settled_targets_are_kept_unless_overwrite_is_asked() -> Result<()> {
    let (world, api, key) = platform("xliff_settled").await?;
    let source = r#"<?xml version="1.0" encoding="windows-1252"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app" source-language="en" target-language="es" datatype="plaintext">
    <body>
      <trans-unit id="1" approved="yes"><source>The house is big.</source><target>La casa es enorme.</target></trans-unit>
      <trans-unit id="2"><source>The dog runs.</source><target state="final">El perro corre mucho.</target></trans-unit>
      <trans-unit id="3"><source>The cat sleeps.</source><target state="new">The cat sleeps.</target></trans-unit>
    </body>
  </file>
</xliff>
"#;
    let read = |name: &'static str, bytes: Vec<u8>| {
        let path = world.path(name);
        async move {
            std::fs::write(&path, &bytes)?;
            let out = python(
                "import json, sys\nfrom translate.storage import xliff\n\
                 store = xliff.xlifffile.parsefile(sys.argv[1])\n\
                 print(json.dumps({u.getid().split('\\x04')[-1]: [u.target, u.isapproved()] for u in store.units}))",
                &[&path],
            )
            .await?;
            anyhow::Ok(serde_json::from_str::<Value>(&out)?)
        }
    };
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let (_, bytes) = translated(&api, &key, "app.xlf", source.as_bytes().to_vec(), &fields).await?;
    assert!(bytes.starts_with(br#"<?xml version="1.0" encoding="windows-1252"?>"#));
    let units = read("kept.xlf", bytes).await?;
    assert_eq!(
        units["1"],
        serde_json::json!(["La casa es enorme.", true]),
        "{units}"
    );
    assert_eq!(units["2"][0], "El perro corre mucho.", "{units}");
    let new = units["3"][0].as_str().unwrap_or_default();
    assert!(new.contains("gato"), "{units}");

    let overwrite = [
        ("target_lang", "ES"),
        ("source_lang", "EN"),
        (
            "input_conversion_options",
            "version:1,xliff-targets:overwrite",
        ),
    ];
    let (_, bytes) = translated(
        &api,
        &key,
        "app.xlf",
        source.as_bytes().to_vec(),
        &overwrite,
    )
    .await?;
    let units = read("overwritten.xlf", bytes).await?;
    assert!(
        units["1"][0]
            .as_str()
            .unwrap_or_default()
            .contains("grande"),
        "{units}"
    );
    assert!(
        units["2"][0].as_str().unwrap_or_default().contains("perro"),
        "{units}"
    );
    assert_ne!(units["2"][0], "El perro corre mucho.", "{units}");

    let (code, body) = api
        .upload(&key, "old.ttx", b"<TRADOStag/>".to_vec(), &fields)
        .await?;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains(".sdlxliff"),
        "{body}"
    );
    Ok(())
}

/// Markup and the placeholders of every ecosystem inside software strings
/// (i18next JSON, Rails YAML, Java properties) come back byte for byte
/// around translated words; `&` stays `&`. Read back by Python's json and
/// PyYAML, and the properties file line by line.
#[tokio::test]
async fn markup_and_placeholders_in_software_strings_survive() -> Result<()> {
    let (world, api, key) = platform("strings_markup").await?;
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let json = r#"{"copy": "Copy to <em>{{ location }}</em>", "save": "Save & close the house", "link": "Read <a href=\"/help?a=1&b=2\">the help</a> now.", "nested": "$t(common.house) is big"}"#;
    let (_, bytes) = translated(&api, &key, "en.json", json.as_bytes().to_vec(), &fields).await?;
    let read: Value = serde_json::from_slice(&bytes)?;
    let copy = read["copy"].as_str().unwrap_or_default();
    assert!(
        copy.contains("<em>{{ location }}</em>") && !copy.contains("&lt;"),
        "{read}"
    );
    let save = read["save"].as_str().unwrap_or_default();
    assert!(
        save.contains('&') && !save.contains("&amp;") && save.contains("casa"),
        "{read}"
    );
    let link = read["link"].as_str().unwrap_or_default();
    assert!(
        link.contains(r#"<a href="/help?a=1&b=2">"#) && link.contains("</a>"),
        "{read}"
    );
    assert!(link.contains("ayuda"), "{read}");
    assert!(
        read["nested"]
            .as_str()
            .unwrap_or_default()
            .starts_with("$t(common.house)"),
        "{read}"
    );

    let yaml = "en:\n  post: \"<strong>Post</strong> a comment\"\n  more: 'See <a href=\"/docs\">the documentation</a>, %{name}.'\n  when: \"%A, %B %d\"\n  raw: \"{% raw %}The house{% endraw %}\"\n  dogs: \"{count, plural, one {# dog sleeps} other {# dogs sleep}}\"\n";
    let (_, bytes) = translated(&api, &key, "en.yml", yaml.as_bytes().to_vec(), &fields).await?;
    let path = world.path("es.yml");
    std::fs::write(&path, &bytes)?;
    let read: Value = serde_json::from_str(
        &python(
            "import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
            &[&path],
        )
        .await?,
    )?;
    let es = &read["es"];
    let post = es["post"].as_str().unwrap_or_default();
    assert!(
        post.starts_with("<strong>") && post.contains("</strong>"),
        "{read}"
    );
    let more = es["more"].as_str().unwrap_or_default();
    assert!(
        more.contains(r#"<a href="/docs">"#) && more.contains("</a>") && more.contains("%{name}"),
        "{read}"
    );
    assert_eq!(es["when"], "%A, %B %d", "{read}");
    let raw = es["raw"].as_str().unwrap_or_default();
    assert!(
        raw.starts_with("{% raw %}") && raw.ends_with("{% endraw %}"),
        "{read}"
    );

    let properties = "error=<span class=error>The house</span> is closed\ncount=The house has {0,number,integer} rooms since {2,time,short}\nfiles={0,choice,0#no files|1#one file|1<{0} files} in the house\n";
    let (_, bytes) = translated(
        &api,
        &key,
        "messages.properties",
        properties.as_bytes().to_vec(),
        &fields,
    )
    .await?;
    let out = String::from_utf8(bytes)?;
    let value = |k: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_default()
            .to_owned()
    };
    let error = value("error");
    assert!(
        error.starts_with("<span class=error>") && error.contains("</span>"),
        "{out}"
    );
    assert!(error.to_lowercase().contains("casa"), "{out}");
    let count = value("count");
    assert!(
        count.contains("{0,number,integer}") && count.contains("{2,time,short}"),
        "{out}"
    );
    assert!(
        value("files").starts_with("{0,choice,0#no files|1#one file|1<{0} files}"),
        "{out}"
    );
    Ok(())
}

/// An Android `strings.xml` through the queue into Catalan, whose
/// apostrophes Android wants escaped: values translated with `\'`, format
/// specifiers, `<xliff:g>` and styling kept, `translatable="false"` and
/// references untouched; lxml reads the file.
#[tokio::test]
async fn android_strings_are_translated_with_their_escapes() -> Result<()> {
    let (world, api, key) = platform("android_strings").await?;
    let source = r#"<?xml version="1.0" encoding="utf-8"?>
<resources xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2">
    <string name="app_name" translatable="false">The house</string>
    <string name="updates">@string/check_for_updates</string>
    <string name="man">The man sleeps in <b>the house</b>, <xliff:g id="n">%1$s</xliff:g>.</string>
    <plurals name="dogs">
        <item quantity="other">%d dogs sleep in the house</item>
    </plurals>
</resources>
"#;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "strings.xml",
        source.as_bytes().to_vec(),
        &[("target_lang", "CA"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/xml");
    let out = String::from_utf8(bytes)?;
    assert!(
        out.contains(r#"<string name="app_name" translatable="false">The house</string>"#),
        "{out}"
    );
    assert!(
        out.contains(r#"<string name="updates">@string/check_for_updates</string>"#),
        "{out}"
    );
    let man = out
        .lines()
        .find(|l| l.contains(r#"name="man""#))
        .unwrap_or_default();
    // Catalan elides ("d'home"): every apostrophe escaped.
    assert!(
        man.contains(r"\'") && !man.replace(r"\'", "").contains('\''),
        "{man}"
    );
    assert!(
        man.contains("<b>") && man.contains(r#"<xliff:g id="n">%1$s</xliff:g>"#),
        "{man}"
    );
    // The specifier keeps the space after it.
    assert!(out.contains("%d els gossos"), "{out}");
    assert!(man.contains("casa"), "{man}");
    let path = world.path("strings.ca.xml");
    std::fs::write(&path, &out)?;
    let names = python(
        "import sys\nfrom lxml import etree\nprint(','.join(e.get('name') for e in etree.parse(sys.argv[1]).getroot()))",
        &[&path],
    )
    .await?;
    assert_eq!(names.trim(), "app_name,updates,man,dogs");
    Ok(())
}
