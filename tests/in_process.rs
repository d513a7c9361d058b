//! The API's router in this test process, answered through
//! `tower::ServiceExt::oneshot`: no listener, no worker, no child process. For
//! request validation, which needs the database (keys) and the engines'
//! language lists but nothing that runs behind the answer.

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, header};
use serde_json::Value;
use tower::ServiceExt;

use crate::support::World;

/// A world, a developer key in it, and the API's router over both.
pub struct InProcess {
    /// The database and object folder, dropped with this.
    _world: World,
    /// A developer key.
    pub key: String,
    router: Router,
}

impl InProcess {
    /// A fresh world (its own database) with a key and the router over it,
    /// the local Apertium pairs as engines.
    pub async fn new(tag: &str) -> Result<Self> {
        let world = World::new(tag).await?;
        let key = world.create_key("in-process", false).await?;
        let db = tolk_storage::db::connect(world.database_url.parse()?, 4).await?;
        let objects = tolk_storage::objects::Objects::open(&world.object_store)?;
        let translator = tolk_engine::Translator::apertium(tolk_engine::ApertiumConfig {
            pipelines_per_pair: 1,
            ..Default::default()
        })
        .context("the Apertium pairs must be installed (scripts/setup.sh)")?;
        let state = tolk_api::AppState::new(db, objects, Arc::new(translator));
        Ok(Self {
            _world: world,
            key,
            router: tolk_api::router(state),
        })
    }

    /// Answers `req`: (status, body as JSON or Null). An answer that breaks
    /// the DeepL OpenAPI description is an error ([`crate::openapi`]).
    pub async fn send(&self, req: Request<Body>) -> Result<(u16, Value)> {
        let method = req.method().to_string();
        let path = req.uri().path().to_owned();
        let res = self.router.clone().oneshot(req).await?;
        let code = res.status().as_u16();
        let content_type = res
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX).await?;
        if let Err(violation) =
            crate::openapi::SPEC.check(&method, &path, code, content_type.as_deref(), &bytes)
        {
            anyhow::bail!("OpenAPI violation: {violation}");
        }
        Ok((code, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
    }

    /// A request to `path` with the key.
    pub fn keyed(&self, method: Method, path: &str) -> axum::http::request::Builder {
        Request::builder().method(method).uri(path).header(
            header::AUTHORIZATION,
            format!("DeepL-Auth-Key {}", self.key),
        )
    }

    /// `method path` with the key and a JSON body.
    pub async fn json(&self, method: Method, path: &str, body: &Value) -> Result<(u16, Value)> {
        let req = self
            .keyed(method, path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))?;
        self.send(req).await
    }

    /// `POST path` with the key and a form body (repeated keys as given).
    pub async fn form(&self, path: &str, fields: &[(&str, &str)]) -> Result<(u16, Value)> {
        let req = self
            .keyed(Method::POST, path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(serde_urlencoded::to_string(fields)?))?;
        self.send(req).await
    }

    /// `GET path` with the key.
    pub async fn get(&self, path: &str) -> Result<(u16, Value)> {
        self.send(self.keyed(Method::GET, path).body(Body::empty())?)
            .await
    }
}
