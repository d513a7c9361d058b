//! Developer-key administration: the key lifecycle and deactivation seen by a
//! second replica.

use super::*;

#[tokio::test]
async fn developer_key_lifecycle_and_deactivation_on_a_second_replica() -> Result<()> {
    let mut world = World::new("admin_keys").await?;
    let admin = world.create_key("admin", true).await?;
    let developer = world.create_key("plain developer", false).await?;
    let a = world.start_api().await?;
    let b = world.start_api().await?; // a second replica of the API

    // A developer key may not administer: 403, on every admin operation.
    for (method, path) in [
        (reqwest::Method::GET, "/v2/admin/developer-keys"),
        (reqwest::Method::POST, "/v2/admin/developer-keys"),
        (reqwest::Method::PUT, "/v2/admin/developer-keys/deactivate"),
        (reqwest::Method::PUT, "/v2/admin/developer-keys/label"),
        (reqwest::Method::PUT, "/v2/admin/developer-keys/limits"),
        (
            reqwest::Method::GET,
            "/v2/admin/analytics?start_date=2026-01-01&end_date=2026-01-02",
        ),
        (
            reqwest::Method::GET,
            "/v2/admin/analytics/custom-tags?start_date=2026-01-01&end_date=2026-01-02",
        ),
    ] {
        let (code, body) = call(
            &a,
            &developer,
            method.clone(),
            path,
            Some(&json!({"key_id": "x"})),
        )
        .await?;
        assert_eq!(code, 403, "{method} {path}: {body}");
        assert!(message(&body).contains("admin"), "{body}");
    }
    // No key at all: 403 too.
    let res = a.http.get(a.url("/v2/admin/developer-keys")).send().await?;
    assert_eq!(res.status().as_u16(), 403);

    // Create: the ApiKey object, with the credential shown this once.
    let (code, created) = a
        .post(
            &admin,
            "/v2/admin/developer-keys",
            &json!({"label": "staging"}),
        )
        .await?;
    assert_eq!(code, 200, "{created}");
    let key_id = created["key_id"].as_str().context("key_id")?.to_owned();
    let secret = created["key"].as_str().context("key")?.to_owned();
    assert!(secret.starts_with(&format!("{key_id}.")), "{created}");
    assert_eq!(created["label"], "staging");
    assert_eq!(created["is_deactivated"], false);
    assert_eq!(created["deactivated_time"], Value::Null);
    assert!(
        created["creation_time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{created}"
    );
    assert_eq!(
        created["usage_limits"],
        json!({"characters": null, "speech_to_text_milliseconds": null,
               "speech_to_speech_milliseconds": null})
    );
    // A label is optional (the reference default).
    let (code, unnamed) = a
        .post(&admin, "/v2/admin/developer-keys", &json!({}))
        .await?;
    assert_eq!(code, 200, "{unnamed}");
    assert_eq!(unnamed["label"], "DeepL API Key");

    // The new key works on both replicas.
    for api in [&a, &b] {
        let (code, body) = api.get(&secret, "/v2/usage").await?;
        assert_eq!(code, 200, "{body}");
    }

    // List: the organization's developer keys (not the admin key), no secrets.
    let (code, list) = b.get(&admin, "/v2/admin/developer-keys").await?;
    assert_eq!(code, 200, "{list}");
    let listed = list.as_array().context("array")?;
    assert_eq!(listed.len(), 3, "{list}"); // CLI developer key + two created
    assert!(listed.iter().all(|k| k.get("key").is_none()), "{list}");
    assert!(
        listed.iter().any(|k| k["key_id"] == key_id.as_str()),
        "{list}"
    );
    let admin_id = admin.split_once('.').context("admin key")?.0;
    assert!(listed.iter().all(|k| k["key_id"] != admin_id), "{list}");

    // Label.
    let (code, body) = a
        .put(
            &admin,
            "/v2/admin/developer-keys/label",
            &json!({"key_id": key_id, "label": "production"}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["label"], "production");

    // Limits: set, then replace (an omitted limit is removed).
    let (code, body) = a.put(&admin,
        "/v2/admin/developer-keys/limits",
        &json!({"key_id": key_id, "characters": 5000, "speech_to_text_milliseconds": 3_600_000}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["usage_limits"]["characters"], 5000);
    assert_eq!(
        body["usage_limits"]["speech_to_text_milliseconds"],
        3_600_000
    );
    let (code, body) = a
        .put(
            &admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": 7000, "speech_to_text_milliseconds": null}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["usage_limits"]["characters"], 7000);
    assert_eq!(
        body["usage_limits"]["speech_to_text_milliseconds"],
        Value::Null
    );
    let (_, usage) = b.get(&secret, "/v2/usage").await?;
    assert_eq!(usage["character_limit"], 7000, "{usage}");

    // Malformed bodies: 400 naming the field; unknown keys: 404.
    for (path, body, field) in [
        (
            "/v2/admin/developer-keys/label",
            json!({"label": "x"}),
            "'key_id'",
        ),
        (
            "/v2/admin/developer-keys/label",
            json!({"key_id": key_id}),
            "'label'",
        ),
        (
            "/v2/admin/developer-keys/label",
            json!({"key_id": key_id, "label": 5}),
            "'label'",
        ),
        (
            "/v2/admin/developer-keys/label",
            json!({"key_id": key_id, "label": " "}),
            "'label'",
        ),
        (
            "/v2/admin/developer-keys/limits",
            json!({"key_id": key_id, "characters": "many"}),
            "'characters'",
        ),
        (
            "/v2/admin/developer-keys/limits",
            json!({"key_id": key_id, "characters": -1}),
            "'characters'",
        ),
        (
            "/v2/admin/developer-keys/limits",
            json!({"key_id": key_id, "speech_to_text_milliseconds": 1.5}),
            "'speech_to_text_milliseconds'",
        ),
        ("/v2/admin/developer-keys/deactivate", json!({}), "'key_id'"),
        (
            "/v2/admin/developer-keys/deactivate",
            json!({"key_id": 12}),
            "'key_id'",
        ),
    ] {
        let (code, res) = a.put(&admin, path, &body).await?;
        assert_eq!(code, 400, "{path} {body}: {res}");
        assert!(message(&res).contains(field), "{path} {body}: {res}");
    }
    let (code, res) = a
        .post(&admin, "/v2/admin/developer-keys", &json!({"label": ["x"]}))
        .await?;
    assert_eq!(code, 400, "{res}");
    assert!(message(&res).contains("'label'"), "{res}");
    let res = a
        .keyed(
            reqwest::Method::PUT,
            "/v2/admin/developer-keys/deactivate",
            &admin,
        )
        .header("Content-Type", "application/json")
        .body("{\"key_id\": ")
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 400);
    for path in [
        "/v2/admin/developer-keys/deactivate",
        "/v2/admin/developer-keys/label",
        "/v2/admin/developer-keys/limits",
    ] {
        let (code, res) = a
            .put(&admin, path, &json!({"key_id": "nope", "label": "x"}))
            .await?;
        assert_eq!(code, 404, "{path}: {res}");
        // An admin key is not a developer key: not reachable either.
        let (code, res) = a
            .put(&admin, path, &json!({"key_id": admin_id, "label": "x"}))
            .await?;
        assert_eq!(code, 404, "{path}: {res}");
    }

    // Deactivate on replica A: replica B refuses the key at once, for good.
    let (code, body) = a
        .put(
            &admin,
            "/v2/admin/developer-keys/deactivate",
            &json!({"key_id": key_id}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["is_deactivated"], true);
    let deactivated_time = body["deactivated_time"]
        .as_str()
        .context("time")?
        .to_owned();
    for api in [&b, &a] {
        let (code, body) = api.get(&secret, "/v2/usage").await?;
        assert_eq!(code, 403, "{body}");
        let (code, body) = api.en_es(&secret, &["Hello"], None).await?;
        assert_eq!(code, 403, "{body}");
    }
    // A third replica started afterwards refuses it too.
    let c = world.start_api().await?;
    let (code, _) = c.get(&secret, "/v2/usage").await?;
    assert_eq!(code, 403);
    // Deactivation is permanent: again → same time; the list shows it.
    let (code, body) = b
        .put(
            &admin,
            "/v2/admin/developer-keys/deactivate",
            &json!({"key_id": key_id}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["deactivated_time"], deactivated_time.as_str());
    let (_, list) = c.get(&admin, "/v2/admin/developer-keys").await?;
    let entry = list
        .as_array()
        .and_then(|l| l.iter().find(|k| k["key_id"] == key_id.as_str()))
        .context("listed")?;
    assert_eq!(entry["is_deactivated"], true);
    assert_eq!(entry["label"], "production");
    // The other keys still work.
    let (code, _) = c.get(&developer, "/v2/usage").await?;
    assert_eq!(code, 200);
    // The ledger names keys without a foreign key (migration 20261123000001):
    // the database itself refuses to delete a key or an organization.
    let db = world.db().await?;
    for statement in [
        "DELETE FROM api_keys WHERE key_id = $1",
        "DELETE FROM organizations WHERE id = (SELECT organization_id FROM api_keys WHERE key_id = $1)",
    ] {
        let refused = sqlx::query(statement).bind(&key_id).execute(&db).await;
        let e = refused.err().context("a key or organization was deleted")?;
        assert!(e.to_string().contains("never deleted"), "{e}");
    }
    let (code, _) = c.get(&admin, "/v2/admin/developer-keys").await?;
    assert_eq!(code, 200);
    Ok(())
}
