"""The Kafka source against a real Apache Kafka broker (KRaft, started by the
kafka_broker session fixture): formats and metadata columns, exactly-once
under SIGKILL, scale-out over a consumer group, the per-partition fence, and
bad input from the broker. PyIceberg is the oracle for the tables; the
consumer group's committed offsets are read with confluent-kafka.

Record counts are scaled for this 2-core machine; bench/kafka runs the full
sizes (1M records under kills, 10M for throughput)."""
import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import floe_bin

# consumers in the tests leave the group quickly when killed
FAST_GROUP = {
    "properties.session.timeout.ms": "2000",
    "properties.heartbeat.interval.ms": "500",
}


def topic_name(tmp_path, what):
    return f"{what}-{abs(hash(str(tmp_path))) % 10**8}"


def write_yaml(path: Path, pipeline, source: dict, table: dict, interval="1s", extra=None):
    doc = {
        "pipeline.name": pipeline,
        "execution.checkpointing.interval": interval,
        "parallelism.default": 2,
        "sources": [source],
        "tables": [table],
    }
    doc.update(extra or {})
    path.write_text(json.dumps(doc, indent=1))  # JSON is YAML
    return path


def kafka_source(broker, topic, **kw):
    s = {"name": "k", "type": "kafka", "topic": topic,
         "properties.bootstrap.servers": broker.bootstrap,
         "scan.startup.mode": "earliest-offset"}
    s.update(FAST_GROUP)
    s.update(kw)
    return s


class Run:
    """One `floe run` process, its log in a file."""

    def __init__(self, floe, cfg: Path, tag: str):
        self.log = cfg.parent / f"{tag}.log"
        self.out = open(self.log, "ab")
        self.p = subprocess.Popen([floe_bin(), "--dir", str(floe.root), "run", str(cfg)],
                                  stdout=self.out, stderr=subprocess.STDOUT, cwd=cfg.parent)

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        return self.wait()

    def wait(self, timeout=120):
        rc = self.p.wait(timeout=timeout)
        self.out.close()
        return rc

    def text(self):
        return self.log.read_text(errors="replace")


def run_to_end(floe, cfg: Path, timeout=180):
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg)], capture_output=True,
                       text=True, timeout=timeout, cwd=cfg.parent)
    assert p.returncode == 0, p.stderr + p.stdout
    return p


def produce(broker, topic, start, n, pad=0, flush=True, producer=None):
    pr = producer or broker.producer()
    filler = "x" * pad
    for i in range(start, start + n):
        while True:
            try:
                pr.produce(topic, json.dumps({"id": i, "pad": filler}).encode(), key=str(i).encode())
                break
            except BufferError:
                pr.poll(0.05)
        if i % 1000 == 0:
            pr.poll(0)
    if flush:
        pr.flush(60)
    return pr


class Producer(threading.Thread):
    """Keeps producing ids [0, total) in chunks while the test kills floe."""

    def __init__(self, broker, topic, total, chunk=2000, pause=0.2, pad=200):
        super().__init__(daemon=True)
        self.broker, self.topic, self.total = broker, topic, total
        self.chunk, self.pause, self.pad = chunk, pause, pad
        self.sent = 0
        self.error = None

    def run(self):
        try:
            pr = self.broker.producer()
            while self.sent < self.total:
                n = min(self.chunk, self.total - self.sent)
                produce(self.broker, self.topic, self.sent, n, pad=self.pad, flush=False, producer=pr)
                pr.poll(0)
                self.sent += n
                time.sleep(self.pause)
            assert pr.flush(120) == 0
        except Exception as e:  # reported by the test
            self.error = e


def table_ids(floe, ident):
    t = floe.pyiceberg_catalog().load_table(ident)
    return t.scan(selected_fields=("id",)).to_arrow()["id"].to_pylist()


def table_offsets(floe, ident, pipeline):
    """Each split's newest committed offset over the pipeline's snapshots
    (every process of a group commits its own partitions)."""
    t = floe.pyiceberg_catalog().load_table(ident)
    snaps = {s.snapshot_id: s for s in t.metadata.snapshots}
    s = t.current_snapshot()
    out = {}
    while s is not None:
        props = s.summary.additional_properties if s.summary else {}
        if props.get("floe.pipeline-id") == pipeline and "floe.source-offsets" in props:
            for k, v in json.loads(props["floe.source-offsets"]).items():
                out.setdefault(k, v)
        s = snaps.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    return out


def assert_group_equals_table(broker, group, topic, offsets, partitions):
    committed = broker.committed(group, topic)
    want = {p: offsets[f"kafka:{topic}:{p}"] for p in range(partitions)}
    assert committed == want, (committed, want)


