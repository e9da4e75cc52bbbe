"""`floe doctor` on a table made unhealthy on purpose: thousands of small files,
50 equality-delete files in one partition, 5,000 snapshots under 7-day
retention, rewrites by two other engines and old orphans. Each problem is
reported with its severity and the exit code is 2; the numbers equal the
operations guides' monitoring queries run by DuckDB over PyIceberg's metadata
tables (and DuckDB's iceberg_snapshots); after `floe maintain` (and the
retention fix doctor names) every check is ok and the exit code is 0. The HTML
report carries the plots; commit freshness is judged against the checkpoint
interval."""
import json
import os
import signal
import subprocess
import sqlite3
import time
import uuid
from html.parser import HTMLParser

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import duckdb_connection
from test_delete_interop import run_delete

REGIONS = ["eu", "us", "ap", "sa"]
PER_REGION = 300  # 1,200 small files, 300 in each partition


def doctor(floe, *args):
    p = floe.run("doctor", *args, "--format", "json", check=False)
    assert p.returncode in (0, 1, 2), p.stderr
    reports = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return p.returncode, reports


def checks(report):
    return {c["id"]: c for c in report["checks"]}


def write_synthetic_history(floe, name, n, engines):
    """Put n old snapshots (2-3 hours ago, sharing the first snapshot's
    manifest list) under the table's history, two of them rewrites by other
    engines, and point the catalog at the new metadata file."""
    con = sqlite3.connect(floe.warehouse / "catalog.db")
    (loc,) = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace='db' "
                         "AND table_name=?", (name,)).fetchone()
    path = loc[len("file://"):] if loc.startswith("file://") else loc[len("file:"):] if loc.startswith("file:") else loc
    meta = json.load(open(path))
    snaps = sorted(meta["snapshots"], key=lambda s: s["timestamp-ms"])
    first = snaps[0]
    now = int(time.time() * 1000)
    start = now - 3 * 3600 * 1000
    synth, parent = [], None
    for i in range(n):
        sid = 10_000_000 + i
        op = "append"
        summary = {"operation": op, "added-data-files": "0"}
        if i < len(engines):
            summary = {"operation": "replace", "engine-name": engines[i]}
        s = {"snapshot-id": sid, "sequence-number": first["sequence-number"],
             "timestamp-ms": start + i * 700, "summary": summary,
             "manifest-list": first["manifest-list"], "schema-id": first.get("schema-id", 0)}
        if parent is not None:
            s["parent-snapshot-id"] = parent
        synth.append(s)
        parent = sid
    first["parent-snapshot-id"] = parent
    meta["snapshots"] = synth + meta["snapshots"]
    meta["metadata-log"] = meta.get("metadata-log", []) + [
        {"timestamp-ms": meta["last-updated-ms"], "metadata-file": loc}]
    meta["last-updated-ms"] = now
    new = os.path.join(os.path.dirname(path), f"09999-{uuid.uuid4()}.metadata.json")
    with open(new, "w") as f:
        json.dump(meta, f)
    con.execute("UPDATE iceberg_tables SET metadata_location=?, previous_metadata_location=? "
                "WHERE table_namespace='db' AND table_name=?", ("file://" + new, loc, name))
    con.commit()
    con.close()


