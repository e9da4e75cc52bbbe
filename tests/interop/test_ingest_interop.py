"""floe ingest and floe run, read back by PyIceberg and DuckDB:

* JSON lines of every type and coercion (ISO-8601 with zones, epoch numbers,
  decimals from strings and numbers, uuids, dates, nested structs, lists and
  maps) into a day-partitioned table: PyIceberg and DuckDB read the rows of
  the input;
* CSV with a header, quoting and nulls;
* the dead-letter file holds every malformed record with its reason and the
  valid records around them are committed;
* HASH distribution leaves at most one data file per partition per
  checkpoint, NONE at most parallelism x partitions (from the file list);
* floe run with one source feeding two tables through filters, each with its
  own summary keys and offsets;
* the generator, stdin, follow mode with SIGTERM (the current checkpoint
  commits, exit 0) and the Prometheus endpoint's metric names.
"""
import datetime as dt
import decimal
import json
import os
import re
import signal
import subprocess
import time
import urllib.request
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import duckdb_connection, floe_bin

UTC = dt.timezone.utc


def load(floe, ident):
    return floe.pyiceberg_catalog().load_table(ident)


def snapshots(floe, ident):
    return floe.json_rows("snapshots", ident)


def files(floe, ident, snapshot_id=None):
    args = ["files", ident]
    if snapshot_id is not None:
        args += ["--snapshot-id", snapshot_id]
    return floe.json_rows(*args)


def summary(snap):
    s = snap["summary"]
    if isinstance(s, dict):
        return s
    return dict(kv.split("=", 1) for kv in s.split(", "))


TYPES_SCHEMA = (
    "id long not null, ts timestamptz, lts timestamp, d date, t time, amount decimal(12, 3), "
    "ok boolean, f float, x double, u uuid, s string, b binary, "
    "tags list<string>, attrs map<string, long>, pt struct<lat: double, lon: double>"
)


