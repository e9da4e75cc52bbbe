"""Smoke run of the JVM peer benchmarks (bench/peers): the peer starts, does
the work floe does and leaves a table PyIceberg reads. The benchmarks
themselves (full sizes, the numbers in bench/RESULTS.md) are not CI tests."""
import json
import subprocess
import sys

from conftest import ROOT, floe_bin

_built = []


def _flink_peer():
    """bench/peers/flink, compiled once per session (build.sh is mvn: seconds each time)."""
    peer = ROOT / "bench/peers/flink"
    if not _built:
        subprocess.run([str(peer / "build.sh")], check=True)
        _built.append(peer)
    return peer


def test_spark_rewrite_data_files_peer_smoke(tmp_path):
    src = tmp_path / "src"
    subprocess.run([sys.executable, str(ROOT / "bench/compact/gen_files.py"), str(src), "8", "200"],
                   check=True)
    p = subprocess.run([sys.executable, str(ROOT / "bench/peers/spark_compact.py"), floe_bin(),
                        str(src), str(tmp_path / "work"), "--smoke"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]
    sides = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert [s["impl"].split()[0] for s in sides] == ["floe", "spark-3.5-iceberg-1.10"]
    for s in sides:
        assert s["files_in"] == 8 and s["rows"] == 1600 and s["live_files"] == s["files_out"] >= 1
        assert s["cpu_s"] > 0 and s["peak_rss_mb"] > 0
    assert sides[1]["startup_cpu_s"] > 0  # the JVM's start-up is reported apart


def test_flink_ingest_peer_smoke(tmp_path):
    """bench/peers/flink builds, its job (Flink 1.20 MiniCluster + Iceberg's
    FlinkSink) writes 1,000 events into a day(ts) zstd v2 HadoopCatalog table,
    and PyIceberg reads back every row as written."""
    import datetime as dt
    from decimal import Decimal

    from pyiceberg.table import StaticTable

    peer = _flink_peer()
    data = tmp_path / "events.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench/ingest/gen_events.py"), "1000", str(data)], check=True)
    # 1 s checkpoints: a bounded job ends at the checkpoint after its input ends
    p = subprocess.run([str(peer / "run.sh"), "ingest", str(tmp_path / "wh"), "1", "1000", "3", str(data)],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr[-4000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["snapshots"] >= 1
    t = StaticTable.from_metadata(out["metadata"])
    assert t.format_version == 2
    assert str(t.spec().fields[0].transform) == "day"
    assert t.properties["write.parquet.compression-codec"] == "zstd"
    got = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["event_id"])
    want = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(got) == len(want) == 1000
    for g, w in zip(got, want):
        w["ts"] = dt.datetime.fromisoformat(w["ts"].replace("Z", "+00:00"))
        w["amount"] = Decimal(w["amount"])
        assert {**g, "ts": g["ts"].astimezone(dt.timezone.utc)} == w


def _kafka_topic(broker, name, n):
    """A 3-partition topic of n of bench/kafka/run.py's ~300-byte JSON
    records; returns them as dicts, by id."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("kafka_bench", ROOT / "bench" / "kafka" / "run.py")
    kafka_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kafka_bench)
    broker.create_topic(name, 3)
    kafka_bench.produce(broker, name, 0, n)
    return {i: json.loads(kafka_bench.record(i, 0)) for i in range(n)}


def _same_rows(got, want):
    assert sorted(g["id"] for g in got) == sorted(want)  # each record once
    for g in got:
        w = want[g["id"]]
        assert {**g, "ts_ms": 0} == {**w, "amount": float(w["amount"])}


# a short JVM: C1 only, serial GC, a small heap (the benchmarks keep the JVM's defaults)
SMOKE_JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m"]


def test_flink_kafka_peer_smoke(tmp_path, kafka_broker):
    """bench/peers/flink's kafka mode: Flink's KafkaSource reads a small
    topic from the earliest offsets, stops at the latest offsets it saw at
    its start, and Iceberg's FlinkSink leaves an unpartitioned zstd v2 table
    that PyIceberg reads back with every record as produced."""
    import os

    from pyiceberg.table import StaticTable

    want = _kafka_topic(kafka_broker, "peer-flink-smoke", 300)
    peer = _flink_peer()
    p = subprocess.run([str(peer / "run.sh"), "kafka", str(tmp_path / "wh"), "1", "1000", "3",
                        kafka_broker.bootstrap, "peer-flink-smoke"], capture_output=True, text=True,
                       timeout=240, env={**os.environ, "FLINK_JAVA_OPTS": " ".join(SMOKE_JVM)})
    assert p.returncode == 0, p.stderr[-4000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["snapshots"] >= 1
    t = StaticTable.from_metadata(out["metadata"])
    assert t.format_version == 2 and t.spec().is_unpartitioned()
    assert t.properties["write.parquet.compression-codec"] == "zstd"
    _same_rows(t.scan().to_arrow().to_pylist(), want)


def test_kafka_connect_peer_smoke(tmp_path, kafka_broker):
    """bench/peers/kafka_connect.py: the Apache Iceberg Kafka Connect sink in
    a standalone Connect worker reads a small topic into a table floe created
    (its SQLite catalog through Iceberg's JdbcCatalog); PyIceberg reads back
    every record as produced, and floe reads the table the sink committed."""
    sys.path.insert(0, str(ROOT / "bench" / "peers"))
    import kafka_connect

    want = _kafka_topic(kafka_broker, "peer-connect-smoke", 300)
    r = kafka_connect.run(floe_bin(), kafka_broker, "peer-connect-smoke", 300, tmp_path / "kc",
                          tasks=1, commit_ms=1000, timeout=240, java_opts=SMOKE_JVM)
    assert r["rows"] == 300 and r["snapshots"] >= 1 and r["cpu_s"] > 0 and r["rss_kb"] > 0
    t = kafka_connect.catalog(tmp_path / "kc").load_table("bench.events")
    _same_rows(t.scan().to_arrow().to_pylist(), want)
    count = subprocess.run([floe_bin(), "--dir", str(tmp_path / "kc"), "scan", "bench.events", "--count"],
                           check=True, capture_output=True, text=True).stdout.strip()
    assert count == "300"
