//! The Apertium engine: installed pairs run as long-lived null-flush
//! pipelines, many texts batched into each block.

mod batch;
mod discovery;
mod lexicon;
mod pipeline;
mod stream;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;

use crate::{Engine, EngineError, Pair, TagHandling, TranslateOptions, Vocabulary};
use batch::{Batcher, Pending};
use pipeline::Pool;
use stream::{Prepared, Unit};

/// Blocks are at least this long (bytes of stream) unless the request is smaller…
const MIN_BLOCK: usize = 2_000;
/// …and at most this long (unless one text alone is longer).
const MAX_BLOCK: usize = 16_000;

/// Settings of the Apertium engine.
#[derive(Debug, Clone)]
pub struct ApertiumConfig {
    /// Directory with the `*.mode` files (default `/usr/share/apertium/modes`).
    pub modes_dir: PathBuf,
    /// Pipelines per pair, started on demand (default: available parallelism).
    pub pipelines_per_pair: usize,
    /// Longest time one block may take in a pipeline before the pipeline is
    /// killed and the request fails with [`EngineError::Unavailable`].
    pub timeout: Duration,
    /// Blocks that may wait for a pipeline of one pair; more are refused
    /// with [`EngineError::Overloaded`] (default 1024).
    pub queue: usize,
}

impl Default for ApertiumConfig {
    fn default() -> Self {
        Self {
            modes_dir: PathBuf::from("/usr/share/apertium/modes"),
            pipelines_per_pair: std::thread::available_parallelism().map_or(2, |n| n.get()),
            timeout: Duration::from_secs(60),
            queue: 1024,
        }
    }
}

/// Apertium behind the [`Engine`] trait.
pub struct ApertiumEngine {
    pairs: Vec<Pair>,
    pools: HashMap<String, PairPipelines>,
    queue: usize,
    lexicons: lexicon::Lexicons,
}

/// The pipelines of one pair and their batcher (started on first use).
struct PairPipelines {
    pool: Arc<Pool>,
    batcher: OnceLock<Batcher>,
}

impl ApertiumEngine {
    /// Discovers the pairs installed in `config.modes_dir`. No process is
    /// started until a pair is used. Fails if no usable pair is found.
    pub fn new(config: ApertiumConfig) -> Result<Self, EngineError> {
        let modes = discovery::discover(&config.modes_dir)?;
        if modes.is_empty() {
            return Err(EngineError::Failed(format!(
                "no usable Apertium modes in {} (is Apertium installed with language pairs?)",
                config.modes_dir.display()
            )));
        }
        let lexicons = lexicon::Lexicons::new(&modes);
        let mut pairs = Vec::new();
        let mut pools = HashMap::new();
        for mode in modes {
            tracing::debug!(mode = mode.pair.id, path = %mode.path.display(), stages = mode.stages.len(), "Apertium pair");
            pools.insert(
                mode.pair.id.clone(),
                PairPipelines {
                    pool: Arc::new(Pool::new(
                        mode.pair.id.clone(),
                        mode.stages,
                        config.pipelines_per_pair,
                        config.timeout,
                        config.queue,
                    )),
                    batcher: OnceLock::new(),
                },
            );
            pairs.push(mode.pair);
        }
        tracing::info!(pairs = ?pairs.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), "Apertium pairs found");
        Ok(Self {
            pairs,
            pools,
            queue: config.queue,
            lexicons,
        })
    }

    /// Blocks (flushes) sent to the pipelines of all pairs so far: with
    /// continuous batching, far fewer than requests under load.
    pub fn blocks_sent(&self) -> usize {
        self.pools.values().map(|p| p.pool.blocks()).sum()
    }

    /// Translates the units of one block; on separator trouble, each unit alone.
    pub(crate) async fn run_block(
        pool: &Pool,
        units: &[&Unit],
    ) -> Result<Vec<String>, EngineError> {
        let mut block = String::new();
        for (i, u) in units.iter().enumerate() {
            stream::encode(u, i, &mut block);
        }
        let out = pool.run(block.as_bytes()).await?;
        let out = String::from_utf8_lossy(&out);
        if let Some(parts) = stream::split(stream::decode(&out), units.len()) {
            return Ok(units
                .iter()
                .zip(parts)
                .map(|(u, atoms)| stream::finish(u, atoms))
                .collect());
        }
        tracing::warn!(
            units = units.len(),
            "separators of a block did not come back in order; translating its texts one by one"
        );
        let mut results = Vec::with_capacity(units.len());
        for u in units {
            let mut block = String::new();
            stream::encode(u, 0, &mut block);
            let out = pool.run(block.as_bytes()).await?;
            let decoded = stream::decode(&String::from_utf8_lossy(&out));
            let atoms = match stream::split(decoded.clone(), 1) {
                Some(mut parts) => parts.remove(0),
                None => stream::all_atoms(decoded),
            };
            results.push(stream::finish(u, atoms));
        }
        Ok(results)
    }
}