def assert_exactly_once(ids, total):
    assert len(ids) == total, f"{len(ids)} rows for {total} records"
    assert set(ids) == set(range(total))


# ---- formats and metadata --------------------------------------------------------------


def test_kafka_json_metadata_and_resume(floe, kafka_broker, tmp_path):
    topic = topic_name(tmp_path, "meta")
    kafka_broker.create_topic(topic, 3)
    pr = kafka_broker.producer()
    for i in range(300):
        pr.produce(topic, json.dumps({"id": i, "name": f"n{i}"}).encode(), key=f"k{i}".encode(),
                   headers=[("h", f"v{i}".encode()), ("bin", b"\xff\x00")], partition=i % 3)
    pr.produce(topic, b"{not json", key=b"bad", partition=0)
    pr.produce(topic, None, key=b"tombstone", partition=1)  # skipped by json
    pr.flush()
    cfg = write_yaml(tmp_path / "p.yaml", "meta", kafka_source(
        kafka_broker, topic, **{"scan.bounded.mode": "latest-offset",
                                "metadata.topic": "t", "metadata.partition": "p",
                                "metadata.offset": "o", "metadata.key": "k",
                                "metadata.timestamp": "ts", "metadata.headers": "h",
                                "metadata.timestamp-type": "tt"}),
        {"name": "db.meta", "schema": "id long not null, name string, t string not null, "
                                      "p int not null, o long not null, k string, ts timestamptz, "
                                      "h map<string, string>, tt string"})
    run_to_end(floe, cfg)
    t = floe.pyiceberg_catalog().load_table("db.meta")
    rows = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert len(rows) == 300
    r = rows[7]
    assert r["t"] == topic and r["p"] == 7 % 3 and r["k"] == "k7" and r["tt"] == "CreateTime"
    assert dict(r["h"])["h"] == "v7"
    assert dict(r["h"])["bin"] == "/wA="  # not UTF-8: base64
    assert r["ts"] is not None
    # offsets within a partition are 0.. in produce order
    assert sorted(x["o"] for x in rows if x["p"] == 2) == list(range(100))
    dead = [json.loads(x) for x in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert len(dead) == 1
    assert dead[0]["topic"] == topic and dead[0]["partition"] == 0 and dead[0]["offset"] == 100
    assert "JSON" in dead[0]["reason"] and dead[0]["record"] == "{not json"
    offs = table_offsets(floe, "db.meta", "meta")
    assert offs == {f"kafka:{topic}:0": 101, f"kafka:{topic}:1": 101, f"kafka:{topic}:2": 100}
    assert_group_equals_table(kafka_broker, "meta", topic, offs, 3)
    # more records: the next run resumes from the table
    produce(kafka_broker, topic, 1000, 30)
    run_to_end(floe, cfg)
    ids = sorted(table_ids(floe, "db.meta"))
    assert ids == list(range(300)) + list(range(1000, 1030))


def test_kafka_csv_raw_and_topic_lists(floe, kafka_broker, tmp_path):
    a, b = topic_name(tmp_path, "ca"), topic_name(tmp_path, "cb")
    kafka_broker.create_topic(a, 1)
    kafka_broker.create_topic(b, 2)
    pr = kafka_broker.producer()
    for i in range(50):
        pr.produce(a, f"{i},name {i}".encode())
        pr.produce(b, f"{i + 100},\"quoted, {i}\"".encode())
    pr.flush()
    cfg = write_yaml(tmp_path / "csv.yaml", "csv", kafka_source(
        kafka_broker, f"{a};{b}", format="csv", **{"scan.bounded.mode": "latest-offset"}),
        {"name": "db.csv", "schema": "id long not null, name string"})
    run_to_end(floe, cfg)
    rows = floe.pyiceberg_catalog().load_table("db.csv").scan().to_arrow().to_pylist()
    assert sorted(r["id"] for r in rows) == list(range(50)) + list(range(100, 150))
    assert {r["name"] for r in rows if r["id"] == 105} == {"quoted, 5"}
    # raw by topic pattern: the value as one binary column, the key as text
    for i in range(20):
        pr.produce(a, bytes([i, 0xff]), key=f"r{i}".encode())
    pr.produce(a, None, key=b"t")  # a tombstone: a null value
    pr.flush()
    cfg = write_yaml(tmp_path / "raw.yaml", "raw", kafka_source(
        kafka_broker, None, format="raw", **{"topic-pattern": a,
                                              "scan.bounded.mode": "latest-offset",
                                              "metadata.key": "k"}),
        {"name": "db.raw", "schema": "v binary, k string"})
    src = json.loads(cfg.read_text())
    del src["sources"][0]["topic"]
    cfg.write_text(json.dumps(src))
    run_to_end(floe, cfg)
    rows = floe.pyiceberg_catalog().load_table("db.raw").scan().to_arrow().to_pylist()
    assert len(rows) == 71
    assert {"v": bytes([3, 0xff]), "k": "r3"} in rows
    assert {"v": None, "k": "t"} in rows


def avro_long(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def avro_str(s):
    b = s.encode()
    return avro_long(len(b)) + b


def test_kafka_avro_confluent(floe, kafka_broker, tmp_path):
    """Confluent's wire format with the writer schema from a registry (a
    small stand-in serving GET /schemas/ids/<id>: the Confluent Schema
    Registry is not on Maven Central); Avro bytes encoded here by hand.
    Unknown schema ids and values not in the wire format go to the dead
    letters."""
    import http.server

    schema = {"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
        {"name": "score", "type": ["null", "double"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}}]}
    hits = []

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            if self.path == "/schemas/ids/7":
                body, st = json.dumps({"schema": json.dumps(schema)}).encode(), 200
            else:
                body, st = b'{"error_code":40403,"message":"Schema not found"}', 404
            self.send_response(st)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    topic = topic_name(tmp_path, "avro")
    kafka_broker.create_topic(topic, 2)
    pr = kafka_broker.producer()
    for i in range(100):
        score = b"\x00" if i % 2 else b"\x02" + __import__("struct").pack("<d", i / 4)
        tags = avro_long(2) + avro_str(f"t{i}") + avro_str("x") + avro_long(0)
        datum = avro_long(i) + avro_str(f"order {i}") + score + tags + avro_long(i % 2)
        pr.produce(topic, b"\x00\x00\x00\x00\x07" + datum, partition=i % 2)
    pr.produce(topic, b"\x00\x00\x00\x00\x63" + avro_long(1), partition=0)  # id 99
    pr.produce(topic, b"{\"id\": 1}", partition=1)  # not the wire format
    pr.flush()
    cfg = write_yaml(tmp_path / "p.yaml", "avro", kafka_source(
        kafka_broker, topic, format="avro-confluent",
        **{"avro-confluent.url": f"http://127.0.0.1:{srv.server_port}",
           "scan.bounded.mode": "latest-offset"}),
        {"name": "db.avro", "schema": "id long not null, name string, score double, "
                                      "tags list<string>, kind string"},
        extra={"parallelism.default": 1})
    try:
        run_to_end(floe, cfg)
    finally:
        srv.shutdown()
    rows = sorted(floe.pyiceberg_catalog().load_table("db.avro").scan().to_arrow().to_pylist(),
                  key=lambda r: r["id"])
    assert len(rows) == 100
    assert rows[8] == {"id": 8, "name": "order 8", "score": 2.0, "tags": ["t8", "x"], "kind": "A"}
    assert rows[9]["score"] is None and rows[9]["kind"] == "B"
    assert hits.count("/schemas/ids/7") == 1  # cached
    dead = [json.loads(x) for x in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    reasons = sorted(d["reason"] for d in dead)
    assert len(dead) == 2, reasons
    assert "HTTP 404" in reasons[1] or "HTTP 404" in reasons[0]
    assert any("not Confluent's wire format" in r for r in reasons)


def test_kafka_avro_confluent_bytes_fixed_decimal_logical_types(floe, kafka_broker, tmp_path):
    """Values in Confluent's wire format (magic byte 0, the schema id, the
    datum encoded by fastavro) with bytes, fixed, decimal (bytes and fixed),
    uuid (string and fixed), date, time-micros, timestamp-millis/-micros
    and local-timestamp-micros fields: every value lands in the table as it
    was written (PyIceberg reads them back), including negative decimals,
    bytes that are not UTF-8 and timestamps before 1970."""
    import datetime as dt
    import decimal
    import http.server
    import io
    import uuid

    import fastavro

    D = decimal.Decimal
    schema = {"type": "record", "name": "Pay", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "raw", "type": "bytes"},
        {"name": "tag", "type": ["null", {"type": "fixed", "name": "F4", "size": 4}]},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12,
                                    "scale": 3}},
        {"name": "big", "type": {"type": "fixed", "name": "D16", "size": 16,
                                 "logicalType": "decimal", "precision": 38, "scale": 2}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "fu", "type": {"type": "fixed", "name": "U16", "size": 16}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tod", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "at_us_long", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    ]}
    parsed = fastavro.parse_schema(schema)

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path == "/schemas/ids/513"
            body = json.dumps({"schema": json.dumps(schema)}).encode() if ok else b"{}"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    utc = dt.timezone.utc
    rows = []
    for i in range(40):
        rows.append({
            "id": i,
            "raw": bytes([0xff, 0x00, i, 0x80]) * (i % 3),
            "tag": None if i % 4 == 0 else bytes([i, 0xfe, 0x00, 0x41]),
            "amount": D(-1) ** i * D(f"{i * 12345}.{i:03d}"),
            "big": D(f"-{'9' * 30}.{i:02d}") if i % 2 else D(f"{i}{'0' * 33}.05"),
            "u": str(uuid.UUID(int=i * 7919 + 1)),
            "fu": uuid.UUID(int=(i + 1) << 100).bytes,
            "day": dt.date(1969, 12, 31) + dt.timedelta(days=i * 400),
            "tod": dt.time(23, 59, 59, 999999) if i == 3 else dt.time(i % 24, 7, 8, i * 1000),
            "at_ms": dt.datetime(1960 + i, 1, 2, 3, 4, 5, 678000, tzinfo=utc),
            "at_us": None if i == 5 else dt.datetime(2024, 2, 29, 23, 59, 59, i, tzinfo=utc),
            "local": dt.datetime(1999, 12, 31, 23, 59, 58, 123456 + i),
            "at_us_long": dt.datetime(2001, 1, 1, tzinfo=utc) + dt.timedelta(microseconds=i),
        })
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    topic = topic_name(tmp_path, "avrolt")
    kafka_broker.create_topic(topic, 1)
    pr = kafka_broker.producer()
    for r in rows:
        b = io.BytesIO()
        fastavro.schemaless_writer(b, parsed, r)
        pr.produce(topic, b"\x00" + (513).to_bytes(4, "big") + b.getvalue())
    assert pr.flush(30) == 0
    cfg = write_yaml(tmp_path / "p.yaml", "avrolt", kafka_source(
        kafka_broker, topic, format="avro-confluent",
        **{"avro-confluent.url": f"http://127.0.0.1:{srv.server_port}",
           "scan.bounded.mode": "latest-offset"}),
        {"name": "db.avrolt",
         "schema": "id long not null, raw binary, tag fixed[4], amount decimal(12, 3), "
                   "big decimal(38, 2), u uuid, fu uuid, day date, tod time, at_ms timestamptz, "
                   "at_us timestamptz, local timestamp, at_us_long long"},
        extra={"parallelism.default": 1})
    try:
        run_to_end(floe, cfg)
    finally:
        srv.shutdown()
    assert not (tmp_path / "dead-letter.jsonl").exists() or \
        not (tmp_path / "dead-letter.jsonl").read_text().strip(), \
        (tmp_path / "dead-letter.jsonl").read_text()
    got = sorted(floe.pyiceberg_catalog().load_table("db.avrolt").scan().to_arrow().to_pylist(),
                 key=lambda r: r["id"])
    assert len(got) == len(rows)
    epoch = dt.datetime(1970, 1, 1, tzinfo=utc)
    for r, g in zip(rows, got):
        want = dict(r)
        want["u"] = uuid.UUID(r["u"])
        want["fu"] = uuid.UUID(bytes=r["fu"])
        want["at_us_long"] = (r["at_us_long"] - epoch) // dt.timedelta(microseconds=1)
        g = dict(g)
        for k in ("u", "fu"):
            if isinstance(g[k], (bytes, bytearray)):
                g[k] = uuid.UUID(bytes=bytes(g[k]))
            elif not isinstance(g[k], uuid.UUID):
                g[k] = uuid.UUID(str(g[k]))
        assert g == want, (r["id"], {k: (want[k], g[k]) for k in want if want[k] != g[k]})


# ---- exactly once ------------------------------------------------------------------------


def test_kafka_sigkill_exactly_once(floe, kafka_broker, tmp_path):
    """SIGKILL at random >= 20 times while the producer keeps writing to a
    6-partition topic: every record in the table exactly once, and the
    group's committed offsets equal the table's."""
    total = int(os.environ.get("FLOE_KAFKA_KILL_RECORDS", "120000"))
    topic = topic_name(tmp_path, "kill")
    kafka_broker.create_topic(topic, 6)
    prod = Producer(kafka_broker, topic, total, chunk=1500, pause=0.05)
    prod.start()
    cfg = write_yaml(tmp_path / "p.yaml", "kill", kafka_source(kafka_broker, topic),
                     {"name": "db.kill", "schema": "id long not null, pad string"})
    rnd = random.Random(1234)
    kills = 0
    while kills < 20:
        r = Run(floe, cfg, f"run{kills}")
        time.sleep(rnd.uniform(1.5, 5.0))
        rc = r.kill()
        assert rc == -signal.SIGKILL, f"floe exited on its own ({rc}):\n{r.text()[-3000:]}"
        kills += 1
    prod.join(300)
    assert prod.error is None, prod.error
    before = len(table_ids(floe, "db.kill"))
    assert 0 < before <= total
    # the last run reads to the end and stops
    data = json.loads(cfg.read_text())
    data["sources"][0]["scan.bounded.mode"] = "latest-offset"
    end_cfg = tmp_path / "end.yaml"
    end_cfg.write_text(json.dumps(data))
    run_to_end(floe, end_cfg, timeout=300)
    assert_exactly_once(table_ids(floe, "db.kill"), total)
    offs = table_offsets(floe, "db.kill", "kill")
    ends = kafka_broker.end_offsets(topic)
    assert offs == {f"kafka:{topic}:{p}": ends[p] for p in range(6)}
    assert_group_equals_table(kafka_broker, "kill", topic, offs, 6)


def wait_rows(floe, ident, total, timeout=180):
    deadline = time.time() + timeout
    n = -1
    while time.time() < deadline:
        try:
            n = len(table_ids(floe, ident))
        except Exception:
            n = -1
        if n >= total:
            return n
        time.sleep(1)
    raise AssertionError(f"{ident}: {n} rows after {timeout}s, waiting for {total}")


def test_kafka_group_scale_out_with_kills(floe, kafka_broker, tmp_path):
    """Three processes of one pipeline in one consumer group: one killed and
    restarted repeatedly, one added mid-run (rebalances): exactly once."""
    total = int(os.environ.get("FLOE_KAFKA_GROUP_RECORDS", "90000"))
    topic = topic_name(tmp_path, "group")
    kafka_broker.create_topic(topic, 6)
    prod = Producer(kafka_broker, topic, total, chunk=1000, pause=0.05)
    prod.start()
    cfg = write_yaml(tmp_path / "p.yaml", "grp", kafka_source(kafka_broker, topic),
                     {"name": "db.grp", "schema": "id long not null, pad string"},
                     extra={"parallelism.default": 1})
    steady = Run(floe, cfg, "steady")
    victim = Run(floe, cfg, "victim0")
    rnd = random.Random(99)
    late = None
    for k in range(6):
        time.sleep(rnd.uniform(2.0, 4.0))
        assert victim.kill() == -signal.SIGKILL
        if k == 2:
            late = Run(floe, cfg, "late")  # a third process joins mid-run
        victim = Run(floe, cfg, f"victim{k + 1}")
    prod.join(300)
    assert prod.error is None, prod.error
    wait_rows(floe, "db.grp", total)
    for r in (steady, victim, late):
        assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    assert_exactly_once(table_ids(floe, "db.grp"), total)
    offs = table_offsets(floe, "db.grp", "grp")
    ends = kafka_broker.end_offsets(topic)
    assert offs == {f"kafka:{topic}:{p}": ends[p] for p in range(6)}
    assert_group_equals_table(kafka_broker, "grp", topic, offs, 6)
    # each process committed its own partitions
    t = floe.pyiceberg_catalog().load_table("db.grp")
    sizes = {len(json.loads(s.summary.additional_properties["floe.source-offsets"]))
             for s in t.metadata.snapshots}
    assert min(sizes) < 6


def test_kafka_same_pipeline_id_twice(floe, kafka_broker, tmp_path):
    """Two processes started with the same pipeline id and group share the
    partitions: nothing is duplicated (the whole-pipeline fence would stop
    one of them; the per-partition fence lets both commit)."""
    total = 30000
    topic = topic_name(tmp_path, "twice")
    kafka_broker.create_topic(topic, 6)
    cfg = write_yaml(tmp_path / "p.yaml", "twice", kafka_source(kafka_broker, topic),
                     {"name": "db.twice", "schema": "id long not null, pad string"},
                     extra={"parallelism.default": 1})
    import socket
    import urllib.request

    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    doc = json.loads(cfg.read_text())
    doc["metrics.port"] = port
    cfg_a = tmp_path / "a.yaml"
    cfg_a.write_text(json.dumps(doc))
    a, b = Run(floe, cfg_a, "a"), Run(floe, cfg, "b")
    produce(kafka_broker, topic, 0, total, pad=50)
    wait_rows(floe, "db.twice", total)
    time.sleep(1.5)
    # the consumer group's view as metrics: a's share of the 6 partitions, no lag left
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    vals = {}
    for line in text.splitlines():
        if line.startswith("floe_kafka_") and not line.startswith("floe_kafka_partition"):
            name, v = line.rsplit(" ", 1)
            vals[name.split("{")[0]] = float(v)
    assert 1 <= vals["floe_kafka_assigned_partitions"] <= 5, text
    assert vals["floe_kafka_rebalances_total"] >= 1, text
    assert vals["floe_kafka_records_lag"] == 0, text
    assert "floe_kafka_partition_records_lag{" in text
    assert a.kill(signal.SIGTERM) == 0, a.text()[-3000:]
    assert b.kill(signal.SIGTERM) == 0, b.text()[-3000:]
    assert_exactly_once(table_ids(floe, "db.twice"), total)
    assert "fenced" not in a.text() + b.text()


def test_kafka_fence_after_a_stall(floe, kafka_broker, tmp_path):
    """A process stopped past its session timeout loses its partitions to
    another; when it runs again, whatever it still holds must not commit
    over the other's commits: exactly once."""
    total = 40000
    topic = topic_name(tmp_path, "stall")
    kafka_broker.create_topic(topic, 4)
    cfg = write_yaml(tmp_path / "p.yaml", "stall", kafka_source(kafka_broker, topic),
                     {"name": "db.stall", "schema": "id long not null, pad string"},
                     extra={"parallelism.default": 1})
    a, b = Run(floe, cfg, "a"), Run(floe, cfg, "b")
    prod = Producer(kafka_broker, topic, total, chunk=1000, pause=0.1)
    prod.start()
    time.sleep(5)
    a.p.send_signal(signal.SIGSTOP)
    time.sleep(6)  # > session.timeout.ms: b takes a's partitions and commits them
    a.p.send_signal(signal.SIGCONT)
    prod.join(300)
    assert prod.error is None
    wait_rows(floe, "db.stall", total)
    time.sleep(2)
    assert a.kill(signal.SIGTERM) == 0, a.text()[-3000:]
    assert b.kill(signal.SIGTERM) == 0, b.text()[-3000:]
    assert_exactly_once(table_ids(floe, "db.stall"), total)


# ---- bad input from the broker -------------------------------------------------------------


def test_kafka_bad_records_and_oversize(floe, kafka_broker, tmp_path):
    topic = topic_name(tmp_path, "bad")
    kafka_broker.create_topic(topic, 2)
    pr = kafka_broker.producer()
    for i in range(100):
        pr.produce(topic, json.dumps({"id": i}).encode(), partition=i % 2)
    pr.produce(topic, b"\xff\xfe\x00garbage", partition=0)
    pr.produce(topic, json.dumps({"id": "not a number"}).encode(), partition=1)
    pr.produce(topic, json.dumps({"id": 7, "pad": "y" * 20000}).encode(), partition=1)
    pr.produce(topic, json.dumps({"id": 100}).encode(), partition=0)
    pr.flush()
    cfg = write_yaml(tmp_path / "p.yaml", "bad", kafka_source(
        kafka_broker, topic, **{"scan.bounded.mode": "latest-offset", "max-record-size": "4KiB"}),
        {"name": "db.bad", "schema": "id long not null, pad string"})
    run_to_end(floe, cfg)
    assert sorted(table_ids(floe, "db.bad")) == list(range(101))
    dead = [json.loads(x) for x in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    by = {(d["partition"], d["offset"]): d for d in dead}
    assert len(dead) == 3
    assert "record_base64" in by[(0, 50)]
    assert "id" in by[(1, 50)]["reason"]
    assert "max-record-size" in by[(1, 51)]["reason"] and by[(1, 51)]["topic"] == topic


def test_kafka_missing_and_deleted_topic(floe, kafka_broker, tmp_path):
    cfg = write_yaml(tmp_path / "p.yaml", "missing", kafka_source(kafka_broker, "no-such-topic"),
                     {"name": "db.missing", "schema": "id long not null"})
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode != 0
    assert "kafka topic 'no-such-topic' does not exist" in p.stderr
    # a topic deleted while the pipeline runs: a clear error, the other topic goes on
    a, b = topic_name(tmp_path, "keep"), topic_name(tmp_path, "gone")
    kafka_broker.create_topic(a, 1)
    kafka_broker.create_topic(b, 1)
    produce(kafka_broker, a, 0, 100)
    produce(kafka_broker, b, 1000, 100)
    cfg = write_yaml(tmp_path / "d.yaml", "deleted", kafka_source(kafka_broker, f"{a};{b}",
                     **{"properties.topic.metadata.refresh.interval.ms": "1000"}),
                     {"name": "db.deleted", "schema": "id long not null, pad string"})
    r = Run(floe, cfg, "del")
    wait_rows(floe, "db.deleted", 200, timeout=60)
    kafka_broker.delete_topic(b)
    time.sleep(4)
    produce(kafka_broker, a, 100, 100)
    wait_rows(floe, "db.deleted", 300, timeout=60)
    assert r.p.poll() is None, r.text()[-3000:]
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    ids = sorted(table_ids(floe, "db.deleted"))
    assert ids == list(range(200)) + list(range(1000, 1100))


def test_kafka_auth_failure(floe, kafka_broker, tmp_path):
    topic = topic_name(tmp_path, "auth")
    kafka_broker.create_topic(topic, 1)
    produce(kafka_broker, topic, 0, 10)
    src = kafka_source(kafka_broker, topic, **{
        "properties.bootstrap.servers": kafka_broker.sasl_bootstrap,
        "properties.security.protocol": "SASL_PLAINTEXT",
        "properties.sasl.mechanism": "PLAIN",
        "properties.sasl.username": "floe",
        "properties.sasl.password": "${FLOE_TEST_KAFKA_PASSWORD}",
        "scan.bounded.mode": "latest-offset"})
    cfg = write_yaml(tmp_path / "p.yaml", "auth", src, {"name": "db.auth", "schema": "id long not null, pad string"})
    env = dict(os.environ, FLOE_TEST_KAFKA_PASSWORD="wrong")
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg)], capture_output=True,
                       text=True, timeout=120, env=env)
    assert p.returncode != 0
    assert "auth" in p.stderr.lower(), p.stderr
    assert "AddressSanitizer" not in p.stderr
    env["FLOE_TEST_KAFKA_PASSWORD"] = "floe-secret"
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg)], capture_output=True,
                       text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    assert sorted(table_ids(floe, "db.auth")) == list(range(10))


