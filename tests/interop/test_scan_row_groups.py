"""Row groups skipped by their column statistics.

A file of many small row groups is scanned with filters on every kind of
column: the rows (and their _pos) are the same with and without row-group
pruning and the same as PyIceberg's, most row groups are skipped, and
positional deletes (deletion vectors written by Java) still hit the right
rows when the row groups before them were never read.
"""
import json
import re


N = 120_000
T0 = 1_700_000_000_000  # ms

# (floe's filter, the same for PyIceberg or None, the rows it keeps)
FILTERS = [
    ("id >= 100000 AND id < 100005", "id >= 100000 AND id < 100005", lambda i: 100000 <= i < 100005),
    ("s = 'k050000'", "s = 'k050000'", lambda i: i == 50000),
    ("d > 59990.0", "d > 59990.0", lambda i: i * 0.5 > 59990.0),
    ("ts < TIMESTAMPTZ '2023-11-14 22:14:00+00:00'", None, lambda i: i < 40),  # T0 + 40 s
    ("dec BETWEEN 5000 AND 5001", None, lambda i: 5000 <= i + (i % 100) / 100 <= 5001),
    ("s STARTS WITH 'k11999'", "s LIKE 'k11999%'", lambda i: 119990 <= i <= 119999),
    ("id IN (5, 119999, 77777)", "id IN (5, 119999, 77777)", lambda i: i in (5, 119999, 77777)),
    ("small = 3 OR id = 64000", "small = 3 OR id = 64000", lambda i: i % 1000 == 3 or i == 64000),
]


def load(floe, tmp_path, name, fv):
    path = tmp_path / f"{name}.jsonl"
    with open(path, "w") as f:
        for i in range(N):
            f.write(json.dumps({"id": i, "s": "k%06d" % i, "d": i * 0.5, "ts": T0 + i * 1000,
                                "dec": "%d.%02d" % (i, i % 100), "small": i % 1000}) + "\n")
    floe.run("ingest", f"db.{name}", str(path), "--create-schema",
             "id long not null, s string, d double, ts timestamptz, dec decimal(12, 2), small int",
             "--format-version", fv, "--parallelism", 1, "--quiet",
             "--property", "write.parquet.row-group-size-bytes=65536")


def scan_ids(floe, name, where, *extra):
    p = floe.run("scan", f"db.{name}", "--where", where, "--columns", "id,_pos", "--format", "json",
                 *extra)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    return sorted((r["id"], r["_pos"]) for r in rows), p.stderr


def skipped(stderr):
    m = re.search(r"row groups: (\d+) read, (\d+) skipped", stderr)
    assert m, stderr
    return int(m.group(1)), int(m.group(2))


def test_filters_skip_row_groups_and_return_the_same_rows(floe, tmp_path):
    floe.run("namespace", "create", "db")
    load(floe, tmp_path, "rg", 2)
    files = [r for r in floe.json_rows("files", "db.rg") if r["content"] == 0]
    assert len(files) == 1
    t = floe.pyiceberg_catalog().load_table("db.rg")
    for where, py_where, pred in FILTERS:
        pruned, err = scan_ids(floe, "rg", where, "--stats")
        full, _ = scan_ids(floe, "rg", where, "--no-row-group-pruning")
        expected = [(i, i) for i in range(N) if pred(i)]
        assert pruned == full == expected, where
        read, skip = skipped(err)
        if "small" not in where:  # small = 3 is in every row group
            assert skip > read, (where, read, skip)
        if py_where:
            py = t.scan(row_filter=py_where, selected_fields=("id",)).to_arrow()
            assert sorted(py.column("id").to_pylist()) == [i for i, _ in expected], where


def test_deletion_vectors_hit_the_right_rows_after_skipped_row_groups(floe, tmp_path, java_peer):
    floe.run("namespace", "create", "db")
    load(floe, tmp_path, "dv", 3)
    f = next(r for r in floe.json_rows("files", "db.dv") if r["content"] == 0)
    gone = [7, 100001, 100003, 119999]
    java_peer("dv", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.dv",
              f"{f['file_path']}=" + ",".join(map(str, gone)))
    for where, _, pred in FILTERS:
        pruned, _ = scan_ids(floe, "dv", where)
        full, _ = scan_ids(floe, "dv", where, "--no-row-group-pruning")
        expected = [(i, i) for i in range(N) if i not in gone and pred(i)]
        assert pruned == full == expected, where
    # v3 row lineage: _row_id is the file's first row id plus the position
    p = floe.run("scan", "db.dv", "--where", "id >= 100000 AND id < 100005", "--columns",
                 "id,_pos,_row_id", "--format", "json")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert [(r["id"], r["_pos"], r["_row_id"]) for r in rows] == \
        [(i, i, i) for i in (100000, 100002, 100004)]
