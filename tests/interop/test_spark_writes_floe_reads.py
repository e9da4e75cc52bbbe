"""floe reads what Spark 3.5 with Iceberg 1.10 writes: merge-on-read DELETE,
UPDATE and MERGE (position delete files in v2, deletion vectors in v3),
copy-on-write, schema and partition evolution, rewrite_data_files. At every
snapshot floe's rows equal Spark's; filtered reads equal Spark's with and
without pushdown; the metadata tables (position_deletes and the all_* ones
included) equal Spark's; and a field inside a null struct, whose Java metrics
count 0 values and 0 nulls, is not pruned from IS NULL (issue 20)."""
import json

import pytest

from spark_session import floe_rows, spark_rows

MAPS = ("m",)


def assert_same(got, want, what):
    assert len(got) == len(want), f"{what}: {len(got)} rows vs {len(want)}"
    for g, w in zip(got, want):
        assert g == w, f"{what}:\n{json.dumps(g, default=str)[:1500]}\n!=\n{json.dumps(w, default=str)[:1500]}"


def snapshots(spark, t):
    return [r.snapshot_id for r in spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").collect()]


def check_every_snapshot(floe, spark, t):
    snaps = snapshots(spark, t)
    assert [s["snapshot_id"] for s in floe.json_rows("snapshots", t)] == snaps
    for sid in snaps:
        want = spark_rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF {sid}"), maps=MAPS)
        assert_same(floe_rows(floe, t, "--snapshot-id", sid, maps=MAPS), want, f"{t} @ {sid}")
    return snaps


def check_filters(floe, spark, t, predicates):
    mem = spark.table(t).localCheckpoint()
    for where in predicates:
        want = floe_rows(floe, t, "--where", where, maps=MAPS)
        assert_same(spark_rows(spark.sql(f"SELECT * FROM {t} WHERE {where}"), maps=MAPS), want, f"{where} (pushdown)")
        assert_same(spark_rows(mem.where(where), maps=MAPS), want, f"{where} (in memory)")


def meta_norm(v):
    import base64
    import decimal

    if v is None:
        return None
    if hasattr(v, "asDict"):
        return {k: meta_norm(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        return sorted([meta_norm(k), meta_norm(x)] for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return [meta_norm(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def floe_meta(floe, t, name, cols):
    out = []
    for r in floe.json_rows("inspect", t, name):
        row = {}
        for c in cols:
            v = r.get(c)
            if isinstance(v, list) and v and isinstance(v[0], list):
                v = sorted(v)
            row[c] = v
        out.append(row)
    return out


def check_meta(floe, spark, t, name, cols, partitioned=True):
    key = lambda r: json.dumps(r, sort_keys=True, default=str)
    got = sorted(floe_meta(floe, t, name, cols), key=key)
    want = sorted(({c: meta_norm(getattr(r, c)) for c in cols}
                   for r in spark.sql(f"SELECT {', '.join(cols)} FROM {t}.{name}").collect()), key=key)
    assert len(got) == len(want), f"{t}.{name}: {len(got)} rows vs {len(want)}"
    for g, w in zip(got, want):
        assert g == w, f"{t}.{name}:\n{json.dumps(g, default=str)[:1500]}\n!=\n{json.dumps(w, default=str)[:1500]}"
    return got


FILE_COLS = ["content", "file_path", "file_format", "spec_id", "record_count", "file_size_in_bytes",
             "column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
             "upper_bounds", "split_offsets", "equality_ids", "sort_order_id", "referenced_data_file",
             "content_offset", "content_size_in_bytes"]


def check_all_meta(floe, spark, t, fv):
    cols = FILE_COLS + (["first_row_id"] if fv >= 3 else [])
    for name in ["files", "data_files", "delete_files", "all_files", "all_data_files", "all_delete_files"]:
        check_meta(floe, spark, t, name, cols)
    mcols = ["content", "path", "length", "partition_spec_id", "added_snapshot_id", "added_data_files_count",
             "existing_data_files_count", "deleted_data_files_count", "added_delete_files_count",
             "existing_delete_files_count", "deleted_delete_files_count"]
    check_meta(floe, spark, t, "manifests", mcols)
    check_meta(floe, spark, t, "all_manifests", mcols + ["reference_snapshot_id"])
    ecols = ["status", "snapshot_id", "sequence_number", "file_sequence_number"]
    check_meta(floe, spark, t, "entries", ecols)
    check_meta(floe, spark, t, "all_entries", ecols)
    pcols = ["file_path", "pos", "spec_id", "delete_file_path"] + (
        ["content_offset", "content_size_in_bytes"] if fv >= 3 else [])
    return check_meta(floe, spark, t, "position_deletes", pcols)


def populate(spark, t, start, n):
    spark.sql(f"""INSERT INTO {t} SELECT id, CAST(id % 7 AS INT) AS k, concat('s', CAST(id AS STRING)) AS s,
        CAST(id * 1.5 AS DOUBLE) AS d, CAST(id / 4 AS DECIMAL(9, 2)) AS dec,
        date_add(DATE '2024-01-01', CAST(id % 40 AS INT)) AS dt,
        CASE WHEN id % 5 = 0 THEN NULL ELSE named_struct('x', CAST(id AS INT), 'z', IF(id % 2 = 0, NULL, 'z')) END AS st,
        CASE WHEN id % 6 = 0 THEN NULL ELSE array(CAST(id AS STRING), NULL) END AS tags,
        CASE WHEN id % 4 = 0 THEN NULL ELSE map('a', CAST(id AS INT)) END AS m
        FROM range({start}, {start + n}) AS r(id)""")


COLUMNS = "id bigint, k int, s string, d double, dec decimal(9, 2), dt date, st struct<x: int, z: string>, " \
          "tags array<string>, m map<string, int>"

PREDICATES = ["id >= 30", "k = 3", "s = 's17'", "dec < 5", "dt >= DATE '2024-01-20'", "st IS NULL",
              "st IS NOT NULL", "st.z IS NULL", "tags IS NULL", "m IS NOT NULL", "id IN (1, 2, 50)"]


@pytest.mark.parametrize("fv", [2, 3])
def test_merge_on_read(spark_floe, fv):
    """Merge-on-read DELETE, UPDATE and MERGE: position delete files (v2) or
    deletion vectors (v3); then compaction (rewrite_data_files)."""
    floe, spark = spark_floe
    spark.sql("CREATE NAMESPACE IF NOT EXISTS sp")
    t = f"sp.mor_v{fv}"
    spark.sql(f"""CREATE TABLE {t} ({COLUMNS}) USING iceberg PARTITIONED BY (bucket(2, id), k)
        TBLPROPERTIES ('format-version'='{fv}', 'write.delete.mode'='merge-on-read',
        'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')""")
    populate(spark, t, 0, 40)
    populate(spark, t, 40, 20)
    spark.sql(f"DELETE FROM {t} WHERE id % 9 = 0")
    spark.sql(f"UPDATE {t} SET s = 'updated', st = NULL WHERE id % 10 = 3")
    spark.sql(f"""MERGE INTO {t} USING (SELECT id, 'merged' AS s FROM range(50, 70) AS r(id)) AS src
        ON {t}.id = src.id
        WHEN MATCHED AND {t}.id % 2 = 0 THEN DELETE
        WHEN MATCHED THEN UPDATE SET s = src.s
        WHEN NOT MATCHED THEN INSERT (id, k, s) VALUES (src.id, 1, src.s)""")
    deletes = floe.json_rows("inspect", t, "delete_files")
    assert deletes and all(d["content"] == 1 for d in deletes)
    assert all((d["file_format"] == "PUFFIN") == (fv >= 3) for d in deletes)
    check_every_snapshot(floe, spark, t)
    check_filters(floe, spark, t, PREDICATES)
    pd = check_all_meta(floe, spark, t, fv)
    assert len(pd) == sum(d["record_count"] for d in deletes)
    # compaction: the deletes are applied and the files rewritten
    spark.sql(f"CALL default.system.rewrite_data_files(table => '{t}', options => map('min-input-files', '1'))")
    assert floe.json_rows("snapshots", t)[-1]["operation"] == "replace"
    assert_same(floe_rows(floe, t, maps=MAPS), spark_rows(spark.table(t), maps=MAPS), f"{t} compacted")
    check_all_meta(floe, spark, t, fv)
    check_filters(floe, spark, t, PREDICATES[:4])


def test_copy_on_write(spark_floe):
    floe, spark = spark_floe
    spark.sql("CREATE NAMESPACE IF NOT EXISTS sp")
    t = "sp.cow"
    spark.sql(f"CREATE TABLE {t} ({COLUMNS}) USING iceberg PARTITIONED BY (days(dt)) "
              "TBLPROPERTIES ('format-version'='2')")
    populate(spark, t, 0, 30)
    spark.sql(f"DELETE FROM {t} WHERE k = 2")
    spark.sql(f"UPDATE {t} SET dec = dec + 100 WHERE k = 4")
    spark.sql(f"""MERGE INTO {t} USING (SELECT id FROM range(25, 35) AS r(id)) AS src ON {t}.id = src.id
        WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, k, dt) VALUES (src.id, 0, DATE '2024-03-01')""")
    assert floe.json_rows("inspect", t, "delete_files") == []
    check_every_snapshot(floe, spark, t)
    check_filters(floe, spark, t, PREDICATES[:6])
    check_all_meta(floe, spark, t, 2)


def test_schema_and_partition_evolution(spark_floe):
    """add, rename, widen int -> bigint, drop and re-add a column; four
    partition specs (identity, bucket added, identity replaced by truncate,
    one dropped). (Spark 3.5 cannot time-travel a table whose int partition
    source was widened — a ClassCastException of its own — so the widened
    column is not a partition source here.)"""
    floe, spark = spark_floe
    spark.sql("CREATE NAMESPACE IF NOT EXISTS sp")
    t = "sp.evolve"
    spark.sql(f"CREATE TABLE {t} (id bigint, k int, n int, s string, d double) USING iceberg PARTITIONED BY (k) "
              "TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(id % 3 AS INT), CAST(id AS INT), concat('a', id), id * 0.5 "
              "FROM range(0, 12) AS r(id)")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN extra string")
    spark.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id)")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(id % 3 AS INT), CAST(id AS INT), concat('b', id), id * 0.5, 'x' "
              "FROM range(12, 20) AS r(id)")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN s TO s2")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN n TYPE bigint")
    spark.sql(f"ALTER TABLE {t} REPLACE PARTITION FIELD k WITH truncate(2, s2)")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(id % 3 AS INT), id + 4294967296, concat('c', id), id * 0.5, NULL "
              "FROM range(20, 28) AS r(id)")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN d")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN d string")  # re-added: a new field id, old values unseen
    spark.sql(f"ALTER TABLE {t} DROP PARTITION FIELD bucket(4, id)")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(id % 3 AS INT), id, concat('d', id), 'e', CAST(id AS STRING) "
              "FROM range(28, 34) AS r(id)")
    spark.sql(f"DELETE FROM {t} WHERE id IN (3, 15, 22, 30)")
    assert len({f["spec_id"] for f in floe.json_rows("inspect", t, "files")}) == 4
    check_every_snapshot(floe, spark, t)
    check_filters(floe, spark, t, ["k = 1", "n > 4294967296", "s2 LIKE 'c%'", "extra IS NULL",
                                   "d IS NOT NULL", "id < 10"])
    check_all_meta(floe, spark, t, 2)


