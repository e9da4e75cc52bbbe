"""Schema evolution (issue 16 item 3): `floe table alter`, and a pipeline
whose records change over time with `unknown-fields: evolve`.

Records of 5 kinds, routed to 5 tables, change in 4 phases: new fields
(top-level and nested), wider numbers (int -> long, float -> double,
decimal precision), a required field left out. Each table's final schema
must be the expected evolution, PyIceberg must read every row with nulls
where a field was absent, DuckDB must count them; a SIGKILL campaign (kills
during data commits and during schema commits) must lose and duplicate
nothing.
"""
import json
import random
import signal
import subprocess
import time
from decimal import Decimal

import pyarrow as pa

from conftest import duckdb_connection

KINDS = [f"k{i}" for i in range(5)]
BASE = "id long not null, kind string not null, n int, f float, amt decimal(6, 2), req string not null"


def record(kind_ix, i, phase):
    k = KINDS[kind_ix]
    r = {"id": i, "kind": k, "n": i % 100, "f": 1.5, "amt": 12.34, "req": "r"}
    if phase >= 1:
        r[f"x_{k}"] = f"s{i}"
        r["geo"] = {"lat": i * 0.5}
    if phase >= 2:
        r["n"] = 5_000_000_000 + i
        r["f"] = 1e300
        r["amt"] = 123456.78
        r["geo"]["lon"] = 1.25
    if phase >= 3:
        del r["req"]
        if kind_ix % 2 == 0:
            r["tags"] = ["a", str(i)]
    return r


def write_input(folder, per_phase):
    """phase-P-*.jsonl in name order; returns the model {table: {id: record}}."""
    folder.mkdir()
    model = {k: {} for k in KINDS}
    i = 0
    for phase in range(4):
        with (folder / f"phase-{phase}.jsonl").open("w") as f:
            for _ in range(per_phase):
                for kx, k in enumerate(KINDS):
                    r = record(kx, i, phase)
                    model[k][i] = r
                    f.write(json.dumps(r) + "\n")
                    i += 1
    return model


def write_extra(folder, extra, model, next_id, per, new_field):
    """phase-9-EXTRA.jsonl: per records of each kind after the others (phase 3
    shape), with a new long field e<EXTRA> when new_field (a schema commit for
    a kill campaign to land in); -> (next id, the field or None)."""
    field = f"e{extra}" if new_field else None
    with (folder / f"phase-9-{extra:03d}.jsonl").open("w") as f:
        for _ in range(per):
            for kx, k in enumerate(KINDS):
                r = record(kx, next_id, 3)
                if field:
                    r[field] = 5_000_000_000 + next_id  # a long (a small int would be inferred int)
                model[k][next_id] = r
                f.write(json.dumps(r) + "\n")
                next_id += 1
    return next_id, field


def pipeline_yaml(src, dlq, pid="evolve-test", block="4KiB"):
    tables = "".join(
        f"""  - name: db.ev_{k}
    schema: "{BASE}"
    filter: "kind = '{k}'"
    unknown-fields: evolve
""" for k in KINDS)
    return f"""pipeline.id: {pid}
execution.checkpointing.interval: 30ms
parallelism.default: 2
dead-letter.path: {dlq}
sources:
  - name: in
    type: files
    path: {src}
    pattern: "*.jsonl"
    block-size: {block}
tables:
{tables}"""


def expected_fields(kind_ix, extra_fields=()):
    """(name, type string, required) of the final schema, in order."""
    k = KINDS[kind_ix]
    out = [("id", "long", True), ("kind", "string", True), ("n", "long", False),
           ("f", "double", False), ("amt", "decimal(8, 2)", False), ("req", "string", False),
           (f"x_{k}", "string", False), ("geo", "struct<lat: double, lon: double>", False)]
    if kind_ix % 2 == 0:
        out.append(("tags", "list<string>", False))
    return out + [(e, "long", False) for e in extra_fields]


