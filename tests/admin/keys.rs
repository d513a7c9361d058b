//! Developer-key administration: the key lifecycle and deactivation seen by a
//! second replica.

use super::*;

/// A world with an admin key, a developer key made with the CLI, and `replicas`
/// API processes.
struct Admin {
    world: World,
    admin: String,
    developer: String,
    apis: Vec<Api>,
}

async fn admin_world(tag: &str, replicas: usize) -> Result<Admin> {
    let mut world = World::new(tag).await?;
    let admin = world.create_key("admin", true).await?;
    let developer = world.create_key("plain developer", false).await?;
    let mut apis = Vec::new();
    for _ in 0..replicas {
        apis.push(world.start_api().await?);
    }
    Ok(Admin {
        world,
        admin,
        developer,
        apis,
    })
}

/// Deactivates `key_id` through `api`: (status, body).
async fn deactivate(api: &Api, admin: &str, key_id: &str) -> Result<(u16, Value)> {
    api.put(
        admin,
        "/v2/admin/developer-keys/deactivate",
        &json!({"key_id": key_id}),
    )
    .await
}

/// [`deactivate`], failing on a non-200; returns the body.
async fn deactivated(api: &Api, admin: &str, key_id: &str) -> Result<Value> {
    let (code, body) = deactivate(api, admin, key_id).await?;
    anyhow::ensure!(code == 200, "deactivate answered {code}: {body}");
    Ok(body)
}

/// A developer key may not administer: 403, on every admin operation.
#[tokio::test]
async fn a_developer_key_may_not_administer() -> Result<()> {
    let w = admin_world("admin_keys_forbidden", 1).await?;
    let a = &w.apis[0];
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
            a,
            &w.developer,
            method.clone(),
            path,
            Some(&json!({"key_id": "x"})),
        )
        .await?;
        assert_eq!(code, 403, "{method} {path}: {body}");
        assert!(message(&body).contains("admin"), "{body}");
    }
    Ok(())
}

/// No key at all: 403 too.
#[tokio::test]
async fn administering_without_a_key_is_refused() -> Result<()> {
    let w = admin_world("admin_keys_no_key", 1).await?;
    let a = &w.apis[0];
    let res = a.http.get(a.url("/v2/admin/developer-keys")).send().await?;
    assert_eq!(res.status().as_u16(), 403);
    Ok(())
}

