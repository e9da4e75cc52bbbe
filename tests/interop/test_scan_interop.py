"""floe scan and floe inspect against PyIceberg on tables PyIceberg writes:

* tables partitioned by every transform (identity, bucket, truncate, year,
  month, day, hour, void, several at once) with several snapshots — appends, an
  overwrite, a delete — scanned with a filter on each column at the current
  snapshot and at older ones (by id, by time, by tag and branch) give
  PyIceberg's rows;
* the metadata tables (snapshots, history, refs, metadata_log_entries,
  manifests, files, data_files, delete_files, entries, partitions) equal
  tbl.inspect.* value for value (tables without uuid columns: PyIceberg's
  inspect cannot build readable metrics for them);
* incremental append reads follow Flink's starting strategies, reject
  overwrite snapshots with a clear message, and --follow emits only rows
  appended after it started.
"""
import base64
import datetime as dt
import decimal
import json
import math
import subprocess
import time
import uuid

import pyarrow as pa
import pytest

from conftest import without_java_columns

UTC = dt.timezone.utc

SCHEMA_ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("b", pa.bool_()),
        ("i", pa.int32()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("dec", pa.decimal128(9, 2)),
        ("dt", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("tstz", pa.timestamp("us", tz="UTC")),
        ("s", pa.string()),
        ("bin", pa.binary()),
    ]
)


def make_rows(start, n):
    rows = []
    strings = ["apple", "banana", "cherry", "é-acute", "日本", "", "zebra", "a b c"]
    for k in range(start, start + n):
        null = k % 9 == 8
        day = dt.date(1969, 12, 20) + dt.timedelta(days=(k * 37) % 900)
        stamp = dt.datetime(1969, 12, 31, 20, 0, 0) + dt.timedelta(hours=k * 7, microseconds=k * 1001)
        rows.append(
            {
                "id": k,
                "b": None if null else k % 2 == 0,
                "i": None if null else (k * 7919) % 200 - 100,
                "f": None if null else [0.5, -2.25, 3.75, float("nan"), 100.0][k % 5],
                "d": None if null else (k % 13) * 1.5 - 6.0,
                "dec": None if null else decimal.Decimal(k * 137 % 20000 - 10000) / 100,
                "dt": None if null else day,
                "ts": None if null else stamp,
                "tstz": None if null else (stamp + dt.timedelta(minutes=k)).replace(tzinfo=UTC),
                "s": None if null else strings[k % len(strings)] + str(k % 3),
                "bin": None if null else bytes([k % 256, 255 - k % 256]),
            }
        )
    return rows


def arrow(rows):
    return pa.Table.from_pylist(rows, schema=SCHEMA_ARROW)


# ---- comparing values ----------------------------------------------------------------


def canon(v, typ):
    """floe JSON or PyIceberg Python value -> one comparable form, by Iceberg type name."""
    if v is None:
        return None
    t = str(typ)
    if t in ("float", "double"):
        if isinstance(v, str):
            v = float(v)
        if math.isnan(v):
            return "nan"
        return round(v, 5) if t == "float" else v
    if t.startswith("decimal"):
        return decimal.Decimal(str(v))
    if t == "date":
        return v if isinstance(v, str) else v.isoformat()
    if t in ("timestamp", "timestamptz"):
        if isinstance(v, str):
            s = v.replace("+00:00", "")
            v = dt.datetime.fromisoformat(s)
        elif v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return v
    if t in ("binary",) or t.startswith("fixed"):
        return base64.b64decode(v) if isinstance(v, str) else bytes(v)
    if t == "uuid":
        return str(uuid.UUID(str(v))) if not isinstance(v, bytes) else str(uuid.UUID(bytes=v))
    return v


def canon_rows(rows, schema):
    types = {f.name: f.field_type for f in schema.fields}
    out = [tuple(canon(r.get(n), types[n]) for n in r) for r in rows]
    return sorted(out, key=lambda t: tuple("" if x is None else repr(x) for x in t))


def floe_rows(floe, *args):
    out = floe.run("scan", *args, "--format", "json").stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def py_rows(tbl, row_filter="True", snapshot_id=None):
    return tbl.scan(row_filter=row_filter, snapshot_id=snapshot_id).to_arrow().to_pylist()


# ---- tables ------------------------------------------------------------------------------

