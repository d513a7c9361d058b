#!/usr/bin/env node
// Graphile Worker side of `tolk-bench queue`: one test per invocation.
//
//   node graphile.js '<json spec>'
//
// The spec (written by bench/src/queue/graphile.rs) names the test and its settings; the
// script prints exactly one JSON object on its last stdout line, which the Rust
// bench reads. Everything else (warnings, errors) goes to stderr.
//
// Tests:
//   burn        N no-op jobs, bulk-added with addJobs in chunks; "processing" adds
//               them all first and then starts the worker pool, "e2e" starts the
//               pool and then adds. Time until every handler ran and the jobs
//               table is empty (Graphile deletes a job when it completes).
//               With "processes" > 1 the pool runs in that many child Node
//               processes (forked as "burnChild"), each with the full settings,
//               as separate `graphile-worker` processes would; they report their
//               finished jobs over IPC every 10 ms.
//   serve       runs the worker pool for the latency tests: after a warm-up it
//               prints "ready"; the Rust bench then adds jobs itself (the same
//               producer code and pool as for Tolk: `select graphile_worker.add_job`
//               with the wall-clock µs of the add in the payload), open loop or one
//               at a time; each handler start prints "s <i>" and records
//               now - payload time. Ends when all N started or stdin closes.
"use strict";

const { run, makeWorkerUtils, Logger } = require("graphile-worker");
const { performance } = require("node:perf_hooks");
const { fork } = require("node:child_process");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function quietLogger() {
  return new Logger(() => (level, message) => {
    if (level === "error" || level === "warning") {
      process.stderr.write(`graphile-worker ${level}: ${message}\n`);
    }
  });
}

function workerPreset(spec) {
  const worker = {
    concurrentJobs: spec.concurrency,
    maxPoolSize: spec.maxPoolSize,
    pollInterval: spec.pollIntervalMs,
  };
  if (spec.preset === "batched") {
    // The batching settings of Graphile's published performance run
    // (website/docs/performance.md): a local queue and batched completion.
    worker.localQueue = { size: spec.localQueueSize };
    worker.completeJobBatchDelay = 0;
    worker.failJobBatchDelay = 0;
  }
  return { worker };
}

async function startRunner(spec, taskList) {
  return run({
    connectionString: spec.connectionString,
    schema: spec.schema,
    concurrency: spec.concurrency,
    maxPoolSize: spec.maxPoolSize,
    pollInterval: spec.pollIntervalMs,
    noHandleSignals: true,
    logger: quietLogger(),
    taskList,
    preset: workerPreset(spec),
  });
}

async function countJobs(utils, schema) {
  return utils.withPgClient(async (client) => {
    const { rows } = await client.query(
      `select count(*)::int as n from ${schema}._private_jobs`,
    );
    return rows[0].n;
  });
}

async function waitEmpty(utils, schema, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if ((await countJobs(utils, schema)) === 0) return;
    if (performance.now() > deadline) {
      throw new Error(`jobs table not empty after ${timeoutMs} ms`);
    }
    await sleep(5);
  }
}

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function addInChunks(utils, total, chunk, makeSpec) {
  for (let start = 0; start < total; start += chunk) {
    const n = Math.min(chunk, total - start);
    const specs = new Array(n);
    for (let i = 0; i < n; i++) specs[i] = makeSpec(start + i);
    await utils.addJobs(specs);
  }
}

// A child of a multi-process burn: loads, waits for "go", then runs one worker
// pool until told to stop, reporting how many jobs it finished.
async function burnChild(spec) {
  let pending = 0;
  const taskList = {
    noop: async () => {
      pending += 1;
    },
  };
  const go = deferred();
  const stop = deferred();
  process.on("message", (m) => {
    if (m && m.go) go.resolve();
    if (m && m.stop) stop.resolve();
  });
  process.send({ loaded: true });
  await go.promise;
  const runner = await startRunner(spec, taskList);
  const flush = setInterval(() => {
    if (pending > 0) {
      process.send({ done: pending });
      pending = 0;
    }
  }, 10);
  process.send({ ready: true });
  await stop.promise;
  clearInterval(flush);
  await runner.stop();
  // The IPC channel would keep this process alive.
  process.disconnect();
}

