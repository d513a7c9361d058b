//! The errors of the translation memory endpoints.

use super::*;

#[tokio::test]
async fn translation_memory_errors() -> Result<()> {
    let mut world = World::new("tm_errors").await?;
    let key = world.create_key("tm", false).await?;
    let other = world.create_key_in("other").await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    let tmx = tmx_of(&[("Good night.", "Buenas noches.")], "es");
    let (id, _) = import_ok(&api, &key, "errs", tmx.as_bytes()).await?;
    let unknown = "3fa85f64-5717-4562-b3fc-2c963f66afa6";

    // 404s.
    for (method, path) in [
        (Method::GET, format!("/v3/translation_memories/{unknown}")),
        (
            Method::DELETE,
            format!("/v3/translation_memories/{unknown}"),
        ),
        (
            Method::GET,
            format!("/v3/translation_memories/{unknown}/segments"),
        ),
        (
            Method::POST,
            format!("/v3/translation_memories/{unknown}/export"),
        ),
        (
            Method::GET,
            format!("/v3/translation_memories/jobs/{unknown}"),
        ),
    ] {
        let (code, body) = call(&api, &key, method.clone(), &path, None).await?;
        assert_eq!(code, 404, "{method} {path}: {body}");
        assert!(body["message"].is_string(), "{body}");
    }
    let base = |extra: Value| {
        let mut b = json!({"text": ["Good night."], "source_lang": "EN", "target_lang": "ES"});
        if let (Some(b), Some(e)) = (b.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        b
    };
    for (extra, why) in [
        (json!({"translation_memory_id": unknown}), "unknown memory"),
        (
            json!({"translation_memory_id": id, "target_lang": "FR"}),
            "no FR target",
        ),
        (
            json!({"translation_memory_id": id, "source_lang": "ES", "target_lang": "EN-US"}),
            "wrong source",
        ),
    ] {
        let (code, body) = api.translate(&key, &base(extra), None).await?;
        assert_eq!(code, 404, "{why}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("memory")),
            "{body}"
        );
    }
    // Another organization's key sees nothing.
    let (code, _) = api
        .translate(&other, &base(json!({"translation_memory_id": id})), None)
        .await?;
    assert_eq!(code, 404);
    let (code, _) = call(
        &api,
        &other,
        Method::GET,
        &format!("/v3/translation_memories/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 404);

    // 400s with a message.
    for (extra, field) in [
        (
            json!({"translation_memory_id": id, "translation_memory_threshold": 101}),
            "translation_memory_threshold",
        ),
        (
            json!({"translation_memory_id": "nope"}),
            "translation_memory_id",
        ),
    ] {
        let (code, body) = api.translate(&key, &base(extra), None).await?;
        assert_eq!(code, 400, "{body}");
        assert!(
            body["message"].as_str().is_some_and(|m| m.contains(field)),
            "{body}"
        );
    }
    for (body, field) in [
        (json!({}), "source_file"),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 0}}),
            "content_length",
        ),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 5_000_000_000i64}}),
            "content_length",
        ),
        (
            json!({"source_file": {"file_name": "", "content_length": 10}}),
            "file_name",
        ),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 10, "content_type": "image/png"}}),
            "content_type",
        ),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 10}, "parameters": {"display_name": 3}}),
            "display_name",
        ),
    ] {
        let (code, res) = call(
            &api,
            &key,
            Method::POST,
            "/v3/translation_memories/import",
            Some(&body),
        )
        .await?;
        assert_eq!(code, 400, "{body}: {res}");
        assert!(
            res["message"].as_str().is_some_and(|m| m.contains(field)),
            "{res}"
        );
    }
    for path in [
        format!("/v3/translation_memories/{id}/segments?filter_text=a"),
        format!("/v3/translation_memories/{id}/segments?page_size=0"),
        format!("/v3/translation_memories/{id}/segments?page_cursor=abc"),
        "/v3/translation_memories?page_size=26".to_owned(),
        "/v3/translation_memories/not-a-uuid".to_owned(),
    ] {
        let (code, res) = call(&api, &key, Method::GET, &path, None).await?;
        assert_eq!(code, 400, "{path}: {res}");
        assert!(res["message"].is_string(), "{res}");
    }

    // Uploads: a wrong signature, too many bytes, a second upload.
    let (_, job) = call(
        &api,
        &key,
        Method::POST,
        "/v3/translation_memories/import",
        Some(&json!({"source_file": {"file_name": "a.tmx", "content_length": 10}})),
    )
    .await?;
    let url = job["upload_url"].as_str().context("upload_url")?;
    let forged = url.replace("signature=", "signature=1");
    let res = api.http.put(&forged).body("0123456789").send().await?;
    assert_eq!(res.status().as_u16(), 403);
    let res = api.http.put(url).body("0123456789ABC").send().await?;
    assert_eq!(res.status().as_u16(), 413);
    let res = api.http.put(url).body("<tmx/>").send().await?;
    assert_eq!(res.status().as_u16(), 200);
    let res = api.http.put(url).body("<tmx/>").send().await?;
    assert_eq!(res.status().as_u16(), 400);
    // `<tmx/>` has no unit: the import fails and says so.
    let body = wait_job(&api, &key, job["job_id"].as_str().context("job_id")?).await?;
    assert_eq!(body["results"][0]["status"], "failed", "{body}");
    Ok(())
}