/// Create: the ApiKey object, with the credential shown this once.
#[tokio::test]
async fn a_created_developer_key_comes_with_its_credential() -> Result<()> {
    let w = admin_world("admin_keys_create", 1).await?;
    let (code, created) = w.apis[0]
        .post(
            &w.admin,
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
    // Absent rather than null: the schema types it as a string.
    assert!(created.get("deactivated_time").is_none(), "{created}");
    assert!(
        created["creation_time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{created}"
    );
    // No limits set: none listed (each is a number in the schema, never null).
    assert_eq!(created["usage_limits"], json!({}));
    Ok(())
}

/// A label is optional (the reference default).
#[tokio::test]
async fn a_developer_key_without_a_label_gets_the_default_label() -> Result<()> {
    let w = admin_world("admin_keys_unnamed", 1).await?;
    let (code, unnamed) = w.apis[0]
        .post(&w.admin, "/v2/admin/developer-keys", &json!({}))
        .await?;
    assert_eq!(code, 200, "{unnamed}");
    assert_eq!(unnamed["label"], "DeepL API Key");
    Ok(())
}

/// The new key works on both replicas.
#[tokio::test]
async fn a_created_developer_key_works_on_every_replica() -> Result<()> {
    let w = admin_world("admin_keys_works", 2).await?;
    let (_, secret) = new_developer_key(&w.apis[0], &w.admin, "staging").await?;
    for api in &w.apis {
        let (code, body) = api.get(&secret, "/v2/usage").await?;
        assert_eq!(code, 200, "{body}");
    }
    Ok(())
}

/// List: the organization's developer keys (not the admin key), no secrets.
#[tokio::test]
async fn the_key_list_shows_the_developer_keys_without_secrets() -> Result<()> {
    let w = admin_world("admin_keys_list", 2).await?;
    let (a, b) = (&w.apis[0], &w.apis[1]);
    let (key_id, _) = new_developer_key(a, &w.admin, "staging").await?;
    let (code, unnamed) = a
        .post(&w.admin, "/v2/admin/developer-keys", &json!({}))
        .await?;
    anyhow::ensure!(code == 200, "create answered {code}: {unnamed}");
    let (code, list) = b.get(&w.admin, "/v2/admin/developer-keys").await?;
    assert_eq!(code, 200, "{list}");
    let listed = list.as_array().context("array")?;
    assert_eq!(listed.len(), 3, "{list}"); // CLI developer key + two created
    assert!(listed.iter().all(|k| k.get("key").is_none()), "{list}");
    assert!(
        listed.iter().any(|k| k["key_id"] == key_id.as_str()),
        "{list}"
    );
    let admin_id = w.admin.split_once('.').context("admin key")?.0;
    assert!(listed.iter().all(|k| k["key_id"] != admin_id), "{list}");
    Ok(())
}

#[tokio::test]
async fn a_developer_key_is_relabelled() -> Result<()> {
    let w = admin_world("admin_keys_label", 1).await?;
    let a = &w.apis[0];
    let (key_id, _) = new_developer_key(a, &w.admin, "staging").await?;
    let (code, body) = a
        .put(
            &w.admin,
            "/v2/admin/developer-keys/label",
            &json!({"key_id": key_id, "label": "production"}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["label"], "production");
    Ok(())
}

/// Limits: set, then replace (an omitted limit is removed); another replica
/// reports the new limit.
#[tokio::test]
async fn developer_key_limits_are_set_and_replaced_whole() -> Result<()> {
    let w = admin_world("admin_keys_limits", 2).await?;
    let (a, b) = (&w.apis[0], &w.apis[1]);
    let (key_id, secret) = new_developer_key(a, &w.admin, "staging").await?;
    let (code, body) = a.put(&w.admin,
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
            &w.admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": 7000, "speech_to_text_milliseconds": null}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["usage_limits"]["characters"], 7000);
    assert!(
        body["usage_limits"]
            .get("speech_to_text_milliseconds")
            .is_none(),
        "{body}"
    );
    let (_, usage) = b.get(&secret, "/v2/usage").await?;
    assert_eq!(usage["character_limit"], 7000, "{usage}");
    Ok(())
}

/// Malformed bodies: 400 naming the field.
#[tokio::test]
async fn malformed_key_administration_bodies_are_refused_naming_the_field() -> Result<()> {
    let w = admin_world("admin_keys_malformed", 1).await?;
    let a = &w.apis[0];
    let admin = &w.admin;
    let (key_id, _) = new_developer_key(a, admin, "staging").await?;
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
        let (code, res) = a.put(admin, path, &body).await?;
        assert_eq!(code, 400, "{path} {body}: {res}");
        assert!(message(&res).contains(field), "{path} {body}: {res}");
    }
    let (code, res) = a
        .post(admin, "/v2/admin/developer-keys", &json!({"label": ["x"]}))
        .await?;
    assert_eq!(code, 400, "{res}");
    assert!(message(&res).contains("'label'"), "{res}");
    let res = a
        .keyed(
            reqwest::Method::PUT,
            "/v2/admin/developer-keys/deactivate",
            admin,
        )
        .header("Content-Type", "application/json")
        .body("{\"key_id\": ")
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 400);
    Ok(())
}

/// Unknown keys, and the admin key (not a developer key): 404.
#[tokio::test]
async fn unknown_keys_and_the_admin_key_are_not_found_for_administration() -> Result<()> {
    let w = admin_world("admin_keys_unknown", 1).await?;
    let a = &w.apis[0];
    let admin_id = w.admin.split_once('.').context("admin key")?.0;
    for path in [
        "/v2/admin/developer-keys/deactivate",
        "/v2/admin/developer-keys/label",
        "/v2/admin/developer-keys/limits",
    ] {
        let (code, res) = a
            .put(&w.admin, path, &json!({"key_id": "nope", "label": "x"}))
            .await?;
        assert_eq!(code, 404, "{path}: {res}");
        // An admin key is not a developer key: not reachable either.
        let (code, res) = a
            .put(&w.admin, path, &json!({"key_id": admin_id, "label": "x"}))
            .await?;
        assert_eq!(code, 404, "{path}: {res}");
    }
    Ok(())
}

/// Deactivate on replica A: replica B refuses the key at once, and A too.
#[tokio::test]
async fn a_key_deactivated_on_one_replica_is_refused_by_every_replica() -> Result<()> {
    let w = admin_world("admin_keys_deactivate", 2).await?;
    let (a, b) = (&w.apis[0], &w.apis[1]);
    let (key_id, secret) = new_developer_key(a, &w.admin, "staging").await?;
    let (code, body) = deactivate(a, &w.admin, &key_id).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["is_deactivated"], true);
    body["deactivated_time"].as_str().context("time")?;
    for api in [b, a] {
        let (code, body) = api.get(&secret, "/v2/usage").await?;
        assert_eq!(code, 403, "{body}");
        let (code, body) = api.en_es(&secret, &["Hello"], None).await?;
        assert_eq!(code, 403, "{body}");
    }
    Ok(())
}

/// A replica started after the deactivation refuses the key too.
#[tokio::test]
async fn a_replica_started_after_deactivation_refuses_the_key() -> Result<()> {
    let mut w = admin_world("admin_keys_later_replica", 1).await?;
    let (key_id, secret) = new_developer_key(&w.apis[0], &w.admin, "staging").await?;
    deactivated(&w.apis[0], &w.admin, &key_id).await?;
    let c = w.world.start_api().await?;
    let (code, _) = c.get(&secret, "/v2/usage").await?;
    assert_eq!(code, 403);
    Ok(())
}

/// Deactivation is permanent: deactivating again (on another replica) keeps
/// the first time.
#[tokio::test]
async fn deactivating_a_key_again_keeps_its_deactivation_time() -> Result<()> {
    let w = admin_world("admin_keys_deactivate_again", 2).await?;
    let (a, b) = (&w.apis[0], &w.apis[1]);
    let (key_id, _) = new_developer_key(a, &w.admin, "staging").await?;
    let first = deactivated(a, &w.admin, &key_id).await?;
    let deactivated_time = first["deactivated_time"]
        .as_str()
        .context("time")?
        .to_owned();
    let (code, body) = deactivate(b, &w.admin, &key_id).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["deactivated_time"], deactivated_time.as_str());
    Ok(())
}