SPECS = {
    "identity": ["identity(i)", "identity(s)", "identity(dt)", "identity(b)", "identity(dec)"],
    "bucket": ["bucket(8, id)", "bucket(4, s)", "bucket(3, dec)", "bucket(5, dt)"],
    "truncate": ["truncate(10, i)", "truncate(2, s)", "truncate(50, dec)", "truncate(3, id)"],
    "temporal": ["year(dt)", "month(ts)", "day(tstz)"],
    "hour": ["hour(ts)", "identity(b)"],
    "mixed": ["bucket(4, id)", "day(ts)", "truncate(1, s)"],
    "void": ["void(i)", "month(dt)"],
}

FILTERS = [
    "id >= 10",
    "id < 5 OR id > 40",
    "b = true",
    "i IN (-100, 3, 50)",
    "i IS NULL",
    "f IS NAN",
    "f > 1",
    "d <= 0",
    "dec >= '10.50'",
    "dec = '14.20'",
    "dt >= '1970-06-01'",
    "dt < '1970-01-01'",
    "ts >= '1970-01-02T00:00:00'",
    "ts < '1969-12-31T23:00:00'",
    "tstz > '1970-01-05T00:00:00+00:00'",
    "s = 'apple0'",
    "s LIKE 'ba%'",
    "s IS NOT NULL AND id > 20",
    "NOT (i > 0)",
]


def catalog(floe):
    """PyIceberg's view of floe's embedded catalog (floe creates it first)."""
    floe.run("namespace", "create", "db", check=False)
    return floe.pyiceberg_catalog()


def build_table(floe, name, spec_fields, props=None):
    cat = catalog(floe)
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import (BucketTransform, DayTransform, HourTransform, IdentityTransform,
                                      MonthTransform, TruncateTransform, VoidTransform, YearTransform)

    tbl = cat.create_table(f"db.{name}", schema=SCHEMA_ARROW, properties=props or {})
    schema = tbl.schema()
    with tbl.update_spec() as upd:
        for k, fs in enumerate(spec_fields):
            fn, args = fs.split("(", 1)
            args = [a.strip() for a in args.rstrip(")").split(",")]
            col = args[-1]
            tr = {
                "identity": lambda: IdentityTransform(),
                "bucket": lambda: BucketTransform(int(args[0])),
                "truncate": lambda: TruncateTransform(int(args[0])),
                "year": lambda: YearTransform(),
                "month": lambda: MonthTransform(),
                "day": lambda: DayTransform(),
                "hour": lambda: HourTransform(),
                "void": lambda: VoidTransform(),
            }[fn]()
            upd.add_field(col, tr, f"{col}_{fn}_{k}")
    tbl = cat.load_table(f"db.{name}")
    snaps = []
    tbl.append(arrow(make_rows(0, 25)))
    snaps.append(tbl.current_snapshot().snapshot_id)
    tbl.append(arrow(make_rows(25, 25)))
    snaps.append(tbl.current_snapshot().snapshot_id)
    # overwrite the rows with id < 10 by new ones
    tbl.overwrite(arrow(make_rows(100, 5)), overwrite_filter="id < 10")
    snaps.append(tbl.current_snapshot().snapshot_id)
    tbl.delete(delete_filter="id >= 40 AND id < 45")
    snaps.append(tbl.current_snapshot().snapshot_id)
    return cat.load_table(f"db.{name}"), snaps


@pytest.mark.parametrize("spec", list(SPECS))
def test_scan_matches_pyiceberg(floe, spec):
    tbl, snaps = build_table(floe, f"t_{spec}", SPECS[spec])
    schema = tbl.schema()
    ident = f"db.t_{spec}"
    checked = 0
    for snap in [None] + snaps[:-1]:
        opts = [] if snap is None else ["--snapshot-id", snap]
        want_all = py_rows(tbl, snapshot_id=snap)
        got_all = floe_rows(floe, ident, *opts)
        assert canon_rows(got_all, schema) == canon_rows(want_all, schema), f"{spec} @{snap}"
        for flt in FILTERS:
            if flt == "f IS NAN":
                # PyIceberg 0.12 prunes files holding NaNs under IS NAN when they
                # have no nan_value_counts (its own files): filter its rows here
                want = [r for r in want_all if r["f"] is not None and math.isnan(r["f"])]
            else:
                want = py_rows(tbl, flt, snapshot_id=snap)
            got = floe_rows(floe, ident, *opts, "--where", flt)
            assert canon_rows(got, schema) == canon_rows(want, schema), f"{spec} @{snap}: {flt}"
            checked += 1
        # counts and projections
        n = int(floe.run("scan", ident, *opts, "--count").stdout)
        assert n == len(want_all)
        got = floe_rows(floe, ident, *opts, "--columns", "s,id", "--where", "id > 12")
        assert all(list(r) == ["s", "id"] for r in got)
        assert sorted(r["id"] for r in got) == sorted(r["id"] for r in want_all if r["id"] > 12)
    assert checked == len(FILTERS) * 4
    # plans prune: a bucket/identity/temporal filter reads fewer files than all
    plan = floe.run("scan", ident, "--where", "id = 7", "--explain").stdout
    assert "pruned" in plan


