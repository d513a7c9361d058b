//! The operator dashboard (`/admin/ui`): admins only (a Basic challenge
//! without a key, 403 for a developer key), its pages read by an independent
//! HTML parser (lxml) and shown in headless Chromium, each screenshotted.

use super::*;
use crate::auth_browser::{Driver, save_screenshot};

/// The public id of an API key (`id.secret`).
fn key_id(key: &str) -> &str {
    key.split('.').next().unwrap_or_default()
}

/// The dashboard's address with an admin's Basic credentials in it, for the
/// browser.
fn signed_in(api: &Api, admin: &str) -> String {
    format!("{}/admin/ui", api.direct).replacen("http://", &format!("http://ops:{admin}@"), 1)
}

/// The action token of a dashboard page.
fn action_token(page: &str) -> Result<String> {
    Ok(page
        .split("name=\"token\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .context("no action token on the page")?
        .to_owned())
}

/// Clicks the first `action` button of the page shown and returns the text
/// of the first job row, and of the whole page, the form's answer leads to
/// (the job searched by its id) once that row shows `expect`: the click
/// returns before that page is there.
async fn click_and_read(
    b: &fantoccini::Client,
    action: &str,
    expect: &str,
) -> Result<(String, String)> {
    b.find(fantoccini::Locator::Css(&format!(
        "form[action$='/{action}'] button"
    )))
    .await?
    .click()
    .await?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let url = b.current_url().await?;
        let text = |css: &'static str| async move {
            match b.find(fantoccini::Locator::Css(css)).await {
                Ok(found) => found.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            }
        };
        let row = text("main table tbody tr").await;
        if url.query().is_some_and(|q| q.starts_with("q=")) && row.contains(expect) {
            return Ok((row, text("main").await));
        }
        if Instant::now() > deadline {
            bail!("after {action}, the browser is at {url} showing: {row}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A dashboard page with Basic credentials: (status, content type, body).
async fn ui(api: &Api, key: Option<&str>, path: &str) -> Result<(u16, String, String)> {
    let mut req = api.http.get(format!("{}{path}", api.direct));
    if let Some(key) = key {
        req = req.basic_auth("ops", Some(key));
    }
    let res = req.send().await?;
    let status = res.status().as_u16();
    let kind = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let challenge = res
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = res.text().await?;
    Ok((status, kind, format!("{challenge}\n{body}")))
}

/// The table cells of `html` as lxml reads them, row by row (`|` between
/// cells), after checking it parses as one HTML document with a `<main>`.
async fn cells(html: &str) -> Result<String> {
    let file = tempfile_path("page.html");
    std::fs::write(&file, html)?;
    crate::support::python(
        r#"
import sys, lxml.html
doc = lxml.html.parse(sys.argv[1]).getroot()
assert doc.tag == "html" and doc.find("body/main") is not None, "no main"
for label in doc.iter("label"):
    assert doc.get_element_by_id(label.get("for")) is not None, "a label without its field"
for row in doc.iter("tr"):
    print("|".join(" ".join(c.text_content().split()) for c in row))
"#,
        &[&file],
    )
    .await
}

fn tempfile_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("tolk-dashboard-{}-{name}", std::process::id()))
}

#[tokio::test]
async fn the_dashboard_shows_queues_workers_and_jobs_to_admins_only() -> Result<()> {
    let mut world = World::new("dashboard").await?;
    let key = world.create_key("dev", false).await?;
    let admin = world.create_key("ops", true).await?;
    let api = world.start_api().await?;
    world.start_worker("dashboard")?;
    let id = api.small_document_done(&key).await?;
    let db = world.db().await?;
    let (job_id,): (String,) = sqlx::query_as("SELECT job_id FROM documents WHERE id = $1")
        .bind(&id)
        .fetch_one(&db)
        .await?;
    // The queue row ends a moment after the document.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status,): (String,) = sqlx::query_as("SELECT status FROM apalis.jobs WHERE id = $1")
            .bind(&job_id)
            .fetch_one(&db)
            .await?;
        if status == "Done" {
            break;
        }
        if Instant::now() > deadline {
            bail!("the queue row stayed {status}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Admins only.
    let (code, _, body) = ui(&api, None, "/admin/ui").await?;
    assert_eq!(code, 401);
    assert!(body.starts_with("Basic realm="), "{body}");
    let (code, _, _) = ui(&api, Some("nope.nope"), "/admin/ui").await?;
    assert_eq!(code, 401);
    let (code, _, body) = ui(&api, Some(&key), "/admin/ui/jobs").await?;
    assert_eq!(code, 403, "{body}");

    // The queues: the finished document, a live documents loop running 2 at once.
    let (code, kind, page) = ui(&api, Some(&admin), "/admin/ui").await?;
    assert_eq!((code, kind.as_str()), (200, "text/html; charset=utf-8"));
    let rows = cells(&page).await?;
    let served = rows
        .lines()
        .filter(|r| r.starts_with("translate-document|"))
        .nth(1)
        .with_context(|| format!("no translate-document row: {rows}"))?;
    let fields: Vec<&str> = served.split('|').collect();
    assert_eq!(fields[2], "1", "finished done: {served}");
    assert!(fields[5].parse::<i64>()? >= 1, "live loops: {served}");
    assert_eq!(
        fields[6].parse::<i64>()?,
        2 * fields[5].parse::<i64>()?,
        "jobs at once: {served}"
    );

    // The last hour: the document among the jobs finished, drawn as bars.
    let hour = rows
        .lines()
        .filter(|r| r.starts_with("translate-document|"))
        .nth(2)
        .with_context(|| format!("no last-hour row: {rows}"))?;
    let fields: Vec<&str> = hour.split('|').collect();
    assert_eq!((fields[1], fields[2]), ("1", "0"), "done, failed: {hour}");
    assert!(
        fields[5].starts_with("translate-document: 1 done and 0 failed in the last hour"),
        "{hour}"
    );

    // The workers: the documents loop with its host and process.
    let (_, _, page) = ui(&api, Some(&admin), "/admin/ui/workers").await?;
    let rows = cells(&page).await?;
    assert!(
        rows.lines()
            .any(|r| r.starts_with("translate-document|") && r.contains("|2|0|")),
        "{rows}"
    );

    // The jobs: found by the document's id, with its state.
    let (_, _, page) = ui(&api, Some(&admin), &format!("/admin/ui/jobs?q={id}")).await?;
    let rows = cells(&page).await?;
    let found: Vec<&str> = rows.lines().skip(1).collect();
    assert_eq!(found.len(), 1, "{rows}");
    assert!(
        found[0].starts_with(&format!("{job_id}|translate-document|Done|")),
        "{rows}"
    );
    let (_, _, page) = ui(&api, Some(&admin), "/admin/ui/jobs?status=Failed").await?;
    assert!(page.contains("No job matches."), "{page}");

    // Usage: the document's characters on today's row and its key's.
    let (billed,): (i64,) = sqlx::query_as("SELECT billed_characters FROM documents WHERE id = $1")
        .bind(&id)
        .fetch_one(&db)
        .await?;
    assert!(billed > 0);
    let (_, _, page) = ui(&api, Some(&admin), "/admin/ui/usage?days=7").await?;
    let rows = cells(&page).await?;
    let today = chrono::Utc::now().date_naive().to_string();
    assert!(
        rows.lines()
            .any(|r| r.starts_with(&format!("{today}|0|{billed}|0|0|0.0|0.0"))),
        "{rows}"
    );
    assert!(
        rows.lines()
            .any(|r| r.starts_with(&format!("dev {}|{billed}|0.0|", key_id(&key)))),
        "{rows}"
    );

    // Engines: Apertium answers its check; its pairs are listed.
    let (_, _, page) = ui(&api, Some(&admin), "/admin/ui/engines").await?;
    let rows = cells(&page).await?;
    assert!(
        rows.lines()
            .any(|r| r.starts_with("apertium|") && r.contains("|answers: ")),
        "{rows}"
    );
    assert!(
        rows.lines().any(|r| r.starts_with("EN|ES|apertium|")),
        "{rows}"
    );

    // In a browser: each page renders, and the search form finds the job.
    let driver = Driver::start(&world).await?;
    let b = driver.b();
    let base = signed_in(&api, &admin);
    for (path, name, expect) in [
        ("", "dashboard-queues.png", "Jobs by queue and state"),
        ("/workers", "dashboard-workers.png", "Worker loops"),
        (
            &format!("/jobs?q={id}") as &str,
            "dashboard-jobs.png",
            "translate-document",
        ),
        ("/usage", "dashboard-usage.png", "Characters per day"),
        ("/engines", "dashboard-engines.png", "Language pairs"),
    ] {
        b.goto(&format!("{base}{path}")).await?;
        let text = b
            .find(fantoccini::Locator::Css("main"))
            .await?
            .text()
            .await?;
        assert!(text.contains(expect), "{path}: {text}");
        save_screenshot(&world, name, &b.screenshot().await?)?;
    }
    driver.close().await?;
    Ok(())
}

/// A platform with an API and no worker, a developer and an admin key, and
/// one quality evaluation waiting.
struct Waiting {
    world: World,
    key: String,
    admin: String,
    api: Api,
    /// The evaluation's poll path.
    poll: String,
    /// Its queue row.
    job_id: String,
    db: sqlx::PgPool,
}

async fn one_evaluation_waiting(tag: &str) -> Result<Waiting> {
    let mut world = World::new(tag).await?;
    let key = world.create_key("dev", false).await?;
    let admin = world.create_key("ops", true).await?;
    let api = world.start_api().await?;
    let poll = crate::quality::start_one(&api, &key).await?;
    let db = world.db().await?;
    let (job_id,): (String,) =
        sqlx::query_as("SELECT id FROM apalis.jobs WHERE job_type = 'evaluate-quality'")
            .fetch_one(&db)
            .await?;
    Ok(Waiting {
        world,
        key,
        admin,
        api,
        poll,
        job_id,
        db,
    })
}

/// An admin cancels a waiting job from the dashboard in a browser: the queue
/// row ends `Killed`, the evaluation's poll ends with the reason, and the
/// action is in the audit; the same action without the page's token, or
/// from another site, is refused and changes nothing.
#[tokio::test]
async fn an_admin_cancels_a_waiting_job_and_the_action_is_audited() -> Result<()> {
    let Waiting {
        world,
        key,
        admin,
        api,
        poll,
        job_id,
        db,
    } = one_evaluation_waiting("dashboard_cancel").await?;
    let (_, _, page) = ui(&api, Some(&admin), "/admin/ui/jobs?status=Pending").await?;
    let token = action_token(&page)?;

    // Forged: no token, a wrong one, or another site's page.
    let cancel_url = format!("{}/admin/ui/jobs/{job_id}/cancel", api.direct);
    for (form, origin) in [
        (vec![], None),
        (vec![("token", "0000")], None),
        (
            vec![("token", token.as_str())],
            Some("https://evil.example"),
        ),
    ] {
        let mut req = api
            .http
            .post(&cancel_url)
            .basic_auth("ops", Some(&admin))
            .form(&form);
        if let Some(origin) = origin {
            req = req.header("Origin", origin);
        }
        let res = req.send().await?;
        assert_eq!(res.status().as_u16(), 403, "{form:?} {origin:?}");
    }
    let (status,): (String,) = sqlx::query_as("SELECT status FROM apalis.jobs WHERE id = $1")
        .bind(&job_id)
        .fetch_one(&db)
        .await?;
    assert_eq!(status, "Pending");

    // In a browser: the button on the jobs page.
    let driver = Driver::start(&world).await?;
    let b = driver.b();
    let base = signed_in(&api, &admin);
    b.goto(&format!("{base}/jobs?status=Pending")).await?;
    let (row, text) = click_and_read(b, "cancel", "Killed").await?;
    assert!(row.contains("cancelled by an operator"), "{row}");
    assert!(text.contains("Operator actions"), "{text}");
    save_screenshot(&world, "dashboard-cancelled.png", &b.screenshot().await?)?;
    driver.close().await?;

    // The evaluation ends with the reason; the audit names the admin key.
    let (code, body) = api.get(&key, &poll).await?;
    assert_ne!(body["status"], "processing", "{code} {body}");
    assert!(
        body.to_string().contains("cancelled by an operator"),
        "{code} {body}"
    );
    let admin_id = key_id(&admin);
    let audit: Vec<(String, String, String, String)> = sqlx::query_as(
        "SELECT api_key_id, action, job_id, outcome FROM operator_actions ORDER BY id",
    )
    .fetch_all(&db)
    .await?;
    assert_eq!(
        audit,
        [(
            admin_id.to_owned(),
            "cancel".to_owned(),
            job_id.clone(),
            "done".to_owned()
        )]
    );
    Ok(())
}

/// An admin runs again a job that ended in failure (here cancelled): the
/// Retry button puts the queue row back to `Pending` and the evaluation to
/// waiting, a worker then finishes it; retrying a job that did not fail is
/// refused, and both are in the audit. A forged retry changes nothing.
#[tokio::test]
async fn an_admin_retries_a_failed_job_and_it_runs_again() -> Result<()> {
    let Waiting {
        mut world,
        key,
        admin,
        api,
        poll,
        job_id,
        db,
    } = one_evaluation_waiting("dashboard_retry").await?;
    let (_, _, page) = ui(&api, Some(&admin), "/admin/ui/jobs").await?;
    let token = action_token(&page)?;
    let post = |action: &str, token: &str| {
        api.http
            .post(format!("{}/admin/ui/jobs/{job_id}/{action}", api.direct))
            .basic_auth("ops", Some(&admin))
            .form(&[("token", token)])
            .send()
    };
    assert!(post("cancel", &token).await?.status().is_success());
    let (_, ended) = api.get(&key, &poll).await?;
    assert!(
        ended.to_string().contains("cancelled by an operator"),
        "{ended}"
    );
    assert_eq!(post("retry", "0000").await?.status().as_u16(), 403);
    assert_eq!(post("rerun", &token).await?.status().as_u16(), 404);

    let driver = Driver::start(&world).await?;
    let b = driver.b();
    let base = signed_in(&api, &admin);
    b.goto(&format!("{base}/jobs?status=Killed")).await?;
    let (row, _) = click_and_read(b, "retry", "Pending").await?;
    assert!(!row.contains("cancelled by an operator"), "{row}");
    save_screenshot(&world, "dashboard-retried.png", &b.screenshot().await?)?;
    driver.close().await?;
    let (status, attempts): (String, i32) =
        sqlx::query_as("SELECT status, attempts FROM apalis.jobs WHERE id = $1")
            .bind(&job_id)
            .fetch_one(&db)
            .await?;
    assert_eq!((status.as_str(), attempts), ("Pending", 0));
    let (code, waiting) = api.get(&key, &poll).await?;
    assert_eq!(
        (code, &waiting["status"]),
        (202, &json!("processing")),
        "{waiting}"
    );

    world.start_worker("retry")?;
    let done = crate::quality::wait_done(&api, &key, &poll).await?;
    assert_eq!(done["status"], "done", "{done}");
    // A job that did not fail is not run again.
    assert!(post("retry", &token).await?.status().is_success());
    let audit: Vec<(String, String)> =
        sqlx::query_as("SELECT action, outcome FROM operator_actions ORDER BY id")
            .fetch_all(&db)
            .await?;
    let audit: Vec<(&str, &str)> = audit
        .iter()
        .map(|(a, o)| (a.as_str(), o.as_str()))
        .collect();
    assert_eq!(
        audit,
        [("cancel", "done"), ("retry", "done"), ("retry", "refused")]
    );
    Ok(())
}