def monitoring_queries(floe, name):
    """The guides' queries, by DuckDB over PyIceberg's metadata tables."""
    tbl = floe.pyiceberg_catalog().load_table(f"db.{name}")
    con = duckdb_connection()
    con.register("files", tbl.inspect.files())
    con.register("snapshots", tbl.inspect.snapshots())
    con.register("manifests", tbl.inspect.manifests())
    q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    out = {
        "small_files": q("SELECT count(*) FROM files WHERE content = 0 "
                         "AND file_size_in_bytes < 32 * 1024 * 1024"),
        "data_files": q("SELECT count(*) FROM files WHERE content = 0"),
        "avg_size": q("SELECT coalesce(avg(file_size_in_bytes), 0) FROM files WHERE content = 0"),
        "partitions_over_100": q("SELECT count(*) FROM (SELECT partition FROM files WHERE content = 0 "
                                 "GROUP BY partition HAVING count(*) > 100)"),
        "max_eq_deletes": q("SELECT coalesce(max(c), 0) FROM (SELECT partition, count(*) c FROM files "
                            "WHERE content = 2 GROUP BY partition)"),
        "snapshots": q("SELECT count(*) FROM snapshots"),
        "manifests": q("SELECT count(*) FROM manifests"),
        "partitions": q("SELECT count(DISTINCT partition) FROM files"),
    }
    out["duck_snapshots"] = q(f"SELECT count(*) FROM iceberg_snapshots('{tbl.metadata_location}')")
    return out


def assert_numbers_match(report, q):
    c, st = checks(report), report["stats"]
    assert c["small-files"]["value"] == q["small_files"]
    assert st["data_files"] == q["data_files"]
    if q["data_files"]:
        assert abs(st["data_bytes"] / st["data_files"] - q["avg_size"]) < 1e-6 * q["avg_size"] + 1e-9
    assert c["partition-files"]["value"] == q["partitions_over_100"]
    assert c["equality-deletes"]["value"] == q["max_eq_deletes"]
    assert c["snapshot-count"]["value"] == q["snapshots"] == q["duck_snapshots"]
    assert c["manifests"]["value"] == q["manifests"]
    assert c["partition-cardinality"]["value"] == q["partitions"]


def test_doctor_finds_each_problem_and_maintain_fixes_them(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.sick", "--schema",
             "id long not null, name string, region string not null, v double",
             "--partition", "region", "--property", "history.expire.max-snapshot-age-ms=604800000")
    data_dir = floe.warehouse / "db" / "sick" / "data"
    paths = []
    for r in REGIONS:
        d = data_dir / f"region={r}"
        d.mkdir(parents=True)
        for i in range(PER_REGION):
            rid = REGIONS.index(r) * PER_REGION + i
            t = pa.table({"id": pa.array([rid], pa.int64()), "name": [f"n{rid}"], "region": [r],
                          "v": [rid * 0.5]})
            p = d / f"small-{i:04d}.parquet"
            pq.write_table(t, p)
            paths.append(str(p))
    floe.run("add-files", "db.sick", *paths)
    # 50 equality deletes, one file each, all in region=eu
    for i in range(50):
        run_delete(floe, "db.sick", {"equality_fields": ["id", "region"],
                                     "equality_rows": [{"id": i, "region": "eu"}]}, tmp_path, f"d{i}")
    write_synthetic_history(floe, "sick", 5000, ["spark", "flink"])
    # a crashed writer's leftovers, ten days old
    old = time.time() - 10 * 86400
    for i in range(3):
        p = data_dir / "region=eu" / f"crashed-{i}.parquet"
        p.write_bytes(os.urandom(1 << 20))
        os.utime(p, (old, old))

    code, (rep,) = doctor(floe, "db.sick")
    c = checks(rep)
    sev = {k: v["severity"] for k, v in c.items()}
    assert code == 2 and rep["severity"] == "critical", sev
    assert sev["small-files"] == "critical" and c["small-files"]["value"] == 1200
    assert sev["partition-files"] == "warn" and c["partition-files"]["value"] == 4
    assert sev["average-file-size"] == "critical"
    assert sev["equality-deletes"] == "critical" and c["equality-deletes"]["value"] == 50
    assert sev["snapshot-count"] == "critical" and c["snapshot-count"]["value"] == 5051
    assert sev["snapshot-velocity"] == "critical"
    assert sev["time-retention"] == "critical"
    assert sev["orphan-bytes"] == "critical" and c["orphan-bytes"]["value"] == 3 << 20
    assert sev["storage-ratio"] == "critical"
    assert sev["maintenance-conflict"] == "warn" and "spark, flink" in c["maintenance-conflict"]["detail"]
    assert not c["commit-age"]["applicable"]
    assert all(c[k]["fix"] for k in sev if sev[k] != "ok")
    assert_numbers_match(rep, monitoring_queries(floe, "sick"))

    # the table view and the report with its plots
    p = floe.run("doctor", "db", "--report", tmp_path / "report.html", check=False)
    assert p.returncode == 2 and "small-files" in p.stdout and "critical" in p.stdout
    html = (tmp_path / "report.html").read_text()
    ids = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "svg":
                ids.append(dict(attrs)["id"])
    P().feed(html)
    assert ids == ["size-histogram", "files-over-time", "bytes-over-time", "deletes-over-time",
                   "snapshots-over-time", "partition-files"]
    assert html.count("<rect class=\"bar\"") == 10 + 4 and 'data-check="equality-deletes" class="critical"' in html

    # the fixes doctor names: count-based retention, then maintenance
    floe.run("table", "set", "db.sick", "history.expire.max-snapshot-age-ms=3600000",
             "history.expire.min-snapshots-to-keep=100")
    floe.run("maintain", "db.sick", "--older-than", "0s", "--retain-last", "1")
    code, (rep,) = doctor(floe, "db.sick")
    sev = {k: v["severity"] for k, v in checks(rep).items()}
    assert code == 0 and set(sev.values()) == {"ok"}, sev
    q = monitoring_queries(floe, "sick")
    assert q["data_files"] == 4 and q["max_eq_deletes"] == 0
    assert_numbers_match(rep, q)
    assert floe.run("doctor", "--all", check=False).returncode == 0


