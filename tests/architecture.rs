//! The crates' dependency rules (docs/architecture.md), checked against the
//! Cargo manifests so a new dependency that breaks them fails the suite.

use std::collections::BTreeMap;

/// The `tolk-*` crates each workspace member depends on (build and run time,
/// not dev-dependencies).
fn dependencies() -> BTreeMap<String, Vec<String>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = BTreeMap::new();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("Cargo.toml: {e}"));
    let members_line = workspace
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .unwrap_or_else(|| panic!("no members line in Cargo.toml"));
    let members: Vec<&str> = members_line.split('"').skip(1).step_by(2).collect();
    assert!(members.len() >= 14, "members read: {members:?}");
    for member in members {
        let manifest = std::fs::read_to_string(root.join(member).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{member}/Cargo.toml: {e}"));
        let mut section = String::new();
        let mut ours = Vec::new();
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                section = line.to_owned();
            } else if section == "[dependencies]"
                && let Some(name) = line.split(['=', '.', ' ']).next()
                && name.starts_with("tolk-")
            {
                ours.push(name.to_owned());
            }
        }
        all.insert(member.to_owned(), ours);
    }
    all
}

#[test]
fn crates_depend_only_as_the_architecture_allows() {
    let deps = dependencies();
    // lang, the shared vocabulary (language codes, markup tags), depends on
    // nothing; any crate may depend on it, which the rules below leave aside.
    let lang = "tolk-lang".to_owned();
    assert_eq!(
        deps.get("lang"),
        Some(&Vec::new()),
        "lang depends on a crate of ours"
    );
    let of = |c: &str| {
        let mut ours = deps.get(c).cloned().unwrap_or_default();
        ours.retain(|d| *d != lang);
        ours
    };
    for leaf in ["formats", "engine", "voice", "quality", "write", "style"] {
        assert!(of(leaf).is_empty(), "{leaf} depends on {:?}", of(leaf));
    }
    assert!(
        !of("api").contains(&"tolk-worker".to_owned()),
        "api depends on worker"
    );
    for role in ["worker", "scheduler"] {
        assert!(
            !of(role).contains(&"tolk-api".to_owned()),
            "{role} depends on api"
        );
    }
    assert_eq!(of("scheduler"), ["tolk-storage"]);
    assert_eq!(of("auth"), ["tolk-storage"]);
    assert!(
        of("storage").is_empty(),
        "storage depends on {:?}",
        of("storage")
    );
    // One translation pipeline below the API and the worker, above the leaves.
    assert_eq!(
        of("pipeline"),
        ["tolk-storage", "tolk-engine", "tolk-formats", "tolk-style"]
    );
    for role in ["api", "worker"] {
        assert!(
            of(role).contains(&"tolk-pipeline".to_owned()),
            "{role} does not translate through the pipeline"
        );
    }
    // The parser saw the manifests: the roles do depend on storage.
    assert!(of("worker").contains(&"tolk-storage".to_owned()));
}

#[tokio::test]
async fn the_scheduler_needs_no_translation_engine() -> anyhow::Result<()> {
    let mut world = crate::support::World::new("scheduler_roles").await?;
    // An engine list no process could load: the API and workers would refuse
    // to start with it; the scheduler never opens the engines.
    world
        .extra_env
        .push(("TOLK_ENGINES".into(), "no-such-engine".into()));
    let pid = world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let db = world.db().await?;
    // It leads: its advisory lock on this database is held.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let locks: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
             WHERE l.locktype = 'advisory' AND d.datname = current_database() AND l.granted",
        )
        .fetch_one(&db)
        .await?;
        if locks > 0 {
            break;
        }
        anyhow::ensure!(
            world.is_running(pid),
            "the scheduler exited: {}",
            world.log("scheduler")
        );
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "the scheduler never led: {}",
            world.log("scheduler")
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(world.is_running(pid));
    Ok(())
}