/// The list shows a deactivated key as such, with its label.
#[tokio::test]
async fn the_key_list_shows_a_deactivated_key() -> Result<()> {
    let w = admin_world("admin_keys_list_deactivated", 2).await?;
    let (a, b) = (&w.apis[0], &w.apis[1]);
    let (key_id, _) = new_developer_key(a, &w.admin, "staging").await?;
    let (code, body) = a
        .put(
            &w.admin,
            "/v2/admin/developer-keys/label",
            &json!({"key_id": key_id, "label": "production"}),
        )
        .await?;
    anyhow::ensure!(code == 200, "relabel answered {code}: {body}");
    deactivated(a, &w.admin, &key_id).await?;
    let (_, list) = b.get(&w.admin, "/v2/admin/developer-keys").await?;
    let entry = list
        .as_array()
        .and_then(|l| l.iter().find(|k| k["key_id"] == key_id.as_str()))
        .context("listed")?;
    assert_eq!(entry["is_deactivated"], true);
    assert_eq!(entry["label"], "production");
    Ok(())
}

/// The other keys still work after a deactivation.
#[tokio::test]
async fn deactivating_a_key_leaves_the_other_keys_working() -> Result<()> {
    let mut w = admin_world("admin_keys_others_work", 1).await?;
    let (key_id, _) = new_developer_key(&w.apis[0], &w.admin, "staging").await?;
    deactivated(&w.apis[0], &w.admin, &key_id).await?;
    let c = w.world.start_api().await?;
    let (code, _) = c.get(&w.developer, "/v2/usage").await?;
    assert_eq!(code, 200);
    Ok(())
}

/// The ledger names keys without a foreign key (migration 20261123000001):
/// the database itself refuses to delete a key or an organization.
#[tokio::test]
async fn the_database_refuses_to_delete_a_key_or_an_organization() -> Result<()> {
    let w = admin_world("admin_keys_never_deleted", 1).await?;
    let a = &w.apis[0];
    let (key_id, _) = new_developer_key(a, &w.admin, "staging").await?;
    deactivated(a, &w.admin, &key_id).await?;
    let db = w.world.db().await?;
    for statement in [
        "DELETE FROM api_keys WHERE key_id = $1",
        "DELETE FROM organizations WHERE id = (SELECT organization_id FROM api_keys WHERE key_id = $1)",
    ] {
        let refused = sqlx::query(statement).bind(&key_id).execute(&db).await;
        let e = refused.err().context("a key or organization was deleted")?;
        assert!(e.to_string().contains("never deleted"), "{e}");
    }
    let (code, _) = a.get(&w.admin, "/v2/admin/developer-keys").await?;
    assert_eq!(code, 200);
    Ok(())
}
