"""Upserts in index mode (write.upsert.mode=index): the random change stream of
test_upsert_interop.py, one `floe ingest` per round (so every round loads
the persisted key index, or rebuilds it from the table after another writer's
commit), read back by Java Iceberg, DuckDB, floe and
(v3) Spark equal to the model after every round — with no equality delete
file in the table, ever. Between rounds: `floe maintain` compaction, and a
PyIceberg append of rows whose keys the table already holds (two live rows
for one key until its next change). A budget small enough to spill gives the
same table. An ingest that runs many checkpoints while another writer
commits falls back to equality deletes for the checkpoint that saw the
commit (no wrong DV) and back to the index after.
"""
# CI time: floe and DuckDB (one connection) read every round as it lands;
# Java reads the snapshot of every round of both tables (v2 and v3) at the end
# in one JVM (`scan-at`), Spark the v3 snapshots that carry the acceptance's
# cases — the round after compaction (DVs on rewritten files) and the last
# round (the colliding append's keys changed: both rows deleted) — in one
# query. A snapshot's rows never change, so reading it at the
# end is the same check as reading it when it was committed, without a JVM or
# a Spark job per round.
import json
import random

import pyarrow as pa
import pytest

from conftest import duckdb_connection
from test_upsert_interop import Model, norm, random_round, spark_values, SCHEMA

COLS = ["id", "region", "name", "v"]


def differs(what, reader, rows, want):
    return (f"{what}: {reader} differs from the model ({len(rows)} rows, want {len(want)}); "
            f"missing {[r for r in want if r not in rows][:5]}, "
            f"extra {[r for r in rows if r not in want][:5]}")


def cheap_check(floe, con, name, want, what):
    """floe's and DuckDB's rows of the current snapshot equal want; returns the
    table (PyIceberg) and its current snapshot id."""
    want = norm(want, COLS)
    tbl = floe.pyiceberg_catalog().load_table(name)
    duck = norm((dict(zip(COLS, r)) for r in con.execute(
        f"SELECT {', '.join(COLS)} FROM iceberg_scan('{tbl.metadata_location}')").fetchall()),
        COLS)
    for reader, rows in (("floe", norm(floe.json_rows("scan", name), COLS)), ("duckdb", duck)):
        assert rows == want, differs(what, reader, rows, want)
    return tbl, tbl.current_snapshot().snapshot_id


def check_snapshots(floe, java_peer, spark, wants, spark_keys=None):
    """Java (one JVM) reads every snapshot of wants ({(table, snapshot id):
    (rows, what)}), Spark (one query) those of spark_keys, equal to its rows."""
    out = java_peer("scan-at", floe.warehouse / "catalog.db", f"file://{floe.warehouse}",
                    *(f"{t}@{i}" for t, i in wants))
    got = {("java", k): [] for k in wants}
    for line in out.splitlines():
        if line.strip():
            r = json.loads(line)
            got[("java", (r["_table"], r["_snapshot"]))].append(r)
    if spark is not None and spark_keys:
        sel = ", ".join(COLS)
        for t in {t for t, _ in spark_keys}:
            spark.sql(f"REFRESH TABLE {t}")
        q = " UNION ALL ".join(f"SELECT '{t}' AS _table, {i} AS _snapshot, {sel} FROM {t} "
                               f"VERSION AS OF {i}" for t, i in spark_keys)
        for k in spark_keys:
            got[("spark", k)] = []
        for r in spark.sql(q).collect():
            got[("spark", (r["_table"], r["_snapshot"]))].append(
                {c: spark_values(r[c]) for c in COLS})
    for (reader, k), rows in got.items():
        want, what = wants[k]
        rows, want = norm(rows, COLS), norm(want, COLS)
        assert rows == want, differs(what, reader, rows, want)


def eq_delete_files(tbl):
    return [d for d in tbl.inspect.delete_files().to_pylist() if d["content"] == 2]


