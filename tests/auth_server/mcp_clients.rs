//! The official MCP Python SDK (PyPI `mcp`) onboards itself against Tolk:
//! `mcp_sdk.py` runs an MCP server protected by the SDK's auth and the SDK's
//! OAuth client, which discovers Tolk, registers (RFC 7591) or presents a
//! client ID metadata document, goes through sign-in and consent, redeems
//! the code and calls a tool with the token.

use anyhow::{Context, Result};
use serde_json::Value;

use super::{start_auth, trust_metadata_server, world_with_ann};
use crate::support::python;

const MCP_SDK: &str = include_str!("mcp_sdk.py");

/// The script's JSON line for `args`.
async fn run_sdk(args: &[&str]) -> Result<Value> {
    let args: Vec<&std::path::Path> = args.iter().map(std::path::Path::new).collect();
    let out = python(MCP_SDK, &args).await?;
    serde_json::from_str(out.trim()).with_context(|| format!("mcp_sdk.py printed {out:?}"))
}

#[tokio::test]
async fn the_mcp_sdk_registers_itself_and_calls_a_tool() -> Result<()> {
    let mut world = world_with_ann("auth_mcp_dcr").await?;
    let auth = start_auth(&mut world).await?;
    let answer = run_sdk(&[&auth.base, "dcr"]).await?;
    assert_eq!(answer["ok"], true, "{answer}");
    let client_id = answer["client_id"].as_str().context("client_id")?;
    assert!(client_id.starts_with("dcr-"), "{answer}");
    Ok(())
}

#[tokio::test]
async fn the_mcp_sdk_uses_a_client_metadata_document_and_calls_a_tool() -> Result<()> {
    let mut world = world_with_ann("auth_mcp_cimd").await?;
    let (port, _server) = super::metadata_documents::metadata_server(&world).await?;
    trust_metadata_server(&mut world);
    let auth = start_auth(&mut world).await?;
    let url = format!("https://localhost:{port}/client.json");
    let answer = run_sdk(&[&auth.base, "cimd", &url]).await?;
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["client_id"], url.as_str());
    Ok(())
}