def test_kafka_broker_restart(floe, kafka_broker, tmp_path):
    """The broker restarts under a running pipeline: it waits, reconnects and
    goes on; nothing lost or duplicated."""
    topic = topic_name(tmp_path, "restart")
    kafka_broker.create_topic(topic, 3)
    produce(kafka_broker, topic, 0, 3000)
    cfg = write_yaml(tmp_path / "p.yaml", "restart", kafka_source(kafka_broker, topic),
                     {"name": "db.restart", "schema": "id long not null, pad string"})
    r = Run(floe, cfg, "r")
    wait_rows(floe, "db.restart", 3000, timeout=60)
    kafka_broker.restart()
    produce(kafka_broker, topic, 3000, 3000)
    wait_rows(floe, "db.restart", 6000, timeout=120)
    assert r.p.poll() is None, r.text()[-3000:]
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    assert_exactly_once(table_ids(floe, "db.restart"), 6000)


# ---- a hybrid source: an Iceberg bootstrap, then Kafka --------------------------------------


def snapshot_offsets(floe, ident):
    r = subprocess.run([floe_bin(), "--dir", str(floe.root), "inspect", ident, "snapshots",
                        "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        return []
    return [json.loads(json.loads(x)["summary"].get("floe.source-offsets", "{}"))
            for x in r.stdout.splitlines() if x.strip()]


def kill_when(floe, cfg, ident, cond, tag, timeout=90):
    r = Run(floe, cfg, tag)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and r.p.poll() is None:
        offs = snapshot_offsets(floe, ident)
        if offs and cond(offs[-1]):
            break
        time.sleep(0.02)
    rc = r.kill()
    assert rc == -signal.SIGKILL, f"floe exited on its own ({rc}):\n{r.text()[-3000:]}"
    return snapshot_offsets(floe, ident)


def wait_group_empty(broker, group, timeout=30):
    """Until a killed member's session has expired: a bounded run that joins
    while it is still in the group gets only some partitions and ends when
    those reach their end."""
    admin = broker.admin()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        d = admin.describe_consumer_groups([group])[group].result(timeout=10)
        if not d.members:
            return
        time.sleep(0.2)
    raise AssertionError(f"group {group} still has members after {timeout}s")


def test_hybrid_source_iceberg_then_kafka_exactly_once(floe, kafka_broker, tmp_path):
    """A Kafka pipeline filled db.hist from a 3-partition topic; a hybrid
    source bootstraps db.out from db.hist's table scan and then reads the
    topic from the offsets db.hist recorded: killed inside the bootstrap and
    again after the switch (records still arriving), every record is in
    db.out once."""
    topic = topic_name(tmp_path, "hybrid")
    kafka_broker.create_topic(topic, 3)
    produce(kafka_broker, topic, 0, 3000, pad=40)
    hist = write_yaml(tmp_path / "hist.yaml", "hist",
                      kafka_source(kafka_broker, topic, **{"scan.bounded.mode": "latest-offset"}),
                      {"name": "db.hist", "schema": "id long not null, pad string"})
    run_to_end(floe, hist)
    assert sorted(table_ids(floe, "db.hist")) == list(range(3000))
    produce(kafka_broker, topic, 3000, 1000, pad=40)  # after db.hist's last commit

    def cfg(path, **kw):
        src = kafka_source(kafka_broker, topic, **kw)
        src.update({"name": "all", "type": "hybrid", "source-table": "db.hist", "then": "kafka",
                    "block-size": "4KiB"})
        del src["scan.startup.mode"]  # every partition has a recorded offset
        return write_yaml(path, "backfill", src,
                          {"name": "db.out", "schema": "id long not null, pad string"},
                          interval="20ms")

    following = cfg(tmp_path / "f.yaml")
    offs = kill_when(floe, following, "db.out", lambda o: True, "boot")
    # killed in the bootstrap (a run that got past it before its first commit
    # was seen is killed after the switch instead: the checks below still hold)
    assert offs and offs[-1]["@hybrid-phase"] in (0, 1), offs[-1:]
    def more():
        produce(kafka_broker, topic, 4000, 500, pad=40)

    t = threading.Thread(target=more)
    t.start()
    offs = kill_when(floe, following, "db.out",
                     lambda o: o["@hybrid-phase"] == 1 and
                     sum(v for k, v in o.items() if k.startswith("kafka:")) > 3000,
                     "switched")
    t.join()
    # killed after the switch, with records from the topic committed
    assert offs[-1]["@hybrid-phase"] == 1, offs[-1]
    assert any(k.startswith("kafka:") for k in offs[-1])
    produce(kafka_broker, topic, 4500, 500, pad=40)
    wait_group_empty(kafka_broker, "backfill")
    run_to_end(floe, cfg(tmp_path / "b.yaml", **{"scan.bounded.mode": "latest-offset"}))
    assert_exactly_once(table_ids(floe, "db.out"), 5000)
    last = snapshot_offsets(floe, "db.out")[-1]
    ends = kafka_broker.end_offsets(topic)
    assert {k: v for k, v in last.items() if k.startswith("kafka:")} == \
        {f"kafka:{topic}:{p}": ends[p] for p in range(3)}
    # a rebalance after the switch (another member joins the group, takes
    # partitions, leaves): they come back where floe's writers were, not at
    # the offsets of the run's start
    produce(kafka_broker, topic, 5000, 1000, pad=40)
    run = Run(floe, following, "rebalance")
    try:
        deadline = time.monotonic() + 90
        while len(table_ids(floe, "db.out")) < 6000 and time.monotonic() < deadline:
            assert run.p.poll() is None, run.text()[-3000:]
            time.sleep(0.2)
        from confluent_kafka import Consumer
        other = Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": "backfill",
                          "enable.auto.commit": False, "session.timeout.ms": 2000,
                          "heartbeat.interval.ms": 500})
        other.subscribe([topic])
        deadline = time.monotonic() + 30
        while not other.assignment() and time.monotonic() < deadline:
            other.poll(0.2)
        assert other.assignment(), "the other member got no partition"
        other.close()
        produce(kafka_broker, topic, 6000, 500, pad=40)
        deadline = time.monotonic() + 90
        while len(table_ids(floe, "db.out")) < 6500 and time.monotonic() < deadline:
            assert run.p.poll() is None, run.text()[-3000:]
            time.sleep(0.2)
        time.sleep(1.0)  # anything read twice would commit by now
    finally:
        run.kill()
    assert_exactly_once(table_ids(floe, "db.out"), 6500)
    # then is a hybrid's; a hybrid's records have no Kafka metadata columns
    bad = json.loads(cfg(tmp_path / "bad.yaml").read_text())
    bad["sources"][0]["metadata.offset"] = "o"
    (tmp_path / "bad.yaml").write_text(json.dumps(bad))
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(tmp_path / "bad.yaml")],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "takes no metadata.* columns" in p.stderr, p.stderr
    bad["sources"][0].pop("metadata.offset")
    bad["sources"][0]["type"] = "kafka"
    bad["sources"][0].pop("source-table")
    (tmp_path / "bad.yaml").write_text(json.dumps(bad))
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(tmp_path / "bad.yaml")],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "then is for hybrid sources" in p.stderr, p.stderr
