//! Analytics from the usage ledger and its rollup: sums, custom tags, pages,
//! the 400s, and large streamed reports.

use super::*;

/// Per-key sums of a set of requests, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Sums {
    text: i64,
    document: i64,
    improvement: i64,
    stt_ms: i64,
    sts_ms: i64,
    tts: i64,
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
    assert_eq!(figures["text_to_speech_characters"], s.tts, "{figures}");
    assert_eq!(
        figures["total_characters"],
        s.text + s.document + s.improvement + s.tts,
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
        total.tts += s.tts;
    }
    let (code, body) = api.get(admin, &format!("/v2/admin/analytics?{q}")).await?;
    assert_eq!(code, 200, "{label}: {body}");
    let report = &body["usage_report"];
    assert_figures(&report["total_usage"], &total);
    assert_eq!(report["start_date"], format!("{start}T00:00:00Z"));
    assert_eq!(report["end_date"], format!("{today}T00:00:00Z"));
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

    // Custom tags (period): text, improvement and text to speech per tag.
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
async fn analytics_sums_equal_the_requests_made_on_either_side_of_the_rollup() -> Result<()> {
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
        ("text_to_speech_characters", 77, 2, "06:00:00"),
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
            "text_to_speech_characters" => {
                s.tts += amount;
                *per_tag.entry("tag-0".to_owned()).or_default() += amount;
            }
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
                             ('speech_to_speech_milliseconds', speech_to_speech_milliseconds),
                             ('text_to_speech_characters', text_to_speech_characters)) k(kind, n)
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
                  speech_to_speech_milliseconds, text_to_speech_characters FROM usage_key_day),
         m AS (
           SELECT m.api_key_id, (m.month + (get_byte(m.days, n) - 1))::date,
                  ('x' || encode(substr(m.figures, n * 48 + 1, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 48 + 9, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 48 + 17, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 48 + 25, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 48 + 33, 8), 'hex'))::bit(64)::bigint,
                  ('x' || encode(substr(m.figures, n * 48 + 41, 8), 'hex'))::bit(64)::bigint
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
async fn a_large_report_by_key_by_day_streams_whole_in_order() -> Result<()> {
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
