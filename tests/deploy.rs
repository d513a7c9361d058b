//! The Kubernetes manifests (deploy/kubernetes/base): every object validates
//! against the Kubernetes schemas (kubernetes-validate, strict), every queue
//! is served by exactly one worker pool, and each pool's KEDA scaler asks the
//! database a query that runs and counts that pool's queues only.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::support::{World, python};

fn base() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/base")
}

/// Every object of the base's files, as JSON, with the file it came from.
async fn objects() -> Result<Vec<(String, Value)>> {
    let read = r#"
import glob, json, os, sys, yaml
out = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.yaml"))):
    for doc in yaml.safe_load_all(open(path)):
        if doc:
            out.append([os.path.basename(path), doc])
print(json.dumps(out))
"#;
    let text = python(read, &[&base()]).await?;
    let list: Vec<(String, Value)> = serde_json::from_str(&text)?;
    Ok(list)
}

/// Strict schema validation of every built-in object, and the kustomization
/// names every file of the folder.
#[tokio::test]
async fn manifests_validate_against_the_kubernetes_schemas() -> Result<()> {
    let mut files: Vec<String> = std::fs::read_dir(base())?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") && n != "kustomization.yaml")
        .collect();
    files.sort();
    let objects = objects().await?;
    let kustomization = objects
        .iter()
        .find(|(_, o)| o["kind"] == "Kustomization")
        .context("a kustomization")?;
    let mut listed: Vec<String> = kustomization.1["resources"]
        .as_array()
        .context("resources")?
        .iter()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    listed.sort();
    assert_eq!(listed, files, "the kustomization lists every manifest");
    let check = r#"
import subprocess, sys
paths = sys.argv[1:]
done = subprocess.run([sys.executable, "-m", "kubernetes_validate", "--strict", *paths],
                      capture_output=True, text=True)
print(done.returncode)
print(done.stdout + done.stderr)
"#;
    let paths: Vec<PathBuf> = files
        .iter()
        .filter(|f| *f != "scaling.yaml")
        .map(|f| base().join(f))
        .collect();
    let refs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
    let out = python(check, &refs).await?;
    let (code, report) = out.split_once('\n').context("a report")?;
    assert_eq!(code.trim(), "0", "{report}");
    assert!(!report.contains("ERROR"), "{report}");
    assert_eq!(
        report.matches(" passed for resource ").count(),
        objects
            .iter()
            .filter(|(f, o)| f != "scaling.yaml" && o["kind"] != "Kustomization")
            .count(),
        "{report}"
    );
    Ok(())
}

/// Each queue is run by one worker Deployment (its `--queues` read as
/// `tolk worker` reads it), with a grace period longer than the worker's
/// 30 s shutdown; each has a ScaledObject whose query runs on a migrated
/// database and names exactly that pool's queues.
#[tokio::test]
async fn each_worker_pool_scales_on_its_own_queues() -> Result<()> {
    let objects = objects().await?;
    let world = World::new("deploy").await?;
    let db = world.db().await?;
    let mut served: Vec<&str> = Vec::new();
    for (_, worker) in objects.iter().filter(|(_, o)| {
        o["kind"] == "Deployment"
            && o["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
                == "worker"
    }) {
        let name = worker["metadata"]["name"].as_str().context("name")?;
        let spec = &worker["spec"]["template"]["spec"];
        assert!(
            spec["terminationGracePeriodSeconds"].as_i64() > Some(30),
            "{name}"
        );
        let command: Vec<&str> = spec["containers"][0]["command"]
            .as_array()
            .context("command")?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let at = |flag: &str| {
            command
                .iter()
                .position(|c| *c == flag)
                .and_then(|i| command.get(i + 1))
                .copied()
                .unwrap_or("")
        };
        let pools = tolk_worker::Pools::parse(at("--queues"), at("--concurrency"))
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let queues: Vec<&str> = tolk_worker::Kind::ALL
            .into_iter()
            .filter(|k| pools.runs(*k))
            .flat_map(|k| k.queues().iter().copied())
            .collect();
        served.extend(&queues);
        let scaler = objects
            .iter()
            .find(|(_, o)| {
                o["kind"] == "ScaledObject" && o["spec"]["scaleTargetRef"]["name"] == name
            })
            .with_context(|| format!("no ScaledObject for {name}"))?;
        let trigger = &scaler.1["spec"]["triggers"][0];
        assert_eq!(trigger["type"], "postgresql", "{name}");
        let query = trigger["metadata"]["query"].as_str().context("query")?;
        for q in tolk_storage::queue::QUEUES {
            assert_eq!(
                query.contains(&format!("'{q}'")),
                queues.contains(&q),
                "{name}: {q} in {query}"
            );
        }
        let waiting: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(query.to_owned()))
            .fetch_one(&db)
            .await?;
        assert_eq!(waiting, 0, "{name}");
    }
    served.sort_unstable();
    let mut all = tolk_storage::queue::QUEUES.to_vec();
    all.sort_unstable();
    assert_eq!(served, all, "every queue is served by exactly one pool");
    Ok(())
}
