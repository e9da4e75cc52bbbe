"""Upserts and change records written by `floe ingest` / `floe run`, read back
by the reference implementations.

A random change stream (inserts, updates, deletes; keys repeated within a
checkpoint and across checkpoints; several partitions; a composite key; null
non-key values) goes through `floe ingest --upsert` into v2 tables (equality
deletes + position delete files) and v3 tables (equality deletes + deletion
vectors), one checkpoint per round, several writer tasks and small blocks so
that one key's changes are decoded by different tasks. After every round the
table as Java Iceberg 1.10 reads it (IcebergGenerics, the java_peer's scan),
as Spark 3.5 with Iceberg 1.10 reads it, as DuckDB's iceberg extension reads
it and as `floe scan` reads it must equal a Python model of the stream, and
the partitions metadata table (delete files and deletes per partition)
equals Java's as Spark shows it. The same for Debezium JSON (with and
without the Kafka Connect envelope, op c/r/u/d, source.ts_ms into a column),
in upsert mode and in CDC mode (deletes and updates carrying before images).
Tables written by Flink's upsert sink and by Java (equality deletes, DVs)
take floe's upserts and read back equal to the model. Every refused
configuration exits non-zero naming its rule and creates nothing.
"""
import json
import os
import random
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import duckdb_connection

TESTDATA = Path(os.environ.get("FLOE_TESTDATA", "/work/shared/testdata"))
SCHEMA = "id long not null, region string not null, name string, v long"
REGIONS = ["eu", "us", "ap"]


# ---- reading ------------------------------------------------------------------------


def norm(rows, cols):
    out = []
    for r in rows:
        t = []
        for c in cols:
            v = r.get(c)
            if isinstance(v, float) and v == int(v):
                v = int(v)
            t.append(v)
        out.append(tuple(t))
    return sorted(out, key=repr)


def spark_values(v):
    import datetime as dt
    return str(v) if isinstance(v, dt.date) else v


def read_all(floe, name, java_peer, cols, catalog_db=None, warehouse=None, spark=None):
    """Every reader's rows of the table's current snapshot."""
    got = {}
    if spark is not None:
        got["spark"] = norm(({c: spark_values(r[c]) for c in cols}
                             for r in spark.sql(f"SELECT {', '.join(cols)} FROM {name}").collect()),
                            cols)
    got["floe"] = norm(floe.json_rows("scan", name), cols)
    tbl = floe.pyiceberg_catalog().load_table(name)
    con = duckdb_connection()
    sel = ", ".join(cols)
    got["duckdb"] = norm((dict(zip(cols, r)) for r in con.execute(
        f"SELECT {sel} FROM iceberg_scan('{tbl.metadata_location}')").fetchall()), cols)
    out = java_peer("scan", catalog_db or floe.warehouse / "catalog.db",
                    warehouse or f"file://{floe.warehouse}", name)
    got["java"] = norm((json.loads(l) for l in out.splitlines() if l.strip()), cols)
    return got, tbl


def check(floe, name, java_peer, want, cols, what, spark=None):
    got, tbl = read_all(floe, name, java_peer, cols, spark=spark)
    want = norm(want, cols)
    for reader, rows in got.items():
        if rows != want:
            missing = [r for r in want if r not in rows][:5]
            extra = [r for r in rows if r not in want][:5]
            raise AssertionError(f"{what}: {reader} differs from the model ({len(rows)} rows, "
                                 f"want {len(want)}); missing {missing}, extra {extra}")
    return tbl


# ---- the model ----------------------------------------------------------------------------


class Model:
    """Rows by key; upsert or CDC semantics."""

    def __init__(self, key):
        self.key = key
        self.rows = {}

    def k(self, r):
        return tuple(r[c] for c in self.key)

    def apply(self, kind, row, upsert=True):
        if kind in ("+I", "+U", "insert", "update"):
            self.rows[self.k(row)] = dict(row)
        elif kind in ("-D", "delete"):
            self.rows.pop(self.k(row), None)
        elif kind == "-U" and not upsert:
            self.rows.pop(self.k(row), None)

    def values(self):
        return list(self.rows.values())


