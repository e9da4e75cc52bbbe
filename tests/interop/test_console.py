"""The live web console of a running pipeline (GET /console on the metrics
port), loaded by headless Chromium from Debian over the DevTools protocol: after
a few seconds of polling every panel is populated (checkpoints, sources, dead
letters, and per table commit durations, the latest dead-letter reason, records/s and bytes/s, files per
commit, the file size histogram, delete files, maintenance and its lock); a
screenshot is kept as an artifact. /api/metrics equals /metrics."""
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import websocket

from conftest import ROOT

PIPELINE = """
pipeline: {{name: live}}
execution.checkpointing.interval: 1s
parallelism.default: 2
metrics.port: {port}
sources:
  - name: gen
    type: generator
    rows-per-second: 2000
    schema: "id long not null, v string"
    fields.v.values: "1,2,3,4,5,6,7,8,9,oops"
tables:
  - name: db.live
    source: gen
    schema: "id long not null, v int"
    partition-by: "bucket(4, id)"
    maintenance:
      mode: auto
      schedule: {{commit-count: 3}}
      rate-limit: 1s
"""

PANELS = ["panel-checkpoints", "panel-sources", "panel-deadletters", "panel-commits",
          "panel-throughput", "panel-files", "panel-sizes", "panel-deletes",
          "panel-deadletters-table", "panel-maintenance", "panel-lock"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def parse_text(text):
    """Prometheus text exposition: {(sample name, labels): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        assert m, line
        labels = tuple(sorted(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or "")))
        v = m.group(4)
        out[(m.group(1), labels)] = v if v in ("+Inf", "-Inf", "NaN") else float(v)
    return out


def parse_api(doc):
    out = {}
    for fam in doc["metrics"]:
        for s in fam["samples"]:
            out[(s["name"], tuple(sorted(s["labels"].items())))] = (
                s["value"] if isinstance(s["value"], str) else float(s["value"]))
    return out


class Cdp:
    """Just enough of the DevTools protocol: navigate, evaluate, screenshot."""

    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=30)
        self.n = 0

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.n:
                assert "error" not in msg, msg
                return msg["result"]


def start_chromium(tmp_path):
    """Headless Chromium from Debian with the DevTools protocol on a free
    port: (the process, a Cdp on its first page)."""
    chromium = shutil.which("chromium")
    assert chromium, "chromium is not installed (scripts/setup installs it)"
    dbg = free_port()
    browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                                "--disable-dev-shm-usage", f"--remote-debugging-port={dbg}",
                                f"--user-data-dir={tmp_path / 'chrome'}", "--window-size=1300,1400",
                                "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while True:
        try:
            pages = [p for p in json.loads(get(f"http://127.0.0.1:{dbg}/json")) if p["type"] == "page"]
            if pages:
                break
        except OSError:
            pass
        if browser.poll() is not None or time.time() >= deadline:
            browser.kill()
            raise AssertionError("chromium did not start")
        time.sleep(0.3)
    return browser, Cdp(pages[0]["webSocketDebuggerUrl"])


def keep_screenshot(cdp, name):
    shot = base64.b64decode(cdp.call("Page.captureScreenshot", format="png")["data"])
    artifacts = Path(os.environ.get("FLOE_ARTIFACTS", ROOT / "build" / "artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / name).write_bytes(shot)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 10000


def assert_api_equals_metrics(base):
    """/api/metrics is /metrics as JSON: same series; values equal, or between
    two scrapes around it for the series that moved meanwhile. The JSON's
    series, for further checks."""
    before = parse_text(get(base + "/metrics"))
    api = parse_api(json.loads(get(base + "/api/metrics")))
    after = parse_text(get(base + "/metrics"))
    assert set(api) == set(before) == set(after)
    for k, v in api.items():
        if before[k] == after[k]:
            assert v == before[k], k
        else:
            lo, hi = sorted((before[k], after[k]))
            assert lo <= v <= hi, (k, before[k], v, after[k])
    return api


def test_console_renders_every_panel_and_api_equals_metrics(floe, tmp_path):
    port = free_port()
    (tmp_path / "p.yaml").write_text(PIPELINE.format(port=port))
    run = subprocess.Popen([floe.bin, "--dir", str(floe.root), "run", str(tmp_path / "p.yaml")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    browser = None
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 90
        while True:
            assert run.poll() is None, run.stderr.read()
            try:
                m = parse_text(get(base + "/metrics"))
                runs = [v for (n, _), v in m.items() if n in ("floe_maintenance_runs", "floe_maintenance_runs_total")]
                if m.get(("floe_checkpoints_total", (("pipeline", "live"),)), 0) >= 3 and runs and runs[0] >= 1:
                    break
            except OSError:
                pass
            assert time.time() < deadline, "the pipeline made no checkpoints and maintenance runs"
            time.sleep(0.5)

        assert_api_equals_metrics(base)

        browser, cdp = start_chromium(tmp_path)
        cdp.call("Page.enable")
        cdp.call("Page.navigate", url=base + "/console")
        # a few real polls (one a second): rates need two
        deadline = time.time() + 30
        while True:
            time.sleep(1)
            dom = cdp.call("Runtime.evaluate", expression="document.documentElement.outerHTML")["result"]["value"]
            populated = re.findall(r'id="(panel-[a-z-]+)" data-populated="true"', dom)
            rates = re.findall(r"records/s: <b>([0-9.]+k?)</b>", dom)
            holder = 'class="v holder">holder: this pipeline' in dom  # after a run and a commit
            if set(PANELS) <= set(populated) and any(r not in ("0", "-") for r in rates) and holder:
                break
            assert time.time() < deadline, (populated, rates, holder)
        keep_screenshot(cdp, "console.png")

        assert 'data-ok="true"' in dom  # the status line: the last poll answered
        assert "<h2>db.live</h2>" in dom
        assert re.search(r"completed: <b>[1-9]", dom)
        assert dom.count('class="bar"') >= 10  # the size histogram's buckets
        assert re.search(r"runs: <b>[1-9]", dom)  # maintenance ran
        assert re.search(r"dead-lettered: <b>[1-9]", dom)  # "oops" is no int
        assert 'class="v reason">latest: ' in dom  # and why
        assert dom.count('<polyline') >= 4  # series over time
    finally:
        if browser:
            browser.terminate()
            browser.wait(timeout=30)
        run.send_signal(signal.SIGTERM)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.kill()
            raise
    assert run.returncode == 0, run.stderr.read()


# ---- a Kafka source: its topic-partitions with offsets and lag ------------------------

KAFKA_ROWS = ("JSON.stringify([...document.querySelectorAll('#panel-sources tr.tp')].map(r => "
              "[r.dataset.topic, Number(r.dataset.partition), r.querySelector('.offset').textContent, "
              "r.querySelector('.committed').textContent, r.querySelector('.lag').textContent]))")


def test_console_shows_kafka_partitions_offsets_and_lag(floe, kafka_broker, tmp_path):
    """A `floe run` reading a 3-partition topic with a backlog it cannot read
    at once: with max.partition.fetch.bytes 1 and a fetch.min.bytes no fetch
    reaches, the broker answers each fetch only after fetch.wait.max.ms
    (250 ms), with at most one record batch (10 records) a partition, so the
    backlog takes at least 5 s to read whatever the machine's speed (15-30 s
    here: the broker seems to fill one partition a fetch). The console in Chromium shows a row per
    topic-partition with its offset, the offset committed to the table and a
    lag above 0, then, once the backlog is read, the broker's end offsets
    with lag 0; /api/metrics equals /metrics, lag series included."""
    topic = f"console-{abs(hash(str(tmp_path))) % 10**8}"
    kafka_broker.create_topic(topic, 3)
    pr = kafka_broker.producer(**{"batch.num.messages": 10, "linger.ms": 20})
    for i in range(600):
        pr.produce(topic, json.dumps({"id": i}).encode(), partition=i % 3)
    pr.flush(60)
    ends = kafka_broker.end_offsets(topic)
    assert ends == {0: 200, 1: 200, 2: 200}, ends
    port = free_port()
    doc = {
        "pipeline.name": "kconsole",
        "execution.checkpointing.interval": "1s",
        "parallelism.default": 2,
        "metrics.port": port,
        "sources": [{"name": "k", "type": "kafka", "topic": topic,
                     "properties.bootstrap.servers": kafka_broker.bootstrap,
                     "scan.startup.mode": "earliest-offset",
                     "properties.max.partition.fetch.bytes": "1",
                     "properties.fetch.min.bytes": "100000000",
                     "properties.fetch.wait.max.ms": "250"}],
        "tables": [{"name": "db.k", "schema": "id long not null"}],
    }
    (tmp_path / "k.yaml").write_text(json.dumps(doc))  # JSON is YAML
    run = subprocess.Popen([floe.bin, "--dir", str(floe.root), "run", str(tmp_path / "k.yaml")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    browser = None
    base = f"http://127.0.0.1:{port}"
    lag_key = ("floe_kafka_records_lag", (("pipeline", "kconsole"), ("source", "k")))
    part_keys = {p: (("partition", str(p)), ("pipeline", "kconsole"), ("source", "k"), ("topic", topic))
                 for p in range(3)}
    try:
        browser, cdp = start_chromium(tmp_path)
        cdp.call("Page.enable")
        # a checkpoint committed while records are still to read
        deadline = time.time() + 90
        while True:
            assert run.poll() is None, run.stderr.read()
            try:
                m = parse_text(get(base + "/metrics"))
                committed = [m.get(("floe_kafka_partition_committed_offset", part_keys[p]), -1) for p in range(3)]
                if m.get(lag_key, 0) > 0 and max(committed) > 0:
                    break
            except OSError:
                pass
            assert time.time() < deadline, "no commit while the backlog lasted"
            time.sleep(0.3)

        api = assert_api_equals_metrics(base)
        for p in range(3):
            for name in ("floe_kafka_partition_records_lag", "floe_kafka_partition_offset",
                         "floe_kafka_partition_committed_offset"):
                assert (name, part_keys[p]) in api, (name, p)
        assert lag_key in api

        cdp.call("Page.navigate", url=base + "/console")
        deadline = time.time() + 60
        while True:
            time.sleep(0.5)
            rows = json.loads(cdp.call("Runtime.evaluate", expression=KAFKA_ROWS)["result"]["value"])
            if len(rows) == 3 and any(r[4] not in ("-", "0") for r in rows) and \
                    all(r[2].isdigit() and r[3].isdigit() for r in rows):
                break
            assert time.time() < deadline, rows
        keep_screenshot(cdp, "console-kafka.png")
        assert [(r[0], r[1]) for r in rows] == [(topic, 0), (topic, 1), (topic, 2)], rows
        for _, p, off, comm, lag in rows:
            assert 0 <= int(comm) <= int(off) <= ends[p]
        dom = cdp.call("Runtime.evaluate", expression="document.documentElement.outerHTML")["result"]["value"]
        total = re.search(r'id="panel-sources" data-populated="true">.*?lag: <b>([0-9.k]+)</b>', dom)
        assert total and total.group(1) != "0", dom

        # the backlog read and committed: the end offsets, no lag
        deadline = time.time() + 120
        while True:
            rows = json.loads(cdp.call("Runtime.evaluate", expression=KAFKA_ROWS)["result"]["value"])
            if rows == [[topic, p, str(ends[p]), str(ends[p]), "0"] for p in range(3)]:
                break
            assert run.poll() is None, run.stderr.read()
            assert time.time() < deadline, rows
            time.sleep(0.5)
        api = assert_api_equals_metrics(base)
        assert api[lag_key] == 0
        assert [api[("floe_kafka_partition_offset", part_keys[p])] for p in range(3)] == [200] * 3
    finally:
        if browser:
            browser.terminate()
            browser.wait(timeout=30)
        run.send_signal(signal.SIGTERM)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.kill()
            raise
    assert run.returncode == 0, run.stderr.read()
    assert len(floe.pyiceberg_catalog().load_table("db.k").scan().to_arrow()) == 600


def test_console_shows_kinesis_shards(floe, kinesis_endpoint, tmp_path):
    """A `floe run` reading a 2-shard Kinesis stream (moto's server): the
    sources panel shows a row per shard with the records read and
    MillisBehindLatest, adding up to what was put; /api/metrics equals
    /metrics."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = f"console-{abs(hash(str(tmp_path))) % 10**8}"
    kc.create_stream(StreamName=name, ShardCount=2)
    recs = [{"Data": json.dumps({"id": i}).encode(), "PartitionKey": f"k{i}"} for i in range(200)]
    assert kc.put_records(StreamName=name, Records=recs)["FailedRecordCount"] == 0
    port = free_port()
    doc = {"pipeline.name": "kinconsole", "execution.checkpointing.interval": "1s",
           "parallelism.default": 2, "metrics.port": port,
           "sources": [{"name": "k", "type": "kinesis", "stream": name, "aws.endpoint": ep.url,
                        "aws.region": "us-east-1", "scan.stream.initpos": "TRIM_HORIZON",
                        "scan.shard.getrecords.intervalmillis": 100}],
           "tables": [{"name": "db.kin", "schema": "id long not null"}]}
    (tmp_path / "kin.yaml").write_text(json.dumps(doc))
    run = subprocess.Popen([floe.bin, "--dir", str(floe.root), "run", str(tmp_path / "kin.yaml")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ep.env())
    browser = None
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            assert run.poll() is None, run.stderr.read()
            try:
                m = parse_text(get(base + "/metrics"))
                read = {dict(k[1])["shard"]: v for k, v in m.items() if k[0] == "floe_kinesis_shard_records_read"}
                if len(read) == 2 and sum(read.values()) == 200:
                    break
            except OSError:
                pass
            assert time.time() < deadline, "the shards were not read"
            time.sleep(0.3)
        api = assert_api_equals_metrics(base)
        assert sum(v for k, v in api.items() if k[0] == "floe_kinesis_shard_records_read") == 200
        browser, cdp = start_chromium(tmp_path)
        cdp.call("Page.enable")
        cdp.call("Page.navigate", url=base + "/console")
        expr = ("JSON.stringify([...document.querySelectorAll('#panel-sources tr.tp')].map(r => "
                "[r.dataset.topic, r.dataset.partition, r.querySelector('.read').textContent, "
                "r.querySelector('.behind').textContent]))")
        deadline = time.time() + 30
        while True:
            time.sleep(0.5)
            rows = json.loads(cdp.call("Runtime.evaluate", expression=expr)["result"]["value"])
            if len(rows) == 2 and all(r[2].isdigit() for r in rows) and sum(int(r[2]) for r in rows) == 200:
                break
            assert time.time() < deadline, rows
        keep_screenshot(cdp, "console-kinesis.png")
        assert sorted(r[1] for r in rows) == sorted(read), rows
        assert all(r[0] == name and re.fullmatch(r"-?[0-9]+", r[3]) for r in rows), rows
        dom = cdp.call("Runtime.evaluate", expression="document.documentElement.outerHTML")["result"]["value"]
        assert "ms behind latest: <b>" in dom
    finally:
        if browser:
            browser.terminate()
            browser.wait(timeout=30)
        run.send_signal(signal.SIGTERM)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.kill()
            raise
    assert run.returncode == 0, run.stderr.read()
