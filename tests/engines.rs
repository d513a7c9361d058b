//! Engines and routing: a DeepL-wire upstream and an OpenAI-compatible
//! chat server (small stand-in HTTP servers started in the test: both are
//! paid or heavy third-party upstreams), and a real Apertium-APY server.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::support::{Api, World, free_port};

/// Requests a stand-in received (headers of interest and the JSON body).
type Log = Arc<Mutex<Vec<(Option<String>, Value)>>>;

/// Serves `router` on a free loopback port; returns its base address.
async fn serve(router: Router) -> Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(format!("http://{addr}"))
}

/// A DeepL-wire stand-in: "translates" by prefixing `[DE]`-style target
/// codes (and the formality when given). Texts containing `SLOW` take 3 s,
/// `FAIL` gives 503.
async fn deepl_stand_in(log: Log) -> Result<String> {
    async fn translate(
        State(log): State<Log>,
        headers: HeaderMap,
        Json(body): Json<Value>,
    ) -> (StatusCode, Json<Value>) {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Ok(mut l) = log.lock() {
            l.push((auth.clone(), body.clone()));
        }
        if auth.as_deref() != Some("DeepL-Auth-Key upstream-secret") {
            return (StatusCode::FORBIDDEN, Json(json!({"message": "bad key"})));
        }
        let texts: Vec<String> = body["text"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|t| t.as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        if texts.iter().any(|t| t.contains("SLOW")) {
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        if texts.iter().any(|t| t.contains("FAIL")) {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"message": "down"})),
            );
        }
        let target = body["target_lang"].as_str().unwrap_or_default();
        let formality = body["formality"]
            .as_str()
            .map(|f| format!(":{f}"))
            .unwrap_or_default();
        let translations: Vec<Value> = texts
            .iter()
            .map(|t| json!({"detected_source_language": "EN", "text": format!("[{target}{formality}] {t}")}))
            .collect();
        (
            StatusCode::OK,
            Json(json!({ "translations": translations })),
        )
    }
    serve(
        Router::new()
            .route("/v2/translate", post(translate))
            .with_state(log),
    )
    .await
}

/// An OpenAI-compatible stand-in: answers `<IT> {user message}`.
async fn openai_stand_in(log: Log) -> Result<String> {
    async fn chat(
        State(log): State<Log>,
        headers: HeaderMap,
        Json(body): Json<Value>,
    ) -> Json<Value> {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Ok(mut l) = log.lock() {
            l.push((auth, body.clone()));
        }
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        Json(json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": format!("<IT> {user}")}}],
        }))
    }
    serve(
        Router::new()
            .route("/v1/chat/completions", post(chat))
            .with_state(log),
    )
    .await
}

async fn post_json(api: &Api, key: &str, body: &Value) -> Result<(u16, Value)> {
    let res = api
        .keyed(reqwest::Method::POST, "/v2/translate", key)
        .json(body)
        .send()
        .await?;
    let code = res.status().as_u16();
    Ok((code, res.json().await.unwrap_or(Value::Null)))
}

async fn languages(api: &Api, key: &str, kind: &str) -> Result<Vec<Value>> {
    let res = api
        .keyed(
            reqwest::Method::GET,
            &format!("/v2/languages?type={kind}"),
            key,
        )
        .send()
        .await?;
    let body: Value = res.json().await?;
    Ok(body.as_array().cloned().unwrap_or_default())
}

