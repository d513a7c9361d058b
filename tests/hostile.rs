//! Hostile input: requests built to exhaust the process get a clear 4xx and
//! the process goes on serving.

use anyhow::{Context, Result};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{World, call, error};

#[tokio::test]
async fn deeply_nested_tags_are_refused_without_harming_the_process() -> Result<()> {
    let mut world = World::new("hostile_nesting").await?;
    let key = world.create_key("hostile", false).await?;
    let api = world.start_api().await?;
    let deep = "<b>".repeat(7_000) + "The dog runs." + &"</b>".repeat(7_000);
    for tag_handling in ["xml", "html"] {
        let body = json!({
            "text": [deep.clone()],
            "source_lang": "EN",
            "target_lang": "ES",
            "tag_handling": tag_handling,
        });
        let (code, answer) = call(&api, &key, Method::POST, "/v2/translate", Some(&body)).await?;
        error(code, &answer, 400, "nested more than 512 levels");
    }
    // The same process still translates.
    let body = json!({
        "text": ["<p>The dog runs.</p>"],
        "source_lang": "EN",
        "target_lang": "ES",
        "tag_handling": "html",
    });
    let (code, answer) = call(&api, &key, Method::POST, "/v2/translate", Some(&body)).await?;
    assert_eq!(code, 200, "{answer}");
    let text = answer["translations"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("<p>") && text.contains("perro"), "{text}");
    Ok(())
}

/// The write operations that store text a client chose, each with a valid
/// body, the JSON pointer of one stored string in it, and the field name the
/// 400 must give for it.
fn stored_text_operations(
    key_id: &str,
) -> Vec<(Method, String, Value, &'static str, &'static str)> {
    let file = json!({"name": "speech.wav", "content_type": "audio/wav", "content_length": 1000});
    vec![
        (
            Method::POST,
            "/v3/style_rules".into(),
            json!({"name": "n", "language": "de"}),
            "/name",
            "name",
        ),
        (
            Method::POST,
            "/v3/style_rules".into(),
            json!({"name": "n", "language": "de", "custom_instructions": [{"label": "l", "prompt": "p"}]}),
            "/custom_instructions/0/label",
            "custom_instructions[0].label",
        ),
        (
            Method::POST,
            "/v3/style_rules".into(),
            json!({"name": "n", "language": "de", "custom_instructions": [{"label": "l", "prompt": "p"}]}),
            "/custom_instructions/0/prompt",
            "custom_instructions[0].prompt",
        ),
        (
            Method::POST,
            "/v2/glossaries".into(),
            json!({"name": "g", "source_lang": "en", "target_lang": "de", "entries": "a\tb", "entries_format": "tsv"}),
            "/name",
            "name",
        ),
        (
            Method::POST,
            "/v3/glossaries".into(),
            json!({"name": "g", "dictionaries": [{"source_lang": "en", "target_lang": "de", "entries": "a\tb", "entries_format": "tsv"}]}),
            "/name",
            "name",
        ),
        (
            Method::POST,
            "/v2/admin/developer-keys".into(),
            json!({"label": "k"}),
            "/label",
            "label",
        ),
        (
            Method::PUT,
            "/v2/admin/developer-keys/label".into(),
            json!({"key_id": key_id, "label": "k"}),
            "/label",
            "label",
        ),
        (
            Method::POST,
            "/v1/quality-evaluation".into(),
            json!({"metadata": {"source_language": "en", "target_language": "es"},
                   "segments": [{"source": "The dog.", "target": "El perro."}]}),
            "/segments/0/source",
            "segments[0].source",
        ),
        (
            Method::POST,
            "/v1/jobs/voice/translate".into(),
            json!({"source_file": file, "targets": [{"language": "es", "type": "text/plain"}]}),
            "/source_file/name",
            "source_file.name",
        ),
        (
            Method::POST,
            "/v3/translation_memories/import".into(),
            json!({"source_file": {"file_name": "m.tmx", "content_type": "application/xml", "content_length": 100},
                   "parameters": {"display_name": "m"}}),
            "/source_file/file_name",
            "source_file.file_name",
        ),
        (
            Method::POST,
            "/v3/translation_memories/import".into(),
            json!({"source_file": {"file_name": "m.tmx", "content_type": "application/xml", "content_length": 100},
                   "parameters": {"display_name": "m"}}),
            "/parameters/display_name",
            "parameters.display_name",
        ),
    ]
}

/// Sends raw bytes as a JSON body with the key; returns (status, JSON body).
async fn send_raw(
    api: &crate::support::Api,
    key: &str,
    method: Method,
    path: &str,
    body: Vec<u8>,
) -> Result<(u16, Value)> {
    let res = api
        .keyed(method, path, key)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await?;
    let code = res.status().as_u16();
    let text = res.text().await?;
    let body = serde_json::from_str(&text).with_context(|| {
        format!("{path} answered {code} with a body that is not JSON: {text:?}")
    })?;
    Ok((code, body))
}

