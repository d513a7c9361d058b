#!/usr/bin/env python3
"""Failure drill: run the platform on throwaway servers and break things under load.

    scripts/drill.py [--documents 60] [--heartbeat 2] [--outage 20] [--tolk PATH]

What it does, all on this machine (loopback only, nothing shared with other
databases):

1. starts a private PostgreSQL cluster (a temporary data directory, a free
   port) and a private Redis, then `tolk api`, two `tolk worker` processes and a
   `tolk scheduler` against them;
2. uploads the documents from a background thread while it
   - kills one worker with SIGKILL (and starts a replacement),
   - restarts PostgreSQL (fast shutdown, back after 3 s),
   - stops PostgreSQL for `--outage` seconds,
   - stops Redis for good;
3. waits until every document is finished, then prints:
   uploaded / done / error / lost / doubled / billed twice / false 500s, and the
   recovery time after the database came back (first document finished, and
   every queue's worker loops live again in /metrics).

Exit status 0 when nothing was lost, doubled or billed twice, and no upload
got a 500. Needs the same packages as the tests (scripts/setup.sh) and a
built `tolk` (default: $CARGO_TARGET_DIR/release/tolk, building it if missing).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

QUEUES = ["translate-document", "evaluate-quality", "voice-translate", "import-tmx", "export-tmx"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin():
    versions = sorted(
        (int(v), v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit()
    )
    if not versions:
        sys.exit("drill: no PostgreSQL server under /usr/lib/postgresql (scripts/setup.sh)")
    return f"/usr/lib/postgresql/{versions[-1][1]}/bin"


class Postgres:
    """A private cluster, run as the postgres user when this is root."""

    def __init__(self, root):
        self.dir = os.path.join(root, "pg")
        self.port = free_port()
        self.bin = pg_bin()
        os.makedirs(self.dir)
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
            shutil.chown(self.dir, "postgres", "postgres")
        self.run("initdb", "-D", f"{self.dir}/data", "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
        self.start()

    def run(self, program, *args):
        cmd = [f"{self.bin}/{program}", *args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir)

    def start(self):
        opts = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir} -c max_connections=200"
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/server.log", "-o", opts, "-w", "start")

    def stop(self, mode="fast"):
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-m", mode, "-w", "stop")

    def url(self, db):
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def sql(self, query):
        out = subprocess.run(
            ["psql", "-X", "-q", "-At", self.url("tolk"), "-c", query],
            check=True, capture_output=True, text=True,
        )
        return out.stdout.strip()


class Platform:
    def __init__(self, tolk, root, pg, redis_port, heartbeat):
        self.tolk, self.root = tolk, root
        self.port = free_port()
        self.env = dict(
            os.environ,
            DATABASE_URL=pg.url("tolk"),
            REDIS_URL=f"redis://127.0.0.1:{redis_port}",
            TOLK_OBJECT_STORE=os.path.join(root, "objects"),
            TOLK_WORKER_HEARTBEAT_SECS=str(heartbeat),
            TOLK_APERTIUM_PIPELINES="1",
            RUST_LOG="info,sqlx=warn",
        )
        self.procs = {}
        subprocess.run([tolk, "migrate"], env=self.env, check=True, stderr=subprocess.DEVNULL)
        self.key = subprocess.run(
            [tolk, "admin", "create-key", "--label", "drill"], env=self.env, check=True,
            capture_output=True, text=True,
        ).stdout.strip()

    def spawn(self, name, *args):
        log = open(os.path.join(self.root, f"{name}.log"), "w")
        self.procs[name] = subprocess.Popen([self.tolk, *args], env=self.env, stdout=log, stderr=log)

    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def wait_up(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.base() + "/healthz", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        sys.exit("drill: the API did not come up")

    def exited(self):
        return {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}

    def stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=40)
            except subprocess.TimeoutExpired:
                p.kill()


def upload(platform, i):
    """POST /v2/document; returns (status, document_id or None)."""
    boundary = uuid.uuid4().hex
    text = "".join(f"The dog number {i} runs in the park. The house {j} has a garden.\n\n" for j in range(30))
    parts = [
        ("target_lang", None, b"ES"),
        ("source_lang", None, b"EN"),
        ("file", f"drill-{i}.txt", text.encode()),
    ]
    body = b""
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        body += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    req = urllib.request.Request(
        platform.base() + "/v2/document", data=body, method="POST",
        headers={
            "Authorization": f"DeepL-Auth-Key {platform.key}",
            "Content-Type": f"multipart/form-data; boundary={boundary}",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.load(res).get("document_id")
    except urllib.error.HTTPError as e:
        return e.code, None
    except OSError:
        return 0, None


def metrics(platform):
    try:
        with urllib.request.urlopen(platform.base() + "/metrics", timeout=3) as res:
            return res.read().decode()
    except OSError:
        return ""


def recovery(pg, platform, back):
    """Seconds from `back` until a document finished, and until every queue had
    two live worker loops again (polled; None when not within a minute)."""
    first_done = live_again = None
    deadline = back + 60
    while time.time() < deadline and (first_done is None or live_again is None):
        if first_done is None:
            try:
                after = pg.sql(f"SELECT count(*) FROM documents WHERE finished_at > to_timestamp({back})")
                if int(after or 0) > 0:
                    first_done = time.time() - back
            except subprocess.CalledProcessError:
                pass
        if live_again is None:
            text = metrics(platform)
            if text and all(f'tolk_workers_live{{queue="{q}"}} 2' in text for q in QUEUES):
                live_again = time.time() - back
        time.sleep(0.1)
    return first_done, live_again


def tolk_binary(given):
    """The tolk binary: `given`, else the release build (built when missing)."""
    if given:
        return given
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/tolk-target"))
    tolk = os.path.join(target, "release", "tolk")
    if not os.path.exists(tolk):
        subprocess.run(["cargo", "build", "--release", "--bin", "tolk"], cwd=repo, check=True,
                       env=dict(os.environ, CARGO_TARGET_DIR=target, SQLX_OFFLINE="true"))
    return tolk


def servers(root):
    """A private PostgreSQL cluster with an empty database `tolk`, and a
    private Redis: (postgres, redis process, redis port)."""
    pg = Postgres(root)
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"],
                             stdout=subprocess.DEVNULL)
    subprocess.run(["psql", "-X", "-q", pg.url("postgres"), "-c", "CREATE DATABASE tolk"], check=True)
    return pg, redis, redis_port


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--documents", type=int, default=120, help="at most this many, one every 0.5 s")
    ap.add_argument("--heartbeat", type=int, default=2, help="TOLK_WORKER_HEARTBEAT_SECS")
    ap.add_argument("--outage", type=int, default=20, help="seconds PostgreSQL stays down")
    ap.add_argument("--tolk", help="the tolk binary")
    args = ap.parse_args()

    tolk = tolk_binary(args.tolk)
    root = tempfile.mkdtemp(prefix="tolk-drill-")
    pg, redis, redis_port = servers(root)
    platform = Platform(tolk, root, pg, redis_port, args.heartbeat)
    platform.spawn("api", "api", "--listen", f"127.0.0.1:{platform.port}", "--no-migrate")
    platform.spawn("worker-1", "worker")
    platform.spawn("worker-2", "worker")
    platform.spawn("scheduler", "scheduler", "--tick-secs", "1")
    platform.wait_up()
    print(f"drill: platform on {platform.base()}, PostgreSQL :{pg.port}, Redis :{redis_port}, logs in {root}")

    answers = []  # (status, document_id)
    stop = threading.Event()

    def uploader():
        # One document every half second for the whole drill, outage included.
        for i in range(args.documents):
            if stop.is_set():
                return
            answers.append(upload(platform, i))
            time.sleep(0.5)

    thread = threading.Thread(target=uploader)
    thread.start()
    time.sleep(3)
    print("drill: kill -9 worker-1 (a replacement starts)")
    platform.procs["worker-1"].kill()
    platform.procs["worker-1"].wait()
    del platform.procs["worker-1"]
    platform.spawn("worker-3", "worker")
    time.sleep(2)
    print("drill: PostgreSQL restart (fast shutdown, back after 3 s)")
    pg.stop()
    time.sleep(3)
    pg.start()
    time.sleep(3)
    print(f"drill: PostgreSQL down for {args.outage} s, Redis stopped for good")
    redis.terminate()
    pg.stop()
    time.sleep(args.outage)
    pg.start()
    back = time.time()
    first_done, live_again = recovery(pg, platform, back)
    time.sleep(max(0.0, back + 10 - time.time()))
    stop.set()
    thread.join()

    uploaded = [d for s, d in answers if s == 200 and d]
    false_500 = sum(1 for s, _ in answers if s == 500)
    refused = sum(1 for s, _ in answers if s == 503)
    deadline = time.time() + 300
    while time.time() < deadline:
        rows = pg.sql("SELECT status, count(*) FROM documents GROUP BY status")
        counts = dict(line.split("|") for line in rows.splitlines() if line)
        if int(counts.get("done", 0)) + int(counts.get("error", 0)) >= len(uploaded):
            break
        time.sleep(0.5)

    ids = ",".join(f"'{d}'" for d in uploaded) or "''"
    done = int(pg.sql(f"SELECT count(*) FROM documents WHERE id IN ({ids}) AND status = 'done'"))
    error = int(pg.sql(f"SELECT count(*) FROM documents WHERE id IN ({ids}) AND status = 'error'"))
    present = int(pg.sql(f"SELECT count(*) FROM documents WHERE id IN ({ids})"))
    lost = len(uploaded) - present + (present - done - error)
    billed_twice = int(pg.sql(
        f"SELECT count(*) FROM (SELECT document_id FROM usage_events WHERE document_id IN ({ids}) "
        "AND amount > 0 GROUP BY document_id HAVING count(*) > 1) t"))
    logs = "".join(
        open(os.path.join(root, f), errors="replace").read() for f in os.listdir(root) if f.startswith("worker")
    )
    # Translated twice: more "document done" lines than runs that found it
    # already finished (a job whose acknowledgement was lost runs again, and
    # must then do nothing).
    lines = logs.splitlines()
    doubled = sum(
        1 for d in uploaded
        if sum(1 for line in lines if d in line and "document done" in line)
        - sum(1 for line in lines if d in line and "already finished" in line) > 1
    )
    exited = platform.exited()
    platform.stop_all()
    pg.stop("immediate")
    print()
    print(f"uploaded      {len(uploaded)} of {args.documents} (503 while the database was down: {refused})")
    print(f"done          {done}")
    print(f"error         {error}")
    print(f"lost          {lost}")
    print(f"doubled       {doubled}")
    print(f"billed twice  {billed_twice}")
    print(f"false 500s    {false_500}")
    print(f"recovery      first document done {first_done and round(first_done, 1)} s after the database came back; "
          f"all loops live again after {live_again and round(live_again, 1)} s "
          f"(2 heartbeat periods = {2 * args.heartbeat} s)")
    print(f"processes that exited on their own: {exited or 'none'}")
    ok = lost == 0 and doubled == 0 and billed_twice == 0 and false_500 == 0 and not exited
    if ok:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"drill: FAILED; logs kept in {root}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
