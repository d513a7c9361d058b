//! Developer-key administration, the usage ledger and its rollup, limits (456),
//! analytics and rate limits (429), against real `tolk` processes, PostgreSQL,
//! Redis and Apertium.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::support::{Answer, Api, World, call, exchange, message};

/// Characters as the spec counts them (Unicode scalar values).
fn chars(texts: &[&str]) -> i64 {
    texts.iter().map(|t| t.chars().count() as i64).sum()
}

/// Creates a developer key through the admin API; returns (key_id, credential).
async fn new_developer_key(api: &Api, admin: &str, label: &str) -> Result<(String, String)> {
    let (code, body) = api
        .post(admin, "/v2/admin/developer-keys", &json!({"label": label}))
        .await?;
    if code != 200 {
        bail!("create key answered {code}: {body}");
    }
    Ok((
        body["key_id"].as_str().context("key_id")?.to_owned(),
        body["key"].as_str().context("key")?.to_owned(),
    ))
}

/// Runs a scheduler until the rollup has every ledger entry, then stops it.
async fn roll_up_everything(world: &mut World) -> Result<()> {
    let pid = world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let db = world.db().await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (left,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM usage_events e, usage_rollup_state s WHERE e.tx >= s.watermark",
        )
        .fetch_one(&db)
        .await?;
        if left == 0 {
            break;
        }
        if Instant::now() > deadline {
            bail!("{left} ledger entries not rolled up after 30 s");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    nix_kill(pid);
    world.wait_exit(pid, Duration::from_secs(20)).await?;
    Ok(())
}

fn nix_kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
}

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

#[tokio::test]
async fn character_limit_holds_under_32_concurrent_requests_on_two_replicas() -> Result<()> {
    let mut world = World::new("limits").await?;
    let admin = world.create_key("admin", true).await?;
    let a = world.start_api().await?;
    let b = world.start_api().await?;
    let (key_id, key) = new_developer_key(&a, &admin, "limited").await?;

    const TEXT: &str = "I have a dog."; // 13 characters
    let size = chars(&[TEXT]);
    let admitted_max = 10;
    let limit = size * admitted_max + 5; // room for 10 requests, not 11
    let (code, body) = a
        .put(
            &admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": limit}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");

    // 32 clients at once, alternating between the two replicas.
    let mut tasks = Vec::new();
    for i in 0..32 {
        let api = Api::new(if i % 2 == 0 {
            a.base.clone()
        } else {
            b.base.clone()
        });
        let key = key.clone();
        tasks.push(tokio::spawn(
            async move { api.en_es(&key, &[TEXT], None).await },
        ));
    }
    let mut ok = 0;
    let mut refused = 0;
    for t in tasks {
        let (code, body) = t.await??;
        match code {
            200 => ok += 1,
            456 => {
                assert!(message(&body).contains("limit"), "{body}");
                refused += 1;
            }
            other => bail!("unexpected {other}: {body}"),
        }
    }
    // The bound is 0: exactly the requests that fit were served.
    assert_eq!(ok, admitted_max, "{ok} served, {refused} refused");
    assert_eq!(refused, 32 - admitted_max);
    let db = world.db().await?;
    let (billed, entries): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(sum(amount), 0)::bigint, count(*) FROM usage_events WHERE api_key_id = $1",
    )
    .bind(&key_id)
    .fetch_one(&db)
    .await?;
    assert_eq!(entries, admitted_max);
    assert_eq!(billed, size * admitted_max);
    assert!(billed <= limit);
    let (holds,): (i64,) = sqlx::query_as("SELECT count(*) FROM usage_holds")
        .fetch_one(&db)
        .await?;
    assert_eq!(holds, 0, "every hold settled or released");

    // /v2/usage agrees; the next request still does not fit; a 5-character one does.
    let (_, usage) = b.get(&key, "/v2/usage").await?;
    assert_eq!(usage["character_count"], billed, "{usage}");
    assert_eq!(usage["character_limit"], limit, "{usage}");
    let (code, _) = a.en_es(&key, &[TEXT], None).await?;
    assert_eq!(code, 456);
    let (code, body) = b.en_es(&key, &["Hello"], None).await?;
    assert_eq!(code, 200, "{body}");
    // The limit is reached: even an empty request is refused, and so is a document.
    let (code, _) = a.en_es(&key, &[""], None).await?;
    assert_eq!(code, 456);
    let (code, body) = a
        .upload(
            &key,
            "a.txt",
            b"Hello world.".to_vec(),
            &[("target_lang", "ES")],
        )
        .await?;
    assert_eq!(code, 456, "{body}");
    // Raising the limit (through the admin API) lets requests through again, at once.
    let (code, _) = b
        .put(
            &admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": limit + size}),
        )
        .await?;
    assert_eq!(code, 200);
    let (code, body) = a.en_es(&key, &[TEXT], None).await?;
    assert_eq!(code, 200, "{body}");
    // Removing the limit (null) removes it.
    let (code, _) = b
        .put(
            &admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": null}),
        )
        .await?;
    assert_eq!(code, 200);
    let (code, _) = a.en_es(&key, &[TEXT, TEXT], None).await?;
    assert_eq!(code, 200);

    // The speech meters use the same reservation (no speech endpoint yet: the
    // storage API the voice service calls, 32 concurrent reservations).
    sqlx::query("UPDATE api_keys SET speech_to_text_milliseconds_limit = 10000 WHERE key_id = $1")
        .bind(&key_id)
        .execute(&db)
        .await?;
    let api_key = tolk_storage::keys::authenticate(&db, &key)
        .await?
        .context("key")?;
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let db = db.clone();
        let api_key = api_key.clone();
        tasks.push(tokio::spawn(async move {
            let hold = tolk_storage::limits::reserve(
                &db,
                &api_key,
                tolk_storage::limits::Meter::SpeechToText,
                1500,
            )
            .await?;
            let Ok(hold) = hold else {
                return Ok::<_, anyhow::Error>(false);
            };
            tolk_storage::limits::settle(
                &db,
                hold,
                &tolk_storage::usage::UsageEvent {
                    organization_id: api_key.organization_id,
                    api_key_id: &api_key.key_id,
                    kind: tolk_storage::usage::kind::SPEECH_TO_TEXT,
                    amount: 1500,
                    custom_tag: None,
                    document_id: None,
                },
                true,
            )
            .await?;
            Ok(true)
        }));
    }
    let mut served = 0;
    for t in tasks {
        served += i32::from(t.await??);
    }
    assert_eq!(served, 6, "6 × 1500 ms fit in 10000 ms, 7 do not");
    Ok(())
}

