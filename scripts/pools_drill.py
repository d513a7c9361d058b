#!/usr/bin/env python3
"""Scale-by-kind drill: worker pools by job kind under a mixed load.

    scripts/pools_drill.py [--documents 24] [--voice 4] [--tolk PATH]

On throwaway servers (a private PostgreSQL cluster and Redis, as
scripts/drill.py starts them), runs `tolk api`, `tolk scheduler`, one
documents-only worker (`--queues documents --concurrency 1`) and one
voice-only worker (`--queues voice`), then:

1. a batch of documents and voice jobs at once: the documents' throughput
   with one documents worker;
2. a second documents worker is added, the same batch again: the throughput
   with two (the ratio is printed);
3. the documents pool is stopped (SIGTERM): voice jobs still complete while a
   document waits; /metrics shows no live documents loop and the dashboard
   marks the queue "0 (jobs wait)";
4. a documents worker is started again and takes the waiting document.

Exit status 0 when every step held. The short form of this drill runs in the
test suite (e2e `worker_pools::stopping_one_pool_leaves_the_other_kinds_flowing`).
Needs the test packages (scripts/setup.sh) and a built `tolk` (default:
$CARGO_TARGET_DIR/release/tolk, building it if missing).
"""

import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drill import Platform, metrics, servers, tolk_binary, upload  # noqa: E402


def call(platform, method, path, body=None, content_type="application/json", auth=None, headers=None):
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    headers = dict(headers or {}, **{"Content-Type": content_type})
    if auth:
        headers["Authorization"] = auth
    elif "X-Api-Key" not in headers:
        headers["Authorization"] = f"DeepL-Auth-Key {platform.key}"
    url = path if path.startswith("http") else platform.base() + path
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, res.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def speech(platform):
    # The voice service's own headers: the key, and its client part.
    voice_headers = {"X-Api-Key": platform.key, "X-Client-Key": platform.key.split(".")[0]}
    code, wav = call(platform, "POST", "/v1/tts/convert", {"voiceId": 101, "text": "The house is big."},
                     headers=voice_headers)
    if code != 200:
        sys.exit(f"pools drill: text to speech answered {code}: {wav[:200]!r}")
    return wav


def voice_job(platform, wav):
    code, body = call(platform, "POST", "/v1/jobs/voice/translate", {
        "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": len(wav)},
        "parameters": {"source_language": "en"},
        "targets": [{"language": "es", "type": "text/plain"}],
    })
    if code != 201:
        sys.exit(f"pools drill: voice job answered {code}: {body[:200]!r}")
    created = json.loads(body)
    code, _ = call(platform, "PUT", created["upload_url"], wav, content_type="application/octet-stream",
                   auth=f"DeepL-Signature {created['signature']}")
    if code != 200:
        sys.exit(f"pools drill: voice upload answered {code}")
    return created["job_id"]


def voice_done(platform, job):
    code, body = call(platform, "GET", f"/v1/jobs/voice/translate/{job}")
    results = json.loads(body).get("results", []) if code == 200 else []
    return bool(results) and all(r.get("status") in ("complete", "failed", "downloaded") for r in results)


def documents_done(pg, ids):
    listed = ",".join(f"'{d}'" for d in ids) or "''"
    return int(pg.sql(f"SELECT count(*) FROM documents WHERE id IN ({listed}) AND status IN ('done', 'error')"))


