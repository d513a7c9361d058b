//! Test harness: a fresh database per test, `tolk` processes, an HTTP client.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use reqwest::multipart;
use serde_json::Value;
use tokio::process::{Child, Command};
use tolk_storage::throwaway::ThrowawayDb;

/// Admin URL of the test PostgreSQL server (a database to connect to for CREATE DATABASE).
pub fn admin_url() -> String {
    std::env::var("TOLK_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port on loopback")
}

/// One test's world: its own database and object folder.
pub struct World {
    name: String,
    /// The server's admin URL (where this world's database was created).
    admin: String,
    pub database_url: String,
    pub dir: PathBuf,
    pub object_store: String,
    pub extra_env: Vec<(String, String)>,
    children: Vec<Child>,
    /// The conformance proxies in front of this world's API processes.
    proxies: Vec<crate::openapi::Proxy>,
}

impl World {
    /// Creates the database, migrates it, and sets up a temp folder.
    pub async fn new(tag: &str) -> Result<Self> {
        Self::new_on(tag, &admin_url()).await
    }

    /// [`World::new`] on the server whose admin URL is `admin` (a test's own
    /// server: `crate::pg_server::PgServer`).
    pub async fn new_on(tag: &str, admin: &str) -> Result<Self> {
        let name = format!("tolk_e2e_{tag}_{}", uuid::Uuid::new_v4().simple());
        let admin = admin.to_owned();
        let db = ThrowawayDb::create(&admin, &name).await.with_context(|| {
            format!("test PostgreSQL at {admin} must be running (scripts/setup.sh starts it)")
        })?;
        let database_url = db.url()?;
        let dir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&dir)?;
        let object_store = dir.join("objects").display().to_string();
        let world = Self {
            name,
            admin,
            database_url,
            object_store,
            dir,
            extra_env: Vec::new(),
            children: Vec::new(),
            proxies: Vec::new(),
        };
        Ok(world)
    }

    /// A `tolk` command with this world's environment.
    pub fn tolk(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tolk"));
        cmd.args(args)
            .env("DATABASE_URL", &self.database_url)
            .env("TOLK_OBJECT_STORE", &self.object_store)
            .env("TOLK_APERTIUM_PIPELINES", "1")
            .env("RUST_LOG", "info,sqlx=warn")
            .env_remove("PG_DATABASE_URL")
            .kill_on_drop(true)
            .stdin(Stdio::null());
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Points this world's processes at the echo upstream at `url`
    /// ([`echo_upstream`]) as `engine` (`deepl` or `openai`) for `pair` (`EN:DE`).
    pub fn use_echo_upstream(&mut self, engine: &str, url: &str, pair: &str) {
        for (k, v) in [
            ("TOLK_ENGINES", engine.to_owned()),
            ("TOLK_DEEPL_URL", url.to_owned()),
            ("TOLK_DEEPL_KEY", "k".to_owned()),
            ("TOLK_DEEPL_PAIRS", pair.to_owned()),
            ("TOLK_OPENAI_URL", format!("{url}/v1")),
            ("TOLK_OPENAI_MODEL", "m".to_owned()),
            ("TOLK_OPENAI_PAIRS", pair.to_owned()),
        ] {
            self.extra_env.push((k.to_owned(), v));
        }
    }

    /// Creates an API key and returns it.
    pub async fn create_key(&self, label: &str, admin: bool) -> Result<String> {
        let mut args = vec!["admin", "create-key", "--label", label];
        if admin {
            args.push("--admin");
        }
        self.key_with(&args).await
    }

    /// Creates a developer key of another organization (named
    /// `organization`, created when missing) and returns it.
    pub async fn create_key_in(&self, organization: &str) -> Result<String> {
        self.key_with(&[
            "admin",
            "create-key",
            "--label",
            "other",
            "--organization",
            organization,
        ])
        .await
    }

    /// Runs `tolk <args>` and returns the key it prints.
    async fn key_with(&self, args: &[&str]) -> Result<String> {
        let out = self
            .tolk(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .await?;
        if !out.status.success() {
            bail!(
                "create-key failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let key = String::from_utf8(out.stdout)?.trim().to_owned();
        Ok(key)
    }

    /// Starts a process (`tolk <args>`) whose log goes to a file in the world's folder.
    pub fn spawn(&mut self, args: &[&str], log_name: &str) -> Result<u32> {
        let log = std::fs::File::create(self.dir.join(format!("{log_name}.log")))?;
        let child = self
            .tolk(args)
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .context("spawning tolk")?;
        let pid = child.id().context("child has no pid")?;
        self.children.push(child);
        Ok(pid)
    }

    /// Starts an API process and waits until /healthz answers.
    pub async fn start_api(&mut self) -> Result<Api> {
        Ok(self.start_api_process().await?.0)
    }

    /// [`World::start_api`], also returning the process id. The [`Api`] goes
    /// through a conformance proxy ([`crate::openapi::Proxy`]); `Api::direct`
    /// is the process's own address.
    pub async fn start_api_process(&mut self) -> Result<(Api, u32)> {
        // A port picked free can be taken before the process binds it (by
        // another test's process or proxy): a process that exits before it
        // answers is started again on another port.
        for _ in 0..3 {
            let port = free_port();
            let listen = format!("127.0.0.1:{port}");
            let pid = self.spawn(
                &["api", "--listen", &listen, "--no-migrate"],
                &format!("api-{port}"),
            )?;
            let direct = format!("http://{listen}");
            let probe = reqwest::Client::new();
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if let Ok(r) = probe.get(format!("{direct}/healthz")).send().await
                    && r.status().is_success()
                {
                    let proxy = crate::openapi::Proxy::start(listen.parse()?).await?;
                    let mut api = Api::new(proxy.base.clone());
                    api.direct = direct;
                    self.proxies.push(proxy);
                    return Ok((api, pid));
                }
                if !self.is_running(pid) {
                    eprintln!(
                        "API on {listen} exited before answering: {}",
                        self.log(&format!("api-{port}"))
                    );
                    break;
                }
                if Instant::now() > deadline {
                    bail!("API did not come up; see {}", self.dir.display());
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        bail!(
            "API exited three times before answering; see {}",
            self.dir.display()
        )
    }

    /// Starts a worker process; returns its pid.
    pub fn start_worker(&mut self, tag: &str) -> Result<u32> {
        self.spawn(&["worker", "--concurrency", "2"], &format!("worker-{tag}"))
    }

    /// Waits for the process `pid` (started with `spawn`) to exit.
    pub async fn wait_exit(
        &mut self,
        pid: u32,
        timeout: Duration,
    ) -> Result<std::process::ExitStatus> {
        let child = self
            .children
            .iter_mut()
            .find(|c| c.id() == Some(pid))
            .context("no such child")?;
        Ok(tokio::time::timeout(timeout, child.wait())
            .await
            .with_context(|| format!("process {pid} did not exit within {timeout:?}"))??)
    }

    /// Whether the process `pid` (started with `spawn`) is still running.
    pub fn is_running(&mut self, pid: u32) -> bool {
        self.children
            .iter_mut()
            .find(|c| c.id() == Some(pid))
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// The log of a process started with `spawn`.
    pub fn log(&self, log_name: &str) -> String {
        std::fs::read_to_string(self.dir.join(format!("{log_name}.log"))).unwrap_or_default()
    }

    /// A connection pool on this world's database.
    pub async fn db(&self) -> Result<sqlx::PgPool> {
        Ok(sqlx::PgPool::connect(&self.database_url).await?)
    }

    /// Path of a file in the world's folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for World {
    /// Stops the processes; on success also drops the database and the folder (a
    /// failing test keeps them, with the process logs, for a look).
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.start_kill();
        }
        if std::thread::panicking() {
            eprintln!(
                "test world kept for inspection: database {}, folder {}",
                self.name,
                self.dir.display()
            );
            return;
        }
        let name = self.name.clone();
        let admin = self.admin.clone();
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(ThrowawayDb::existing(&admin, &name).drop_database())
                .ok()
        })
        .join();
        if matches!(dropped, Ok(Some(_))) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// An HTTP client for one API process.
pub struct Api {
    /// Where requests go: the conformance proxy when the world started the
    /// process.
    pub base: String,
    /// The process's own address (for WebSockets, raw TCP and log names).
    pub direct: String,
    pub http: reqwest::Client,
}

/// The value of the first line of the `/metrics` text `text` that starts
/// with `prefix` (a metric's name with its labels).
pub fn metric_value(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Status of a document as the API reports it.
#[derive(Debug, Clone)]
pub struct DocStatus {
    pub status: String,
    pub body: Value,
}

impl Api {
    pub fn new(base: String) -> Self {
        Self {
            direct: base.clone(),
            base,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("http client"),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The text of `GET /metrics`.
    pub async fn metrics_text(&self) -> Result<String> {
        Ok(self
            .http
            .get(self.url("/metrics"))
            .send()
            .await?
            .text()
            .await?)
    }

    /// Uploads a document; returns (status code, body).
    pub async fn upload(
        &self,
        key: &str,
        filename: &str,
        data: Vec<u8>,
        fields: &[(&str, &str)],
    ) -> Result<(u16, Value)> {
        let mut form = multipart::Form::new().part(
            "file",
            multipart::Part::bytes(data).file_name(filename.to_owned()),
        );
        for (k, v) in fields {
            form = form.text(k.to_string(), v.to_string());
        }
        let res = self
            .keyed(reqwest::Method::POST, "/v2/document", key)
            .multipart(form)
            .send()
            .await?;
        let code = res.status().as_u16();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        Ok((code, body))
    }

    /// Uploads and returns (document_id, document_key), failing on a non-200.
    pub async fn upload_ok(
        &self,
        key: &str,
        filename: &str,
        data: Vec<u8>,
        fields: &[(&str, &str)],
    ) -> Result<(String, String)> {
        let (code, body) = self.upload(key, filename, data, fields).await?;
        if code != 200 {
            bail!("upload answered {code}: {body}");
        }
        Ok((
            body["document_id"]
                .as_str()
                .context("document_id")?
                .to_owned(),
            body["document_key"]
                .as_str()
                .context("document_key")?
                .to_owned(),
        ))
    }

    /// Translates a one-sentence text file EN → ES and waits until it is
    /// done (failing otherwise); its document id.
    pub async fn small_document_done(&self, key: &str) -> Result<String> {
        let (id, dk) = self
            .upload_ok(
                key,
                "a.txt",
                b"The dog sleeps.".to_vec(),
                &[("target_lang", "ES")],
            )
            .await?;
        let st = self.wait(key, &id, &dk, Duration::from_secs(120)).await?;
        if st.status != "done" {
            bail!("the document ended {}: {}", st.status, st.body);
        }
        Ok(id)
    }

    pub async fn status(&self, key: &str, id: &str, doc_key: &str) -> Result<(u16, Value)> {
        let res = self
            .keyed(reqwest::Method::POST, &format!("/v2/document/{id}"), key)
            .json(&serde_json::json!({ "document_key": doc_key }))
            .send()
            .await?;
        let code = res.status().as_u16();
        Ok((code, res.json().await.unwrap_or(Value::Null)))
    }

    /// Polls until done or error (or the deadline).
    pub async fn wait(
        &self,
        key: &str,
        id: &str,
        doc_key: &str,
        timeout: Duration,
    ) -> Result<DocStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let (code, body) = self.status(key, id, doc_key).await?;
            if code != 200 {
                bail!("status answered {code}: {body}");
            }
            let status = body["status"].as_str().unwrap_or_default().to_owned();
            if status == "done" || status == "error" {
                return Ok(DocStatus { status, body });
            }
            if Instant::now() > deadline {
                bail!("document {id} still {status} after {timeout:?}: {body}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Downloads the result: (status, headers, bytes).
    pub async fn download(
        &self,
        key: &str,
        id: &str,
        doc_key: &str,
    ) -> Result<(u16, reqwest::header::HeaderMap, Vec<u8>)> {
        let res = self
            .keyed(
                reqwest::Method::POST,
                &format!("/v2/document/{id}/result"),
                key,
            )
            .form(&[("document_key", doc_key)])
            .send()
            .await?;
        let code = res.status().as_u16();
        let headers = res.headers().clone();
        Ok((code, headers, res.bytes().await?.to_vec()))
    }
}

/// Runs a Python snippet with `args`, returning its stdout (python3-docx is used to
/// build and check real Word files).
pub async fn python(script: &str, args: &[&Path]) -> Result<String> {
    let python = std::env::var("TOLK_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .await
        .context("python3 must be installed (scripts/setup.sh installs it with python3-docx)")?;
    if !out.status.success() {
        bail!("python failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// The folder of the tests' npm packages (`TOLK_TEST_NODE`, by default
/// `~/.cache/tolk-test-node`), checked to hold `package`.
pub fn node_packages(package: &str) -> Result<PathBuf> {
    let dir = std::env::var("TOLK_TEST_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            let cache = std::env::var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|_| {
                    PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache")
                });
            cache.join("tolk-test-node")
        });
    let marker = dir.join("node_modules").join(package).join("package.json");
    if !marker.is_file() {
        bail!(
            "{} is missing: scripts/setup.sh test installs {package} (or set TOLK_TEST_NODE)",
            marker.display()
        );
    }
    Ok(dir)
}

/// An answer of the API: its status, headers, body text and the body as JSON
/// (Null when it is not JSON).
#[derive(Debug)]
pub struct Answer {
    pub code: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    pub body: Value,
}

impl Answer {
    /// Sends `req` and reads the whole answer.
    pub async fn of(req: reqwest::RequestBuilder) -> Result<Self> {
        let res = req.send().await?;
        let code = res.status().as_u16();
        let headers = res.headers().clone();
        let text = res.text().await?;
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Self {
            code,
            headers,
            text,
            body,
        })
    }

    /// The answer's header `name`, if it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// [`send`], read whole.
pub async fn exchange(
    api: &Api,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> Result<Answer> {
    let mut req = api.keyed(method, path, key);
    if let Some(b) = body {
        req = req.json(b);
    }
    Answer::of(req).await
}

/// Sends a JSON (or no) body with a developer key; returns (status, body as JSON
/// or Null).
pub async fn call(
    api: &Api,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> Result<(u16, Value)> {
    let a = exchange(api, key, method, path, body).await?;
    Ok((a.code, a.body))
}

impl Api {
    /// A request to `path` with a developer key (`DeepL-Auth-Key`).
    pub fn keyed(&self, method: reqwest::Method, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .header("Authorization", format!("DeepL-Auth-Key {key}"))
    }

    /// `GET path` with the key: (status, JSON body or Null).
    pub async fn get(&self, key: &str, path: &str) -> Result<(u16, Value)> {
        call(self, key, reqwest::Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, key: &str, path: &str, body: &Value) -> Result<(u16, Value)> {
        call(self, key, reqwest::Method::POST, path, Some(body)).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, key: &str, path: &str, body: &Value) -> Result<(u16, Value)> {
        call(self, key, reqwest::Method::PUT, path, Some(body)).await
    }

    /// `POST path` with a form body (repeated keys as given).
    pub async fn post_form(
        &self,
        key: &str,
        path: &str,
        fields: &[(&str, &str)],
    ) -> Result<(u16, Value)> {
        let a = Answer::of(self.keyed(reqwest::Method::POST, path, key).form(fields)).await?;
        Ok((a.code, a.body))
    }

    /// `POST /v2/translate` with a JSON body and, if given, a reporting tag.
    pub async fn translate(
        &self,
        key: &str,
        body: &Value,
        tag: Option<&str>,
    ) -> Result<(u16, Value)> {
        let mut req = self
            .keyed(reqwest::Method::POST, "/v2/translate", key)
            .json(body);
        if let Some(tag) = tag {
            req = req.header("X-DeepL-Reporting-Tag", tag);
        }
        let a = Answer::of(req).await?;
        Ok((a.code, a.body))
    }

    /// `POST /v2/translate` of `texts` from English to Spanish, with a
    /// reporting tag if given.
    pub async fn en_es(
        &self,
        key: &str,
        texts: &[&str],
        tag: Option<&str>,
    ) -> Result<(u16, Value)> {
        let body = serde_json::json!({"text": texts, "source_lang": "EN", "target_lang": "ES"});
        self.translate(key, &body, tag).await
    }
}

/// The `message` of a JSON error body ("" when there is none).
pub fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

/// The texts of a successful `/v2/translate` answer, in order.
pub fn translated_texts(body: &Value) -> Vec<String> {
    body["translations"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["text"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts a JSON error with status `want` and a message containing `needle`.
pub fn error(code: u16, body: &Value, want: u16, needle: &str) {
    assert_eq!(code, want, "{body}");
    let m = body["message"].as_str().unwrap_or_default();
    assert!(m.contains(needle), "message {m:?} lacks {needle:?}");
}

/// The request bodies an [`echo_upstream`] received.
pub type Seen = std::sync::Arc<std::sync::Mutex<Vec<Value>>>;

/// Serves a stand-in upstream on a free port and returns its base URL: DeepL
/// wire (`/v2/translate`, echoes the texts) and OpenAI chat completions
/// (`/v1/chat/completions`, echoes the user message), so a test sees exactly
/// what Tolk did around the engine. Records every request body in `seen`.
/// The DeepL side misplaces inline tags in texts holding the word `tangle`
/// (see [`tangle`]), as engines sometimes do.
pub async fn echo_upstream(seen: Seen) -> Result<String> {
    use axum::extract::State;
    async fn deepl(
        State(seen): State<Seen>,
        axum::Json(body): axum::Json<Value>,
    ) -> axum::Json<Value> {
        if let Ok(mut s) = seen.lock() {
            s.push(body.clone());
        }
        let texts: Vec<Value> = body["text"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|t| {
                let text = t.as_str().map_or_else(String::new, tangle);
                serde_json::json!({"detected_source_language": "EN", "text": text})
            })
            .collect();
        axum::Json(serde_json::json!({ "translations": texts }))
    }
    async fn chat(
        State(seen): State<Seen>,
        axum::Json(body): axum::Json<Value>,
    ) -> axum::Json<Value> {
        if let Ok(mut s) = seen.lock() {
            s.push(body.clone());
        }
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        axum::Json(serde_json::json!({"choices": [
            {"index": 0, "message": {"role": "assistant", "content": user}}
        ]}))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = axum::Router::new()
        .route("/v2/translate", axum::routing::post(deepl))
        .route("/v1/chat/completions", axum::routing::post(chat))
        .with_state(seen);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(format!("http://{addr}"))
}

/// A text with the first `</g>` moved to its end when it holds the word
/// `tangle` (so the spans after it land inside the first one), else as it is.
fn tangle(text: &str) -> String {
    match text.find("</g>") {
        Some(at) if text.contains("tangle") => {
            format!("{}{}</g>", &text[..at], &text[at + 4..])
        }
        _ => text.to_owned(),
    }
}

/// Polls `query` until `done` holds of its result, for up to 5 s, and returns
/// the last result: the API writes request ledger entries in batches after
/// answering (`tolk_storage::usage_appender`, within 10 ms by default), and
/// reversals of failed requests after the answer too.
pub async fn settled<T, F, Fut>(mut query: F, done: impl Fn(&T) -> bool) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let value = query().await?;
        if done(&value) || Instant::now() > deadline {
            return Ok(value);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The ledger's sum of amounts of `kind`, once `done` holds of it (or after
/// 5 s, see [`settled`]).
pub async fn billed_settled(
    db: &sqlx::PgPool,
    kind: &str,
    done: impl Fn(&i64) -> bool,
) -> Result<i64> {
    settled(
        || async {
            Ok(sqlx::query_scalar(
                "SELECT COALESCE(sum(amount), 0)::bigint FROM usage_events WHERE kind = $1",
            )
            .bind(kind)
            .fetch_one(db)
            .await?)
        },
        done,
    )
    .await
}

/// The file LibreOffice makes of `input` with the filter `to`
/// (`odt`, `txt:Text (encoded):UTF8`…), in a folder of its own.
pub async fn libreoffice(
    world: &World,
    input: &std::path::Path,
    to: &str,
) -> Result<std::path::PathBuf> {
    let extension = to.split(':').next().unwrap_or(to);
    let out_dir = world.path(&format!("lo-{extension}"));
    let out = Command::new("soffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            world.path("lo-profile").display()
        ))
        .args(["--headless", "--convert-to", to, "--outdir"])
        .arg(&out_dir)
        .arg(input)
        .output()
        .await
        .context("soffice")?;
    anyhow::ensure!(out.status.success(), "soffice: {out:?}");
    let stem = input.file_stem().context("file name")?;
    let made = out_dir.join(stem).with_extension(extension);
    anyhow::ensure!(made.exists(), "soffice made no {}: {out:?}", made.display());
    Ok(made)
}
