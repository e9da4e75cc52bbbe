"""Smoke run of the JVM peer benchmarks (bench/peers): the peer starts, does
the work floe does and leaves a table PyIceberg reads. The benchmarks
themselves (full sizes, the numbers in bench/RESULTS.md) are not CI tests."""
import json
import subprocess
import sys

from conftest import ROOT, floe_bin


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

    peer = ROOT / "bench/peers/flink"
    subprocess.run([str(peer / "build.sh")], check=True)
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
