"""The first hour with floe (issue 18): each stumble a new user met, as a
test. Help and the documentation's examples are in test_cli_docs.py."""
import json
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_file_tools_help_and_errors(floe, tmp_path):
    """--help is never taken for a file or a name; a missing file's error
    has no internal code name in it."""
    for args in (["avro", "cat", "--help"], ["parquet", "meta", "--help"], ["namespace", "show", "--help"],
                 ["table", "drop", "--help"], ["namespace", "list", "--help"]):
        p = floe.run(*args)
        assert p.stdout.startswith("usage: floe " + " ".join(args[:2])), args
    p = floe.run("parquet", "meta", tmp_path / "nope.parquet", check=False)
    assert p.returncode == 1 and "ENOTFOUND" not in p.stderr and "nope.parquet" in p.stderr, p.stderr
    assert not (floe.root / "warehouse").exists()


def test_outcome_lines(floe):
    assert floe.run("namespace", "create", "db").stdout == "created namespace db\n"
    assert floe.run("namespace", "set", "db", "owner=me").stdout == "set 1 property of namespace db\n"
    out = floe.run("table", "create", "db.t", "--schema", "id long").stdout
    assert out.startswith("created table db.t at file://")
    assert floe.run("table", "set", "db.t", "a=1", "b=2", "--unset", "c").stdout == \
        "set 2 properties and removed 1 of table db.t\n"
    assert floe.run("table", "rename", "db.t", "db.u").stdout == "renamed db.t to db.u\n"
    assert floe.run("--quiet", "table", "drop", "db.u").stdout == ""
    assert floe.run("namespace", "drop", "db").stdout == "dropped namespace db\n"


def test_outcomes_as_json_for_scripts(floe, tmp_path):
    """--format json on the commands that print only their outcome: one object
    with the command, the outcome line and its fields; a bad format is refused."""
    def out(*args):
        p = floe.run(*args, "--format", "json")
        (line,) = p.stdout.splitlines()
        return json.loads(line)
    assert out("namespace", "create", "db") == {"command": "namespace create", "outcome": "created namespace db",
                                                "namespace": "db"}
    o = out("table", "create", "db.t", "--schema", "id long, kind string")
    assert o["table"] == "db.t" and o["location"].startswith("file://") and o["outcome"].startswith("created table")
    assert out("table", "set", "db.t", "a=1", "--unset", "b") == {
        "command": "table set", "outcome": "set 1 property and removed 1 of table db.t", "table": "db.t",
        "properties_set": 1, "properties_removed": 1}
    p = tmp_path / "f.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "kind": ["a", "b"]}), p)
    o = out("add-files", "db.t", p)
    assert o["files"] == 1 and o["snapshot_id"] == floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"]
    assert out("table", "rename", "db.t", "db.u")["to"] == "db.u"
    assert out("table", "drop", "db.u")["files"] == "kept"
    assert floe.run("--quiet", "namespace", "drop", "db", "--format", "json").stdout == ""
    bad = floe.run("namespace", "create", "db2", "--format", "xml", check=False)
    assert bad.returncode == 2 and "--format must be text or json" in bad.stderr


def test_table_show_format_json(floe):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long")
    meta = json.loads(floe.run("table", "show", "db.t", "--format", "json").stdout)
    assert meta["format-version"] == 2
    assert floe.run("table", "show", "db.t", "--json").stdout == floe.run("table", "show", "db.t", "--format", "json").stdout