// Forks `spec.processes` child pools and waits until each has loaded; `go()`
// starts their pools and resolves once all listen. `onDone(k)` gets their
// finished-job counts; `stop()` stops them and waits for their exit.
async function forkChildren(spec, onDone) {
  const children = [];
  for (let i = 0; i < spec.processes; i++) {
    const child = fork(__filename, [JSON.stringify({ ...spec, test: "burnChild" })], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    const loaded = deferred();
    const ready = deferred();
    const exited = deferred();
    child.on("message", (m) => {
      if (m.loaded) loaded.resolve();
      if (m.ready) ready.resolve();
      if (m.done) onDone(m.done);
    });
    child.on("exit", (code) => {
      const e = new Error(`burn child exited with ${code}`);
      loaded.reject(e);
      ready.reject(e);
      exited.resolve();
    });
    children.push({ child, loaded, ready, exited });
  }
  await Promise.all(children.map((c) => c.loaded.promise));
  return {
    go: async () => {
      for (const { child } of children) child.send({ go: true });
      await Promise.all(children.map((c) => c.ready.promise));
      return {
        stop: async () => {
          for (const { child } of children) child.send({ stop: true });
          await Promise.all(children.map((c) => c.exited.promise));
        },
      };
    },
  };
}

async function burn(spec, utils) {
  const n = spec.jobs;
  let done = 0;
  const all = deferred();
  const count = (k) => {
    done += k;
    if (done >= n) all.resolve();
  };
  const taskList = {
    noop: async () => count(1),
  };
  // Child processes load before the clock starts; their pools start at `start()`.
  const children = spec.processes > 1 ? await forkChildren(spec, count) : null;
  const start = () => (children ? children.go() : startRunner(spec, taskList));
  const makeSpec = () => ({ identifier: "noop", payload: {} });
  let runner;
  let t0;
  let insertSeconds;
  if (spec.mode === "processing") {
    const ti = performance.now();
    await addInChunks(utils, n, spec.chunk, makeSpec);
    insertSeconds = (performance.now() - ti) / 1000;
    // As autovacuum would within a minute of a large insert (the Rust bench does the
    // same for Tolk's and the raw table).
    await utils.withPgClient((client) => client.query(`analyze ${spec.schema}._private_jobs`));
    t0 = performance.now();
    runner = await start();
  } else {
    // As for Tolk: let the pool start and LISTEN before the clock starts.
    runner = await start();
    await sleep(300);
    t0 = performance.now();
    const ti = performance.now();
    await addInChunks(utils, n, spec.chunk, makeSpec);
    insertSeconds = (performance.now() - ti) / 1000;
  }
  // A slow run stops at the time cap; its rate is then jobs started / time.
  const capMs = Math.max(0, spec.capMs - (performance.now() - t0));
  let capTimer;
  const finished = await Promise.race([
    all.promise.then(() => true),
    new Promise((resolve) => {
      capTimer = setTimeout(() => resolve(false), capMs);
    }),
  ]);
  clearTimeout(capTimer);
  let jobs = n;
  if (finished) {
    await waitEmpty(utils, spec.schema, spec.timeoutMs);
  } else {
    jobs = Math.min(done, n);
  }
  const seconds = (performance.now() - t0) / 1000;
  await runner.stop();
  return {
    test: "burn",
    mode: spec.mode,
    preset: spec.preset,
    processes: spec.processes,
    jobs,
    capped: !finished,
    seconds,
    insertSeconds,
  };
}

// Wall clock in µs (the Rust producer stamps SystemTime µs into each payload).
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

async function serve(spec, utils) {
  const n = spec.jobs;
  const latencies = new Array(n).fill(-1);
  let started = 0;
  const all = deferred();
  const warm = deferred();
  let warmLeft = spec.warmup;
  const taskList = {
    lat: async (payload) => {
      const ms = (nowUs() - payload.t) / 1000;
      if (payload.i < 0) {
        warmLeft -= 1;
        if (warmLeft === 0) warm.resolve();
        return;
      }
      if (latencies[payload.i] < 0) {
        latencies[payload.i] = ms;
        started += 1;
      }
      process.stdout.write(`s ${payload.i}\n`);
      if (started === n) all.resolve();
    },
  };
  const runner = await startRunner(spec, taskList);
  for (let w = 0; w < spec.warmup; w++) {
    await utils.addJob("lat", { i: -1 - w, t: nowUs() });
  }
  if (spec.warmup > 0) {
    await withTimeout(warm.promise, spec.timeoutMs, "warm-up");
    await waitEmpty(utils, spec.schema, spec.timeoutMs);
  }
  await sleep(500);
  const stdinClosed = new Promise((resolve) => {
    process.stdin.on("end", resolve);
    process.stdin.on("close", resolve);
    process.stdin.resume();
  });
  process.stdout.write("ready\n");
  await Promise.race([all.promise, stdinClosed]);
  await runner.stop();
  return { test: "serve", jobs: n, latenciesMs: latencies };
}

async function main() {
  const raw = process.argv[2];
  if (!raw) throw new Error("usage: node graphile.js '<json spec>'");
  const spec = JSON.parse(raw);
  spec.processes = spec.processes || 1;
  if (spec.test === "burnChild") {
    await burnChild(spec);
    return;
  }
  const utils = await makeWorkerUtils({
    connectionString: spec.connectionString,
    schema: spec.schema,
    maxPoolSize: spec.maxPoolSize,
    logger: quietLogger(),
  });
  try {
    await utils.migrate();
    await utils.withPgClient((client) =>
      client.query(
        `truncate ${spec.schema}._private_jobs, ${spec.schema}._private_job_queues cascade`,
      ),
    );
    let result;
    if (spec.test === "burn") result = await burn(spec, utils);
    else if (spec.test === "serve") result = await serve(spec, utils);
    else throw new Error(`unknown test ${spec.test}`);
    result.graphileWorker = require("graphile-worker/package.json").version;
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await utils.release();
  }
}

main().catch((e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