def random_round(rng, model, n, n_keys, with_bad=False):
    """n changes as JSON lines with an "op" column; applies them to the model."""
    lines = []
    for _ in range(n):
        i = rng.randrange(n_keys)
        reg = REGIONS[rng.randrange(3)]
        row = {"id": i, "region": reg,
               "name": None if rng.random() < 0.2 else f"n{rng.randrange(1000)}",
               "v": None if rng.random() < 0.15 else rng.randrange(-500, 500)}
        x = rng.random()
        if x < 0.3:
            op = rng.choice(["+I", "insert"])
        elif x < 0.6:
            op = rng.choice(["+U", "update"])
        elif x < 0.7:
            op = "-U"  # ignored in upsert mode
        else:
            op = rng.choice(["-D", "delete"])
            if rng.random() < 0.5:
                row = {"id": i, "region": reg}  # a delete needs only the key
        model.apply(op, row)
        lines.append(json.dumps({"op": op, **row}))
    if with_bad:
        # an unknown operation and a change without its key: dead letters
        lines.insert(rng.randrange(len(lines)), json.dumps({"op": "merge", "id": 1, "region": "eu"}))
        lines.insert(rng.randrange(len(lines)), json.dumps({"op": "+I", "region": "eu", "v": 3}))
    return lines


def summaries(tbl):
    return [s.summary for s in tbl.metadata.snapshots]


# ---- the random change stream --------------------------------------------------------------


def partitions_as_spark_has_them(floe, spark, name):
    """floe's partitions metadata table against Java's (through Spark): the
    delete files and deletes of each partition (DVs count as position deletes)."""
    keys = ["record_count", "file_count", "total_data_file_size_in_bytes",
            "position_delete_record_count", "position_delete_file_count",
            "equality_delete_record_count", "equality_delete_file_count",
            "last_updated_snapshot_id"]
    got = sorted((json.dumps(r["partition"], sort_keys=True), *(r[k] for k in keys))
                 for r in floe.json_rows("inspect", name, "partitions"))
    want = sorted((json.dumps(r["partition"].asDict(), sort_keys=True), *(r[k] for k in keys))
                  for r in spark.sql(f"SELECT * FROM {name}.partitions").collect())
    assert got == want
    assert sum(r[5] + r[7] for r in got) > 0


