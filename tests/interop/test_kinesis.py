"""The Kinesis source against moto's Kinesis server (the kinesis_endpoint
session fixture, tests/kinesis/server.py): metadata columns, dead letters,
resume from the table's sequence numbers, exactly-once under SIGKILL while
the stream is resharded (split and merge), and credentials from the
container endpoint. PyIceberg is the oracle."""
import http.server
import json
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

from conftest import floe_bin


def stream_name(tmp_path, what):
    return f"{what}-{abs(hash(str(tmp_path))) % 10**8}"


def write_cfg(path: Path, pipeline, source: dict, table: dict, interval="1s"):
    doc = {"pipeline.name": pipeline, "execution.checkpointing.interval": interval,
           "parallelism.default": 2, "sources": [source], "tables": [table]}
    path.write_text(json.dumps(doc, indent=1))
    return path


def kinesis_source(ep, stream, **kw):
    s = {"name": "k", "type": "kinesis", "stream": stream, "aws.endpoint": ep.url,
         "aws.region": "us-east-1", "scan.stream.initpos": "TRIM_HORIZON",
         "scan.shard.getrecords.intervalmillis": 100,
         "scan.shard.discovery.intervalmillis": 1000}
    s.update(kw)
    return s


class Run:
    def __init__(self, floe, cfg: Path, tag: str, env):
        self.log = cfg.parent / f"{tag}.log"
        self.out = open(self.log, "ab")
        self.p = subprocess.Popen([floe_bin(), "--dir", str(floe.root), "run", str(cfg)],
                                  stdout=self.out, stderr=subprocess.STDOUT, cwd=cfg.parent,
                                  env=env)

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        rc = self.p.wait(timeout=120)
        self.out.close()
        return rc

    def text(self):
        return self.log.read_text(errors="replace")


def put(client, stream, ids, bad=()):
    recs = [{"Data": json.dumps({"id": i}).encode(), "PartitionKey": f"k{i}"} for i in ids]
    recs += [{"Data": b, "PartitionKey": "bad"} for b in bad]
    for k in range(0, len(recs), 500):
        r = client.put_records(StreamName=stream, Records=recs[k:k + 500])
        assert r["FailedRecordCount"] == 0


def table_ids(floe, ident):
    try:
        t = floe.pyiceberg_catalog().load_table(ident)
    except Exception:
        return []
    return t.scan(selected_fields=("id",)).to_arrow()["id"].to_pylist()


def wait_rows(floe, ident, total, run, timeout=180):
    deadline = time.time() + timeout
    n = -1
    while time.time() < deadline:
        n = len(table_ids(floe, ident))
        if n >= total:
            return n
        assert run.p.poll() is None, f"floe stopped ({run.p.returncode}):\n{run.text()[-3000:]}"
        time.sleep(0.5)
    raise AssertionError(f"{ident}: {n} rows after {timeout}s, waiting for {total}:\n"
                         f"{run.text()[-3000:]}")


def last_offsets(floe, ident):
    t = floe.pyiceberg_catalog().load_table(ident)
    return json.loads(t.current_snapshot().summary.additional_properties["floe.source-offsets"])


