//! The S3 path of the object store, against a real S3-compatible server
//! (s3s-fs from crates.io, installed by scripts/setup.sh) on loopback.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use tokio::process::{Child, Command};

use crate::support::{World, free_port};

const ACCESS: &str = "tolk-test-access";
const SECRET: &str = "tolk-test-secret-0123456789";
pub(crate) const BUCKET: &str = "tolk";

/// A running s3s-fs server.
pub(crate) struct S3Server {
    pub(crate) endpoint: String,
    root: std::path::PathBuf,
    _child: Child,
}

pub(crate) async fn start_s3(world: &World) -> Result<S3Server> {
    let bin = std::env::var("TOLK_S3S_FS").unwrap_or_else(|_| "s3s-fs".to_owned());
    let root = world.path("s3-root");
    std::fs::create_dir_all(root.join(BUCKET))?;
    let port = free_port();
    let child = Command::new(&bin)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--access-key", ACCESS, "--secret-key", SECRET])
        .arg(&root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("{bin} must be installed (scripts/setup.sh installs s3s-fs)"))?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if Instant::now() > deadline {
            bail!("s3s-fs did not start on port {port}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(S3Server {
        endpoint: format!("http://127.0.0.1:{port}"),
        root,
        _child: child,
    })
}

pub(crate) fn s3_env(server: &S3Server) -> Vec<(String, String)> {
    [
        ("AWS_ACCESS_KEY_ID", ACCESS),
        ("AWS_SECRET_ACCESS_KEY", SECRET),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ALLOW_HTTP", "true"),
        ("AWS_ENDPOINT_URL", server.endpoint.as_str()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

#[tokio::test]
async fn documents_flow_through_an_s3_compatible_store() -> Result<()> {
    let mut world = World::new("s3").await?;
    let server = start_s3(&world).await?;
    world.extra_env = s3_env(&server);
    world.object_store = format!("s3://{BUCKET}");
    let key = world.create_key("s3", false).await?;
    let api = world.start_api().await?;
    world.start_worker("a")?;

    let (id, dk) = api
        .upload_ok(
            &key,
            "s3.txt",
            b"The dog runs in the park.".to_vec(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    // The upload is in the bucket on the server's disk, not in a local folder.
    let upload = server
        .root
        .join(BUCKET)
        .join(format!("uploads/{id}/source.txt"));
    assert!(upload.exists(), "{} missing", upload.display());
    let st = api.wait(&key, &id, &dk, Duration::from_secs(120)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let result = server
        .root
        .join(BUCKET)
        .join(format!("results/{id}/translated.txt"));
    assert!(result.exists(), "{} missing", result.display());
    let (code, _, bytes) = api.download(&key, &id, &dk).await?;
    assert_eq!(code, 200);
    assert!(String::from_utf8(bytes)?.contains("perro"));
    Ok(())
}

#[tokio::test]
async fn object_store_put_get_stream_delete_over_s3() -> Result<()> {
    let world = World::new("s3objects").await?;
    let server = start_s3(&world).await?;
    let objects =
        tolk_storage::objects::Objects::open_with(&format!("s3://{BUCKET}"), s3_env(&server))?;
    let data = Bytes::from(vec![7u8; 3 * 1024 * 1024 + 5]);
    objects.put("a/b.bin", data.clone()).await?;
    assert_eq!(objects.get("a/b.bin").await?, data);
    let mut stream = objects.stream("a/b.bin").await?;
    let mut n = 0;
    while let Some(chunk) = futures_next(&mut stream).await {
        n += chunk?.len();
    }
    assert_eq!(n, data.len());
    objects.delete("a/b.bin").await?;
    assert!(objects.get("a/b.bin").await.is_err());
    objects.delete("a/b.bin").await?; // deleting a missing object is fine
    // Wrong credentials are refused by the server.
    let wrong = s3_env(&server).into_iter().map(|(k, v)| {
        if k == "AWS_SECRET_ACCESS_KEY" {
            (k, "wrong".to_owned())
        } else {
            (k, v)
        }
    });
    let bad = tolk_storage::objects::Objects::open_with(&format!("s3://{BUCKET}"), wrong)?;
    assert!(bad.put("x", Bytes::from_static(b"x")).await.is_err());
    Ok(())
}

async fn futures_next<S: futures::Stream + Unpin>(s: &mut S) -> Option<S::Item> {
    futures::StreamExt::next(s).await
}