def type_str(t):
    from pyiceberg.types import ListType, StructType
    if isinstance(t, StructType):
        return "struct<" + ", ".join(f"{f.name}: {type_str(f.field_type)}" for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"list<{type_str(t.element_type)}>"
    return str(t)


def check_tables(floe, model, extra_fields=()):
    cat = floe.pyiceberg_catalog()
    con = duckdb_connection()
    for kx, k in enumerate(KINDS):
        tbl = cat.load_table(f"db.ev_{k}")
        got = [(f.name, type_str(f.field_type), f.required) for f in tbl.schema().fields]
        assert got == expected_fields(kx, extra_fields), (k, got, expected_fields(kx, extra_fields))
        # nested members added by records are optional
        assert all(not f.required for f in tbl.schema().find_field("geo").field_type.fields)
        rows = tbl.scan().to_arrow().to_pylist()
        ids = [r["id"] for r in rows]
        assert len(ids) == len(set(ids)) == len(model[k]), (k, len(ids), len(set(ids)))
        for r in rows:
            m = model[k][r["id"]]
            assert r["kind"] == k and r["n"] == m["n"] and r["f"] == m["f"], (r, m)
            assert r["amt"] == Decimal(str(m["amt"])).quantize(Decimal("0.01")), (r, m)
            assert r["req"] == m.get("req")
            assert r[f"x_{k}"] == m.get(f"x_{k}")
            geo = m.get("geo")
            assert r["geo"] == (None if geo is None else {"lat": geo["lat"], "lon": geo.get("lon")})
            if kx % 2 == 0:
                assert r["tags"] == m.get("tags")
            for e in extra_fields:
                assert r[e] == m.get(e), (r, m)
        n, nx, nlon = con.execute(
            f"SELECT count(*), count(x_{k}), count(geo.lon) "
            f"FROM iceberg_scan('{tbl.metadata_location}')").fetchone()
        assert n == len(model[k])
        assert nx == sum(1 for m in model[k].values() if f"x_{k}" in m)
        assert nlon == sum(1 for m in model[k].values() if "lon" in m.get("geo", {}))


def test_alter_cli_columns_partitions_write_order(floe):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long not null, ts timestamptz, n int, amt decimal(6, 2)",
             "--partition", "bucket(4, id)")
    floe.run("ingest", "db.t", "-", "--format", "json", "--quiet",
             input='{"id": 1, "ts": "2026-11-30T10:00:00Z", "n": 7, "amt": 1.5}\n')
    out = floe.run("table", "alter", "db.t", "--add-column", "geo", "struct<lat: double>", "--doc", "where",
                   "--add-column", "geo.lon", "double", "--widen", "n", "long", "--widen", "amt", "decimal(9, 2)",
                   "--make-optional", "id", "--replace-partition", "id_bucket", "bucket(8, id)",
                   "--add-partition", "day(ts)", "--write-order", "ts desc nulls last").stdout
    assert "add column geo" in out and "widen n int -> long" in out
    # refused changes name the field and change nothing
    p = floe.run("table", "alter", "db.t", "--widen", "n", "int", check=False)
    assert p.returncode != 0 and "column 'n'" in p.stderr
    p = floe.run("table", "alter", "db.t", "--add-column", "nope.x", "int", check=False)
    assert p.returncode != 0 and "column 'nope'" in p.stderr
    p = floe.run("table", "alter", "db.t", "--drop-partition", "zzz", check=False)
    assert p.returncode != 0 and "partition field 'zzz'" in p.stderr
    floe.run("ingest", "db.t", "-", "--format", "json", "--quiet",
             input='{"id": 2, "ts": "2026-12-01T10:00:00Z", "n": 6000000000, "amt": 1234567.5, '
                   '"geo": {"lat": 1.0, "lon": 2.0}}\n')
    tbl = floe.pyiceberg_catalog().load_table("db.t")
    s = tbl.schema()
    assert str(s.find_field("n").field_type) == "long" and not s.find_field("id").required
    assert s.find_field("geo").doc == "where"
    assert [(f.name, str(f.transform)) for f in tbl.spec().fields] == [("id_bucket", "bucket[8]"), ("ts_day", "day")]
    assert [str(f.transform) for f in tbl.sort_order().fields] == ["identity"]
    rows = sorted(tbl.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["n"], r["geo"]) for r in rows] == [(1, 7, None), (2, 6000000000, {"lat": 1.0, "lon": 2.0})]
    con = duckdb_connection()
    assert con.execute(f"SELECT sum(n) FROM iceberg_scan('{tbl.metadata_location}')").fetchone()[0] == 6000000007


