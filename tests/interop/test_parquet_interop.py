"""Interop: pyarrow and DuckDB read the Parquet files floe writes.

A pyarrow table with every type floe writes (nulls everywhere, NaN and
signed zeros, empty and null lists, nested structs, lists of lists, maps)
is written by pyarrow without compression or dictionaries; `floe parquet
rewrite` then re-encodes it with each codec, page version 1 and 2,
dictionary on and off, small pages and several row groups. pyarrow and
DuckDB must read floe's file to the same rows as pyarrow's input file
(pyarrow with page checksum verification on), and pyarrow must see the
field ids floe wrote.

Run: .venv/bin/python -m pytest tests/interop/test_parquet_interop.py
The floe binary: $FLOE_BIN, else build/dev/floe.
"""
import datetime
import decimal
import importlib.util
import math
import os
import pathlib
import subprocess
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "build" / "dev" / "floe"))

spec = importlib.util.spec_from_file_location("gen_expected", ROOT / "tests/data/parquet/gen_expected.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


def floe_has_parquet():
    if not os.path.exists(FLOE):
        return False
    r = subprocess.run([FLOE, "parquet"], capture_output=True, text=True)
    return "floe parquet meta" in r.stderr


pytestmark = pytest.mark.skipif(not floe_has_parquet(), reason="floe binary without the parquet command")

N = 3000


def fid(name, typ, i, nullable=True, **kw):
    return pa.field(name, typ, nullable=nullable, metadata={b"PARQUET:field_id": str(i).encode()}, **kw)


def make_table():
    rows = range(N)

    def maybe(i, v, every=7):
        return None if i % every == 3 else v

    floats = [float("nan"), -0.0, 0.0, 1.5, -2.25, float("inf"), float("-inf"), 3.4028234663852886e38]
    schema = pa.schema([
        fid("id", pa.int64(), 1, nullable=False),
        fid("b", pa.bool_(), 2),
        fid("i8", pa.int8(), 3),
        fid("i16", pa.int16(), 4),
        fid("i32", pa.int32(), 5),
        fid("u8", pa.uint8(), 6),
        fid("u16", pa.uint16(), 7),
        fid("u32", pa.uint32(), 8),
        fid("u64", pa.uint64(), 9),
        fid("f32", pa.float32(), 10),
        fid("f64", pa.float64(), 11),
        fid("d9", pa.decimal128(9, 2), 12),
        fid("d18", pa.decimal128(18, 3), 13),
        fid("d38", pa.decimal128(38, 10), 14),
        fid("date", pa.date32(), 15),
        fid("time_us", pa.time64("us"), 16),
        fid("ts_us", pa.timestamp("us"), 17),
        fid("ts_us_utc", pa.timestamp("us", tz="UTC"), 18),
        fid("ts_ns", pa.timestamp("ns"), 19),
        fid("ts_ns_utc", pa.timestamp("ns", tz="UTC"), 20),
        fid("s_low", pa.string(), 21),
        fid("s_high", pa.string(), 22),
        fid("bin", pa.binary(), 23),
        fid("fixed", pa.binary(8), 24),
        fid("uid", pa.uuid(), 25),
        fid("st", pa.struct([fid("a", pa.int32(), 27), fid("b", pa.string(), 28)]), 26),
        fid("li", pa.list_(fid("element", pa.int32(), 30)), 29),
        fid("lst", pa.list_(fid("element", pa.struct([fid("x", pa.float64(), 32), fid("y", pa.string(), 33)]), 31)), 34),
        fid("ll", pa.list_(fid("element", pa.list_(fid("element", pa.int64(), 37)), 36)), 35),
        fid("m", pa.map_(fid("key", pa.string(), 39, nullable=False), fid("value", pa.int32(), 40)), 38),
        fid("req_s", pa.string(), 41, nullable=False),
    ])
    cols = {
        "id": list(rows),
        "b": [maybe(i, i % 3 == 0) for i in rows],
        "i8": [maybe(i, (i % 256) - 128) for i in rows],
        "i16": [maybe(i, (i * 37 % 65536) - 32768) for i in rows],
        "i32": [maybe(i, (i * 2654435761) % (2**32) - 2**31) for i in rows],
        "u8": [maybe(i, i % 256) for i in rows],
        "u16": [maybe(i, i * 31 % 65536) for i in rows],
        "u32": [maybe(i, (i * 2654435761) % (2**32)) for i in rows],
        "u64": [maybe(i, (i * 11400714819323198485) % (2**64)) for i in rows],
        "f32": [maybe(i, floats[i % len(floats)] if i % 2 else i / 7) for i in rows],
        "f64": [maybe(i, floats[i % len(floats)] if i % 2 else i / 3) for i in rows],
        "d9": [maybe(i, decimal.Decimal(i * 1234567 % 10**9 - 5 * 10**8).scaleb(-2)) for i in rows],
        "d18": [maybe(i, decimal.Decimal(i * 123456789012345 % 10**18 - 5 * 10**17).scaleb(-3)) for i in rows],
        "d38": [maybe(i, decimal.Decimal((i * 12345678901234567890123456789) % 10**38 - 5 * 10**37).scaleb(-10)) for i in rows],
        "date": [maybe(i, datetime.date(1960, 1, 1) + datetime.timedelta(days=i * 13)) for i in rows],
        "time_us": [maybe(i, datetime.time(i % 24, i % 60, i % 60, i * 7 % 1000000)) for i in rows],
        "ts_us": [maybe(i, (i - 1500) * 86_400_000_123) for i in rows],
        "ts_us_utc": [maybe(i, i * 3_600_000_001) for i in rows],
        "ts_ns": [maybe(i, (i - 1000) * 86_400_000_000_007) for i in rows],
        "ts_ns_utc": [maybe(i, i * 1_000_000_003) for i in rows],
        "s_low": [maybe(i, ["alpha", "beta", "gamma", "", "δέλτα"][i % 5]) for i in rows],
        "s_high": [maybe(i, "user-%08d-%s" % (i * 7919, "x" * (i % 13))) for i in rows],
        "bin": [maybe(i, bytes([i % 256, 0, 255]) * (i % 4)) for i in rows],
        "fixed": [maybe(i, (i * 1234567).to_bytes(8, "big")) for i in rows],
        "uid": [maybe(i, uuid.UUID(int=i * 0x9E3779B97F4A7C15F39CC0605CEDC835 % 2**128).bytes) for i in rows],
        "st": [maybe(i, None if i % 11 == 5 else {"a": maybe(i + 1, i), "b": "s%d" % i}) for i in rows],
        "li": [maybe(i, None if i % 9 == 4 else [maybe(j, j * i % 1000) for j in range(i % 5)]) for i in rows],
        "lst": [maybe(i, [{"x": j / 2, "y": maybe(j + 3, "y%d" % j)} for j in range(i % 3)]) for i in rows],
        "ll": [maybe(i, [[k for k in range(j)] if j % 3 else None for j in range(i % 4)]) for i in rows],
        "m": [maybe(i, [("k%d" % j, maybe(j + 3, j)) for j in range(i % 4)]) for i in rows],
        "req_s": ["r%d" % (i % 17) for i in rows],
    }
    arrays = []
    for f in schema:
        if f.name == "uid":
            arrays.append(pa.ExtensionArray.from_storage(pa.uuid(), pa.array(cols["uid"], pa.binary(16))))
        else:
            arrays.append(pa.array(cols[f.name], f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    d = tmp_path_factory.mktemp("pq")
    path = d / "input.parquet"
    pq.write_table(make_table(), path, compression="none", use_dictionary=False, store_schema=False,
                   row_group_size=N)
    return path


def rows_of(table):
    return list(gen.table_lines(table))


def duck_rows(path):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    return con.execute("select * from read_parquet(?) order by id", [str(path)]).fetchall()


def same_value(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b


def field_ids(schema):
    out = {}

    def walk(prefix, f):
        if f.metadata and b"PARQUET:field_id" in f.metadata:
            out[prefix + f.name] = int(f.metadata[b"PARQUET:field_id"])
        t = f.type
        if isinstance(t, pa.BaseExtensionType):
            t = t.storage_type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(prefix + f.name + ".", t.field(i))
        elif pa.types.is_map(t):
            walk(prefix + f.name + ".", t.key_field)
            walk(prefix + f.name + ".", t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(prefix + f.name + ".", t.value_field)

    for f in schema:
        walk("", f)
    return out


CONFIGS = [
    ("uncompressed", "1", True),
    ("snappy", "1", True),
    ("zstd", "1", True),
    ("gzip", "1", False),
    ("zstd", "2", True),
    ("snappy", "2", False),
    ("uncompressed", "2", False),
    ("brotli", "1", True),
    ("lz4_raw", "2", True),
]


@pytest.mark.parametrize("codec,page_version,dictionary", CONFIGS)
def test_pyarrow_and_duckdb_read_floe(source, tmp_path, codec, page_version, dictionary):
    out = tmp_path / "floe.parquet"
    cmd = [FLOE, "parquet", "rewrite", "--codec", codec, "--page-version", page_version,
           "--row-group-rows", "1100", "--page-rows", "250", "--batch-rows", "700"]
    if not dictionary:
        cmd.append("--no-dictionary")
    subprocess.run(cmd + [str(source), str(out)], check=True, capture_output=True)

    want = pq.read_table(source)
    # floe writes a CRC-32 in every page header: pyarrow checks them all
    got = pq.read_table(out, page_checksum_verification=True)
    assert rows_of(got) == rows_of(want)
    assert field_ids(got.schema) == field_ids(want.schema)

    md = pq.ParquetFile(out).metadata
    assert md.num_rows == N
    assert md.num_row_groups == 3
    col = md.row_group(0).column(0)
    assert col.compression.lower() == {"lz4_raw": "lz4"}.get(codec, codec)  # pyarrow calls LZ4_RAW "lz4"
    if dictionary:
        assert any("DICTIONARY" in e for e in md.row_group(0).column(20).encodings)  # s_low
    else:
        assert not any("DICTIONARY" in e for e in md.row_group(0).column(20).encodings)

    dw, dg = duck_rows(source), duck_rows(out)
    assert len(dw) == len(dg) == N
    for a, b in zip(dw, dg):
        assert same_value(list(a), list(b)), (a, b)


def test_statistics_pyarrow_reads(source, tmp_path):
    out = tmp_path / "stats.parquet"
    subprocess.run([FLOE, "parquet", "rewrite", str(source), str(out)], check=True, capture_output=True)
    t = pq.read_table(source)
    md = pq.ParquetFile(out).metadata
    names = [md.schema.column(i).path for i in range(md.num_columns)]
    rg = md.row_group(0)
    for name in ["id", "i32", "u32", "u64", "f64", "s_high", "d38", "date", "ts_us_utc"]:
        st = rg.column(names.index(name)).statistics
        col = t.column(name)
        vals = [v for v in col.to_pylist() if v is not None and not (isinstance(v, float) and math.isnan(v))]
        assert st.has_min_max, name
        assert st.null_count == col.null_count, name
        assert st.min == min(vals) and st.max == max(vals), (name, st.min, st.max)
    st = rg.column(names.index("f32")).statistics
    # f32 holds NaN (excluded), -0.0, +0.0, positives and +inf: min is -0.0
    assert st.min == 0.0 and math.copysign(1, st.min) == -1 and st.max == float("inf")


def test_floe_reads_its_own_and_pyarrow_files(source, tmp_path):
    out = tmp_path / "cat.parquet"
    subprocess.run([FLOE, "parquet", "rewrite", "--codec", "snappy", str(source), str(out)], check=True,
                   capture_output=True)
    want = "".join(rows_of(pq.read_table(source)))
    for path in (source, out):
        got = subprocess.run([FLOE, "parquet", "cat", str(path)], check=True, capture_output=True, text=True).stdout
        assert got == want


def test_meta_and_schema_commands(source, tmp_path):
    """`floe parquet meta` (JSON) and `floe parquet schema` (Parquet's message
    syntax with field ids) describe the file as pyarrow sees it."""
    import json

    out = tmp_path / "meta.parquet"
    subprocess.run([FLOE, "parquet", "rewrite", "--codec", "zstd", "--row-group-rows", "1100", str(source), str(out)],
                   check=True, capture_output=True)
    pa_md = pq.ParquetFile(out).metadata
    meta = json.loads(subprocess.run([FLOE, "parquet", "meta", str(out)], check=True, capture_output=True,
                                     text=True).stdout)
    assert meta["num_rows"] == pa_md.num_rows == N
    assert len(meta["row_groups"]) == pa_md.num_row_groups == 3
    for r, rg in enumerate(meta["row_groups"]):
        assert rg["num_rows"] == pa_md.row_group(r).num_rows
        assert len(rg["columns"]) == pa_md.num_columns
        for c, col in enumerate(rg["columns"]):
            want = pa_md.row_group(r).column(c)
            assert ".".join(col["path"]) == want.path_in_schema
            assert col["type"] == want.physical_type
            assert col["codec"] == "ZSTD"
            assert col["num_values"] == want.num_values
            assert col["total_compressed_size"] == want.total_compressed_size
            if want.statistics is not None and want.statistics.has_null_count:
                assert col["statistics"]["null_count"] == want.statistics.null_count
    schema = subprocess.run([FLOE, "parquet", "schema", str(out)], check=True, capture_output=True, text=True).stdout
    assert schema.startswith("message ")
    assert "required int64 id = 1;" in schema
    assert "optional int32 d9 (DECIMAL(9,2)) = 12;" in schema
    bad = subprocess.run([FLOE, "parquet", "meta", str(tmp_path / "missing.parquet")], capture_output=True, text=True)
    assert bad.returncode != 0 and "missing.parquet" in bad.stderr
