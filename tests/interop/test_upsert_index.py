"""Upserts in index mode (write.upsert.mode=index): the random change stream of
test_upsert_interop.py, one `floe ingest` per round (so every round rebuilds
the key index from the table), read back by Java Iceberg, DuckDB, floe and
(v3) Spark equal to the model after every round — with no equality delete
file in the table, ever. Between rounds: `floe maintain` compaction, and a
PyIceberg append of rows whose keys the table already holds (two live rows
for one key until its next change). A budget small enough to spill gives the
same table. An ingest that runs many checkpoints while another writer
commits falls back to equality deletes for the checkpoint that saw the
commit (no wrong DV) and back to the index after.
"""
import json
import random

import pyarrow as pa
import pytest

from test_upsert_interop import Model, check, norm, random_round, SCHEMA

COLS = ["id", "region", "name", "v"]


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


@pytest.mark.parametrize("fv", [2, 3])
def test_index_mode_stream_read_by_java_duckdb_spark_floe(spark_floe, tmp_path, java_peer, fv):
    floe, spark = spark_floe
    name = f"db.ix{fv}"
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(7700 + fv)
    model = Model(["id", "region"])
    pending = []
    for rnd in range(5):
        lines = [json.dumps({"op": "+U", "id": k[0], "region": k[1], "name": "fix", "v": 2})
                 for k in pending]
        for k in pending:
            model.apply("+U", {"id": k[0], "region": k[1], "name": "fix", "v": 2})
        pending = []
        lines += random_round(rng, model, 700, 160)
        (src / f"r{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
        ingest(floe, name, src, rnd, fv)
        tbl = check(floe, name, java_peer, model.values(), COLS, f"v{fv} round {rnd}",
                    spark if fv == 3 else None)
        assert eq_delete_files(tbl) == [], f"round {rnd}"
        modes = {s.summary.get("floe.upsert-mode") for s in tbl.metadata.snapshots
                 if s.summary.get("floe.pipeline-id") == "ix"}
        assert modes == {"index"}, modes
        if rnd == 1:
            floe.run("maintain", name, "--steps", "compact", "--quiet")
        if rnd == 2:
            pending = colliding_append(floe, name, model, rng, fv, tmp_path)
    dvs = [d for d in tbl.inspect.delete_files().to_pylist() if d["content"] == 1]
    assert dvs and {d["file_format"] for d in dvs} == ({"PARQUET"} if fv == 2 else {"PUFFIN"})


def test_index_spilled_equals_in_memory(floe, tmp_path):
    """A 64 KiB budget over ~3000 keys of a composite key spills (the log says
    so); the table equals the model as floe and DuckDB read it."""
    from conftest import duckdb_connection
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
                     "--property", "write.upsert.index.memory=65536"]
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
    tbl = check(floe, name, java_peer, model.values(), COLS, "before", sp)
    assert len(eq_delete_files(tbl)) >= 4
    data_before = sorted(f["file_path"] for f in tbl.inspect.files().to_pylist() if f["content"] == 0)
    out = json.loads(floe.run("maintain", name, "--steps", "convert-deletes", "--format", "json")
                     .stdout)
    cv = out["convert_deletes"]
    assert cv["run"] and cv["rows_converted"] > 0 and cv["equality_delete_files_removed"] >= 4
    if sp is not None:
        spark.sql(f"REFRESH TABLE {name}")
    tbl = check(floe, name, java_peer, model.values(), COLS, "after", sp)
    assert eq_delete_files(tbl) == []
    data_after = sorted(f["file_path"] for f in tbl.inspect.files().to_pylist() if f["content"] == 0)
    assert data_after == data_before
    assert tbl.current_snapshot().summary["floe.operation"] == "convert-deletes"
    # nothing left to convert: a second run commits nothing
    out = json.loads(floe.run("maintain", name, "--steps", "convert-deletes", "--format", "json")
                     .stdout)
    assert out["convert_deletes"]["snapshot_id"] == -1