def test_unknown_fields_drop_and_dead_letter(floe, tmp_path):
    floe.run("namespace", "create", "db")
    data = '{"id": 1, "v": "a"}\n{"id": 2, "v": "b", "new": 1}\n'
    for policy in ("drop", "dead-letter"):
        dlq = tmp_path / f"dlq-{policy}.jsonl"
        floe.run("ingest", f"db.{policy.replace('-', '_')}", "-", "--format", "json", "--quiet",
                 "--create-schema", "id long, v string", "--unknown-fields", policy,
                 "--dead-letter", dlq, "--max-dead-letter-ratio", "1", input=data)
    cat = floe.pyiceberg_catalog()
    assert len(cat.load_table("db.drop").scan().to_arrow()) == 2
    assert [f.name for f in cat.load_table("db.drop").schema().fields] == ["id", "v"]
    assert len(cat.load_table("db.dead_letter").scan().to_arrow()) == 1
    dead = [json.loads(line) for line in (tmp_path / "dlq-dead-letter.jsonl").read_text().splitlines()]
    assert [(d["offset"], d["reason"]) for d in dead] == [(20, "unknown field 'new'")]


def test_five_kinds_evolve_in_a_pipeline(floe, tmp_path):
    model = write_input(tmp_path / "in", per_phase=40)
    yaml = tmp_path / "p.yaml"
    yaml.write_text(pipeline_yaml(tmp_path / "in", tmp_path / "dlq.jsonl"))
    p = floe.run("run", str(yaml), "--summary", "json")
    summary = json.loads(p.stdout.splitlines()[-1])
    assert summary["records_dead_lettered"] == 0, p.stderr
    assert summary["records_committed"] == 800
    check_tables(floe, model)
    # every schema change is its own metadata update before the data (the
    # schema history grows, the data never needs a schema it predates)
    tbl = floe.pyiceberg_catalog().load_table("db.ev_k0")
    ids = {s.schema_id for s in tbl.schemas().values()}
    assert len(ids) >= 3
    for snap in tbl.snapshots():
        assert snap.schema_id is None or snap.schema_id in ids


def test_sigkill_during_data_and_schema_commits_is_exactly_once(floe, tmp_path):
    # each checkpoint commits 5 tables: few, large blocks keep the runs short
    model = write_input(tmp_path / "in", per_phase=400)
    yaml = tmp_path / "p.yaml"
    yaml.write_text(pipeline_yaml(tmp_path / "in", tmp_path / "dlq.jsonl", block="16KiB"))
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "run", str(yaml), "--quiet"]
    rng = random.Random(16_3)
    kills = schema_kills = runs = extra = 0
    extra_fields = []
    next_id = sum(len(m) for m in model.values())
    finished = False
    while not finished and runs < 200:
        runs += 1
        log = tmp_path / f"run-{runs}.log"
        want_more = kills < 20 or schema_kills < 2
        at_schema = want_more and rng.random() < 0.4
        # half the other kills land before the run's first commit (opening,
        # decoding, writing files), so the campaign does not use up the input
        early = rng.uniform(0.05, 0.4) if rng.random() < 0.5 else None
        with log.open("w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            try:
                if not want_more:
                    proc.wait(timeout=300)
                else:
                    deadline = time.time() + 15
                    start = time.time()
                    while time.time() < deadline and proc.poll() is None:
                        text = log.read_text()
                        if at_schema and "committing a schema update" in text:
                            time.sleep(rng.uniform(0, 0.005))
                            break
                        if not at_schema and early is not None and time.time() - start > early:
                            break
                        if not at_schema and ("committed as" in text or time.time() - start > 0.5):
                            time.sleep(rng.uniform(0, 0.02))
                            break
                        time.sleep(0.002)
                    proc.wait(timeout=0.001)
                finished = proc.returncode == 0
                assert finished, log.read_text()[-2000:]
                if want_more:
                    # a fast machine loaded everything first: more input
                    # (a file name after the others), and go on killing
                    finished = False
                    extra += 1
                    # while schema kills are missing, the new file brings a new
                    # field: a schema commit left to kill in
                    next_id, field = write_extra(tmp_path / "in", extra, model, next_id, 100, schema_kills < 2)
                    if field:
                        extra_fields.append(field)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                if at_schema and "committing a schema update" in log.read_text():
                    schema_kills += 1
    # kills inside a schema commit are rare under load: two of them, at least
    assert finished and kills >= 20 and schema_kills >= 2, (runs, kills, schema_kills)
    check_tables(floe, model, extra_fields)