def test_time_travel_by_time_tag_and_branch(floe):
    tbl, snaps = build_table(floe, "tt", SPECS["mixed"])
    schema = tbl.schema()
    ident = "db.tt"
    with tbl.manage_snapshots() as ms:
        ms.create_tag(snaps[0], "first")
        ms.create_branch(snaps[1], "audit")
    tbl = floe.pyiceberg_catalog().load_table("db.tt")
    want0 = canon_rows(py_rows(tbl, snapshot_id=snaps[0]), schema)
    assert canon_rows(floe_rows(floe, ident, "--tag", "first"), schema) == want0
    assert canon_rows(floe_rows(floe, ident, "--branch", "audit"), schema) == canon_rows(
        py_rows(tbl, snapshot_id=snaps[1]), schema
    )
    # as of a time: the snapshot current then (the snapshot log)
    log = {e.snapshot_id: e.timestamp_ms for e in tbl.metadata.snapshot_log}
    at = log[snaps[1]]
    assert canon_rows(floe_rows(floe, ident, "--as-of", at), schema) == canon_rows(
        py_rows(tbl, snapshot_id=snaps[1]), schema
    )
    assert canon_rows(floe_rows(floe, ident, "--as-of", log[snaps[2]] - 0), schema) == canon_rows(
        py_rows(tbl, snapshot_id=snaps[2]), schema
    )
    # errors name what is missing
    p = floe.run("scan", ident, "--tag", "nope", check=False)
    assert p.returncode != 0 and "no tag 'nope'" in p.stderr
    p = floe.run("scan", ident, "--as-of", "1000", check=False)
    assert p.returncode != 0 and "no snapshot was current" in p.stderr
    p = floe.run("scan", ident, "--snapshot-id", "1", "--tag", "first", check=False)
    assert p.returncode != 0


def test_incremental_append_reads(floe):
    cat = catalog(floe)
    tbl = cat.create_table("db.inc", schema=SCHEMA_ARROW)
    ids = []
    for k in range(3):
        tbl.append(arrow(make_rows(k * 10, 10)))
        ids.append(tbl.current_snapshot().snapshot_id)
    tbl = cat.load_table("db.inc")

    def inc(*args):
        return sorted(r["id"] for r in floe_rows(floe, "db.inc", "--columns", "id", *args))

    assert inc("--incremental", "--from", "earliest") == list(range(30))
    assert inc("--incremental", "--from", "latest") == []
    assert inc("--incremental", "--from", f"snapshot:{ids[1]}") == list(range(10, 30))
    assert inc("--incremental", "--from", f"snapshot:{ids[1]}", "--to", str(ids[1])) == list(range(10, 20))
    ts1 = tbl.snapshot_by_id(ids[2]).timestamp_ms
    assert inc("--incremental", "--from", f"timestamp:{ts1}") == list(range(20, 30))
    assert inc("--incremental", "--from", "table") == list(range(30))
    # an overwrite cannot be an append-only increment
    tbl.overwrite(arrow(make_rows(100, 3)), overwrite_filter="id < 5")
    p = floe.run("scan", "db.inc", "--incremental", "--from", "earliest", check=False)
    assert p.returncode != 0
    assert "overwrite" in p.stderr and "append-only" in p.stderr
    # PyIceberg's overwrite is a delete snapshot, then an append of the new rows
    ops = [s.summary.operation.value for s in cat.load_table("db.inc").snapshots()]
    assert ops[3] in ("delete", "overwrite")
    want = list(range(30)) + ([100, 101, 102] if ops[-1] == "append" else [])
    assert inc("--incremental", "--from", "earliest", "--skip-overwrites") == want


def test_follow_emits_only_appended_rows(floe):
    cat = catalog(floe)
    tbl = cat.create_table("db.fol", schema=SCHEMA_ARROW)
    tbl.append(arrow(make_rows(0, 5)))
    cmd = [floe.bin, "--dir", str(floe.root), "scan", "db.fol", "--columns", "id", "--format", "json",
           "--follow", "--from", "latest", "--interval", "300ms", "--polls", "12"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)
    tbl.append(arrow(make_rows(5, 3)))
    time.sleep(0.8)
    tbl.append(arrow(make_rows(8, 2)))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    got = [json.loads(line)["id"] for line in out.splitlines() if line.strip()]
    assert sorted(got) == list(range(5, 10))


