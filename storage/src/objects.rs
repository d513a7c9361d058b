//! The object store: a local folder by default, any S3-compatible store by
//! configuration (`s3://bucket` plus the usual `AWS_*` variables).

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::signer::Signer;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::StorageError;

/// Default folder of the local object store.
pub const DEFAULT_LOCAL_DIR: &str = "./data/objects";

/// Part size of [`Objects::writer`]'s multipart uploads (S3 needs ≥ 5 MiB).
pub const WRITE_PART_BYTES: usize = 8 << 20;

/// A handle on the configured store.
#[derive(Clone, Debug)]
pub struct Objects {
    store: Arc<dyn ObjectStore>,
    /// Presigns URLs (S3 stores only).
    signer: Option<Arc<dyn Signer>>,
    description: String,
}

/// The HTTP method a presigned URL is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presign {
    /// Upload with PUT.
    Put,
    /// Download with GET.
    Get,
}

impl Objects {
    /// Opens the store named by `spec`: `s3://bucket` (credentials, region and
    /// endpoint from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
    /// `AWS_ENDPOINT_URL`/`AWS_ENDPOINT`, `AWS_ALLOW_HTTP` in the environment),
    /// `file:///path`, or a plain folder path (created when missing).
    pub fn open(spec: &str) -> Result<Self, StorageError> {
        Self::open_with(spec, std::env::vars())
    }

    /// Like [`Objects::open`], with the `AWS_*` settings taken from `vars` instead
    /// of the process environment.
    pub fn open_with(
        spec: &str,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, StorageError> {
        if let Some(rest) = spec.strip_prefix("s3://") {
            let bucket = rest.split('/').next().unwrap_or_default();
            if bucket.is_empty() {
                return Err(StorageError::ObjectConfig(format!("no bucket in {spec}")));
            }
            let mut builder = AmazonS3Builder::new()
                .with_bucket_name(bucket)
                .with_region("us-east-1");
            for (key, value) in vars {
                if key == "AWS_ENDPOINT_URL" {
                    builder = builder.with_endpoint(value);
                } else if key == "AWS_DEFAULT_REGION" {
                    builder = builder.with_region(value);
                } else if key.starts_with("AWS_")
                    && let Ok(config_key) = key.to_ascii_lowercase().parse::<AmazonS3ConfigKey>()
                {
                    builder = builder.with_config(config_key, value);
                }
            }
            let store = Arc::new(builder.build()?);
            return Ok(Self {
                store: store.clone(),
                signer: Some(store),
                description: spec.to_owned(),
            });
        }
        let dir = PathBuf::from(spec.strip_prefix("file://").unwrap_or(spec));
        std::fs::create_dir_all(&dir).map_err(|e| {
            StorageError::ObjectConfig(format!("cannot create {}: {e}", dir.display()))
        })?;
        let store = LocalFileSystem::new_with_prefix(&dir)?;
        Ok(Self {
            store: Arc::new(store),
            signer: None,
            description: format!("local folder {}", dir.display()),
        })
    }

    /// Wraps any store (tests, custom set-ups).
    pub fn from_store(store: Arc<dyn ObjectStore>, description: impl Into<String>) -> Self {
        Self {
            store,
            signer: None,
            description: description.into(),
        }
    }

    /// What the store is, for logs.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Writes an object.
    pub async fn put(&self, key: &str, data: Bytes) -> Result<(), StorageError> {
        self.store
            .put(&Path::from(key), PutPayload::from(data))
            .await?;
        Ok(())
    }

    /// Reads a whole object.
    pub async fn get(&self, key: &str) -> Result<Bytes, StorageError> {
        Ok(self.store.get(&Path::from(key)).await?.bytes().await?)
    }

    /// Streams an object.
    pub async fn stream(
        &self,
        key: &str,
    ) -> Result<BoxStream<'static, Result<Bytes, StorageError>>, StorageError> {
        let res = self.store.get(&Path::from(key)).await?;
        Ok(res
            .into_stream()
            .map(|r| r.map_err(StorageError::from))
            .boxed())
    }

    /// Reads an object as a byte stream (one GET; memory bounded by the
    /// store's chunks, whatever the object's size).
    pub async fn reader(
        &self,
        key: &str,
    ) -> Result<impl tokio::io::AsyncRead + Send + Unpin + 'static, StorageError> {
        let stream = self
            .stream(key)
            .await?
            .map(|r| r.map_err(std::io::Error::other));
        Ok(tokio_util::io::StreamReader::new(stream))
    }

    /// A writer that streams an object into the store: a multipart upload in
    /// parts of [`WRITE_PART_BYTES`] (a single PUT when smaller). Finish it
    /// with `shutdown()` (tokio's `AsyncWriteExt`), or `abort()` it.
    pub fn writer(&self, key: &str) -> object_store::buffered::BufWriter {
        object_store::buffered::BufWriter::with_capacity(
            self.store.clone(),
            Path::from(key),
            WRITE_PART_BYTES,
        )
    }

    /// Whether the store can hand out presigned URLs (S3).
    pub fn can_presign(&self) -> bool {
        self.signer.is_some()
    }

    /// A presigned URL for `method` on `key`, valid `expires_in`, straight to
    /// the bucket; `None` when the store cannot presign (a local folder).
    pub async fn presigned_url(
        &self,
        method: Presign,
        key: &str,
        expires_in: std::time::Duration,
    ) -> Result<Option<String>, StorageError> {
        let Some(signer) = &self.signer else {
            return Ok(None);
        };
        let method = match method {
            Presign::Put => http::Method::PUT,
            Presign::Get => http::Method::GET,
        };
        let url = signer
            .signed_url(method, &Path::from(key), expires_in)
            .await?;
        Ok(Some(url.to_string()))
    }

    /// The size of an object, or `None` when it does not exist.
    pub async fn size(&self, key: &str) -> Result<Option<u64>, StorageError> {
        match self.store.head(&Path::from(key)).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes an object; a missing object is not an error.
    pub async fn delete(&self, key: &str) -> Result<(), StorageError> {
        match self.store.delete(&Path::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}