def ingest(floe, name, src, rnd, fv, extra=()):
    args = ["ingest", name, src, "--upsert", "--equality-fields", "id, region",
            "--rowkind-field", "op", "--pipeline-id", "ix", "--parallelism", "3",
            "--block-size", "4KiB", "--quiet", *extra]
    if rnd == 0:
        args += ["--create-schema", SCHEMA, "--partition-by", "region",
                 "--format-version", fv, "--property", "write.upsert.mode=index"]
    floe.run(*args)


def colliding_append(floe, name, model, rng, fv, tmp_path, n=25):
    """Another writer appends rows of keys the model holds (PyIceberg on v2; on
    v3, which PyIceberg cannot write, a plain floe append of another
    pipeline); their next change (the next round starts with one for each)
    must delete both rows."""
    keys = rng.sample(sorted(model.rows), min(n, len(model.rows)))
    rows = [{"id": k[0], "region": k[1], "name": "dup", "v": 1} for k in keys]
    if fv == 2:
        tbl = floe.pyiceberg_catalog().load_table(name)
        tbl.append(pa.Table.from_pylist(rows, schema=tbl.schema().as_arrow()))
    else:
        f = tmp_path / "dups.jsonl"
        f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        floe.run("ingest", name, f, "--pipeline-id", "other", "--quiet")
    return keys


