//! DeepL's official clients, unchanged, against Tolk: deepl-python (PyPI
//! `deepl`, in the tests' Python environment) and deepl-node (npm
//! `deepl-node`, in TOLK_TEST_NODE), both installed by scripts/setup.sh at
//! pinned versions. Each script (tests/clients/) calls every operation its
//! client offers that Tolk serves — usage, languages, text in JSON (Python) and
//! form (Node) bodies, glossaries v2 and v3, documents through the queue, write,
//! style rules, translation memories — and asserts the answers as the client
//! parses them. The API is reached through the conformance proxy, so every
//! answer is also checked against the OpenAPI description.

use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result, bail};
use tokio::process::Command;

use crate::support::{Api, World, node_packages};

/// A world with an API, a worker and a developer key.
async fn world(tag: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(tag).await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    Ok((world, api, key))
}

/// Runs `cmd`, failing with its output unless it succeeds; returns stdout.
async fn run(mut cmd: Command, what: &str) -> Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("running {what}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "{what} failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(stdout)
}

/// Asserts that `stdout` reports each of `operations` done.
fn assert_done(stdout: &str, operations: &[&str]) {
    let done: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("ok "))
        .collect();
    for op in operations {
        assert!(done.contains(op), "{op} not reported done:\n{stdout}");
    }
}

fn script(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
}

#[tokio::test]
async fn deepl_python_runs_unchanged_against_tolk() -> Result<()> {
    let (world, api, key) = world("client_py").await?;
    let python = std::env::var("TOLK_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let mut cmd = Command::new(python);
    cmd.arg(script("deepl_python.py"))
        .arg(&api.base)
        .arg(&key)
        .arg(&world.dir);
    let stdout = run(cmd, "deepl-python").await?;
    assert_done(
        &stdout,
        &[
            "get_usage",
            "get_source_languages",
            "get_target_languages",
            "get_glossary_languages",
            "translate_text",
            "translate_text tag_handling=xml",
            "translate_text mixed languages",
            "translate_text adjacent tags",
            "translate_text same language",
            "translate_text unknown target",
            "glossaries v2",
            "glossaries v3",
            "translate_document",
            "translate_document_from_filepath",
            "correct_text",
            "rephrase_text",
            "style rules",
            "translation memories",
            "wrong key",
        ],
    );
    Ok(())
}

#[tokio::test]
async fn deepl_node_runs_unchanged_against_tolk() -> Result<()> {
    let (world, api, key) = world("client_node").await?;
    let mut cmd = Command::new("node");
    cmd.arg(script("deepl_node.mjs"))
        .arg(&api.base)
        .arg(&key)
        .arg(&world.dir)
        .env("TOLK_TEST_NODE", node_packages("deepl-node")?);
    let stdout = run(cmd, "deepl-node").await?;
    assert_done(
        &stdout,
        &[
            "getUsage",
            "getSourceLanguages",
            "getTargetLanguages",
            "getGlossaryLanguagePairs",
            "translateText",
            "translateText tagHandlingVersion",
            "translateText mixed languages",
            "translateText adjacent tags",
            "translateText same language",
            "translateText unknown target",
            "glossaries v2",
            "glossaries v3",
            "translateDocument",
            "rephraseText",
            "style rules",
            "translation memories",
            "wrong key",
        ],
    );
    Ok(())
}