/// Per-key sums of a set of requests, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Sums {
    text: i64,
    document: i64,
    improvement: i64,
    stt_ms: i64,
    sts_ms: i64,
}

fn assert_figures(figures: &Value, s: &Sums) {
    assert_eq!(figures["text_translation_characters"], s.text, "{figures}");
    assert_eq!(
        figures["document_translation_characters"], s.document,
        "{figures}"
    );
    assert_eq!(
        figures["text_improvement_characters"], s.improvement,
        "{figures}"
    );
    assert_eq!(
        figures["total_characters"],
        s.text + s.document + s.improvement,
        "{figures}"
    );
    let minutes = |ms: i64| (ms as f64 / 600.0).round() / 100.0;
    assert_eq!(
        figures["speech_to_text_minutes"],
        minutes(s.stt_ms),
        "{figures}"
    );
    assert_eq!(
        figures["speech_to_speech_minutes"],
        minutes(s.sts_ms),
        "{figures}"
    );
}

/// Checks the three usage reports and returns the custom-tag totals.
async fn check_reports(
    api: &Api,
    admin: &str,
    keys: &[(&str, (String, String))],
    per_key: &BTreeMap<String, Sums>,
    start: chrono::NaiveDate,
    today: chrono::NaiveDate,
    label: &str,
) -> Result<BTreeMap<String, i64>> {
    let q = format!("start_date={start}&end_date={today}");
    let mut total = Sums::default();
    for s in per_key.values() {
        total.text += s.text;
        total.document += s.document;
        total.improvement += s.improvement;
        total.stt_ms += s.stt_ms;
        total.sts_ms += s.sts_ms;
    }
    let (code, body) = api.get(admin, &format!("/v2/admin/analytics?{q}")).await?;
    assert_eq!(code, 200, "{label}: {body}");
    let report = &body["usage_report"];
    assert_figures(&report["total_usage"], &total);
    assert_eq!(report["start_date"], format!("{start}T00:00:00"));
    assert_eq!(report["end_date"], format!("{today}T00:00:00"));
    assert!(report.get("group_by").is_none(), "{body}");
    assert!(report.get("key_usages").is_none(), "{body}");

    let (code, body) = api
        .get(admin, &format!("/v2/admin/analytics?{q}&group_by=key"))
        .await?;
    assert_eq!(code, 200, "{label}: {body}");
    let report = &body["usage_report"];
    assert_eq!(report["group_by"], "key");
    assert_figures(&report["total_usage"], &total);
    let items = report["key_usages"].as_array().context("key_usages")?;
    assert_eq!(items.len(), per_key.len(), "{label}: {body}");
    for (name, (key_id, _)) in keys {
        let masked = format!("{}****{}", &key_id[..4], &key_id[key_id.len() - 4..]);
        let item = items
            .iter()
            .find(|i| i["api_key"] == masked.as_str())
            .with_context(|| format!("{label}: {masked} in {body}"))?;
        assert_eq!(item["api_key_label"], *name);
        assert!(item.get("usage_date").is_none());
        assert_figures(&item["usage"], &per_key[key_id]);
    }

    let (code, body) = api
        .get(
            admin,
            &format!("/v2/admin/analytics?{q}&group_by=key_and_day"),
        )
        .await?;
    assert_eq!(code, 200, "{label}: {body}");
    let report = &body["usage_report"];
    assert_eq!(report["group_by"], "key_and_day");
    assert_figures(&report["total_usage"], &total);
    let items = report["key_and_day_usages"]
        .as_array()
        .context("key_and_day_usages")?;
    let mut sum = Sums::default();
    let mut alpha_days = Vec::new();
    for item in items {
        let u = &item["usage"];
        sum.text += u["text_translation_characters"].as_i64().unwrap_or(-1);
        sum.document += u["document_translation_characters"].as_i64().unwrap_or(-1);
        sum.improvement += u["text_improvement_characters"].as_i64().unwrap_or(-1);
        if item["api_key_label"] == "alpha" {
            alpha_days.push(item["usage_date"].as_str().unwrap_or_default().to_owned());
        }
    }
    assert_eq!(
        (sum.text, sum.document, sum.improvement),
        (total.text, total.document, total.improvement)
    );
    let day = |n: u64| format!("{}T00:00:00Z", today - chrono::Days::new(n));
    assert_eq!(
        alpha_days,
        [day(10), day(3), day(2), day(0)],
        "{label}: {body}"
    );

    // Custom tags (period): text + improvement per tag.
    let (code, body) = api
        .get(admin, &format!("/v2/admin/analytics/custom-tags?{q}"))
        .await?;
    assert_eq!(code, 200, "{label}: {body}");
    let report = &body["custom_tag_usage_report"];
    assert_eq!(report["aggregate_by"], "period");
    assert_eq!(report["next_page"], Value::Null);
    let usage = report["usage"].as_array().context("usage")?;
    let got: BTreeMap<String, i64> = usage
        .iter()
        .map(|u| {
            assert!(
                u["breakdown"]
                    .get("document_translation_characters")
                    .is_none()
            );
            (
                u["custom_tag"].as_str().unwrap_or_default().to_owned(),
                u["breakdown"]["total_characters"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    Ok(got)
}

#[tokio::test]
async fn analytics_sums_equal_the_requests_made_before_and_after_the_rollup() -> Result<()> {
    let mut world = World::new("analytics").await?;
    let admin = world.create_key("admin", true).await?;
    let api = world.start_api().await?;
    let db = world.db().await?;
    let mut keys = Vec::new();
    for label in ["alpha", "beta", "gamma"] {
        keys.push((label, new_developer_key(&api, &admin, label).await?));
    }
    let today = chrono::Utc::now().date_naive();
    let mut per_key: BTreeMap<String, Sums> = BTreeMap::new();
    let mut per_tag: BTreeMap<String, i64> = BTreeMap::new();

    // Translations: characters as the spec counts them (accents, emoji: one each).
    let batches: [&[&str]; 4] = [
        &["The house is big.", "I have a dog."],
        &["The café is open. ☕"],
        &["Good morning", "Good night", "Thank you very much"],
        &["A naïve façade"],
    ];
    let round = |n: usize| -> Vec<(usize, usize, Option<String>)> {
        (0..n)
            .map(|i| (i % 3, i % 4, (i % 2 == 0).then(|| format!("tag-{}", i % 3))))
            .collect()
    };
    async fn send(
        api: &Api,
        keys: &[(&str, (String, String))],
        plan: &[(usize, usize, Option<String>)],
        batches: &[&[&str]],
        per_key: &mut BTreeMap<String, Sums>,
        per_tag: &mut BTreeMap<String, i64>,
    ) -> Result<()> {
        for (k, b, tag) in plan {
            let (_, (key_id, key)) = &keys[*k];
            let (code, body) = api.en_es(key, batches[*b], tag.as_deref()).await?;
            assert_eq!(code, 200, "{body}");
            let n = chars(batches[*b]);
            per_key.entry(key_id.clone()).or_default().text += n;
            if let Some(t) = tag {
                *per_tag.entry(t.clone()).or_default() += n;
            }
        }
        Ok(())
    }
    send(
        &api,
        &keys,
        &round(12),
        &batches,
        &mut per_key,
        &mut per_tag,
    )
    .await?;

    // The other kinds (their services append to the same ledger), on earlier days
    // and at the edges of the range.
    let (alpha_id, _) = &keys[0].1;
    let org: (uuid::Uuid,) =
        sqlx::query_as("SELECT organization_id FROM api_keys WHERE key_id = $1")
            .bind(alpha_id)
            .fetch_one(&db)
            .await?;
    let start = today - chrono::Days::new(10);
    let inside = [
        (
            "document_translation_characters",
            1200_i64,
            10_i64,
            "00:00:00",
        ),
        ("text_improvement_characters", 340, 3, "12:00:00"),
        ("speech_to_text_milliseconds", 6_447_600, 3, "08:30:00"),
        ("speech_to_speech_milliseconds", 2_526_600, 2, "23:59:59"),
    ];
    for (kind, amount, days_ago, time) in inside {
        sqlx::query(
            "INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag, created_at)
             VALUES ($1, $2, $3, $4, 'tag-0', ($5::date + $6::time) AT TIME ZONE 'UTC')",
        )
        .bind(org.0)
        .bind(alpha_id)
        .bind(kind)
        .bind(amount)
        .bind(today - chrono::Days::new(days_ago as u64))
        .bind(time)
        .execute(&db)
        .await?;
        let s = per_key.entry(alpha_id.clone()).or_default();
        match kind {
            "document_translation_characters" => s.document += amount,
            "text_improvement_characters" => {
                s.improvement += amount;
                *per_tag.entry("tag-0".to_owned()).or_default() += amount;
            }
            "speech_to_text_milliseconds" => s.stt_ms += amount,
            _ => s.sts_ms += amount,
        }
    }
    // Just outside the range: the day before start_date.
    sqlx::query(
        "INSERT INTO usage_events (organization_id, api_key_id, kind, amount, created_at)
         VALUES ($1, $2, 'text_translation_characters', 999, ($3::date - 1 + time '23:59:59') AT TIME ZONE 'UTC')",
    )
    .bind(org.0)
    .bind(alpha_id)
    .bind(start)
    .execute(&db)
    .await?;

    // Nothing rolled up yet: the report is the ledger's tail alone.
    let got = check_reports(
        &api,
        &admin,
        &keys,
        &per_key,
        start,
        today,
        "before the rollup",
    )
    .await?;
    assert_eq!(got, per_tag);

    // Roll up (a scheduler process), and check the rollup equals the ledger.
    roll_up_everything(&mut world).await?;
    let (mismatches,): (i64,) = sqlx::query_as(
        "WITH l AS (
           SELECT api_key_id, (created_at AT TIME ZONE 'UTC')::date AS day, kind, sum(amount) AS n
           FROM usage_events GROUP BY 1, 2, 3),
         r AS (
           SELECT api_key_id, day, k.kind, k.n FROM usage_key_day,
             LATERAL (VALUES ('text_translation_characters', text_translation_characters),
                             ('document_translation_characters', document_translation_characters),
                             ('text_improvement_characters', text_improvement_characters),
                             ('speech_to_text_milliseconds', speech_to_text_milliseconds),
                             ('speech_to_speech_milliseconds', speech_to_speech_milliseconds)) k(kind, n)
           WHERE k.n <> 0)
         SELECT count(*) FROM (
           (SELECT * FROM l EXCEPT SELECT * FROM r) UNION ALL (SELECT * FROM r EXCEPT SELECT * FROM l)) x",
    )
    .fetch_one(&db)
    .await?;
    assert_eq!(mismatches, 0, "the rollup equals the ledger");
    // The month rollup holds exactly the day rollup's rows.
    let (mismatches,): (i64,) = sqlx::query_as(
        "WITH d AS (
           SELECT api_key_id, day, text_translation_characters, document_translation_characters,
                  text_improvement_characters, speech_to_text_milliseconds,
                  speech_to_speech_milliseconds FROM usage_key_day),
         m AS (
           SELECT m.api_key_id, (m.month + (get_byte(m.days, n) - 1))::date,
                  ('x' || encode(substr(m.figures, n * 40 + 1, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 40 + 9, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 40 + 17, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 40 + 25, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 40 + 33, 8), 'hex'))::bit(64)::bigint
           FROM usage_key_month m, generate_series(0, length(m.days) - 1) AS n)
         SELECT count(*) FROM (
           (SELECT * FROM d EXCEPT ALL SELECT * FROM m) UNION ALL (SELECT * FROM m EXCEPT ALL SELECT * FROM d)) x",
    )
    .fetch_one(&db)
    .await?;
    assert_eq!(mismatches, 0, "the month rollup equals the day rollup");
    let got = check_reports(
        &api,
        &admin,
        &keys,
        &per_key,
        start,
        today,
        "after the rollup",
    )
    .await?;
    assert_eq!(got, per_tag);

    // More requests: half rolled up, half in the tail.
    send(&api, &keys, &round(7), &batches, &mut per_key, &mut per_tag).await?;
    let got = check_reports(&api, &admin, &keys, &per_key, start, today, "rollup + tail").await?;
    assert_eq!(got, per_tag);
    Ok(())
}

#[tokio::test]
async fn custom_tag_pages_and_every_analytics_400() -> Result<()> {
    let mut world = World::new("analytics_pages").await?;
    world
        .extra_env
        .push(("TOLK_ANALYTICS_PAGE_SIZE".to_owned(), "2".to_owned()));
    let admin = world.create_key("admin", true).await?;
    let api = world.start_api().await?;
    let (_, key) = new_developer_key(&api, &admin, "tagger").await?;
    let tags = ["e-tag", "a-tag", "d-tag", "b-tag", "c-tag"];
    let mut expected = BTreeMap::new();
    for (i, tag) in tags.iter().enumerate() {
        let texts: Vec<String> = (0..=i).map(|j| format!("Good morning {j}")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (code, body) = api.en_es(&key, &texts, Some(tag)).await?;
        assert_eq!(code, 200, "{body}");
        expected.insert(tag.to_string(), chars(&texts));
    }
    // Untagged usage is not in the report.
    let (code, _) = api.en_es(&key, &["Good night"], None).await?;
    assert_eq!(code, 200);

    let today = chrono::Utc::now().date_naive();
    for aggregate in ["", "period", "day"] {
        let mut page: Option<i64> = None;
        let mut seen = Vec::new();
        let mut pages = 0;
        loop {
            let mut path = format!(
                "/v2/admin/analytics/custom-tags?start_date={today}&end_date={today}&aggregate_by={aggregate}"
            );
            if let Some(p) = page {
                path.push_str(&format!("&page={p}"));
            }
            let (code, body) = api.get(&admin, &path).await?;
            assert_eq!(code, 200, "{body}");
            let report = &body["custom_tag_usage_report"];
            let usage = report["usage"].as_array().context("usage")?;
            assert!(usage.len() <= 2, "{body}");
            for u in usage {
                if aggregate == "day" {
                    assert_eq!(u["usage_date"], format!("{today}T00:00:00Z"), "{body}");
                } else {
                    assert!(u.get("usage_date").is_none(), "{body}");
                }
                seen.push((
                    u["custom_tag"].as_str().unwrap_or_default().to_owned(),
                    u["breakdown"]["text_translation_characters"]
                        .as_i64()
                        .unwrap_or(-1),
                ));
            }
            pages += 1;
            match report["next_page"].as_i64() {
                Some(n) => {
                    assert_eq!(n, pages + 1, "{body}");
                    page = Some(n);
                }
                None => {
                    assert_eq!(report["next_page"], Value::Null, "{body}");
                    break;
                }
            }
        }
        assert_eq!(pages, 3, "5 tags, 2 a page");
        let want: Vec<(String, i64)> = expected.clone().into_iter().collect(); // sorted by tag
        assert_eq!(seen, want, "aggregate_by={aggregate}");
    }
    // A page past the end: empty, no next page.
    let (code, body) = api
        .get(
            &admin,
            &format!("/v2/admin/analytics/custom-tags?start_date={today}&end_date={today}&page=9"),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["custom_tag_usage_report"]["usage"], json!([]));
    assert_eq!(body["custom_tag_usage_report"]["next_page"], Value::Null);

    // Every 400, with its message, on both reports.
    let cases: [(&str, &str); 10] = [
        (
            "start_date=2025-01-01&end_date=2026-01-03",
            "Bad request. Reason: Date range cannot exceed 366 days",
        ),
        (
            "start_date=2025-01-02&end_date=2025-01-01",
            "Bad request. Reason: end_date must not be before start_date",
        ),
        ("end_date=2025-01-01", "Parameter 'start_date' is required."),
        ("start_date=2025-01-01", "Parameter 'end_date' is required."),
        ("start_date=2025-13-01&end_date=2025-12-01", "'start_date'"),
        ("start_date=2025-01-01&end_date=tomorrow", "'end_date'"),
        ("start_date=01/01/2025&end_date=2025-01-02", "ISO 8601"),
        (
            "start_date=2025-01-01&end_date=2025-01-02&group_by=day",
            "Value for 'group_by' not supported. Allowed: '', 'key', 'key_and_day'.",
        ),
        (
            "start_date=2025-01-01&end_date=2025-01-02&aggregate_by=key",
            "Value for 'aggregate_by' not supported. Allowed: '', 'period', 'day'.",
        ),
        ("start_date=2025-01-01&end_date=2025-01-02&page=0", "'page'"),
    ];
    for (query, expected) in cases {
        let applies_to: &[&str] = if query.contains("group_by") {
            &["/v2/admin/analytics"]
        } else if query.contains("aggregate_by") || query.contains("page") {
            &["/v2/admin/analytics/custom-tags"]
        } else {
            &["/v2/admin/analytics", "/v2/admin/analytics/custom-tags"]
        };
        for path in applies_to {
            let (code, body) = api.get(&admin, &format!("{path}?{query}")).await?;
            assert_eq!(code, 400, "{path}?{query}: {body}");
            assert!(message(&body).contains(expected), "{path}?{query}: {body}");
        }
    }
    // The longest accepted range: 366 days between the dates.
    let (code, body) = api
        .get(
            &admin,
            "/v2/admin/analytics?start_date=2025-01-01&end_date=2026-01-02&group_by=key_and_day",
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    Ok(())
}

#[tokio::test]
async fn rate_limits_are_shared_through_redis_or_kept_per_process() -> Result<()> {
    let mut world = World::new("rate_limits").await?;
    let key = world.create_key("client", false).await?;
    world.extra_env = vec![
        ("TOLK_RATE_LIMIT_PER_SECOND".to_owned(), "0.2".to_owned()),
        ("TOLK_RATE_LIMIT_BURST".to_owned(), "3".to_owned()),
        ("REDIS_URL".to_owned(), "redis://127.0.0.1:6379".to_owned()),
    ];
    let a = world.start_api().await?;
    let b = world.start_api().await?;
    // Burst of 3 on replica A, then replica B refuses the 4th: the bucket is shared.
    for _ in 0..3 {
        let (code, body) = a.get(&key, "/v2/usage").await?;
        assert_eq!(code, 200, "{body}");
    }
    let Answer {
        code,
        headers,
        body,
        ..
    } = exchange(&b, &key, reqwest::Method::GET, "/v2/usage", None).await?;
    assert_eq!(code, 429, "{body}");
    assert!(message(&body).contains("Too many requests"), "{body}");
    let retry: u64 = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .context("Retry-After")?;
    assert!((1..=5).contains(&retry), "Retry-After {retry}");
    // Translation is limited too (the same bucket).
    let (code, _) = a.en_es(&key, &["Hello"], None).await?;
    assert_eq!(code, 429);
    // Another key is not affected.
    let other = world.create_key("other", false).await?;
    let (code, _) = b.get(&other, "/v2/usage").await?;
    assert_eq!(code, 200);
    // After Retry-After, the key may send again.
    tokio::time::sleep(Duration::from_secs(retry)).await;
    let (code, body) = b.get(&key, "/v2/usage").await?;
    assert_eq!(code, 200, "{body}");

    // Without Redis: a warning at start, and each process limits on its own.
    world.extra_env[2].1 = String::new();
    let lone = world.start_api().await?;
    let port = lone.base.rsplit(':').next().unwrap_or_default().to_owned();
    let log = world.log(&format!("api-{port}"));
    assert!(log.contains("REDIS_URL is not set"), "{log}");
    let fresh = world.create_key("fresh", false).await?;
    for _ in 0..3 {
        let (code, _) = lone.get(&fresh, "/v2/usage").await?;
        assert_eq!(code, 200);
    }
    let (code, _) = lone.get(&fresh, "/v2/usage").await?;
    assert_eq!(code, 429);
    // The shared replicas never saw this key's requests.
    let (code, _) = a.get(&fresh, "/v2/usage").await?;
    assert_eq!(code, 200);
    Ok(())
}

#[tokio::test]
async fn a_large_key_and_day_report_streams_whole_and_in_order() -> Result<()> {
    // 40 keys × 120 days: about 1.3 MB of JSON, many more chunks than the API
    // encodes ahead of the client, half of them read from the rollup and the
    // rest merged from the ledger's tail.
    let mut world = World::new("analytics_large").await?;
    let admin = world.create_key("admin", true).await?;
    let api = world.start_api().await?;
    let db = world.db().await?;
    let (org,): (uuid::Uuid,) =
        sqlx::query_as("SELECT organization_id FROM api_keys WHERE label = 'admin'")
            .fetch_one(&db)
            .await?;
    let today = chrono::Utc::now().date_naive();
    let start = today - chrono::Days::new(119);
    let insert = "INSERT INTO usage_events (organization_id, api_key_id, kind, amount, created_at)
         SELECT $1, lpad(to_hex(k), 12, '0'), 'text_translation_characters', k * 1000 + d + $2,
                ($3::date - d + time '12:00') AT TIME ZONE 'UTC'
         FROM generate_series(0, 39) k, generate_series(0, 119) d";
    sqlx::query(insert)
        .bind(org)
        .bind(1_i64)
        .bind(today)
        .execute(&db)
        .await?;
    roll_up_everything(&mut world).await?;
    // The same again, left in the tail: every group is rollup + tail.
    sqlx::query(insert)
        .bind(org)
        .bind(1_i64)
        .bind(today)
        .execute(&db)
        .await?;

    let path =
        format!("/v2/admin/analytics?start_date={start}&end_date={today}&group_by=key_and_day");
    let (code, body) = api.get(&admin, &path).await?;
    assert_eq!(code, 200, "{body}");
    let items = body["usage_report"]["key_and_day_usages"]
        .as_array()
        .context("key_and_day_usages")?;
    assert_eq!(items.len(), 40 * 120);
    let mut total = 0;
    for (i, item) in items.iter().enumerate() {
        let (k, n) = (i / 120, i % 120);
        // Days ascend within a key: the n-th item is `start + n`, i.e. d = 119 - n.
        let d = 119 - n as i64;
        let key = format!("{k:012x}");
        assert_eq!(
            item["api_key"],
            format!("{}****{}", &key[..4], &key[8..]),
            "item {i}"
        );
        assert_eq!(
            item["usage_date"],
            format!("{}T00:00:00Z", start + chrono::Days::new(n as u64)),
            "item {i}"
        );
        let want = 2 * (k as i64 * 1000 + d + 1);
        assert_eq!(
            item["usage"]["text_translation_characters"], want,
            "item {i}"
        );
        total += want;
    }
    assert_eq!(
        body["usage_report"]["total_usage"]["total_characters"],
        total
    );
    Ok(())
}