def test_ingest_outcomes_and_failures(floe, tmp_path):
    """CSV from the name; one line that says what happened (plurals, filtered,
    dead letters named, a repeated load says nothing is new); --summary json;
    a load whose every record is dead-lettered, or more than
    --max-dead-letter-ratio, exits 1."""
    csv = tmp_path / "orders.csv"
    csv.write_text("id,customer,total\n" + "".join(f"{i},c{i % 3},{i}.5\n" for i in range(10)))
    schema = "id long, customer string, total double"
    p = floe.run("ingest", "db.orders", csv, "--create-schema", schema, "--filter", "id < 4")
    assert "floe: 10 records read, 6 filtered, 0 dead-lettered, 4 committed in 1 checkpoint\n" in p.stderr, p.stderr
    p = floe.run("ingest", "db.orders", csv, "--filter", "id < 4")
    assert re.search(r"nothing new: pipeline ingest-db\.orders-[0-9a-f]{8} already loaded its inputs up to "
                     r"checkpoint 1", p.stderr), p.stderr
    p = floe.run("ingest", "db.orders", csv, "--pipeline-id", "again", "--summary", "json")
    s = json.loads(p.stdout)
    assert s["ok"] and s["records_read"] == 10 and s["records_committed"] == 10 and s["checkpoints"] == 1
    assert s["pipeline_id"] == "again" and s["resumed_after_checkpoint"] is None

    # the wrong format: every record dead-lettered, exit 1, the file named
    dlq = tmp_path / "dead.jsonl"
    p = floe.run("ingest", "db.orders", csv, "--pipeline-id", "wrong", "--format", "json",
                 "--dead-letter", dlq, check=False)
    assert p.returncode == 1, p.stderr
    assert f"11 dead-lettered to {dlq}" in p.stderr and "all 11 records were dead-lettered" in p.stderr
    assert "--format" in p.stderr
    assert len(dlq.read_text().splitlines()) == 11

    # a share above --max-dead-letter-ratio
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join('{"id": %d}\n' % i if i % 4 else "not json\n" for i in range(8)))
    p = floe.run("ingest", "db.orders", mixed, "--max-dead-letter-ratio", "0.1", "--dead-letter", dlq, check=False)
    assert p.returncode == 1 and "more than --max-dead-letter-ratio 0.1" in p.stderr, p.stderr
    p = floe.run("ingest", "db.orders", mixed, "--pipeline-id", "ok", "--max-dead-letter-ratio", "0.5",
                 "--dead-letter", dlq)
    assert "2 dead-lettered" in p.stderr


def test_scan_output_relative_path(floe, tmp_path):
    import pyarrow.parquet as pq
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long")
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": 1}\n{"id": 2}\n')
    floe.run("ingest", "db.t", data, "--quiet")
    subprocess.run([floe.bin, "--dir", floe.root, "scan", "db.t", "--format", "parquet", "--output", "out.parquet"],
                   cwd=tmp_path, check=True)
    assert pq.read_table(tmp_path / "out.parquet").column("id").to_pylist() == [1, 2]


