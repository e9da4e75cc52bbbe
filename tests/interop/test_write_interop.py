"""floe's write layer read back by the reference implementations.

tests/tools/write_tool (a test-only driver, not a product command) writes
JSON rows into a table of the embedded-default catalog through one task
writer - partition fan-out, rolling at the target size, Iceberg metrics - and
commits the files in one append per checkpoint. Then:

* PyIceberg reads every column type back with identical values, and DuckDB's
  iceberg_scan reads the same rows;
* every file's partition tuple is what PyIceberg's own transforms compute for
  each of its rows (identity, bucket, truncate, year, month, day, hour, void;
  negatives, dates and instants before 1970, non-ASCII strings, nulls);
* the manifest entries carry the metrics Java would write, as PyIceberg
  decodes them: value/null/NaN counts per column, bounds in the binary
  single-value form (truncate(16) on code points), none inside lists/maps;
* files roll at a small target size, sizes are exact, checkpoints make one
  snapshot each; the object-storage layout is PyIceberg's.
"""
import datetime as dt
import decimal
import json
import math
import os
import struct
import subprocess
import uuid
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import duckdb_connection, floe_bin

UTC = dt.timezone.utc


def write_tool() -> str:
    env = os.environ.get("FLOE_WRITE_TOOL")
    if env:
        return env
    p = Path(floe_bin()).parent / "tests" / "write_tool"
    if not p.exists():
        raise RuntimeError(f"{p} not found: build the write_tool target or set FLOE_WRITE_TOOL")
    return str(p)


# ---- JSON rows for json_batch (Iceberg's JSON single-value forms) --------------


def to_json_value(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return v.astimezone(UTC).replace(tzinfo=None).isoformat() + "+00:00"
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, dict):
        if set(v) == {"__map__"}:
            keys = [to_json_value(k) for k, _ in v["__map__"]]
            vals = [to_json_value(x) for _, x in v["__map__"]]
            return {"keys": keys, "values": vals}
        return {k: to_json_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_json_value(x) for x in v]
    return v


def run_tool(floe, table, rows, tmp_path, *args):
    path = tmp_path / f"{table.replace('.', '_')}.jsonl"
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps({k: to_json_value(v) for k, v in r.items()}) + "\n")
    cmd = [write_tool(), "--dir", str(floe.root), "--table", table, "--input", str(path), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(cmd)} failed:\n{p.stderr}{p.stdout}"
    return json.loads(p.stdout)


# ---- rows ---------------------------------------------------------------------------

SCHEMA = (
    "id long not null, b boolean, i int, l long, f float, d double, dec decimal(9, 2), "
    "bigdec decimal(38, 10), dt date, t time, ts timestamp, tstz timestamptz, s string, "
    "u uuid, fx fixed[4], bin binary, st struct<a: int, b: string>, ls list<string>, "
    "m map<string, int>"
)
PRIMITIVES = ["id", "b", "i", "l", "f", "d", "dec", "bigdec", "dt", "t", "ts", "tstz", "s", "u", "fx", "bin"]
COLUMNS = PRIMITIVES + ["st", "ls", "m"]


