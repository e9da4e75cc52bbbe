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