def test_kinesis_metadata_dead_letters_and_resume(floe, kinesis_endpoint, tmp_path):
    """Records of a 2-shard stream with their metadata columns; an
    undecodable one goes to the dead letters naming its shard; a restart
    resumes after the sequence numbers the table recorded."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "meta")
    kc.create_stream(StreamName=name, ShardCount=2)
    put(kc, name, range(0, 200), bad=[b"not json"])
    cfg = write_cfg(tmp_path / "p.yaml", "kmeta", kinesis_source(
        ep, name, **{"metadata.shard-id": "shard", "metadata.sequence-number": "seq",
                     "metadata.timestamp": "ts", "metadata.key": "pk", "metadata.stream": "st"}),
        {"name": "db.kmeta",
         "schema": "id long not null, shard string, seq string, ts timestamptz, pk string, "
                   "st string"})
    r = Run(floe, cfg, "run1", ep.env())
    wait_rows(floe, "db.kmeta", 200, r)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    rows = floe.pyiceberg_catalog().load_table("db.kmeta").scan().to_arrow().to_pylist()
    shards = {s["ShardId"] for s in kc.list_shards(StreamName=name)["Shards"]}
    assert {x["shard"] for x in rows} == shards
    assert all(x["st"] == name and x["pk"] == f"k{x['id']}" and x["ts"] is not None for x in rows)
    # the sequence numbers are the stream's: read them back with boto3
    got = {}
    for sh in shards:
        it = kc.get_shard_iterator(StreamName=name, ShardId=sh,
                                   ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        for rec in kc.get_records(ShardIterator=it, Limit=10000)["Records"]:
            got[rec["SequenceNumber"], sh] = rec["Data"]
    for x in rows:
        assert json.loads(got[x["seq"], x["shard"]])["id"] == x["id"]
    dead = [json.loads(line) for line in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert len(dead) == 1 and dead[0]["record"] == "not json"
    assert dead[0]["split"].startswith(f"kinesis:{name}:shardId-") and "JSON" in dead[0]["reason"]
    assert dead[0]["stream"] == name and dead[0]["split"].endswith(dead[0]["shard"])
    assert dead[0]["sequence-number"] in {q for q, sh in got if sh == dead[0]["shard"]}
    offs = last_offsets(floe, "db.kmeta")
    assert sum(v["n"] for v in offs.values()) == 201
    assert all(v["seq"].isdigit() for v in offs.values())
    # more records; the restart reads only those
    put(kc, name, range(200, 300))
    r = Run(floe, cfg, "run2", ep.env())
    wait_rows(floe, "db.kmeta", 300, r)
    time.sleep(1.5)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    ids = table_ids(floe, "db.kmeta")
    assert sorted(ids) == list(range(300))
    # scan.stream.initpos LATEST (the default): only what comes after the start
    src = kinesis_source(ep, name)
    del src["scan.stream.initpos"]
    cfg = write_cfg(tmp_path / "latest.yaml", "klatest", src,
                    {"name": "db.klatest", "schema": "id long not null"})
    r = Run(floe, cfg, "latest", ep.env())
    time.sleep(4)  # the shards listed and their LATEST iterators taken
    put(kc, name, range(1000, 1040))
    wait_rows(floe, "db.klatest", 40, r)
    time.sleep(1.5)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    assert sorted(table_ids(floe, "db.klatest")) == list(range(1000, 1040))
    # the stream deleted under a running pipeline: it stops with a clear error
    r = Run(floe, cfg, "deleted", ep.env())
    time.sleep(2)
    kc.delete_stream(StreamName=name)
    rc = r.p.wait(timeout=90)
    r.out.close()
    assert rc not in (0, -signal.SIGKILL), r.text()[-3000:]
    assert f"kinesis stream '{name}' does not exist" in r.text(), r.text()[-3000:]


class Producer(threading.Thread):
    def __init__(self, client, stream, total, chunk=500, pause=0.1):
        super().__init__(daemon=True)
        self.c, self.stream, self.total, self.chunk, self.pause = client, stream, total, chunk, pause
        self.sent = 0
        self.error = None

    def run(self):
        try:
            while self.sent < self.total:
                n = min(self.chunk, self.total - self.sent)
                put(self.c, self.stream, range(self.sent, self.sent + n))
                self.sent += n
                time.sleep(self.pause)
        except Exception as e:  # reported by the test
            self.error = e


def open_shards(kc, name):
    return sorted((s for s in kc.list_shards(StreamName=name)["Shards"]
                   if "EndingSequenceNumber" not in s["SequenceNumberRange"]),
                  key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))


def test_kinesis_reshard_sigkill_exactly_once(floe, kinesis_endpoint, tmp_path):
    """A 4-shard stream split and merged while floe is killed with SIGKILL
    at random 10 times and the producer keeps writing: every record exactly
    once, and every closed shard recorded as read to its end."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "reshard")
    total = 24000
    kc.create_stream(StreamName=name, ShardCount=4)
    prod = Producer(ep.client(), name, total, chunk=400, pause=0.15)
    prod.start()
    cfg = write_cfg(tmp_path / "p.yaml", "kreshard", kinesis_source(ep, name),
                    {"name": "db.kreshard", "schema": "id long not null"})
    rnd = random.Random(4321)
    for k in range(10):
        r = Run(floe, cfg, f"run{k}", ep.env())
        time.sleep(rnd.uniform(1.5, 3.5))
        if k == 2:  # split the first open shard in the middle of its range
            s = open_shards(kc, name)[0]
            lo, hi = int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"])
            kc.split_shard(StreamName=name, ShardToSplit=s["ShardId"],
                           NewStartingHashKey=str((lo + hi) // 2))
        if k == 5:  # merge the last two open shards
            a, b = open_shards(kc, name)[-2:]
            kc.merge_shards(StreamName=name, ShardToMerge=a["ShardId"],
                            AdjacentShardToMerge=b["ShardId"])
        rc = r.kill()
        assert rc == -signal.SIGKILL, f"floe exited on its own ({rc}):\n{r.text()[-3000:]}"
    prod.join(300)
    assert prod.error is None, prod.error
    r = Run(floe, cfg, "last", ep.env())
    wait_rows(floe, "db.kreshard", total, r)
    # a checkpoint after the end records SHARD_END of the parents (polled: how
    # soon depends on the machine's load, never on a fixed sleep)
    closed = [(f"kinesis:{name}:{s['ShardId']}", s["SequenceNumberRange"]["EndingSequenceNumber"])
              for s in kc.list_shards(StreamName=name)["Shards"]
              if "EndingSequenceNumber" in s["SequenceNumberRange"]]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        offs = last_offsets(floe, "db.kreshard")
        if all(offs.get(k, {}).get("seq") in ("SHARD_END", end) for k, end in closed):
            break
        time.sleep(0.5)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    ids = table_ids(floe, "db.kreshard")
    assert len(ids) == total, f"{len(ids)} rows for {total} records"
    assert set(ids) == set(range(total))
    shards = kc.list_shards(StreamName=name)["Shards"]
    assert len(shards) == 4 + 2 + 1
    offs = last_offsets(floe, "db.kreshard")
    for s in shards:
        # an open shard that got no record yet may have no offset; the sum
        # below still counts every record once
        if "EndingSequenceNumber" in s["SequenceNumberRange"]:
            o = offs[f"kinesis:{name}:{s['ShardId']}"]
            # read to its end: marked so, or positioned at its last record
            assert o["seq"] in ("SHARD_END", s["SequenceNumberRange"]["EndingSequenceNumber"]), (s, o)
    # a shard that got no record may be recorded as a bare 0 (no sequence number yet)
    assert all(isinstance(o, dict) or o == 0 for o in offs.values()), offs
    assert sum(o["n"] for o in offs.values() if isinstance(o, dict)) == total


def test_kinesis_credentials_chain(floe, kinesis_endpoint, tmp_path):
    """No keys in the environment: the credentials come from the container
    endpoint (with its authorization token), from web identity (STS), from a
    profile of the shared credentials file; with none, a clear error."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "creds")
    kc.create_stream(StreamName=name, ShardCount=1)
    put(kc, name, range(50))
    hits = []

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append((self.path, self.headers.get("Authorization")))
            body = json.dumps({"AccessKeyId": "AKIDCONTAINER", "SecretAccessKey": "s3cret",
                               "Token": "tok", "Expiration": "2099-01-01T00:00:00Z"}).encode()
            self.send_response(200 if self.headers.get("Authorization") == "let-me-in" else 403)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = ep.env()
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        env.pop(k, None)
    env["HOME"] = str(tmp_path)
    env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = f"http://127.0.0.1:{srv.server_port}/creds"
    env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "let-me-in"
    cfg = write_cfg(tmp_path / "p.yaml", "kcreds", kinesis_source(ep, name),
                    {"name": "db.kcreds", "schema": "id long not null"})
    try:
        r = Run(floe, cfg, "run", env)
        wait_rows(floe, "db.kcreds", 50, r)
        assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    finally:
        srv.shutdown()
    assert hits and hits[0] == ("/creds", "let-me-in")
    del env["AWS_CONTAINER_CREDENTIALS_FULL_URI"]

    def provider(extra):
        """Run briefly with -v; which provider gave the credentials."""
        e = dict(env, **extra)
        p = subprocess.Popen([floe_bin(), "-v", "--dir", str(floe.root), "run", str(cfg)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e,
                             cwd=tmp_path)
        time.sleep(2.5)
        p.send_signal(signal.SIGTERM)
        out = p.communicate(timeout=60)[0]
        assert p.returncode == 0, out[-2000:]
        return [line for line in out.splitlines() if "AWS credentials from" in line]

    # web identity: STS AssumeRoleWithWebIdentity (moto's STS on the same endpoint)
    (tmp_path / "token").write_text("eyJhbGciOi.fake.jwt\n")
    got = provider({"AWS_WEB_IDENTITY_TOKEN_FILE": str(tmp_path / "token"),
                    "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/floe",
                    "AWS_ENDPOINT_URL_STS": ep.url})
    assert got and "web identity" in got[0], got
    # a profile of the shared credentials file
    (tmp_path / "creds.ini").write_text("[default]\naws_access_key_id = AKIDDEF\n"
                                        "[ingest]\naws_access_key_id = AKIDINGEST\n"
                                        "aws_secret_access_key = s3cret\n")
    got = provider({"AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "creds.ini"),
                    "AWS_PROFILE": "ingest"})
    assert got and "shared credentials file" in got[0], got
    # and without any credentials: a clear error naming the chain
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg)], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=60)
    assert p.returncode != 0
    assert "no AWS credentials" in p.stderr, p.stderr


class Faults:
    """A proxy in front of the endpoint that throttles every other GetRecords
    (ProvisionedThroughputExceededException), expires one iterator, and in
    'deny' mode refuses every call as AWS does bad credentials."""

    def __init__(self, target):
        import urllib.parse

        self.target = urllib.parse.urlparse(target)
        self.calls = {}
        self.injected = {}
        self.deny = False
        faults = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                op = self.headers.get("X-Amz-Target", "").split(".")[-1]
                n = faults.calls[op] = faults.calls.get(op, 0) + 1
                err = None
                if faults.deny:
                    err = "UnrecognizedClientException"
                elif op == "GetRecords" and n == 5:
                    err = "ExpiredIteratorException"
                elif op == "GetRecords" and n % 2 == 0:
                    err = "ProvisionedThroughputExceededException"
                if err:
                    faults.injected[err] = faults.injected.get(err, 0) + 1
                    out = json.dumps({"__type": err, "message": "injected"}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/x-amz-json-1.1")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                    return
                import http.client

                c = http.client.HTTPConnection(faults.target.hostname, faults.target.port)
                hdrs = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                c.request("POST", "/", body=body, headers=hdrs)
                r = c.getresponse()
                out = r.read()
                self.send_response(r.status)
                self.send_header("Content-Type", r.getheader("Content-Type", ""))
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                c.close()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.srv.server_port}"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()


def test_kinesis_throttling_expiry_and_auth_failure(floe, kinesis_endpoint, tmp_path):
    """Throttled and expired GetRecords calls are retried (every record
    exactly once); refused credentials stop the pipeline with AWS's error."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "faults")
    kc.create_stream(StreamName=name, ShardCount=1)
    put(kc, name, range(0, 300))
    f = Faults(ep.url)
    src = kinesis_source(ep, name, **{"scan.shard.getrecords.maxrecordcount": 40})
    src["aws.endpoint"] = f.url
    cfg = write_cfg(tmp_path / "p.yaml", "kfaults", src, {"name": "db.kfaults", "schema": "id long not null"})
    import socket
    import urllib.request

    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    doc = json.loads(cfg.read_text())
    doc["metrics.port"] = port
    cfg.write_text(json.dumps(doc))
    try:
        r = Run(floe, cfg, "run", ep.env())
        wait_rows(floe, "db.kfaults", 300, r)
        time.sleep(1.5)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        vals = {line.split("{")[0]: float(line.rsplit(" ", 1)[1])
                for line in text.splitlines() if line.startswith("floe_kinesis_")}
        assert vals["floe_kinesis_shards_reading"] == 1, text
        assert vals["floe_kinesis_retried_calls_total"] >= 3, text
        assert vals["floe_kinesis_shard_listings_total"] >= 1, text
        assert vals["floe_kinesis_millis_behind_latest"] == 0, text
        assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
        assert sorted(table_ids(floe, "db.kfaults")) == list(range(300))
        assert f.injected.get("ProvisionedThroughputExceededException", 0) >= 3, f.injected
        assert f.injected.get("ExpiredIteratorException") == 1, f.injected
        f.deny = True
        p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg)],
                           capture_output=True, text=True, env=ep.env(), cwd=tmp_path, timeout=120)
        assert p.returncode != 0
        assert "UnrecognizedClientException" in p.stderr, p.stderr[-2000:]
    finally:
        f.srv.shutdown()