# ---- metadata tables ----------------------------------------------------------------------


def norm_meta(v):
    if isinstance(v, dict):
        return {k: norm_meta(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm_meta(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=UTC)
        return v.astimezone(UTC).isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else round(v, 6)
    return v


def norm_floe_meta(v):
    if isinstance(v, dict):
        return {k: norm_floe_meta(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm_floe_meta(x) for x in v]
    if isinstance(v, str) and len(v) >= 19 and v[4] == "-" and v[10] == "T":
        d = dt.datetime.fromisoformat(v)
        if d.tzinfo is None:
            d = d.replace(tzinfo=UTC)
        return d.astimezone(UTC).isoformat()
    if isinstance(v, float):
        return round(v, 6)
    if v == "NaN":
        return "nan"
    return v


def py_meta(table):
    rows = table.to_pylist()
    return [norm_meta(r) for r in rows]


def floe_meta(floe, ident, name):
    out = floe.run("inspect", ident, name, "--format", "json").stdout
    return [norm_floe_meta(json.loads(line)) for line in out.splitlines() if line.strip()]


def canon_meta(rows):
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.mark.parametrize("spec", ["temporal", "identity"])
def test_metadata_tables_match_pyiceberg(floe, spec):
    tbl, snaps = build_table(floe, f"m_{spec}", SPECS[spec])
    with tbl.manage_snapshots() as ms:
        ms.create_tag(snaps[1], "v2")
    tbl = floe.pyiceberg_catalog().load_table(f"db.m_{spec}")
    ident = f"db.m_{spec}"
    for name in ["snapshots", "history", "refs", "metadata_log_entries", "manifests", "files",
                 "data_files", "delete_files", "entries", "partitions", "all_manifests", "all_files",
                 "all_data_files", "all_delete_files"]:
        want = canon_meta(py_meta(getattr(tbl.inspect, name)()))
        got = canon_meta([without_java_columns(r) for r in floe_meta(floe, ident, name)])
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert list(g) == list(w), f"{name}: columns"
            assert g == w, f"{name}: {json.dumps(g, default=str)[:800]}\n!=\n{json.dumps(w, default=str)[:800]}"


def test_inspect_formats_and_errors(floe):
    build_table(floe, "fmt", SPECS["bucket"])
    table = floe.run("inspect", "db.fmt", "snapshots").stdout
    assert table.splitlines()[0].split()[:3] == ["committed_at", "snapshot_id", "parent_id"]
    csv = floe.run("inspect", "db.fmt", "files", "--format", "csv").stdout
    assert csv.splitlines()[0].startswith("content,file_path,file_format,spec_id,partition")
    p = floe.run("inspect", "db.fmt", "nope", check=False)
    assert p.returncode != 0 and "no metadata table 'nope'" in p.stderr and "partitions" in p.stderr


def test_parquet_and_csv_output(floe, tmp_path):
    import pyarrow.parquet as pq

    tbl, _ = build_table(floe, "outp", SPECS["bucket"])
    schema = tbl.schema()
    out = tmp_path / "rows.parquet"
    floe.run("scan", "db.outp", "--where", "id > 3", "--format", "parquet", "--output", out)
    got = pq.read_table(out)
    # field ids are kept, columns in schema order, the filter applied
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in got.schema]
    assert ids == [f.field_id for f in schema.fields]
    want = [r for r in py_rows(tbl) if r["id"] > 3]
    assert canon_rows(got.to_pylist(), schema) == canon_rows(want, schema)
    # CSV: a header, then one line per row; NULL is empty
    csv = floe.run("scan", "db.outp", "--columns", "id,s", "--where", "id IN (16, 17)").stdout.splitlines()
    assert csv[0] == "id,s"
    assert sorted(csv[1:]) == [f"16,{next(r['s'] for r in want if r['id'] == 16)}", "17,"]
    # --limit and --count
    assert len(floe_rows(floe, "db.outp", "--limit", "3")) == 3
    assert floe.run("scan", "db.outp", "--count", "--where", "id > 3").stdout.strip() == str(len(want))
    # errors: a bad filter names the place, an unknown column suggests one
    p = floe.run("scan", "db.outp", "--where", "id >", check=False)
    assert p.returncode != 0 and "expression: at 5" in p.stderr
    p = floe.run("scan", "db.outp", "--where", "idd = 1", check=False)
    assert p.returncode != 0 and "did you mean 'id'" in p.stderr
