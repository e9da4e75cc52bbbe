#!/usr/bin/env python3
"""Seed corpora for the Parquet fuzz targets (fuzz/corpus/parquet_*).

parquet_page:      <type> <shape|codec<<2> <rows u16> + a column chunk cut out
                   of a file pyarrow writes with each encoding and codec
parquet_rle, parquet_delta, parquet_plain:
                   <decoder> <width> <count u16> + encoded bytes
parquet_roundtrip: a few fixed pseudo-random byte strings
parquet_footer:    footers of small pyarrow files (whole files come from
                   floe_fuzz_seeds)

Run: .venv/bin/python fuzz/gen_parquet_seeds.py
"""
import io
import pathlib
import random
import struct

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"

# type indexes of fuzz_parquet_page.c
T_BOOL, T_I32, T_I64, T_I96, T_F32, T_F64, T_STR, T_FLBA4 = range(8)
CODECS = {"none": 0, "snappy": 1, "gzip": 2, "zstd": 3, "lz4": 5, "brotli": 6}


def chunk_of(buf):
    f = pq.ParquetFile(io.BytesIO(buf))
    c = f.metadata.row_group(0).column(0)
    start = c.dictionary_page_offset if c.has_dictionary_page and c.dictionary_page_offset else c.data_page_offset
    return buf[start:start + c.total_compressed_size], f.metadata.num_rows


def write(arr, **kw):
    out = io.BytesIO()
    pq.write_table(pa.table({"x": arr}), out, **kw)
    return out.getvalue()


def page_seeds():
    d = ROOT / "parquet_page"
    d.mkdir(parents=True, exist_ok=True)
    n = 300
    cases = [
        (T_I32, pa.array([i * 7 % 50 if i % 5 else None for i in range(n)], pa.int32()), {}),
        (T_I64, pa.array(list(range(n)), pa.int64()), {"column_encoding": {"x": "DELTA_BINARY_PACKED"}, "use_dictionary": False}),
        (T_I32, pa.array(list(range(n)), pa.int32()), {"column_encoding": {"x": "DELTA_BINARY_PACKED"}, "use_dictionary": False, "data_page_version": "2.0"}),
        (T_F64, pa.array([i / 3 for i in range(n)]), {"column_encoding": {"x": "BYTE_STREAM_SPLIT"}, "use_dictionary": False}),
        (T_F32, pa.array([i / 3 for i in range(n)], pa.float32()), {"use_dictionary": False}),
        (T_STR, pa.array(["s%d" % (i % 9) if i % 4 else None for i in range(n)]), {}),
        (T_STR, pa.array(["prefix-%05d" % i for i in range(n)]), {"column_encoding": {"x": "DELTA_BYTE_ARRAY"}, "use_dictionary": False}),
        (T_STR, pa.array(["v%d" % i for i in range(n)]), {"column_encoding": {"x": "DELTA_LENGTH_BYTE_ARRAY"}, "use_dictionary": False}),
        (T_BOOL, pa.array([i % 3 == 0 if i % 7 else None for i in range(n)]), {}),
        (T_BOOL, pa.array([i % 3 == 0 for i in range(n)]), {"data_page_version": "2.0"}),
        (T_FLBA4, pa.array([struct.pack("<i", i) for i in range(n)], pa.binary(4)), {}),
    ]
    k = 0
    for t, arr, kw in cases:
        for codec in ("none", "snappy", "zstd", "gzip"):
            buf = write(arr, compression=codec, **kw)
            chunk, rows = chunk_of(buf)
            opt = 1 if arr.null_count or True else 0
            head = bytes([t, opt | CODECS[codec] << 2]) + struct.pack("<H", rows)
            (d / ("seed-%02d" % k)).write_bytes(head + chunk)
            k += 1
    # a list column
    buf = write(pa.array([[j for j in range(i % 4)] if i % 5 else None for i in range(n)], pa.list_(pa.int32())),
                compression="none")
    chunk, rows = chunk_of(buf)
    (d / "seed-list").write_bytes(bytes([T_I32, 1 | 2]) + struct.pack("<H", rows) + chunk)


def decoder_seeds():
    def put(target, name, which, width, count, body):
        d = ROOT / ("parquet_" + target)
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(bytes([which, width]) + struct.pack("<H", count) + body)

    # RLE run of 100 x 5 (width 3), then a bit-packed group
    rle = bytes([100 << 1, 5, (1 << 1) | 1, 0x88, 0xC6, 0xFA])
    put("rle", "rle32", 0, 3, 108, rle)
    put("rle", "rle16", 1, 3, 108, rle)
    put("rle", "bitpacked", 2, 3, 8, bytes([0x05, 0x39, 0x77]))
    # a DELTA_BINARY_PACKED stream cut out of a page pyarrow writes
    buf = write(pa.array(list(range(0, 1000, 3)), pa.int64()), compression="none",
                column_encoding={"x": "DELTA_BINARY_PACKED"}, use_dictionary=False)
    chunk, _ = chunk_of(buf)
    body = chunk[-200:]
    put("delta", "delta32", 0, 0, 400, body)
    put("delta", "delta64", 1, 0, 400, body)
    put("delta", "dlba", 2, 0, 2, bytes([128, 1, 4, 2, 2, 0, 0, 0, 0, 0]) + b"abc")
    put("delta", "dba", 3, 0, 2, bytes([128, 1, 4, 2, 0, 2, 0, 0, 0, 0, 0])
        + bytes([128, 1, 4, 2, 2, 0, 0, 0, 0, 0]) + b"abc")
    put("plain", "plain", 0, 0, 2, b"\x01\x00\x00\x00a\x02\x00\x00\x00bc")
    put("plain", "bss", 1, 3, 8, bytes(range(32)))


def roundtrip_seeds():
    d = ROOT / "parquet_roundtrip"
    d.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(42)
    for k, n in enumerate([16, 200, 1500, 6000]):
        (d / ("seed-%d" % k)).write_bytes(bytes(rnd.randrange(256) for _ in range(n)))


def footer_seeds():
    d = ROOT / "parquet_footer"
    d.mkdir(parents=True, exist_ok=True)
    t = pa.table({"a": pa.array([1, 2]), "b": pa.array([["x"], None]),
                  "m": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int64()))})
    out = io.BytesIO()
    pq.write_table(t, out)
    buf = out.getvalue()
    flen = struct.unpack("<I", buf[-8:-4])[0]
    (d / "nested-footer").write_bytes(buf[-8 - flen:-8])


if __name__ == "__main__":
    page_seeds()
    decoder_seeds()
    roundtrip_seeds()
    footer_seeds()