@pytest.mark.parametrize("fv,partition", [(2, "region"), (3, "region, bucket(4, id)")])
def test_upsert_stream_read_by_java_duckdb_spark_floe(spark_floe, tmp_path, java_peer, fv, partition):
    floe, spark = spark_floe
    name = f"db.up{fv}"
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(1100 + fv)
    model = Model(["id", "region"])
    cols = ["id", "region", "name", "v"]
    dlq = tmp_path / "dlq.jsonl"
    rounds = 6
    for rnd in range(rounds):
        lines = random_round(rng, model, 700, 160, with_bad=rnd == 2)
        (src / f"r{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
        args = ["ingest", name, src, "--upsert", "--equality-fields", "id, region",
                "--rowkind-field", "op", "--pipeline-id", f"up{fv}", "--parallelism", "3",
                "--block-size", "4KiB", "--dead-letter", dlq, "--quiet"]
        if rnd == 0:
            args += ["--create-schema", SCHEMA, "--partition-by", partition, "--format-version", fv]
        floe.run(*args)
        tbl = check(floe, name, java_peer, model.values(), cols, f"v{fv} round {rnd}", spark)
    partitions_as_spark_has_them(floe, spark, name)
    # what the snapshots say (Java's summary keys; Flink's committer keys)
    summ = summaries(tbl)
    assert len(summ) == rounds
    for s in summ:
        assert s.operation.value == "overwrite"
        assert int(s["added-equality-delete-files"]) > 0
        key = "added-position-delete-files" if fv == 2 else "added-dvs"
        assert s.get(key) is not None, s
        assert s["floe.pipeline-id"] == f"up{fv}" and s["flink.job-id"] == f"up{fv}"
    # delete files as Flink writes them: equality deletes hold the key only;
    # position deletes / DVs name one data file each
    deletes = tbl.inspect.delete_files().to_pylist()
    eq = [d for d in deletes if d["content"] == 2]
    pos = [d for d in deletes if d["content"] == 1]
    assert eq and pos
    assert {tuple(d["equality_ids"]) for d in eq} == {(1, 2)}
    assert {d["file_format"] for d in pos} == ({"PARQUET"} if fv == 2 else {"PUFFIN"})
    # the two bad records went to the dead letters with their reasons
    bad = [json.loads(l) for l in dlq.read_text().splitlines()]
    reasons = sorted(b["reason"] for b in bad)
    assert len(bad) == 2, reasons
    assert any("unknown change kind 'merge'" in r for r in reasons)
    assert any("without its key: 'id'" in r for r in reasons)
    assert all(b["offset"] >= 0 for b in bad)


# ---- Debezium ------------------------------------------------------------------------------


def debezium_round(rng, model, n, n_keys, upsert, ts0):
    """Debezium change events (half with the schema envelope); the model follows."""
    lines = []
    for k in range(n):
        i = rng.randrange(n_keys)
        reg = REGIONS[i % 3]
        cur = model.rows.get((i, reg))
        ts = ts0 + k
        after = {"id": i, "region": reg,
                 "name": None if rng.random() < 0.2 else f"d{rng.randrange(1000)}",
                 "v": None if rng.random() < 0.1 else rng.randrange(1000), "src_ts": 0}
        x = rng.random()
        if cur is None and (not upsert or x < 0.5):
            op, before = rng.choice(["c", "r"]), None
        elif cur is None:
            op, before = "d", {"id": i, "region": reg}  # a delete of nothing: no-op
        elif x < 0.65:
            op, before = "u", dict(cur)
        else:
            op, before = "d", dict(cur)
        ev = {"before": before, "after": None if op == "d" else after,
              "source": {"connector": "postgresql", "ts_ms": ts, "db": "shop"},
              "op": op, "ts_ms": ts + 5, "transaction": None}
        if op == "d":
            model.rows.pop((i, reg), None)
        else:
            model.rows[(i, reg)] = {**after, "src_ts": ts}
        if rng.random() < 0.5:
            ev = {"schema": {"type": "struct", "fields": [], "optional": False,
                             "name": "shop.public.items.Envelope"}, "payload": ev}
        lines.append(json.dumps(ev))
        if rng.random() < 0.02:
            lines.append("null")  # a tombstone: no change
    return lines


@pytest.mark.parametrize("fv,upsert", [(2, True), (3, False)])
def test_debezium_stream_read_by_java_duckdb_spark_floe(spark_floe, tmp_path, java_peer, fv, upsert):
    floe, spark = spark_floe
    name = f"db.dbz{fv}"
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(77 + fv)
    model = Model(["id", "region"])
    cols = ["id", "region", "name", "v", "src_ts"]
    cfg = tmp_path / "p.yaml"
    cfg.write_text(f"""
pipeline:
  name: dbz{fv}
parallelism.default: 3
execution.checkpointing.interval: 1h
dead-letter.path: {tmp_path}/dlq.jsonl
sources:
  - name: cdc
    type: files
    path: {src}
    format: debezium-json
    block-size: 4KiB
    debezium-json.source-timestamp-column: src_ts
tables:
  - name: {name}
    schema: "id long not null, region string not null, name string, v long, src_ts long not null"
    partition-by: region
    format-version: {fv}
    upsert-enabled: {"true" if upsert else "false"}
    equality-field-columns: id,region
""")
    for rnd in range(5):
        lines = debezium_round(rng, model, 600, 150, upsert, 1_700_000_000_000 + rnd * 10_000)
        (src / f"e{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
        floe.run("run", cfg)
        tbl = check(floe, name, java_peer, model.values(), cols, f"debezium v{fv} round {rnd}",
                    spark)
    partitions_as_spark_has_them(floe, spark, name)
    assert not (tmp_path / "dlq.jsonl").exists() or not (tmp_path / "dlq.jsonl").read_text()
    if not upsert:
        # CDC mode: the deletes carry whole rows (Flink without upsert)
        eq = [d for d in tbl.inspect.delete_files().to_pylist() if d["content"] == 2]
        assert eq
        import pyarrow.parquet as pq
        names = pq.read_schema(eq[0]["file_path"].removeprefix("file://")).names
        assert names == ["id", "region", "name", "v", "src_ts"]


def test_debezium_bad_events_dead_lettered(floe, tmp_path):
    src = tmp_path / "e.jsonl"
    good = {"before": None, "after": {"id": 1, "region": "eu", "name": "a", "v": 1}, "op": "c",
            "source": {"ts_ms": 1}}
    src.write_text("\n".join([
        json.dumps(good),
        json.dumps({**good, "op": "t"}),                        # truncate: unknown here
        json.dumps({"before": None, "after": {"region": "eu"}, "op": "c"}),  # no key
        json.dumps({"after": {"id": 2, "region": "us"}}),       # no op
        json.dumps({"before": None, "after": None, "op": "d"}),  # delete without before
        '{"op": "c", "after": {"id": 3, "region": "eu"}',       # cut short
        json.dumps({"before": {"id": 1, "region": "eu"}, "after": None, "op": "d"}),
        json.dumps({"before": {"id": 9, "region": "ap"}, "after": None, "op": "d"}),  # no such key
    ]) + "\n")
    dlq = tmp_path / "dlq.jsonl"
    floe.run("ingest", "db.bad", src, "--format", "debezium-json", "--upsert",
             "--equality-fields", "id,region", "--create-schema", SCHEMA, "--partition-by",
             "region", "--dead-letter", dlq, "--quiet")
    reasons = [json.loads(l)["reason"] for l in dlq.read_text().splitlines()]
    assert len(reasons) == 5, reasons
    assert "unknown Debezium op 't'" in reasons[0]
    assert "without its key: 'id'" in reasons[1]
    assert "no \"op\"" in reasons[2]
    assert "without a \"before\" image" in reasons[3]
    assert "JSON" in reasons[4]
    assert floe.json_rows("scan", "db.bad") == []  # created, then deleted; the delete of 9 is a no-op


# ---- tables written by Flink and by Java ------------------------------------------------------


def floe_avro(floe, *args):
    return subprocess.run([floe.bin, "avro", *map(str, args)], capture_output=True, text=True,
                          check=True).stdout


def swap(v, old, new):
    if isinstance(v, str):
        return new + v[len(old):] if v.startswith(old) else v
    if isinstance(v, list):
        return [swap(x, old, new) for x in v]
    if isinstance(v, dict):
        return {k: swap(x, old, new) for k, x in v.items()}
    return v


def relocate(floe, src, dst, old):
    """Copy a path table and rewrite the prefix `old` of every path it records
    (metadata JSON, manifest lists — with manifest_length fixed — and
    manifests) to `dst`, as Impala's rewrite_metadata does."""
    shutil.copytree(src, dst)
    new = str(dst)
    meta = dst / "metadata"
    avros = sorted(meta.glob("*.avro"), key=lambda p: p.name.startswith("snap-"))  # manifests first
    sizes = {}
    for p in avros:
        info = json.loads(floe_avro(floe, "meta", p))
        md = info["metadata"]
        schema = tmp_schema = p.with_suffix(".schema.json")
        tmp_schema.write_text(json.dumps(md["avro.schema"]))
        recs = [swap(json.loads(l), old, new) for l in floe_avro(floe, "cat", p).splitlines() if l]
        for r in recs:
            if "manifest_path" in r and r["manifest_path"] in sizes:
                r["manifest_length"] = sizes[r["manifest_path"]]
        rows = p.with_suffix(".jsonl")
        rows.write_text("".join(json.dumps(r) + "\n" for r in recs))
        args = ["write", "--codec", md.get("avro.codec", "null")]
        for k, v in md.items():
            if k in ("avro.schema", "avro.codec"):
                continue
            args += ["--meta", f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
        out = p.with_suffix(".new")
        floe_avro(floe, *args, schema, rows, out)
        os.replace(out, p)
        schema.unlink()
        rows.unlink()
        sizes[str(p)] = p.stat().st_size
    for m in meta.glob("*.metadata.json"):
        d = swap(json.loads(m.read_text()), old, new)
        m.write_text(json.dumps(d))
    return dst


def register(floe, name, table_dir):
    metas = sorted(table_dir.glob("metadata/*.metadata.json"),
                   key=lambda p: int(p.name[1:].split(".")[0]) if p.name[1:].split(".")[0].isdigit() else -1)
    hint = next((table_dir / "metadata" / h for h in ("version-hint.text", "version-hint.txt")
                 if (table_dir / "metadata" / h).exists()), None)
    meta = metas[-1]
    if hint and hint.read_text().strip():
        h = hint.read_text().strip()
        cand = table_dir / "metadata" / (f"v{h}.metadata.json" if h.isdigit() else f"{h}.metadata.json")
        if cand.exists():
            meta = cand
    floe.run("namespace", "create", name.split(".")[0], check=False)
    floe.pyiceberg_catalog().register_table(name, f"file://{meta}")


def java_rows(floe, java_peer, name, cols):
    out = java_peer("scan", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", name)
    return [dict(zip(cols, (json.loads(l)[c] for c in cols))) for l in out.splitlines() if l.strip()]


ICE = TESTDATA / "impala/testdata/data/iceberg_test/hadoop_catalog/ice"
DUCK = TESTDATA / "duckdb-iceberg/data/persistent"

FOREIGN = [
    # (id, source dir, recorded prefix, columns, key, partition column, value factory)
    ("flink-eq", ICE / "iceberg_v2_delete_equality",
     "/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_delete_equality",
     ["id", "data"], ["id"], None),
    ("flink-eq-partitioned", ICE / "iceberg_v2_delete_equality_partitioned",
     "/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_delete_equality_partitioned",
     None, None, None),
    ("duckdb-eq", DUCK / "equality_deletes/warehouse/mydb/mytable",
     "data/persistent/equality_deletes/warehouse/mydb/mytable", ["id", "name", "bir"], ["id"], None),
    ("duckdb-eq-partitioned", DUCK / "equality_deletes/warehouse/mydb/mytable_partitioned",
     "data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned", ["id", "name", "bir"],
     ["id", "name"], "name"),
]


def table_columns(tbl):
    return [f.name for f in tbl.schema().fields]


@pytest.mark.parametrize("case", FOREIGN, ids=[c[0] for c in FOREIGN])
def test_upserts_into_flink_and_java_tables(floe, tmp_path, java_peer, case):
    cid, src, old, cols, key, part = case
    table_dir = relocate(floe, src, tmp_path / "t" / src.name, old)
    name = "ice." + src.name.replace("-", "_")
    register(floe, name, table_dir)
    tbl = floe.pyiceberg_catalog().load_table(name)
    cols = cols or table_columns(tbl)
    schema = tbl.schema()
    if key is None:
        key = [schema.find_field(i).name for i in schema.identifier_field_ids] or [cols[0]]
        spec_cols = [schema.find_field(f.source_id).name for f in tbl.spec().fields]
        key += [c for c in spec_cols if c not in key]
    # the table as Java reads it before: the model's start
    before = java_rows(floe, java_peer, name, cols)
    expected_before = {  # INVENTORY.md / EXPECTED_RESULTS.md
        "flink-eq": [(1, "test_1_base"), (2, "test_2_updated")],
        "duckdb-eq": [(4, "d", "2025-01-04"), (5, "e", "2025-01-05")],
        "duckdb-eq-partitioned": [(1, "a", "2025-01-01"), (4, "d", "2025-01-04"),
                                  (5, "e", "2025-01-05")],
    }
    if cid in expected_before:
        assert norm(before, cols) == sorted(expected_before[cid], key=repr)
    assert before
    model = Model(key)
    for r in before:
        model.rows[model.k(r)] = r
    types = {f.name: str(f.field_type) for f in schema.fields}

    def value(c, i):
        t = types[c]
        if t in ("long", "int"):
            return i
        if t == "date":
            return f"2025-02-{1 + i % 28:02d}"
        return f"{c}{i}"

    rng = random.Random(hash(cid) & 0xffff)
    existing = list(model.rows.values())
    lines = []
    for k in range(40):
        if existing and rng.random() < 0.5:
            base = dict(rng.choice(existing))  # an update of a key the table holds
        else:
            base = {c: value(c, 100 + k) for c in cols}
        row = {c: (base[c] if c in key else value(c, 500 + k)) for c in cols}
        op = "+U" if rng.random() < 0.8 else "-D"
        model.apply(op, row)
        lines.append(json.dumps({"op": op, **row}))
    inp = tmp_path / "changes.jsonl"
    inp.write_text("\n".join(lines) + "\n")
    floe.run("ingest", name, inp, "--upsert", "--equality-fields", ",".join(key),
             "--rowkind-field", "op", "--quiet")
    want = norm(model.values(), cols)
    assert want != norm(before, cols)
    got = norm(java_rows(floe, java_peer, name, cols), cols)
    assert got == want, (cid, "java")
    tbl = floe.pyiceberg_catalog().load_table(name)
    con = duckdb_connection()
    sel = ", ".join(cols)
    duck = norm((dict(zip(cols, (str(x) if types[c] == "date" else x for c, x in zip(cols, r))))
                 for r in con.execute(f"SELECT {sel} FROM iceberg_scan('{tbl.metadata_location}')").fetchall()),
                cols)
    assert duck == want, (cid, "duckdb")


def test_upserts_into_a_table_with_java_dvs(floe, tmp_path, java_peer):
    """A v3 table with deletion vectors Java wrote (BaseDVFileWriter) takes
    floe's upserts; Java and DuckDB read the model."""
    name = "db.jdv"
    rows = [{"id": i, "region": REGIONS[i % 3], "name": f"n{i}", "v": i} for i in range(60)]
    inp = tmp_path / "base.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    floe.run("ingest", name, inp, "--create-schema", SCHEMA, "--partition-by", "region",
             "--format-version", "3", "--quiet")
    tbl = floe.pyiceberg_catalog().load_table(name)
    model = Model(["id", "region"])
    for r in rows:
        model.rows[(r["id"], r["region"])] = r
    import pyarrow.parquet as pq
    args = []
    for f in tbl.inspect.data_files().to_pylist():
        ids = pq.read_table(f["file_path"].removeprefix("file://"), columns=["id", "region"]).to_pylist()
        pos = [0, 3, len(ids) - 1]
        for p in pos:
            model.rows.pop((ids[p]["id"], ids[p]["region"]), None)
        args.append(f"{f['file_path']}={','.join(map(str, pos))}")
    java_peer("dv", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", name, *args)
    cols = ["id", "region", "name", "v"]
    check(floe, name, java_peer, model.values(), cols, "java DVs")
    rng = random.Random(5)
    lines = []
    for k in range(120):
        i = rng.randrange(80)
        row = {"id": i, "region": REGIONS[i % 3], "name": f"u{k}", "v": k}
        op = rng.choice(["+U", "+U", "+I", "-D"])
        model.apply(op, row)
        lines.append(json.dumps({"op": op, **row}))
    (tmp_path / "up.jsonl").write_text("\n".join(lines) + "\n")
    floe.run("ingest", name, tmp_path / "up.jsonl", "--upsert", "--equality-fields", "id,region",
             "--rowkind-field", "op", "--parallelism", "2", "--quiet")
    check(floe, name, java_peer, model.values(), cols, "upserts after Java DVs")


# ---- refused configurations ----------------------------------------------------------------


def nothing_created(floe, table):
    db = floe.warehouse / "catalog.db"
    if db.exists():
        con = sqlite3.connect(db)
        try:
            n = con.execute("SELECT count(*) FROM iceberg_tables WHERE table_name = ?",
                            (table.split(".")[1],)).fetchone()[0]
        except sqlite3.OperationalError:
            n = 0
        assert n == 0
    assert not (floe.warehouse / table.split(".")[0] / table.split(".")[1]).exists()


REFUSED = [
    ("partition-source-not-in-key", ["--upsert", "--equality-fields", "id", "--partition-by", "region"],
     "equality fields must include every partition source column"),
    ("distribution-none", ["--upsert", "--equality-fields", "id,region", "--distribution", "none"],
     "distribution-mode none"),
    ("format-v1", ["--upsert", "--equality-fields", "id", "--format-version", "1"],
     "format version 2 or later"),
    ("no-key", ["--upsert"], "need equality fields"),
    ("property-none", ["--property", "write.upsert.enabled=true", "--property",
                       "write.distribution-mode=none", "--equality-fields", "id"],
     "distribution NONE"),
    ("filter", ["--upsert", "--equality-fields", "id", "--filter", "v > 1"],
     "routing filter on the table's column 'v' cannot be combined"),
    ("unknown-key", ["--upsert", "--equality-fields", "id,nope"], "'nope' is not a column"),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_before_anything_is_created(floe, tmp_path, case):
    cid, args, msg = case
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": 1, "region": "eu", "name": "a", "v": 1}\n')
    p = floe.run("ingest", "db.r", inp, "--create-schema", SCHEMA, *args, check=False)
    assert p.returncode != 0, p.stderr
    assert msg in p.stderr, p.stderr
    nothing_created(floe, "db.r")


def test_refused_on_an_existing_v1_table_leaves_it_alone(floe, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": 1, "region": "eu", "name": "a", "v": 1}\n')
    floe.run("ingest", "db.v1", inp, "--create-schema", SCHEMA, "--format-version", "1", "--quiet")
    before = floe.pyiceberg_catalog().load_table("db.v1").metadata_location
    p = floe.run("ingest", "db.v1", inp, "--upsert", "--equality-fields", "id",
                 "--pipeline-id", "other", check=False)
    assert p.returncode != 0 and "format version 2 or later" in p.stderr, p.stderr
    assert floe.pyiceberg_catalog().load_table("db.v1").metadata_location == before


def test_table_property_alone_turns_upsert_on(floe, tmp_path):
    """write.upsert.enabled=true on the table (as Flink's tables carry it) is
    upsert mode without --upsert; the schema's identifier fields are the key."""
    schema = json.dumps({"type": "struct", "schema-id": 0, "identifier-field-ids": [1], "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"}]})
    a = tmp_path / "a.jsonl"
    a.write_text('{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n{"id": 1, "name": "a2"}\n')
    floe.run("ingest", "db.p", a, "--create-schema", schema, "--property",
             "write.upsert.enabled=true", "--quiet")
    b = tmp_path / "b.jsonl"
    b.write_text('{"id": 2, "name": "b2"}\n')
    floe.run("ingest", "db.p", b, "--quiet")
    rows = sorted((r["id"], r["name"]) for r in floe.json_rows("scan", "db.p"))
    assert rows == [(1, "a2"), (2, "b2")]


def test_primary_key_in_the_column_list_is_the_key(floe, tmp_path):
    """Flink's `PRIMARY KEY (...) NOT ENFORCED` in --create-schema: the
    schema's identifier fields (as Java sees them), and the upsert key without
    --equality-fields."""
    a = tmp_path / "a.jsonl"
    a.write_text('{"id": 1, "region": "eu", "v": 1}\n{"id": 2, "region": "eu", "v": 2}\n'
                 '{"id": 1, "region": "eu", "v": 3}\n{"id": 1, "region": "us", "v": 4}\n')
    floe.run("ingest", "db.pk", a, "--create-schema",
             "id long, region string, v long, PRIMARY KEY (id, region) NOT ENFORCED",
             "--partition-by", "region", "--upsert", "--quiet")
    schema = floe.pyiceberg_catalog().load_table("db.pk").schema()
    assert [schema.find_field(i).name for i in schema.identifier_field_ids] == ["id", "region"]
    assert schema.find_field("id").required and not schema.find_field("v").required
    rows = sorted((r["id"], r["region"], r["v"]) for r in floe.json_rows("scan", "db.pk"))
    assert rows == [(1, "eu", 3), (1, "us", 4), (2, "eu", 2)]