def edge_rows(n=60):
    """Negatives, dates and instants before 1970, non-ASCII text, extremes, nulls."""
    strings = ["", "a", "é", "日本語テキスト", "emoji 💰💰", "Zürich", "x" * 40, "null", "a/b=c d",
               "ééééééééééééééééééé long", "\U0010ffff" * 20]
    dates = [dt.date(1969, 12, 31), dt.date(1900, 1, 1), dt.date(1970, 1, 1), dt.date(2024, 2, 29),
             dt.date(2262, 4, 11), dt.date(1, 1, 1)]
    stamps = [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1970, 1, 1),
              dt.datetime(2017, 11, 16, 22, 31, 8, 1), dt.datetime(1900, 3, 1, 12),
              dt.datetime(2023, 1, 1, 11, 55, 59, 999999), dt.datetime(1969, 1, 1, 0, 0, 0, 1)]
    rows = []
    for k in range(n):
        null = k % 11 == 10
        pick = lambda xs: None if null else xs[k % len(xs)]  # noqa: E731
        rows.append({
            "id": k,
            "b": pick([True, False]),
            "i": pick([0, -1, 1, 2**31 - 1, -(2**31), 12345, -12, 9, -10]),
            "l": pick([0, -1, 2**40 + k, -(2**63), 2**63 - 1, 34 + k, -1001]),
            "f": pick([0.5, -0.0, 2.0**100, -2.25, float("inf"), float("nan"), 0.0]),
            "d": pick([1e300, -1.0, 0.1, -0.0, 6.282, float("nan"), float("-inf")]),
            # -9999999.50, not -9999999.99: truncate(50) of that does not fit decimal(9, 2)
            # (Java refuses it, so does floe: docs/interop.md)
            "dec": pick([decimal.Decimal(x) for x in ["-1.28", "14.20", "0.00", "-9999999.50", "1234567.89", "-0.01"]]),
            "bigdec": pick([decimal.Decimal(x) for x in ["-1234567890123456789012345678.0123456789", "0E-10", "3.1415926535"]]),
            "dt": pick(dates),
            "t": pick([dt.time(h, (h * 7) % 60, (h * 13) % 60, h * 1001) for h in range(24)]),
            "ts": pick(stamps),
            "tstz": None if null else stamps[(k + 1) % len(stamps)].replace(tzinfo=UTC),
            "s": pick(strings),
            "u": None if null else uuid.UUID(int=(k * 0x9E3779B97F4A7C15) % (1 << 128)),
            "fx": None if null else bytes([k % 256, 255 - k % 256, 0, 7]),
            "bin": None if null else bytes(range(k % 5)) + "é".encode(),
            "st": None if k % 7 == 3 else {"a": None if k % 5 == 0 else k - 30, "b": strings[k % len(strings)]},
            "ls": None if k % 6 == 5 else [strings[(k + j) % len(strings)] if j != 1 else None for j in range(k % 4)],
            "m": None if k % 8 == 7 else {"__map__": [(f"k{j}", None if j == 2 else j * k) for j in range(k % 3)]},
        })
    return rows


# ---- comparison -------------------------------------------------------------------------