def test_maintain_dry_run_json_is_one_object_with_orphans(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long")
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": 1}\n')
    floe.run("ingest", "db.t", data, "--quiet")
    junk = floe.warehouse / "db" / "t" / "data" / "junk.parquet"
    junk.write_bytes(b"x" * 10)
    old = time.time() - 10 * 86400
    import os
    os.utime(junk, (old, old))
    p = floe.run("maintain", "db.t", "--dry-run", "--format", "json")
    r = json.loads(p.stdout)  # one object, nothing before it
    assert r["dry_run"] and r["orphans"]["orphans"] == 1
    assert [f["path"] for f in r["orphans"]["files"]] == [f"file://{junk}"]
    text = floe.run("maintain", "db.t", "--dry-run").stdout
    assert text.startswith("dry run: nothing was changed")
    assert "would delete 1 orphan file (10 B)" in text and "-> 0 files" not in text
    assert junk.exists()


def test_one_output_style(floe, tmp_path):
    """snapshots and inspect snapshots: the summary is a JSON object,
    timestamps end in Z; files and inspect files agree on content; long
    cells are cut in table output unless --wide."""
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long, ts timestamptz")
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": 1, "ts": "2026-11-30T10:00:00Z"}\n')
    floe.run("ingest", "db.t", data, "--quiet")
    (mine,) = floe.json_rows("snapshots", "db.t")
    (theirs,) = floe.json_rows("inspect", "db.t", "snapshots")
    assert isinstance(mine["summary"], dict) and mine["summary"]["added-records"] == "1"
    assert theirs["summary"] == mine["summary"]
    assert mine["committed_at"] == theirs["committed_at"] and mine["committed_at"].endswith("Z")
    (f,) = floe.json_rows("files", "db.t")
    (g,) = floe.json_rows("inspect", "db.t", "files")
    for col in ("content", "file_path", "file_format", "spec_id", "record_count", "file_size_in_bytes"):
        assert f[col] == g[col], col
    assert f["content"] == 0
    narrow = floe.run("snapshots", "db.t").stdout
    wide = floe.run("snapshots", "db.t", "--wide").stdout
    assert max(map(len, narrow.splitlines())) < 400 < max(map(len, wide.splitlines()))
    assert "..." in floe.run("inspect", "db.t", "snapshots").stdout
    assert "..." not in floe.run("inspect", "db.t", "snapshots", "--wide").stdout


def test_metrics_names_probes_and_port_in_use(floe, tmp_path):
    port = _free_port()
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"id": 1}\n')
    cmd = [floe.bin, "--dir", floe.root, "ingest", "db.m", folder, "--follow", "--create-schema", "id long",
           "--checkpoint-interval", "200ms", "--metrics-bind", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        text, deadline = "", time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
            assert r.status == 200
        while time.time() < deadline and "floe_records_out_total{" not in text:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                text = r.read().decode()
        types = dict(re.findall(r"# TYPE (\S+) (\S+)", text))
        assert types, text
        for name, kind in types.items():
            assert re.fullmatch(r"floe_[a-z0-9_]+", name), name
            assert (kind == "counter") == name.endswith("_total"), (name, kind)
        assert "floe_records_in_total" in types and "floe_table_records_dead_lettered_total" in types
        clash = subprocess.run([floe.bin, "--dir", floe.root, "ingest", "db.m2", folder, "--create-schema", "id long",
                                "--metrics-port", str(port)], capture_output=True, text=True)
        assert clash.returncode == 1 and f"127.0.0.1:{port} is in use" in clash.stderr, clash.stderr
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_generator_honours_parallelism(floe):
    floe.run("ingest", "db.g", "--generator", "--number-of-rows", "20000", "--rows-per-second", "20000",
             "--create-schema", "id long", "--parallelism", "2", "--checkpoint-interval", "300ms", "--quiet")
    tasks = {f["file_path"].rsplit("/", 1)[1].split("-")[0] for f in floe.json_rows("files", "db.g")}
    assert tasks == {"00000", "00001"}, tasks


def test_ingest_names_create_schema_and_warns_of_ignored_settings(floe, tmp_path):
    data = tmp_path / "a.jsonl"
    data.write_text('{"id": 1, "kind": "a"}\n')
    p = floe.run("ingest", "db.t", data, check=False)
    assert p.returncode == 1 and "--create-schema" in p.stderr, p.stderr
    floe.run("ingest", "db.t", data, "--create-schema", "id long, kind string", "--quiet")
    p = floe.run("ingest", "db.t", data, "--pipeline-id", "b", "--create-schema", "id long",
                 "--partition-by", "kind")
    assert "exists with another schema" in p.stderr and "exists with another partitioning" in p.stderr, p.stderr
    p = floe.run("ingest", "db.t", data, "--pipeline-id", "c", "--create-schema", "id long, kind string")
    assert "warning" not in p.stderr, p.stderr


def test_purge_refuses_files_outside_the_table_location(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.src", "--schema", "id long")
    data = tmp_path / "a.jsonl"
    data.write_text('{"id": 1}\n')
    floe.run("ingest", "db.src", data, "--quiet")
    mine = tmp_path / "mine.parquet"
    floe.run("scan", "db.src", "--format", "parquet", "--output", mine)
    floe.run("table", "create", "db.t", "--schema", "id long")
    floe.run("add-files", "db.t", mine)
    p = floe.run("table", "drop", "db.t", "--purge", check=False)
    assert p.returncode == 1 and "not dropped" in p.stderr and str(mine) in p.stderr, p.stderr
    assert mine.exists() and "db.t" in floe.run("table", "list", "db").stdout
    out = floe.run("table", "drop", "db.t", "--purge", "--purge-external-files").stdout
    assert out == "dropped table db.t and deleted its files\n" and not mine.exists()
    assert floe.run("table", "drop", "db.src", "--purge").returncode == 0