def test_field_in_null_struct_not_pruned(spark_floe):
    """Java counts 0 values and 0 nulls for a field inside a struct that is
    null in every row of a file; floe must not prune that file from
    `st.z IS NULL` (it once returned half the rows)."""
    floe, spark = spark_floe
    spark.sql("CREATE NAMESPACE IF NOT EXISTS sp")
    t = "sp.null_struct"
    spark.sql(f"CREATE TABLE {t} (id bigint, st struct<x: int, z: string>) USING iceberg "
              "TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(NULL AS struct<x: int, z: string>) FROM range(0, 33) AS r(id)")
    spark.sql(f"INSERT INTO {t} SELECT id, named_struct('x', 1, 'z', CAST(NULL AS STRING)) FROM range(33, 66) AS r(id)")
    files = floe.json_rows("inspect", t, "files")
    z = 3  # st.z's field id
    counts = sorted((dict(f["value_counts"]).get(z), dict(f["null_value_counts"]).get(z)) for f in files)
    assert counts == [(33, 0), (33, 33)], counts  # Java: no nulls counted under a null struct
    for where in ["st.z IS NULL", "st.x IS NULL", "st IS NULL", "st.z IS NOT NULL", "st IS NOT NULL"]:
        want = spark.table(t).localCheckpoint().where(where).count()
        assert int(floe.run("scan", t, "--where", where, "--count").stdout) == want, where
    assert int(floe.run("scan", t, "--where", "st.z IS NULL", "--count").stdout) == 66