def norm(v):
    """One comparable form for values from PyIceberg, pyarrow and DuckDB."""
    if v is None:
        return None
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    if isinstance(v, uuid.UUID):
        return v.bytes.hex()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v.normalize()) if v != 0 else "0"
    if isinstance(v, dict):
        if set(v) == {"__map__"}:
            return tuple((norm(k), norm(x)) for k, x in v["__map__"])
        if set(v) == {"key", "value"}:  # DuckDB map entries
            return tuple((norm(k), norm(x)) for k, x in zip(v["key"], v["value"]))
        return tuple(sorted((k, norm(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # pyarrow map
            return tuple((norm(k), norm(x)) for k, x in v)
        return tuple(norm(x) for x in v)
    return v


def by_id(rows, columns):
    return {r["id"]: tuple(norm(r[c]) for c in columns) for r in rows}


def live_files(tbl):
    """DataFiles of the current snapshot through PyIceberg's manifest reader
    (inspect.files() cannot build its metrics table for uuid columns)."""
    out = []
    for m in tbl.current_snapshot().manifests(tbl.io):
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            out.append(e.data_file)
    return out


def duck_rows(metadata_location, columns):
    con = duckdb_connection()
    cur = con.execute(f"SELECT {', '.join(columns)} FROM iceberg_scan('{metadata_location}')")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


# ---- metrics as Iceberg defines them, recomputed from rows ----------------------------------


def iceberg_value(v, t):
    """A Python value as PyIceberg's from_bytes returns bounds."""
    from pyiceberg.types import DateType, TimestampType, TimestamptzType, TimeType
    from pyiceberg.utils.datetime import date_to_days, datetime_to_micros, time_to_micros

    if isinstance(t, DateType):
        return date_to_days(v)
    if isinstance(t, (TimestampType, TimestamptzType)):
        return datetime_to_micros(v)
    if isinstance(t, TimeType):
        return time_to_micros(v)
    return v


def order_key(v):
    """Iceberg's order: floats with -0.0 < +0.0; strings/binaries by unsigned bytes."""
    if isinstance(v, float):
        return (v, 0 if math.copysign(1, v) < 0 else 1)
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, uuid.UUID):
        return v.bytes
    return v


def truncate_upper(s, n):
    """truncate(n) upper bound of a string: n code points, last incremented."""
    if len(s) <= n:
        return s
    cps = [ord(c) for c in s[:n]]
    while cps:
        c = cps[-1] + 1
        if c == 0xD800:
            c = 0xE000
        if c <= 0x10FFFF:
            cps[-1] = c
            return "".join(map(chr, cps))
        cps.pop()
    return None


def uuid_bounds_both_orders(lo, hi):
    """The UUID bounds floe writes for unsigned min lo and max hi: valid in
    Java's order (two signed longs) too, widened where needed; None where
    no such bound exists (apache/iceberg#14216)."""
    lb, hb = lo.bytes, hi.bytes
    if (lb[0] ^ hb[0]) & 0x80:
        return None, None
    same_high = lb[:8] == hb[:8]
    lm, hm = int.from_bytes(lb[:8], "big"), int.from_bytes(hb[:8], "big")
    out_lo, out_hi = lo, hi
    if not (lb[8] & 0x80) and not (same_high and not (hb[8] & 0x80)):
        out_lo = None if lm in (0, 1 << 63) else uuid.UUID(bytes=(lm - 1).to_bytes(8, "big") + b"\xff" * 8)
    if (hb[8] & 0x80) and not (same_high and (lb[8] & 0x80)):
        out_hi = None if hm in ((1 << 63) - 1, (1 << 64) - 1) else uuid.UUID(
            bytes=(hm + 1).to_bytes(8, "big") + b"\x00" * 8)
    return out_lo, out_hi


def check_metrics(tbl, f, rows):
    """f's metrics against the rows it holds (truncate(16), the default)."""
    from pyiceberg.conversions import from_bytes
    from pyiceberg.types import BinaryType, DoubleType, FloatType, StringType

    schema = tbl.schema()
    for name in PRIMITIVES:
        field = schema.find_field(name)
        fid, t = field.field_id, field.field_type
        vals = [r[name] for r in rows]
        assert f.value_counts[fid] == len(vals), name
        assert f.null_value_counts[fid] == sum(v is None for v in vals), name
        present = [v for v in vals if v is not None]
        if isinstance(t, (FloatType, DoubleType)):
            assert f.nan_value_counts[fid] == sum(math.isnan(v) for v in present), name
            present = [v for v in present if not math.isnan(v)]
        else:
            assert fid not in (f.nan_value_counts or {}), name
        assert f.column_sizes[fid] > 0
        if not present:
            assert fid not in f.lower_bounds and fid not in f.upper_bounds, name
            continue
        lo = min(present, key=order_key)
        hi = max(present, key=order_key)
        got_lo = from_bytes(t, f.lower_bounds[fid]) if fid in f.lower_bounds else None
        if isinstance(t, StringType):
            assert got_lo == lo[:16], name
            want_hi = truncate_upper(hi, 16)
            if want_hi is None:
                assert fid not in f.upper_bounds, name
            else:
                assert from_bytes(t, f.upper_bounds[fid]) == want_hi, name
            continue
        if isinstance(t, BinaryType):
            assert got_lo == lo[:16], name
            continue
        want_lo, want_hi = iceberg_value(lo, t), iceberg_value(hi, t)
        if isinstance(want_lo, uuid.UUID):
            # bounds valid in Java's signed order too, or none (docs/interop.md)
            want_lo, want_hi = uuid_bounds_both_orders(want_lo, want_hi)
            if want_lo is None:
                assert fid not in f.lower_bounds, name
            if want_hi is None:
                assert fid not in f.upper_bounds, name
            if want_lo is None or want_hi is None:
                continue
            got_lo = from_bytes(t, f.lower_bounds[fid])
        got_hi = from_bytes(t, f.upper_bounds[fid])
        if isinstance(want_lo, uuid.UUID):
            got_lo, got_hi = uuid.UUID(bytes=bytes(got_lo)) if isinstance(got_lo, bytes) else got_lo, uuid.UUID(bytes=bytes(got_hi)) if isinstance(got_hi, bytes) else got_hi
        if isinstance(t, FloatType):
            want_lo, want_hi = struct.unpack("<f", struct.pack("<f", want_lo))[0], struct.unpack("<f", struct.pack("<f", want_hi))[0]
        if isinstance(t, (FloatType, DoubleType)):
            # a zero bound covers both zeros: lower -0.0, upper +0.0 (docs/interop.md)
            want_lo = -0.0 if want_lo == 0 else want_lo
            want_hi = 0.0 if want_hi == 0 else want_hi
        assert norm(got_lo) == norm(want_lo), (name, got_lo, want_lo)
        assert norm(got_hi) == norm(want_hi), (name, got_hi, want_hi)
    # nothing for fields inside lists and maps
    for name in ("ls.element", "m.key", "m.value"):
        fid = schema.find_field(name).field_id
        assert fid not in f.value_counts and fid not in f.lower_bounds, name
    # struct fields are columns too
    fid = schema.find_field("st.a").field_id
    assert f.value_counts[fid] == len(rows)


def file_rows(path):
    return pq.read_table(path[len("file://"):] if path.startswith("file://") else path).to_pylist()


# ---- tests -----------------------------------------------------------------------------------


def test_every_type_read_back_with_metrics(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.all", "--schema", SCHEMA)
    rows = edge_rows(90)
    out = run_tool(floe, "db.all", rows, tmp_path, "--batch-rows", 17)
    [ckpt] = out["checkpoints"]
    assert len(ckpt["files"]) == 1

    tbl = floe.pyiceberg_catalog().load_table("db.all")
    assert tbl.current_snapshot().snapshot_id == ckpt["snapshot_id"]
    assert tbl.current_snapshot().summary["total-records"] == str(len(rows))
    got = tbl.scan().to_arrow().to_pylist()
    assert by_id(got, COLUMNS) == by_id(rows, COLUMNS)

    [f] = live_files(tbl)
    local = f.file_path[len("file://"):]
    assert f.file_size_in_bytes == Path(local).stat().st_size
    assert f.record_count == len(rows)
    assert f.split_offsets and f.split_offsets[0] == 4
    check_metrics(tbl, f, rows)
    # the footer: iceberg.schema and field ids on every column
    meta = pq.read_metadata(local)
    assert b"iceberg.schema" in meta.metadata
    assert json.loads(meta.metadata[b"iceberg.schema"])["fields"][0]["name"] == "id"
    arrow_schema = pq.read_schema(local)
    assert [int(fl.metadata[b"PARQUET:field_id"]) for fl in arrow_schema] == [
        tbl.schema().find_field(c).field_id for c in COLUMNS]

    duck = duck_rows(tbl.metadata_location, COLUMNS)
    assert by_id(duck, COLUMNS) == by_id(rows, COLUMNS)


PARTITION_SPECS = [
    ("identity", "b, i, l, dec, dt, s, fx, t, ts, tstz"),
    ("bucket", "bucket(8, l), bucket(4, s), bucket(3, dec), bucket(5, dt), bucket(2, u), bucket(4, ts), "
               "bucket(3, i), bucket(2, bin), bucket(2, fx), bucket(3, t), bucket(2, tstz)"),
    ("truncate", "truncate(16, i), truncate(3, s), truncate(1024, l), truncate(50, dec), truncate(2, bin)"),
    ("temporal", "year(dt), month(dt), day(dt), year(ts), month(ts), day(ts), hour(ts)"),
    ("temporal_tz", "year(tstz), month(tstz), day(tstz), hour(tstz), void(i)"),
]


def to_iceberg(v, t):
    """Python value -> PyIceberg's internal representation for transforms."""
    from pyiceberg.types import UUIDType

    if v is None:
        return None
    if isinstance(t, UUIDType):
        return v if isinstance(v, uuid.UUID) else uuid.UUID(bytes=v)
    return iceberg_value(v, t)


def pyiceberg_partition(tbl, row):
    spec, schema = tbl.spec(), tbl.schema()
    key = []
    for pf in spec.fields:
        src = schema.find_field(pf.source_id)
        key.append(pf.transform.transform(src.field_type)(to_iceberg(row[src.name], src.field_type)))
    return tuple(key)


def plain(x):
    """Partition values as manifests return them vs transform results."""
    if isinstance(x, dt.date) and not isinstance(x, dt.datetime):
        from pyiceberg.utils.datetime import date_to_days

        return date_to_days(x)
    return iceberg_value(x, None) if isinstance(x, (dt.datetime, dt.time)) else x


def java_local_time(micros):
    """Java's LocalTime.toString(): seconds only when non-zero, fraction in
    groups of 3/6/9 digits (Java's humanTime; PyIceberg always prints seconds)."""
    sec, us = divmod(micros, 1_000_000)
    out = f"{sec // 3600:02d}:{sec // 60 % 60:02d}"
    if sec % 60 or us:
        out += f":{sec % 60:02d}"
        if us:
            out += f".{us // 1000:03d}" if us % 1000 == 0 else f".{us:06d}"
    return out


def java_partition_path(tbl, record):
    """PyIceberg's partition path, with identity time values as Java writes them."""
    from urllib.parse import quote_plus

    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import TimeType

    spec, schema = tbl.spec(), tbl.schema()
    segments = spec.partition_to_path(record, schema).split("/")
    for i, pf in enumerate(spec.fields):
        if isinstance(pf.transform, IdentityTransform) and isinstance(schema.find_field(pf.source_id).field_type, TimeType):
            v = record[i]
            segments[i] = f"{quote_plus(pf.name)}=" + ("null" if v is None else quote_plus(java_local_time(v)))
    return "/".join(segments)


@pytest.mark.parametrize("name,partition", PARTITION_SPECS, ids=[p[0] for p in PARTITION_SPECS])
def test_partitions_are_pyicebergs(floe, tmp_path, name, partition):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", f"db.{name}", "--schema", SCHEMA, "--partition", partition)
    rows = edge_rows(66)
    out = run_tool(floe, f"db.{name}", rows, tmp_path, "--batch-rows", 25)
    cat = floe.pyiceberg_catalog()
    tbl = cat.load_table(f"db.{name}")
    want_keys = {pyiceberg_partition(tbl, r) for r in rows}
    files = live_files(tbl)
    assert len(files) == len(out["checkpoints"][0]["files"])
    assert len(files) == len(want_keys)  # one file per partition
    by_row = {r["id"]: r for r in rows}
    seen = set()
    for f in files:
        got = tuple(norm(plain(f.partition[i])) for i in range(len(tbl.spec().fields)))
        frows = file_rows(f.file_path)
        assert frows and len(frows) == f.record_count
        for fr in frows:
            want = tuple(norm(plain(x)) for x in pyiceberg_partition(tbl, by_row[fr["id"]]))
            assert got == want, (f.file_path, fr["id"])
        seen.add(got)
        # the path holds the partition path of the manifest's tuple
        assert f"/data/{java_partition_path(tbl, f.partition)}/" in f.file_path
    assert len(seen) == len(files)
    got_rows = tbl.scan().to_arrow().to_pylist()
    assert by_id(got_rows, COLUMNS) == by_id(rows, COLUMNS)
    # PyIceberg prunes with floe's partition values and summaries
    from pyiceberg.expressions import EqualTo

    probe = rows[4]
    filtered = tbl.scan(row_filter=EqualTo("s", probe["s"])).to_arrow().to_pylist()
    assert by_id(filtered, COLUMNS) == by_id([r for r in rows if r["s"] == probe["s"]], COLUMNS)
    duck = duck_rows(tbl.metadata_location, PRIMITIVES)
    assert by_id(duck, PRIMITIVES) == by_id(rows, PRIMITIVES)


def event_rows(n, seed=7):
    import random

    rnd = random.Random(seed)
    base = dt.datetime(2024, 5, 1, tzinfo=UTC)
    return [{"id": k, "ts": base + dt.timedelta(seconds=rnd.randrange(0, 4 * 86400)),
             "kind": rnd.choice(["click", "view", "buy", "ünïcödé"]),
             "payload": "".join(rnd.choice("abcdefghijklmnop") for _ in range(rnd.randrange(20, 80))),
             "v": rnd.random()} for k in range(n)]


EVENTS = "id long not null, ts timestamptz, kind string, payload string, v double"


def test_rolling_and_checkpoints(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.ev", "--schema", EVENTS, "--partition", "bucket(2, id), day(ts)",
             "--property", "write.target-file-size-bytes=65536")
    rows = event_rows(40000)
    out = run_tool(floe, "db.ev", rows, tmp_path, "--batch-rows", 3000, "--checkpoint-rows", 15000)
    assert len(out["checkpoints"]) == 3
    tbl = floe.pyiceberg_catalog().load_table("db.ev")
    assert len(tbl.snapshots()) == 3
    files = live_files(tbl)
    per_partition = defaultdict(list)
    for f in files:
        assert f.file_size_in_bytes == Path(f.file_path[len("file://"):]).stat().st_size
        per_partition[tuple(f.partition)].append(f.file_size_in_bytes)
    assert sum(f.record_count for f in files) == len(rows)
    assert max(len(v) for v in per_partition.values()) >= 3  # rolled
    assert max(f.file_size_in_bytes for f in files) < 65536 * 1.5
    # file names: one operation id, counter continuing across checkpoints
    names = sorted(Path(f.file_path).name for f in files)
    ops = {n.split("-", 2)[2][:36] for n in names}
    assert len(ops) == 1
    counters = sorted(int(n.rsplit("-", 1)[1].split(".")[0]) for n in names)
    assert counters == list(range(1, len(names) + 1))
    got = tbl.scan().to_arrow()
    assert got.num_rows == len(rows)
    assert sorted(got.column("id").to_pylist()) == list(range(len(rows)))
    # PyIceberg's files table decodes every bound floe wrote
    inspected = tbl.inspect.files().to_pylist()
    assert len(inspected) == len(files)
    by_path = {f.file_path: f for f in files}
    for fi in inspected:
        rm = fi["readable_metrics"]
        frows = file_rows(fi["file_path"])
        ids = [r["id"] for r in frows]
        assert (rm["id"]["lower_bound"], rm["id"]["upper_bound"]) == (min(ids), max(ids))
        assert rm["id"]["value_count"] == len(frows) == fi["record_count"]
        kinds = [r["kind"] for r in frows]
        assert rm["kind"]["lower_bound"] == min(kinds, key=lambda k: k.encode())
        assert rm["v"]["nan_value_count"] == 0
        assert fi["file_size_in_bytes"] == by_path[fi["file_path"]].file_size_in_bytes
    con = duckdb_connection()
    n, s = con.execute(f"SELECT count(*), sum(id) FROM iceberg_scan('{tbl.metadata_location}')").fetchone()
    assert (n, s) == (len(rows), sum(range(len(rows))))


def test_many_partitions_small_budget(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.wide", "--schema", EVENTS, "--partition", "bucket(200, id)")
    rows = event_rows(20000, seed=11)
    run_tool(floe, "db.wide", rows, tmp_path, "--batch-rows", 2000, "--budget", 1 << 20, "--max-open", 64)
    tbl = floe.pyiceberg_catalog().load_table("db.wide")
    files = live_files(tbl)
    assert len(files) >= 200
    assert any(len(f.split_offsets or []) > 1 for f in files)  # flushed early by the budget
    got = tbl.scan().to_arrow().to_pylist()
    want = {r["id"]: (r["kind"], r["payload"]) for r in rows}
    assert {r["id"]: (r["kind"], r["payload"]) for r in got} == want


def test_object_storage_layout(floe, tmp_path):
    from pyiceberg.partitioning import PartitionFieldValue, PartitionKey
    from pyiceberg.table.locations import load_location_provider

    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.obj", "--schema", EVENTS, "--partition", "kind",
             "--property", "write.object-storage.enabled=true")
    rows = event_rows(500)
    run_tool(floe, "db.obj", rows, tmp_path)
    tbl = floe.pyiceberg_catalog().load_table("db.obj")
    provider = load_location_provider(tbl.location(), tbl.properties)
    files = live_files(tbl)
    assert len(files) == 4
    for f in files:
        key = PartitionKey(field_values=[PartitionFieldValue(tbl.spec().fields[0], f.partition[0])],
                           partition_spec=tbl.spec(), schema=tbl.schema())
        assert f.file_path == provider.new_data_location(Path(f.file_path).name, key)
        assert "/data/" in f.file_path and f"/kind={key.to_path()[5:]}/" in f.file_path
    assert tbl.scan().to_arrow().num_rows == len(rows)


NESTED = ("id long not null, ll list<list<int>>, lm list<map<string, int>>, "
          "ml map<string, list<long>>, lsl list<struct<a: list<string>, b: int>>, "
          "lll list<list<list<double>>>")
NESTED_COLUMNS = ["id", "ll", "lm", "ml", "lsl", "lll"]


def nested_rows(n=40):
    rows = []
    for k in range(n):
        rows.append({
            "id": k,
            "ll": None if k % 7 == 6 else [[j * k, None] if j == 1 else list(range(j)) for j in range(k % 4)],
            "lm": None if k % 5 == 4 else [{"__map__": [(f"a{j}", j)]} if j % 2 == 0 else None for j in range(k % 3)],
            "ml": None if k % 6 == 5 else {"__map__": [(f"k{j}", None if j == 1 else [k, -j]) for j in range(k % 3)]},
            "lsl": [{"a": [f"s{k}", None], "b": k}, None, {"a": None, "b": None}][: k % 4],
            "lll": None if k % 3 == 2 else [[[float(k) / 2, None]], []][: k % 3],
        })
    return rows


def test_nested_collections(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.nest", "--schema", NESTED)
    rows = nested_rows()
    run_tool(floe, "db.nest", rows, tmp_path, "--batch-rows", 7)
    tbl = floe.pyiceberg_catalog().load_table("db.nest")
    got = tbl.scan().to_arrow().to_pylist()
    assert by_id(got, NESTED_COLUMNS) == by_id(rows, NESTED_COLUMNS)
    [f] = live_files(tbl)
    assert set(f.value_counts) == {tbl.schema().find_field("id").field_id}
    duck = duck_rows(tbl.metadata_location, NESTED_COLUMNS)
    assert by_id(duck, NESTED_COLUMNS) == by_id(rows, NESTED_COLUMNS)


def ns_iso(ns, tz):
    """An epoch-nanosecond instant as json_batch's timestamp_ns text."""
    sec, frac = divmod(ns, 1_000_000_000)
    s = (dt.datetime(1970, 1, 1) + dt.timedelta(seconds=sec)).isoformat() + f".{frac:09d}"
    return s + ("+00:00" if tz else "")


def test_v3_nanosecond_timestamps_and_unknown(floe, tmp_path):
    import pyarrow as pa
    from pyiceberg.transforms import DayTransform, HourTransform
    from pyiceberg.types import TimestampNanoType, TimestamptzNanoType

    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.ns", "--schema",
             "id long not null, tsn timestamp_ns, tsnz timestamptz_ns, u unknown",
             "--partition", "day(tsn), hour(tsnz)", "--format-version", "3")
    values = [-1, 0, 1, -86_400_000_000_001, 1_709_208_000_123_456_789, -2_208_988_800_000_000_001, None]
    rows = [{"id": k, "tsn": v, "tsnz": None if v is None else -v} for k, v in enumerate(values)]
    path = tmp_path / "ns.jsonl"
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps({"id": r["id"],
                                "tsn": None if r["tsn"] is None else ns_iso(r["tsn"], False),
                                "tsnz": None if r["tsnz"] is None else ns_iso(r["tsnz"], True)}) + "\n")
    p = subprocess.run([write_tool(), "--dir", str(floe.root), "--table", "db.ns", "--input", str(path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    tbl = floe.pyiceberg_catalog().load_table("db.ns")
    assert tbl.format_version == 3
    got = tbl.scan().to_arrow()
    got = {i: (a, b, u) for i, a, b, u in zip(got.column("id").to_pylist(),
                                              got.column("tsn").cast(pa.int64()).to_pylist(),
                                              got.column("tsnz").cast(pa.int64()).to_pylist(),
                                              got.column("u").to_pylist())}
    assert got == {r["id"]: (r["tsn"], r["tsnz"], None) for r in rows}
    day, hour = DayTransform().transform(TimestampNanoType()), HourTransform().transform(TimestamptzNanoType())
    want = {(day(r["tsn"]), hour(r["tsnz"])) for r in rows}
    files = live_files(tbl)
    assert {(f.partition[0], f.partition[1]) for f in files} == want
    # the unknown column is not in the files
    for f in files:
        assert tbl.schema().find_field("u").field_id not in f.value_counts
        assert "u" not in pq.read_schema(f.file_path[len("file://"):]).names


def test_parquet_types_are_javas(floe, tmp_path):
    """Each Iceberg type lands in the Parquet type Java's ParquetTypeVisitor picks:
    decimals as INT32/INT64/FIXED by precision (FIXED of the minimal length),
    time and timestamps in micros with UTC adjustment only for timestamptz,
    uuid as FIXED[16] with the UUID annotation, 3-level lists and maps."""
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.phys", "--schema",
             "id long not null, d9 decimal(9, 2), d10 decimal(10, 2), d18 decimal(18, 3), "
             "d19 decimal(19, 3), d38 decimal(38, 10), t time, ts timestamp, tstz timestamptz, "
             "u uuid, fx fixed[4], bin binary, s string, dt date, ls list<int>, m map<string, int>")
    row = {"id": 1, "d9": "1.25", "d10": "1.25", "d18": "1.250", "d19": "1.250", "d38": "1.0000000000",
           "t": "10:00:00", "ts": "2020-01-01T00:00:00", "tstz": "2020-01-01T00:00:00+00:00",
           "u": "f79c3e09-677c-4bbd-a479-3f349cb785e7", "fx": "01020304", "bin": "01", "s": "x",
           "dt": "2020-01-01", "ls": [1], "m": {"a": 1}}
    path = tmp_path / "phys.jsonl"
    path.write_text(json.dumps(row) + "\n")
    p = subprocess.run([write_tool(), "--dir", str(floe.root), "--table", "db.phys", "--input", str(path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    [f] = json.loads(p.stdout)["checkpoints"][0]["files"]
    schema = pq.ParquetFile(f["path"][len("file://"):]).schema
    got = {}
    for i in range(len(schema)):
        c = schema.column(i)
        lt = c.logical_type
        got[c.path] = (c.physical_type, lt.type if lt is not None else None,
                       c.length if c.physical_type == "FIXED_LEN_BYTE_ARRAY" else None)
    assert got == {
        "id": ("INT64", "NONE", None),
        "d9": ("INT32", "DECIMAL", None),
        "d10": ("INT64", "DECIMAL", None),
        "d18": ("INT64", "DECIMAL", None),
        "d19": ("FIXED_LEN_BYTE_ARRAY", "DECIMAL", 9),
        "d38": ("FIXED_LEN_BYTE_ARRAY", "DECIMAL", 16),
        "t": ("INT64", "TIME", None),
        "ts": ("INT64", "TIMESTAMP", None),
        "tstz": ("INT64", "TIMESTAMP", None),
        "u": ("FIXED_LEN_BYTE_ARRAY", "UUID", 16),
        "fx": ("FIXED_LEN_BYTE_ARRAY", "NONE", 4),
        "bin": ("BYTE_ARRAY", "NONE", None),
        "s": ("BYTE_ARRAY", "STRING", None),
        "dt": ("INT32", "DATE", None),
        "ls.list.element": ("INT32", "NONE", None),
        "m.key_value.key": ("BYTE_ARRAY", "STRING", None),
        "m.key_value.value": ("INT32", "NONE", None),
    }
    by_name = {schema.column(i).path: schema.column(i).logical_type for i in range(len(schema))}
    for name, utc in (("t", False), ("ts", False), ("tstz", True)):
        d = by_name[name].to_json()
        assert json.loads(d)["isAdjustedToUTC"] is utc and json.loads(d)["timeUnit"] == "microseconds", (name, d)