#[tokio::test]
async fn stored_text_with_nul_is_refused_naming_its_field() -> Result<()> {
    let mut world = World::new("hostile_nul").await?;
    let admin = world.create_key("admin", true).await?;
    let api = world.start_api().await?;
    let (code, created) = call(
        &api,
        &admin,
        Method::POST,
        "/v2/admin/developer-keys",
        Some(&json!({"label": "target"})),
    )
    .await?;
    assert_eq!(code, 200, "{created}");
    let key_id = created["key_id"].as_str().context("key_id")?.to_owned();
    for (method, path, body, pointer, field) in stored_text_operations(&key_id) {
        let mut bad = body.clone();
        *bad.pointer_mut(pointer).context("pointer")? = json!("a\u{0}b");
        let (code, answer) = call(&api, &admin, method.clone(), &path, Some(&bad)).await?;
        assert_eq!(code, 400, "{method} {path} {pointer}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("'{field}'")) && message.contains("NUL"),
            "{method} {path}: {message}"
        );
    }
    // A form body too.
    let res = api
        .keyed(reqwest::Method::POST, "/v2/glossaries", &admin)
        .form(&[
            ("name", "g\u{0}"),
            ("source_lang", "en"),
            ("target_lang", "de"),
            ("entries", "a\tb"),
            ("entries_format", "tsv"),
        ])
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 400);
    let answer: Value = res.json().await?;
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("'name'"),
        "{answer}"
    );
    Ok(())
}

#[tokio::test]
async fn malformed_bodies_on_write_operations_never_answer_5xx() -> Result<()> {
    let mut world = World::new("hostile_bodies").await?;
    let admin = world.create_key("admin", true).await?;
    let api = world.start_api().await?;
    let key_id = "0".repeat(32);
    let megabyte = "x".repeat(1 << 20);
    for (method, path, body, pointer, _) in stored_text_operations(&key_id) {
        let mut variants: Vec<Vec<u8>> = vec![
            // Not UTF-8.
            b"{\"name\": \"\xff\xfe\"}".to_vec(),
            // Not JSON.
            b"{\"name\":".to_vec(),
            // Not an object.
            b"[1, 2]".to_vec(),
        ];
        for replacement in [
            json!(megabyte),
            json!(12),
            json!({"a": 1}),
            json!(null),
            json!([]),
        ] {
            let mut v = body.clone();
            *v.pointer_mut(pointer).context("pointer")? = replacement;
            variants.push(serde_json::to_vec(&v)?);
        }
        for bytes in variants {
            let sent = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
            let (code, answer) = send_raw(&api, &admin, method.clone(), &path, bytes).await?;
            assert!(code < 500, "{method} {path} with {sent}: {code} {answer}");
            if code >= 400 {
                assert!(answer["message"].is_string(), "{method} {path}: {answer}");
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_framework_s_own_rejections_are_json() -> Result<()> {
    let mut world = World::new("hostile_rejections").await?;
    let key = world.create_key("k", false).await?;
    let api = world.start_api().await?;
    let auth = format!("DeepL-Auth-Key {key}");
    let cases = [
        // A multipart upload without its boundary.
        api.http
            .post(api.url("/v2/document"))
            .header("Authorization", &auth)
            .header("Content-Type", "multipart/form-data")
            .body("x"),
        // Duplicate query keys for a typed query.
        api.http
            .get(api.url("/v3/style_rules?page=1&page=2"))
            .header("Authorization", &auth),
        // No such route; a method the route does not have.
        api.http
            .get(api.url("/v2/no-such-thing"))
            .header("Authorization", &auth),
        api.http
            .delete(api.url("/v2/translate"))
            .header("Authorization", &auth),
    ];
    for req in cases {
        let res = req.send().await?;
        let code = res.status().as_u16();
        let url = res.url().to_string();
        let ct = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let text = res.text().await?;
        assert!((400..500).contains(&code), "{url}: {code} {text}");
        assert!(ct.starts_with("application/json"), "{url}: {ct} {text}");
        let body: Value = serde_json::from_str(&text)?;
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{url}: {text}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn an_oversized_upload_gets_its_413_after_the_whole_body_is_sent() -> Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut world = World::new("hostile_oversize").await?;
    world
        .extra_env
        .push(("TOLK_MAX_UPLOAD_BYTES".into(), (1 << 20).to_string()));
    let key = world.create_key("k", false).await?;
    let api = world.start_api().await?;
    // What a client that writes its whole body before reading (Node's http)
    // does: 24 MiB in a multipart body, against a 1 MiB limit.
    let boundary = "tolkboundary";
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"target_lang\"\r\n\r\nES\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.txt\"\r\n\
         Content-Type: text/plain\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let filler = vec![b'a'; 64 * 1024];
    let chunks = 24 * 16;
    let length = head.len() + chunks * filler.len() + tail.len();
    let addr = api.direct.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await?;
    let request = format!(
        "POST /v2/document HTTP/1.1\r\nHost: {addr}\r\nAuthorization: DeepL-Auth-Key {key}\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {length}\r\n\r\n{head}"
    );
    conn.write_all(request.as_bytes()).await?;
    for i in 0..chunks {
        conn.write_all(&filler)
            .await
            .with_context(|| format!("the server closed the connection after {i} chunks"))?;
    }
    conn.write_all(tail.as_bytes()).await?;
    let mut answer = Vec::new();
    let mut buf = vec![0u8; 8192];
    while !String::from_utf8_lossy(&answer).contains("}") {
        let n = conn.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("\"message\""), "{text}");
    Ok(())
}