def type_rows(n):
    """(JSON line, expected row) pairs that exercise the coercions."""
    out = []
    base = dt.datetime(2026, 11, 27, tzinfo=UTC)
    for i in range(n):
        ts = base + dt.timedelta(hours=i * 7 % 96, seconds=i, microseconds=i * 13 % 1000000)
        u = uuid.UUID(int=(i * 2654435761) % (1 << 128))
        rec = {"id": i, "s": f"row {i} é", "ok": i % 2 == 0, "tags": [f"t{i % 3}", "x"][: i % 3],
               "attrs": {"a": i, "b": -i}, "pt": {"lat": i / 7, "lon": -i / 3},
               "u": str(u), "b": "AQID", "f": 0.5, "x": i * 1.25}
        # timestamps: ISO with a zone, with an offset, epoch milliseconds
        if i % 3 == 0:
            rec["ts"] = ts.isoformat().replace("+00:00", "Z")
        elif i % 3 == 1:
            rec["ts"] = ts.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30))).isoformat()
        else:
            rec["ts"] = int(ts.timestamp() * 1000) + 0  # ms: drop the micros below
            ts = ts.replace(microsecond=ts.microsecond // 1000 * 1000)
        rec["lts"] = ts.replace(tzinfo=None).isoformat(sep=" ")
        rec["d"] = ts.date().isoformat() if i % 2 else (ts.date() - dt.date(1970, 1, 1)).days
        rec["t"] = "12:34:56.5"
        # decimals from strings and numbers (rounded half-up to the scale)
        rec["amount"] = f"{i}.1235" if i % 2 else i + 0.25
        amount = decimal.Decimal(f"{i}.124") if i % 2 else decimal.Decimal(i) + decimal.Decimal("0.25")
        if i % 5 == 0:
            rec.pop("pt")
            rec["s"] = None
        expected = {
            "id": i, "ts": ts, "lts": ts.replace(tzinfo=None), "d": ts.date(),
            "t": dt.time(12, 34, 56, 500000), "amount": amount.quantize(decimal.Decimal("0.001")),
            "ok": i % 2 == 0, "f": 0.5, "x": i * 1.25, "u": u.bytes, "s": None if i % 5 == 0 else f"row {i} é",
            "b": b"\x01\x02\x03", "tags": [f"t{i % 3}", "x"][: i % 3],
            "attrs": [("a", i), ("b", -i)],
            "pt": None if i % 5 == 0 else {"lat": i / 7, "lon": -i / 3},
        }
        out.append((json.dumps(rec), expected))
    return out


def normalise(row):
    r = dict(row)
    if isinstance(r.get("u"), uuid.UUID):
        r["u"] = r["u"].bytes
    if isinstance(r.get("attrs"), dict):
        r["attrs"] = sorted(r["attrs"].items())
    elif r.get("attrs") is not None:
        r["attrs"] = sorted((k, v) for k, v in r["attrs"])
    return r


def test_jsonl_every_type_read_by_pyiceberg_and_duckdb(floe, tmp_path):
    pairs = type_rows(500)
    src = tmp_path / "in"
    src.mkdir()
    for k in range(3):
        (src / f"part-{k}.jsonl").write_text("".join(p[0] + "\n" for p in pairs[k::3]))
    floe.run("ingest", "db.types", src, "--create-schema", TYPES_SCHEMA,
             "--partition-by", "day(ts)", "--parallelism", 3, "--checkpoint-interval", "100ms",
             "--quiet")
    tbl = load(floe, "db.types")
    got = {r["id"]: normalise(r) for r in tbl.scan().to_arrow().to_pylist()}
    assert len(got) == len(pairs)
    for _, exp in pairs:
        row = got[exp["id"]]
        for k, v in exp.items():
            if k == "attrs":
                assert sorted(row[k]) == sorted(v), k
            elif isinstance(v, float):
                assert row[k] == pytest.approx(v), k
            else:
                assert row[k] == v, (k, exp["id"])
    # DuckDB reads the same table
    con = duckdb_connection()
    n, s = con.execute(
        f"SELECT count(*), sum(amount) FROM iceberg_scan('{tbl.metadata_location}')").fetchone()
    assert n == len(pairs)
    assert s == sum(e["amount"] for _, e in pairs)
    # partitioned by day, with the pipeline's summary keys
    parts = {f["partition"]["ts_day"] for f in files(floe, "db.types")}
    assert len(parts) == 4 and all(p.startswith("2026-1") for p in parts)
    last = summary(snapshots(floe, "db.types")[-1])
    assert last["floe.pipeline-id"].startswith("ingest-db.types-")
    assert last["floe.pipeline-id"] == last["flink.job-id"]
    assert last["floe.checkpoint-id"] == last["flink.max-committed-checkpoint-id"]
    offsets = json.loads(last["floe.source-offsets"])
    assert sorted(Path(k).name for k in offsets) == ["part-0.jsonl", "part-1.jsonl", "part-2.jsonl"]
    assert all(v == (src / Path(k).name).stat().st_size for k, v in offsets.items())


def test_csv_with_header_quotes_and_nulls(floe, tmp_path):
    (tmp_path / "a.csv").write_text(
        'id,name,amount,ts,note\n'
        '1,"Smith, J",12.50,2026-01-01T00:00:00Z,"say ""hi"""\n'
        '2,,7,2026-01-02 10:00:00+01:00,\n'
        '3,"multi\nline",0.5,1767225600000,plain\n')
    floe.run("ingest", "db.csv", tmp_path / "a.csv", "--format", "csv", "--create-schema",
             "id long not null, name string, amount decimal(8, 2), ts timestamptz, note string",
             "--quiet")
    rows = sorted(load(floe, "db.csv").scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [r["name"] for r in rows] == ["Smith, J", None, "multi\nline"]
    assert [r["note"] for r in rows] == ['say "hi"', None, "plain"]
    assert [r["amount"] for r in rows] == [decimal.Decimal("12.50"), decimal.Decimal("7.00"),
                                           decimal.Decimal("0.50")]
    assert rows[1]["ts"] == dt.datetime(2026, 1, 2, 9, tzinfo=UTC)
    assert rows[2]["ts"] == dt.datetime(2026, 1, 1, tzinfo=UTC)


def test_dead_letters_hold_every_malformed_record(floe, tmp_path):
    lines, bad = [], {}
    for i in range(3000):
        if i % 101 == 7:
            kind = i % 4
            text = ['{"id": "seven", "v": 1}', '{"id": 1, "v": }', "not json at all",
                    '{"v": 2}'][kind]
            bad[i] = text
            lines.append(text)
        else:
            lines.append(json.dumps({"id": i, "v": i * 2}))
    data = tmp_path / "mixed.jsonl"
    data.write_text("\n".join(lines) + "\n")
    dlq = tmp_path / "dead.jsonl"
    floe.run("ingest", "db.dl", data, "--create-schema", "id long not null, v long",
             "--dead-letter", dlq, "--checkpoint-interval", "50ms", "--quiet")
    ids = sorted(r["id"] for r in load(floe, "db.dl").scan().to_arrow().to_pylist())
    assert ids == [i for i in range(3000) if i not in bad]
    dead = [json.loads(line) for line in dlq.read_text().splitlines()]
    assert len(dead) == len(bad)
    offsets = {}
    pos = 0
    for i, line in enumerate(lines):
        offsets[pos] = i
        pos += len(line.encode()) + 1
    for d in dead:
        i = offsets[d["offset"]]
        assert d["record"] == bad[i]
        assert d["table"] == "db.dl" and d["reason"]
        assert d["split"].endswith("mixed.jsonl")
    reasons = {d["record"]: d["reason"] for d in dead}
    assert reasons['{"id": "seven", "v": 1}'] == "id: 'seven' is not a long"
    assert reasons['{"v": 2}'] == "missing required field 'id'"
    assert "JSON syntax error" in reasons["not json at all"]
    # errors: fail stops at the first one and commits nothing of its checkpoint
    dlq2 = tmp_path / "dead2.jsonl"
    p = floe.run("ingest", "db.dl2", data, "--create-schema", "id long not null, v long",
                 "--errors", "fail", "--dead-letter", dlq2, "--checkpoint-interval", "1h", "--quiet",
                 check=False)
    assert p.returncode == 1 and "does not fit" in p.stderr
    assert len(dlq2.read_text().splitlines()) == 1  # the record that stopped it
    assert load(floe, "db.dl2").current_snapshot() is None


def files_per_checkpoint(floe, ident):
    per = defaultdict(lambda: defaultdict(int))
    for f in files(floe, ident):
        per[f["snapshot_id"]][json.dumps(f["partition"], sort_keys=True)] += 1
    return per


@pytest.mark.parametrize("mode,limit", [("hash", 1), ("none", 4)])
def test_distribution_files_per_partition_per_checkpoint(floe, tmp_path, mode, limit):
    data = tmp_path / "regions.jsonl"
    regions = ["eu", "us", "ap", "sa", "af"]
    with data.open("w") as f:
        for i in range(60000):
            f.write(json.dumps({"id": i, "region": regions[i % 5], "pad": "x" * 50}) + "\n")
    floe.run("ingest", f"db.{mode}", data, "--create-schema",
             "id long not null, region string, pad string", "--partition-by", "region",
             "--parallelism", 4, "--distribution", mode, "--checkpoint-interval", "10ms",
             "--block-size", "16KiB", "--quiet")
    per = files_per_checkpoint(floe, f"db.{mode}")
    assert len(per) >= 2  # several checkpoints
    worst = max(n for parts in per.values() for n in parts.values())
    assert worst <= limit
    if mode == "none":
        assert all(sum(p.values()) <= 4 * 5 for p in per.values())
    assert load(floe, f"db.{mode}").scan().to_arrow().num_rows == 60000


def test_run_one_source_two_tables(floe, tmp_path):
    data = tmp_path / "events.jsonl"
    with data.open("w") as f:
        for i in range(5000):
            f.write(json.dumps({"id": i, "kind": ["view", "click", "buy"][i % 3], "amount": i % 97}) + "\n")
    (tmp_path / "p.yaml").write_text(f"""
pipeline:
  name: split-events
execution.checkpointing:
  interval: 50ms
  min-pause: 10ms
parallelism.default: 2
sources:
  - name: events
    type: files
    path: events.jsonl
tables:
  - name: shop.clicks
    schema: "id long not null, kind string"
    filter: "kind = 'click'"
  - name: shop.spend
    schema: "id long not null, amount long"
    partition-by: "bucket(4, id)"
    filter: "kind in ('buy', 'view') and amount >= 10"
    distribution-mode: hash
""")
    floe.run("run", tmp_path / "p.yaml", "--quiet")
    clicks = load(floe, "shop.clicks").scan().to_arrow().to_pylist()
    spend = load(floe, "shop.spend").scan().to_arrow().to_pylist()
    assert sorted(r["id"] for r in clicks) == [i for i in range(5000) if i % 3 == 1]
    assert sorted(r["id"] for r in spend) == [i for i in range(5000) if i % 3 != 1 and i % 97 >= 10]
    for ident in ("shop.clicks", "shop.spend"):
        s = summary(snapshots(floe, ident)[-1])
        assert s["floe.pipeline-id"] == "split-events" and s["floe.source"] == "events"
        assert json.loads(s["floe.source-offsets"]) == {str(data.resolve()): data.stat().st_size}
    # unknown keys name the nearest valid one
    (tmp_path / "bad.yaml").write_text("pipeline.name: x\nexecution.checkpointing.intreval: 5s\n")
    p = floe.run("run", tmp_path / "bad.yaml", check=False)
    assert p.returncode == 1
    assert "did you mean 'execution.checkpointing.interval'" in p.stderr


def test_generator_and_stdin(floe, tmp_path):
    floe.run("ingest", "gen.events", "--generator", "--number-of-rows", 20000,
             "--rows-per-second", 0, "--create-schema",
             "event_id long not null, ts timestamptz, kind string, amount decimal(10, 2)",
             "--partition-by", "day(ts)", "--field", "event_id.kind=sequence",
             "--field", "ts.max-past=3d", "--field", "kind.values=view,click,buy", "--quiet")
    t = load(floe, "gen.events").scan().to_arrow()
    assert t.num_rows == 20000
    assert sorted(t.column("event_id").to_pylist()) == list(range(20000))
    assert set(t.column("kind").to_pylist()) == {"view", "click", "buy"}
    lines = "".join(json.dumps({"id": i}) + "\n" for i in range(1000))
    floe.run("ingest", "db.stdin", "-", "--create-schema", "id long", "--quiet", input=lines)
    assert load(floe, "db.stdin").scan().to_arrow().num_rows == 1000


def free_port():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_follow_metrics_and_sigterm(floe, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(100)))
    port = free_port()
    cmd = [floe.bin, "--dir", str(floe.root), "ingest", "db.follow", str(src), "--follow",
           "--create-schema", "id long", "--checkpoint-interval", "200ms",
           "--metrics-port", str(port), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def metrics():
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                return r.read().decode()

        deadline = time.time() + 30
        text = ""
        while time.time() < deadline:
            try:
                text = metrics()
                if re.search(r'floe_committed_data_files_records_total\{pipeline="ingest-db\.follow-[0-9a-f]{8}",'
                             r'table="db\.follow"\} 100\n', text):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        for name in ("elapsed_seconds_since_last_successful_commit", "last_flush_duration_ms",
                     "last_commit_duration_ms", "committed_data_files_total",
                     "committed_data_files_records_total", "committed_data_files_bytes_total",
                     "data_file_size_bytes_bucket", "records_in_total", "records_out_total",
                     "records_dead_lettered_total"):
            assert f"floe_{name}" in text, name
        assert "# TYPE floe_data_file_size_bytes histogram" in text
        # new files and appended data are picked up; a line waits for its newline
        (src / "b.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(100, 200)))
        with (src / "a.jsonl").open("a") as f:
            f.write(json.dumps({"id": 200}) + "\n" + '{"id": 2')
        time.sleep(1.5)
        with (src / "a.jsonl").open("a") as f:
            f.write('01}\n')
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    ids = sorted(load(floe, "db.follow").scan().to_arrow().column("id").to_pylist())
    assert ids == list(range(202))


def test_sigterm_commits_the_open_checkpoint(floe, tmp_path):
    """SIGTERM finishes the current checkpoint: with a 1 h interval nothing is
    committed before the signal, so every record the run read must land in the
    one snapshot SIGTERM commits; the exit is clean (0). A one-shot load
    stopped part-way the same way commits a prefix, and running the command
    again loads the rest (none lost, none twice)."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(300)))
    port = free_port()
    cmd = [floe.bin, "--dir", str(floe.root), "ingest", "db.term", str(src), "--follow",
           "--create-schema", "id long", "--checkpoint-interval", "1h",
           "--metrics-port", str(port), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        read_all = False
        while time.time() < deadline and not read_all:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    read_all = re.search(r'floe_records_in_total\{[^}]*\} 300\n', r.read().decode())
            except OSError:
                pass
            time.sleep(0.05)
        assert read_all, "the 300 records were not read"
        assert load(floe, "db.term").current_snapshot() is None  # nothing committed yet
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    tbl = load(floe, "db.term")
    assert len(tbl.metadata.snapshots) == 1
    assert sorted(tbl.scan().to_arrow().column("id").to_pylist()) == list(range(300))
    assert json.loads(tbl.current_snapshot().summary["floe.source-offsets"]) == {
        str((src / "a.jsonl").resolve()): (src / "a.jsonl").stat().st_size}

    # one-shot: SIGTERM part-way through a load commits what was read, and the
    # same command resumes after it
    big = tmp_path / "big.jsonl"
    n = 400_000
    with big.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": i, "pad": "x" * 40}) + "\n")
    port = free_port()
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "ingest", "db.term2", str(big),
           "--create-schema", "id long not null, pad string", "--checkpoint-interval", "1h",
           "--block-size", "64KiB", "--parallelism", "2", "--metrics-port", str(port)]
    log = tmp_path / "term2.log"
    with log.open("w") as errf:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf)
        try:
            deadline = time.time() + 60
            while time.time() < deadline and proc.poll() is None:
                try:  # signal once records flow (the handler is installed by then)
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                        m = re.search(r'floe_records_in_total\{[^}]*\} ([0-9]+)\n', r.read().decode())
                    if m and int(m.group(1)) > 0:
                        break
                except OSError:
                    pass
                time.sleep(0.01)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
    assert proc.returncode == 0, log.read_text()[-2000:]
    tbl = load(floe, "db.term2")
    first = tbl.scan().to_arrow().column("id").to_pylist() if tbl.current_snapshot() else []
    assert len(set(first)) == len(first)
    assert len(tbl.metadata.snapshots) <= 1  # at most the one SIGTERM committed
    floe.run("ingest", "db.term2", big, "--create-schema", "id long not null, pad string",
             "--checkpoint-interval", "1h", "--block-size", "64KiB", "--parallelism", 2, "--quiet")
    ids = load(floe, "db.term2").scan().to_arrow().column("id").to_pylist()
    assert len(ids) == n and len(set(ids)) == n
    print(f"SIGTERM part-way committed {len(first)} of {n} records")


@pytest.mark.parametrize("follow", [False, True])
def test_oversize_record_goes_to_dead_letters(floe, tmp_path, follow):
    """A record longer than max-record-size is dead-lettered (its start, the
    reason, its offset) and the records on either side of it are committed;
    one-shot files read through a mapping, follow mode through pread."""
    data = tmp_path / "in" / "big.jsonl"
    data.parent.mkdir()
    lines = [json.dumps({"id": i, "s": "y" * 20}) for i in range(2000)]
    lines[1000] = json.dumps({"id": 1000, "s": "x" * 100_000})
    data.write_text("".join(line + "\n" for line in lines))
    offset = sum(len(line) + 1 for line in lines[:1000])
    dlq = tmp_path / "dead.jsonl"
    (tmp_path / "p.yaml").write_text(f"""
pipeline.name: oversize
execution.checkpointing.interval: 100ms
dead-letter.path: {dlq}
sources:
  - name: in
    type: files
    path: {data.parent}
    follow: {str(follow).lower()}
    monitor-interval: 100ms
    block-size: 8KiB
    max-record-size: 32KiB
tables:
  - name: db.oversize
    schema: "id long not null, s string"
""")
    cmd = [floe.bin, "--dir", str(floe.root), "run", str(tmp_path / "p.yaml"), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if follow:
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            try:
                snap = load(floe, "db.oversize").current_snapshot()
            except Exception:  # not created yet
                snap = None
            if snap and int(snap.summary["total-records"]) == 1999:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    ids = sorted(load(floe, "db.oversize").scan().to_arrow().column("id").to_pylist())
    assert ids == [i for i in range(2000) if i != 1000]
    dead = [json.loads(line) for line in dlq.read_text().splitlines()]
    assert len(dead) == 1
    d = dead[0]
    assert d["offset"] == offset and d["split"] == str(data.resolve())
    assert "longer than" in d["reason"] and "32768" in d["reason"], d["reason"]
    assert d["record"].startswith('{"id": 1000, "s": "xxx') and len(d["record"]) <= 1024


def test_unknown_ingest_flag_and_inline_password_are_refused(floe, tmp_path):
    """An unknown floe ingest flag names the nearest valid one (as an unknown
    pipeline key does); a catalog password written into the pipeline file is
    refused (it comes from ${ENV} or catalog.password-file)."""
    (tmp_path / "a.jsonl").write_text('{"id": 1}\n')
    p = floe.run("ingest", "db.flags", tmp_path / "a.jsonl", "--paralelism", 2, check=False)
    assert p.returncode == 2 and "did you mean '--parallelism'" in p.stderr, p.stderr
    (tmp_path / "pw.yaml").write_text(
        "pipeline.name: x\ncatalog.uri: postgresql://u:hunter2@127.0.0.1/db\n"
        "sources: [{name: a, type: stdin}]\ntables: [{name: d.t}]\n")
    p = floe.run("run", tmp_path / "pw.yaml", check=False)
    assert p.returncode == 1 and "password must not be written" in p.stderr, p.stderr
    assert "hunter2" not in p.stderr