fn first_text(body: &Value) -> String {
    body["translations"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A platform routing EN→DE and EN→ES to a DeepL-wire stand-in and EN→IT
/// to a chat stand-in, Apertium behind them; one request at a time per
/// engine, no queue, a 1 s limit. `extra` adds settings.
struct Engines {
    world: World,
    api: Api,
    key: String,
    deepl_log: Log,
    openai_log: Log,
}

impl Engines {
    async fn start(name: &str, extra: &[(&str, &str)]) -> Result<Engines> {
        let deepl_log: Log = Arc::default();
        let openai_log: Log = Arc::default();
        let deepl = deepl_stand_in(deepl_log.clone()).await?;
        let openai = openai_stand_in(openai_log.clone()).await?;
        let mut world = World::new(name).await?;
        let key = world.create_key("client", false).await?;
        for (k, v) in [
            ("TOLK_ENGINES", "deepl,openai,apertium".to_owned()),
            ("TOLK_DEEPL_URL", deepl),
            ("TOLK_DEEPL_KEY", "upstream-secret".to_owned()),
            ("TOLK_DEEPL_PAIRS", "EN:DE,EN:ES".to_owned()),
            ("TOLK_OPENAI_URL", format!("{openai}/v1")),
            ("TOLK_OPENAI_KEY", "llm-token".to_owned()),
            ("TOLK_OPENAI_MODEL", "test-model".to_owned()),
            ("TOLK_OPENAI_PAIRS", "EN:IT".to_owned()),
            ("TOLK_ENGINE_TIMEOUT_SECS", "1".to_owned()),
            ("TOLK_ENGINE_CONCURRENCY", "1".to_owned()),
            ("TOLK_ENGINE_QUEUE", "0".to_owned()),
        ] {
            world.extra_env.push((k.to_owned(), v));
        }
        for (k, v) in extra {
            world.extra_env.push(((*k).to_owned(), (*v).to_owned()));
        }
        let api = world.start_api().await?;
        Ok(Engines {
            world,
            api,
            key,
            deepl_log,
            openai_log,
        })
    }

    async fn post(&self, body: &Value) -> Result<(u16, Value)> {
        post_json(&self.api, &self.key, body).await
    }
}

/// The languages listed are what the configured engines serve, with
/// formality where an engine supports it.
#[tokio::test]
async fn configured_engines_decide_the_languages_and_their_formality() -> Result<()> {
    let e = Engines::start("engines_languages", &[]).await?;
    let targets = languages(&e.api, &e.key, "target").await?;
    let formality = |code: &str| {
        targets
            .iter()
            .find(|l| l["language"] == code)
            .map(|l| l["supports_formality"].clone())
    };
    assert_eq!(formality("DE"), Some(json!(true)), "{targets:?}");
    assert_eq!(formality("IT"), Some(json!(true)), "{targets:?}");
    assert_eq!(formality("ES"), Some(json!(true)), "{targets:?}");
    assert_eq!(formality("PT-BR"), Some(json!(false)), "{targets:?}");
    assert_eq!(formality("JA"), None, "{targets:?}");
    let sources = languages(&e.api, &e.key, "source").await?;
    assert!(sources.iter().any(|l| l["language"] == "EN"), "{sources:?}");
    Ok(())
}

/// EN→DE goes to the DeepL upstream with its key, formality, context,
/// instructions and model type; markup goes with `tag_handling=xml` and
/// comes back well-formed.
#[tokio::test]
async fn the_deepl_upstream_gets_the_requests_options_and_markup() -> Result<()> {
    let e = Engines::start("engines_deepl", &[]).await?;
    let (code, body) = e
        .post(
            &json!({"text": ["The house is big.", "Hello"], "source_lang": "EN", "target_lang": "DE",
                "formality": "more", "context": "Real estate.",
                "custom_instructions": ["Use short words."], "model_type": "quality_optimized"}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(first_text(&body), "[DE:more] The house is big.");
    assert_eq!(body["translations"][1]["text"], "[DE:more] Hello");
    let sent = e.deepl_log.lock().map_err(|_| anyhow::anyhow!("lock"))?[0].clone();
    assert_eq!(sent.0.as_deref(), Some("DeepL-Auth-Key upstream-secret"));
    assert_eq!(sent.1["source_lang"], "EN");
    assert_eq!(sent.1["context"], "Real estate.");
    assert_eq!(sent.1["custom_instructions"], json!(["Use short words."]));
    assert_eq!(sent.1["model_type"], "quality_optimized");

    let (code, body) = e
        .post(
            &json!({"text": ["The <b>house</b> is big."], "source_lang": "EN", "target_lang": "DE",
                "tag_handling": "xml"}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(first_text(&body), "[DE] The <b>house</b> is big.");
    let last = e
        .deepl_log
        .lock()
        .map_err(|_| anyhow::anyhow!("lock"))?
        .last()
        .cloned()
        .context("logged")?;
    assert_eq!(last.1["tag_handling"], "xml");
    Ok(())
}

/// EN→IT goes to the chat engine with its token and model; formality,
/// context and instructions are in its system prompt.
#[tokio::test]
async fn the_chat_engine_gets_the_requests_options_in_its_prompt() -> Result<()> {
    let e = Engines::start("engines_chat", &[]).await?;
    let (code, body) = e
        .post(
            &json!({"text": ["The house is big."], "source_lang": "EN", "target_lang": "IT",
                "formality": "less", "context": "A letter to a friend.",
                "custom_instructions": ["Keep it casual.", "No emoji."]}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(first_text(&body), "<IT> The house is big.");
    let (auth, chat) = e.openai_log.lock().map_err(|_| anyhow::anyhow!("lock"))?[0].clone();
    assert_eq!(auth.as_deref(), Some("Bearer llm-token"));
    assert_eq!(chat["model"], "test-model");
    let system = chat["messages"][0]["content"].as_str().unwrap_or_default();
    for part in [
        "from English to Italian",
        "informal register",
        "A letter to a friend.",
        "- Keep it casual.",
        "- No emoji.",
    ] {
        assert!(system.contains(part), "{part} missing: {system}");
    }
    Ok(())
}

/// When the upstream fails (503) for EN→ES, Apertium serves the request.
#[tokio::test]
async fn a_failing_upstream_falls_back_to_apertium() -> Result<()> {
    let e = Engines::start("engines_fallback", &[]).await?;
    let (code, body) = e
        .post(
            &json!({"text": ["FAIL The house is big."], "source_lang": "EN", "target_lang": "ES"}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert!(first_text(&body).contains("casa es grande"), "{body}");
    Ok(())
}

/// Formality on a target no configured engine supports is refused with a
/// 400; `prefer_*` falls back to no formality.
#[tokio::test]
async fn formality_no_engine_supports_is_refused_unless_preferred() -> Result<()> {
    let e = Engines::start("engines_formality", &[]).await?;
    let (code, body) = e
        .post(&json!({"text": ["The house."], "source_lang": "EN", "target_lang": "PT-BR", "formality": "more"}))
        .await?;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("formality")
    );
    let (code, body) = e
        .post(&json!({"text": ["La casa es grande."], "source_lang": "ES", "target_lang": "PT-BR", "formality": "prefer_more"}))
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(first_text(&body), "A casa é grande.");
    Ok(())
}

/// The only engine for EN→DE takes 3 s, the limit is 1 s: 504 within the
/// limit, and with batched ledger writes (the default) the failed request
/// bills nothing.
#[tokio::test]
async fn a_slow_engine_times_out_with_504_and_bills_nothing() -> Result<()> {
    let e = Engines::start("engines_timeout", &[]).await?;
    let started = Instant::now();
    let res = e
        .api
        .keyed(reqwest::Method::POST, "/v2/translate", &e.key)
        .header("X-DeepL-Reporting-Tag", "slow-failed")
        .json(&json!({"text": ["SLOW house"], "source_lang": "EN", "target_lang": "DE"}))
        .send()
        .await?;
    let code = res.status().as_u16();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert_eq!(code, 504, "{body}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("in time"),
        "{body}"
    );
    // A request that fails appends nothing. A later request with the same
    // tag is appended after it would have been, so once that one is in the
    // ledger, the tag's entries are complete.
    let db = e.world.db().await?;
    let code = post_tagged(&e.api, &e.key, "slow-failed", "The house is big.", "ES").await?;
    assert_eq!(code, 200);
    let ledger = ledger_settled(&db, TAGGED, "slow-failed", |l| l.0 >= 1).await?;
    assert_eq!(
        ledger,
        (1, 17, 0),
        "only the request that succeeded is billed"
    );
    Ok(())
}

/// One request at a time and no queue: while a slow one runs, the next is
/// refused at once with 529 and `Retry-After`.
#[tokio::test]
async fn a_busy_engine_sheds_load_with_529() -> Result<()> {
    let e = Engines::start("engines_overload", &[]).await?;
    let slow = {
        let api = Api::new(e.api.base.clone());
        let key = e.key.clone();
        tokio::spawn(async move {
            post_json(
                &api,
                &key,
                &json!({"text": ["SLOW house"], "source_lang": "EN", "target_lang": "DE"}),
            )
            .await
        })
    };
    let mut saw_529 = false;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let res = e
            .api
            .keyed(reqwest::Method::POST, "/v2/translate", &e.key)
            .json(&json!({"text": ["Hello"], "source_lang": "EN", "target_lang": "DE"}))
            .send()
            .await?;
        let code = res.status().as_u16();
        let retry_after = res.headers().get("retry-after").cloned();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        if code == 529 {
            assert_eq!(
                retry_after.as_ref().and_then(|v| v.to_str().ok()),
                Some("1")
            );
            assert!(
                body["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("overloaded"),
                "{body}"
            );
            saw_529 = true;
            break;
        }
    }
    assert!(saw_529, "no 529 while the engine was busy");
    let (code, _) = slow.await??;
    assert_eq!(code, 504);
    Ok(())
}

/// With per-request durable writes (`TOLK_LEDGER_WRITES=durable`) a
/// request is metered while it runs; failing, it is reversed: the ledger
/// holds the entry and its reversal, and bills nothing for it.
#[tokio::test]
async fn durable_ledger_writes_reverse_a_failed_request() -> Result<()> {
    let e = Engines::start("engines_durable", &[("TOLK_LEDGER_WRITES", "durable")]).await?;
    let code = post_tagged(&e.api, &e.key, "slow-failed-durable", "SLOW house", "DE").await?;
    assert_eq!(code, 504);
    let db = e.world.db().await?;
    let ledger = ledger_settled(&db, TAGGED, "slow-failed-durable", |l| l.0 >= 2).await?;
    assert_eq!(ledger, (2, 0, 1), "entry + reversal of the failed request");
    Ok(())
}

/// A reporting tag's ledger: entries, characters billed, reversals.
const TAGGED: &str = "SELECT count(*), COALESCE(sum(amount), 0)::bigint, count(reverses)
                      FROM usage_events WHERE custom_tag = $1";

/// Translates `text` EN → `target` with the reporting tag `tag`; returns the status.
async fn post_tagged(api: &Api, key: &str, tag: &str, text: &str, target: &str) -> Result<u16> {
    let res = api
        .keyed(reqwest::Method::POST, "/v2/translate", key)
        .header("X-DeepL-Reporting-Tag", tag)
        .json(&json!({"text": [text], "source_lang": "EN", "target_lang": target}))
        .send()
        .await?;
    Ok(res.status().as_u16())
}

/// The tag's ledger row (`tagged`) once `done` holds of it (or after 5 s).
async fn ledger_settled(
    db: &sqlx::PgPool,
    tagged: &'static str,
    tag: &str,
    done: impl Fn(&(i64, i64, i64)) -> bool,
) -> Result<(i64, i64, i64)> {
    crate::support::settled(
        || async { Ok(sqlx::query_as(tagged).bind(tag).fetch_one(db).await?) },
        done,
    )
    .await
}

/// A running `apertium-apy` (killed on drop).
struct Apy {
    child: tokio::process::Child,
    url: String,
}

impl Drop for Apy {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

async fn start_apy(dir: &std::path::Path) -> Result<Apy> {
    let port = free_port();
    let log = std::fs::File::create(dir.join("apy.log"))?;
    let child = tokio::process::Command::new("apertium-apy")
        .args(["-p", &port.to_string(), "/usr/share/apertium/modes"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .context("apertium-apy must be installed (scripts/setup.sh installs it)")?;
    let apy = Apy {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(r) = http.get(format!("{}/listPairs", apy.url)).send().await
            && r.status().is_success()
        {
            return Ok(apy);
        }
        if Instant::now() > deadline {
            bail!("apertium-apy did not come up; see {}", dir.display());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn apertium_apy_engine_over_http() -> Result<()> {
    let mut world = World::new("engines_apy").await?;
    let apy = start_apy(&world.dir).await?;
    let key = world.create_key("client", false).await?;
    world
        .extra_env
        .push(("TOLK_ENGINES".to_owned(), "apy".to_owned()));
    world
        .extra_env
        .push(("TOLK_APY_URL".to_owned(), apy.url.clone()));
    let api = world.start_api().await?;

    let targets = languages(&api, &key, "target").await?;
    for code in ["ES", "PT-BR", "CA", "EN-US"] {
        assert!(
            targets.iter().any(|l| l["language"] == code),
            "{code}: {targets:?}"
        );
    }
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["The house is big.", "I have a dog."], "source_lang": "EN", "target_lang": "ES"}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(first_text(&body), "La casa es grande.");
    assert_eq!(body["translations"][1]["text"], "Tengo un perro.");

    // Detection and a pivot through APY (EN → ES → PT-BR).
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["The house is big."], "target_lang": "PT-BR"}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(first_text(&body), "A casa é grande.");
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");

    // Markup through APY's HTML deformatter: tags survive, well-formed.
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["<p>I have a <b>dog</b>.</p>"], "source_lang": "EN",
                "target_lang": "ES", "tag_handling": "html"}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    let out = first_text(&body);
    assert!(out.starts_with("<p>") && out.ends_with("</p>"), "{out}");
    assert!(
        out.contains("<b>") && out.contains("</b>") && out.contains("perro"),
        "{out}"
    );
    drop(apy);
    Ok(())
}