def test_index_mode_stream_read_by_java_duckdb_spark_floe(spark_floe, tmp_path, java_peer):
    """v2 (position delete files; the colliding append by PyIceberg) and v3
    (DVs; the colliding append by another floe pipeline), round by round."""
    floe, spark = spark_floe
    con = duckdb_connection()
    wants, spark_keys = {}, []
    st = {}
    for fv in (2, 3):
        src = tmp_path / f"in{fv}"
        src.mkdir()
        st[fv] = {"name": f"db.ix{fv}", "src": src, "rng": random.Random(7700 + fv),
                  "model": Model(["id", "region"]), "pending": []}
    for rnd in range(4):  # 1: compaction after; 2: colliding append after; 3: its fix
        for fv in (2, 3):
            x = st[fv]
            name, model, rng = x["name"], x["model"], x["rng"]
            lines = [json.dumps({"op": "+U", "id": k[0], "region": k[1], "name": "fix", "v": 2})
                     for k in x["pending"]]
            for k in x["pending"]:
                model.apply("+U", {"id": k[0], "region": k[1], "name": "fix", "v": 2})
            x["pending"] = []
            lines += random_round(rng, model, 700, 160)
            (x["src"] / f"r{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
            ingest(floe, name, x["src"], rnd, fv)
            what = f"v{fv} round {rnd}"
            tbl, snap = cheap_check(floe, con, name, model.values(), what)
            wants[(name, snap)] = (model.values(), what)
            if fv == 3 and rnd in (2, 3):
                spark_keys.append((name, snap))
            assert eq_delete_files(tbl) == [], what
            modes = {s.summary.get("floe.upsert-mode") for s in tbl.metadata.snapshots
                     if s.summary.get("floe.pipeline-id") == "ix"}
            assert modes == {"index"}, modes
            if rnd == 1:
                floe.run("maintain", name, "--steps", "compact", "--quiet")
                what = f"v{fv} after compaction"
                _, snap = cheap_check(floe, con, name, model.values(), what)
                wants[(name, snap)] = (model.values(), what)
            if rnd == 2:
                x["pending"] = colliding_append(floe, name, model, rng, fv, tmp_path)
            x["tbl"] = tbl
    check_snapshots(floe, java_peer, spark, wants, spark_keys)
    for fv in (2, 3):
        dvs = [d for d in st[fv]["tbl"].inspect.delete_files().to_pylist() if d["content"] == 1]
        assert dvs and {d["file_format"] for d in dvs} == ({"PARQUET"} if fv == 2 else {"PUFFIN"})


def test_index_spilled_equals_in_memory(floe, tmp_path):
    """A 64 KiB budget over ~3000 keys of a composite key spills (the log says
    so); the table equals the model as floe and DuckDB read it."""
    rng = random.Random(4242)
    model = Model(["id", "region"])
    src = tmp_path / "in"
    src.mkdir()
    for rnd in range(2):
        lines = random_round(rng, model, 3000, 3000)
        (src / f"r{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
        args = ["-v", "ingest", "db.spill", src, "--upsert", "--equality-fields", "id, region",
                "--rowkind-field", "op", "--pipeline-id", "ix", "--parallelism", "2"]
        if rnd == 0:
            args += ["--create-schema", SCHEMA, "--partition-by", "region", "--format-version",
                     "3", "--property", "write.upsert.mode=index",
                     "--property", "write.upsert.index.memory=65536",
                     # round 1 builds (and spills) rather than loading round 0's index
                     "--property", "write.upsert.index.persist=false"]
        p = floe.run(*args)
        if rnd == 1:
            spills = [l for l in p.stderr.splitlines() if "key index of snapshot" in l]
            assert spills and " 0 spills" not in spills[0], p.stderr
        want = norm(model.values(), COLS)
        assert norm(floe.json_rows("scan", "db.spill"), COLS) == want
        tbl = floe.pyiceberg_catalog().load_table("db.spill")
        duck = norm((dict(zip(COLS, r)) for r in duckdb_connection().execute(
            f"SELECT id, region, name, v FROM iceberg_scan('{tbl.metadata_location}')"
        ).fetchall()), COLS)
        assert duck == want
        assert eq_delete_files(tbl) == []


# ---- convert-deletes -----------------------------------------------------------------------


@pytest.mark.parametrize("fv", [3])
def test_convert_deletes_keeps_rows_and_data_files(spark_floe, tmp_path, java_peer, fv):
    """An equality-mode upsert table with many equality deletes (and, v3, DVs
    to merge with) reads the same before and after `floe maintain --steps
    convert-deletes` in Java, DuckDB, floe (and Spark); afterwards it has no
    equality delete file and the very same data files."""
    floe, spark = spark_floe
    name = f"db.cv{fv}"
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(990 + fv)
    model = Model(["id", "region"])
    for rnd in range(4):
        (src / f"r{rnd:02d}.jsonl").write_text(
            "\n".join(random_round(rng, model, 600, 200)) + "\n")
        args = ["ingest", name, src, "--upsert", "--equality-fields", "id, region",
                "--rowkind-field", "op", "--parallelism", "2", "--block-size", "4KiB", "--quiet"]
        if rnd == 0:
            args += ["--create-schema", SCHEMA, "--partition-by", "region",
                     "--format-version", fv]
        floe.run(*args)
    sp = spark if fv == 3 else None
    con = duckdb_connection()
    tbl, before = cheap_check(floe, con, name, model.values(), "before")
    assert len(eq_delete_files(tbl)) >= 4
    data_before = sorted(f["file_path"] for f in tbl.inspect.files().to_pylist() if f["content"] == 0)
    out = json.loads(floe.run("maintain", name, "--steps", "convert-deletes", "--format", "json")
                     .stdout)
    cv = out["convert_deletes"]
    assert cv["run"] and cv["rows_converted"] > 0 and cv["equality_delete_files_removed"] >= 4
    tbl, after = cheap_check(floe, con, name, model.values(), "after")
    keys = [(name, before), (name, after)]
    check_snapshots(floe, java_peer, sp,
                    {keys[0]: (model.values(), "before"), keys[1]: (model.values(), "after")},
                    keys)
    assert eq_delete_files(tbl) == []
    data_after = sorted(f["file_path"] for f in tbl.inspect.files().to_pylist() if f["content"] == 0)
    assert data_after == data_before
    assert tbl.current_snapshot().summary["floe.operation"] == "convert-deletes"
    # nothing left to convert: a second run commits nothing
    out = json.loads(floe.run("maintain", name, "--steps", "convert-deletes", "--format", "json")
                     .stdout)
    assert out["convert_deletes"]["snapshot_id"] == -1