def test_kinesis_same_pipeline_id_twice(floe, kinesis_endpoint, tmp_path):
    """Two processes started with the same pipeline id both read every shard
    (Kinesis has no consumer group): the whole-pipeline fence stops one of
    them at its first commit after the other's; nothing is duplicated."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "twice")
    kc.create_stream(StreamName=name, ShardCount=2)
    total = 3000
    prod = Producer(ep.client(), name, total, chunk=300, pause=0.4)
    prod.start()
    cfg = write_cfg(tmp_path / "p.yaml", "ktwice", kinesis_source(ep, name),
                    {"name": "db.ktwice", "schema": "id long not null"})
    a, b = Run(floe, cfg, "a", ep.env()), Run(floe, cfg, "b", ep.env())
    prod.join(120)
    assert prod.error is None, prod.error
    deadline = time.time() + 180
    while len(table_ids(floe, "db.ktwice")) < total:
        assert a.p.poll() is None or b.p.poll() is None, (a.text()[-2000:], b.text()[-2000:])
        assert time.time() < deadline, "the records did not all arrive"
        time.sleep(0.5)
    time.sleep(3)
    stopped = [r for r in (a, b) if r.p.poll() is not None]
    assert len(stopped) == 1, (a.text()[-2000:], b.text()[-2000:])
    assert stopped[0].p.returncode != 0 and "is fenced" in stopped[0].text(), stopped[0].text()[-3000:]
    survivor = a if stopped[0] is b else b
    assert survivor.kill(signal.SIGTERM) == 0, survivor.text()[-3000:]
    stopped[0].out.close()
    ids = table_ids(floe, "db.ktwice")
    assert len(ids) == total and set(ids) == set(range(total))


def test_kinesis_shard_end_committed_without_records(floe, kinesis_endpoint, tmp_path):
    """A shard closed by a split with no record after the split: its
    SHARD_END is committed by a checkpoint that has no rows (an offset-only
    snapshot, fenced like every pipeline commit), and a restart reads
    nothing twice."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "send")
    kc.create_stream(StreamName=name, ShardCount=1)
    put(kc, name, range(100))
    cfg = write_cfg(tmp_path / "p.yaml", "ksend", kinesis_source(ep, name),
                    {"name": "db.ksend", "schema": "id long not null"}, interval="300ms")
    r = Run(floe, cfg, "run1", ep.env())
    wait_rows(floe, "db.ksend", 100, r)
    parent = kc.list_shards(StreamName=name)["Shards"][0]
    lo, hi = (int(parent["HashKeyRange"]["StartingHashKey"]),
              int(parent["HashKeyRange"]["EndingHashKey"]))
    kc.split_shard(StreamName=name, ShardToSplit=parent["ShardId"],
                   NewStartingHashKey=str((lo + hi) // 2))
    key = f"kinesis:{name}:{parent['ShardId']}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if last_offsets(floe, "db.ksend").get(key, {}).get("seq") == "SHARD_END":
            break
        assert r.p.poll() is None, r.text()[-3000:]
        time.sleep(0.3)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    t = floe.pyiceberg_catalog().load_table("db.ksend")
    snap = t.current_snapshot()
    offs = json.loads(snap.summary.additional_properties["floe.source-offsets"])
    assert offs[key]["seq"] == "SHARD_END", offs
    assert int(snap.summary.additional_properties.get("added-data-files", 0)) == 0
    assert snap.summary.additional_properties["floe.pipeline-id"] == "ksend"
    # an idle pipeline does not commit again and again
    n_snaps = len(t.metadata.snapshots)
    r = Run(floe, cfg, "run2", ep.env())
    time.sleep(2.5)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    t = floe.pyiceberg_catalog().load_table("db.ksend")
    assert len(t.metadata.snapshots) <= n_snaps + 1
    put(kc, name, range(100, 150))
    r = Run(floe, cfg, "run3", ep.env())
    wait_rows(floe, "db.ksend", 150, r)
    time.sleep(1)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    assert sorted(table_ids(floe, "db.ksend")) == list(range(150))


def snapshot_offsets(floe, ident):
    r = subprocess.run([floe_bin(), "--dir", str(floe.root), "inspect", ident, "snapshots",
                        "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        return []
    return [json.loads(json.loads(x)["summary"].get("floe.source-offsets", "{}"))
            for x in r.stdout.splitlines() if x.strip()]


def test_hybrid_source_iceberg_then_kinesis_exactly_once(floe, kinesis_endpoint, tmp_path):
    """A Kinesis pipeline filled db.hist; a hybrid source bootstraps db.out
    from its table scan, then reads the stream after the sequence numbers
    db.hist recorded: killed inside the bootstrap and after the switch,
    every record is in db.out once."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "hybrid")
    kc.create_stream(StreamName=name, ShardCount=2)
    put(kc, name, range(0, 1500))
    hist = write_cfg(tmp_path / "hist.yaml", "khist", kinesis_source(ep, name),
                     {"name": "db.hist", "schema": "id long not null"})
    r = Run(floe, hist, "hist", ep.env())
    wait_rows(floe, "db.hist", 1500, r)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    put(kc, name, range(1500, 2000))  # after db.hist's last commit
    src = kinesis_source(ep, name)
    del src["scan.stream.initpos"]  # every shard has a recorded position
    src.update({"name": "all", "type": "hybrid", "source-table": "db.hist", "then": "kinesis",
                "block-size": "4KiB"})
    cfg = write_cfg(tmp_path / "h.yaml", "kbackfill", src,
                    {"name": "db.out", "schema": "id long not null"}, interval="20ms")

    def kill_when(cond, tag):
        run = Run(floe, cfg, tag, ep.env())
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and run.p.poll() is None:
            offs = snapshot_offsets(floe, "db.out")
            if offs and cond(offs[-1]):
                break
            time.sleep(0.02)
        assert run.kill() == -signal.SIGKILL, run.text()[-3000:]
        return snapshot_offsets(floe, "db.out")

    def read(o):
        return sum(v["n"] for k, v in o.items() if k.startswith("kinesis:"))

    offs = kill_when(lambda o: True, "boot")
    assert offs and offs[-1]["@hybrid-phase"] in (0, 1), offs[-1:]
    offs = kill_when(lambda o: o["@hybrid-phase"] == 1 and read(o) > 1500, "switched")
    assert offs[-1]["@hybrid-phase"] == 1 and read(offs[-1]) > 1500, offs[-1]
    put(kc, name, range(2000, 2300))
    r = Run(floe, cfg, "end", ep.env())
    wait_rows(floe, "db.out", 2300, r)
    time.sleep(0.5)  # nothing more arrives
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    ids = table_ids(floe, "db.out")
    assert len(ids) == 2300 and set(ids) == set(range(2300))