def wait_for(what, test, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if test():
            return True
        time.sleep(0.2)
    print(f"pools drill: {what} did not happen within {timeout} s")
    return False


def batch(platform, pg, wav, documents, voice, offset):
    """Uploads `documents` documents and `voice` voice jobs at once; returns
    the seconds until every document finished (None: not within 5 min)."""
    start = time.time()
    ids = []
    for i in range(documents):
        status, doc = upload(platform, offset + i)
        if status != 200 or not doc:
            sys.exit(f"pools drill: upload answered {status}")
        ids.append(doc)
    jobs = [voice_job(platform, wav) for _ in range(voice)]
    if not wait_for("the documents of the batch", lambda: documents_done(pg, ids) == len(ids), 300):
        return None
    took = time.time() - start
    wait_for("the voice jobs of the batch", lambda: all(voice_done(platform, j) for j in jobs), 120)
    return took


def live(platform, queue):
    for line in metrics(platform).splitlines():
        if line.startswith(f'tolk_workers_live{{queue="{queue}"}} '):
            return float(line.split()[-1])
    return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--documents", type=int, default=24, help="documents per batch")
    ap.add_argument("--voice", type=int, default=4, help="voice jobs per batch")
    ap.add_argument("--heartbeat", type=int, default=2, help="TOLK_WORKER_HEARTBEAT_SECS")
    ap.add_argument("--tolk", help="the tolk binary")
    args = ap.parse_args()

    tolk = tolk_binary(args.tolk)
    root = tempfile.mkdtemp(prefix="tolk-pools-drill-")
    pg, redis, redis_port = servers(root)
    platform = Platform(tolk, root, pg, redis_port, args.heartbeat)
    admin = subprocess.run([tolk, "admin", "create-key", "--label", "ops", "--admin"], env=platform.env,
                           check=True, capture_output=True, text=True).stdout.strip()
    platform.spawn("api", "api", "--listen", f"127.0.0.1:{platform.port}", "--no-migrate")
    platform.spawn("scheduler", "scheduler", "--tick-secs", "1")
    platform.spawn("worker-voice", "worker", "--queues", "voice")
    platform.spawn("worker-documents-1", "worker", "--queues", "documents", "--concurrency", "1")
    platform.wait_up()
    print(f"pools drill: platform on {platform.base()}, logs in {root}")
    ok = True
    try:
        wav = speech(platform)
        one = batch(platform, pg, wav, args.documents, args.voice, 0)
        print(f"1 documents worker:  {args.documents} documents in {one and round(one, 1)} s")
        platform.spawn("worker-documents-2", "worker", "--queues", "documents", "--concurrency", "1")
        ok &= wait_for("a second live documents loop", lambda: live(platform, "translate-document") >= 2, 60)
        two = batch(platform, pg, wav, args.documents, args.voice, 1000)
        print(f"2 documents workers: {args.documents} documents in {two and round(two, 1)} s"
              + (f" ({one / two:.2f}× the throughput of one)" if one and two else ""))
        ok &= bool(one and two)

        print("stopping the documents pool (SIGTERM)")
        for name in ("worker-documents-1", "worker-documents-2"):
            platform.procs[name].send_signal(signal.SIGTERM)
            platform.procs[name].wait(timeout=60)
            del platform.procs[name]
        status, waiting = upload(platform, 5000)
        ok &= status == 200
        started = time.time()
        jobs = [voice_job(platform, wav) for _ in range(args.voice)]
        flowed = wait_for("voice jobs with the documents pool stopped",
                          lambda: all(voice_done(platform, j) for j in jobs), 120)
        print(f"voice jobs with the documents pool stopped: {'all complete' if flowed else 'STUCK'} "
              f"in {time.time() - started:.1f} s; the document waits: {documents_done(pg, [waiting]) == 0}")
        ok &= flowed and documents_done(pg, [waiting]) == 0
        unserved = wait_for("the documents queue shown unserved",
                            lambda: live(platform, "translate-document") == 0, 10 * args.heartbeat)
        auth = "Basic " + base64.b64encode(f"ops:{admin}".encode()).decode()
        _, page = call(platform, "GET", "/admin/ui", auth=auth)
        shown = b"0 (jobs wait)" in page
        print(f"/metrics: tolk_workers_live translate-document 0: {unserved}; dashboard marks it: {shown}")
        ok &= unserved and shown

        platform.spawn("worker-documents-3", "worker", "--queues", "documents")
        taken = wait_for("the waiting document taken by a new worker",
                         lambda: documents_done(pg, [waiting]) == 1, 120)
        print(f"a documents worker added: the waiting document {'finished' if taken else 'STILL WAITS'}")
        ok &= taken
    finally:
        exited = platform.exited()
        platform.stop_all()
        redis.terminate()
        pg.stop("immediate")
    if exited:
        print(f"processes that exited on their own: {exited}")
    ok &= not exited
    if ok:
        shutil.rmtree(root, ignore_errors=True)
        print("pools drill: passed")
    else:
        print(f"pools drill: FAILED; logs kept in {root}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