#[async_trait]
impl Engine for ApertiumEngine {
    fn name(&self) -> &str {
        "apertium"
    }

    fn pairs(&self) -> Vec<Pair> {
        self.pairs.clone()
    }

    async fn translate(
        &self,
        pair: &Pair,
        texts: Vec<String>,
        tags: TagHandling,
        _options: &TranslateOptions,
    ) -> Result<Vec<String>, EngineError> {
        let pair_pipelines = self
            .pools
            .get(&pair.id)
            .ok_or_else(|| EngineError::Failed(format!("Apertium has no pair {}", pair.id)))?;
        let pool = &pair_pipelines.pool;
        let batcher = pair_pipelines
            .batcher
            .get_or_init(|| Batcher::start(pool.clone(), self.queue, MAX_BLOCK));
        let prepared: Vec<Prepared> = texts.iter().map(|t| stream::prepare(t, tags)).collect();
        let units: Vec<(usize, &Unit)> = prepared
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Prepared::Unit(u) => Some((i, u)),
                Prepared::Passthrough(_) => None,
            })
            .collect();

        // Large requests: contiguous parts of roughly equal size, enough to
        // keep every pipeline of the pool busy. The batcher puts small parts
        // of concurrent requests together into shared blocks.
        let sizes: Vec<usize> = units.iter().map(|(i, _)| texts[*i].len() + 16).collect();
        let total: usize = sizes.iter().sum();
        let target = total.div_ceil(pool.size()).clamp(MIN_BLOCK, MAX_BLOCK);
        let mut blocks: Vec<Vec<usize>> = Vec::new(); // indices into `units`
        let mut current = Vec::new();
        let mut size = 0;
        for (k, s) in sizes.iter().enumerate() {
            if !current.is_empty() && size + s > target {
                blocks.push(std::mem::take(&mut current));
                size = 0;
            }
            current.push(k);
            size += s;
        }
        if !current.is_empty() {
            blocks.push(current);
        }

        let mut waiting = Vec::with_capacity(blocks.len());
        for b in &blocks {
            let (reply, rx) = tokio::sync::oneshot::channel();
            batcher.submit(
                Pending {
                    units: b.iter().map(|&k| units[k].1.clone()).collect(),
                    bytes: b.iter().map(|&k| sizes[k]).sum(),
                    reply,
                },
                &pair.id,
            )?;
            waiting.push(rx);
        }
        let jobs = waiting.into_iter().map(|rx| async move {
            rx.await.map_err(|_| {
                EngineError::Unavailable("the Apertium batcher dropped a request".into())
            })?
        });
        let outputs = futures::future::try_join_all(jobs).await?;

        let mut results: Vec<String> = prepared
            .iter()
            .map(|p| match p {
                Prepared::Passthrough(s) => s.clone(),
                Prepared::Unit(_) => String::new(),
            })
            .collect();
        for (block, outs) in blocks.iter().zip(outputs) {
            for (&k, out) in block.iter().zip(outs) {
                results[units[k].0] = out;
            }
        }
        Ok(results)
    }

    async fn known_words(&self, base: &str, texts: &[String]) -> Option<Vec<Vocabulary>> {
        self.lexicons.known(base, texts).await
    }

    fn process_ids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self.pools.values().flat_map(|p| p.pool.pids()).collect();
        pids.sort_unstable();
        pids
    }
}