def test_doctor_commit_age_against_the_checkpoint_interval(floe, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(10)))
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.fresh", "--schema", "id long")
    floe.run("ingest", "db.fresh", src)
    time.sleep(1.2)
    p = floe.run("doctor", "db.fresh", "--checkpoint-interval", "100ms", "--format", "json", check=False)
    c = checks(json.loads(p.stdout))["commit-age"]
    assert p.returncode == 2 and c["severity"] == "critical" and c["value"] >= 1.2
    p = floe.run("doctor", "db.fresh", "--checkpoint-interval", "1h", check=False)
    assert p.returncode == 0, p.stdout
    assert floe.run("doctor", "db.nope", check=False).returncode == 3


def test_doctor_names_the_snapshots_held_as_pipeline_state(floe, tmp_path):
    """Doctor lists each snapshot expiry keeps as a pipeline's state and why
    (a completed load until a time, a resumable pipeline until forgotten), and
    warns for a resumable pipeline that went quiet past
    history.expire.keep-pipeline-state-for, naming the command that frees it."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(10)))
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.held", "--schema", "id long",
             "--property", "history.expire.keep-pipeline-state-for=1s")
    # a following load stopped by SIGTERM: resumable, held until forgotten
    p = subprocess.Popen([floe.bin, "--dir", str(floe.root), "ingest", "db.held", str(src), "--follow",
                          "--pipeline-id", "quiet", "--checkpoint-interval", "200ms", "--quiet"])
    deadline = time.time() + 60
    while time.time() < deadline and floe.run("scan", "db.held", "--count").stdout.strip() != "10":
        time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=60) == 0
    # then a one-shot load of another pipeline: complete, the current snapshot
    floe.run("ingest", "db.held", src, "--pipeline-id", "daily")
    time.sleep(1.2)
    code, (rep,) = doctor(floe, "db.held")
    c = checks(rep)["pipeline-state"]
    assert c["applicable"] and c["severity"] == "warn" and c["value"] == 1, c
    assert c["detail"].startswith("1 held as pipeline state: quiet (snapshot "), c["detail"]
    assert "resumable, held until forgotten, idle past" in c["detail"]
    assert "floe pipelines forget db.held <pipeline-id>" in c["fix"]
    floe.run("pipelines", "forget", "db.held", "quiet")
    c = checks(doctor(floe, "db.held")[1][0])["pipeline-state"]
    assert not c["applicable"] and c["severity"] == "ok", c
