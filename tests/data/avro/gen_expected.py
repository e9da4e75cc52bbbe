#!/usr/bin/env python3
"""Generate expected.json: the decoded contents of every Avro file in
$FLOE_TESTDATA/arrow-testing/data/avro, as read by DuckDB's avro extension,
normalized to the raw Avro values (logical types undone: timestamps as
integers, decimals and bytes/fixed as hex of their bytes, enums as symbols).
Files DuckDB cannot read get hand-checked values (see HAND below).

Run: .venv/bin/python tests/data/avro/gen_expected.py > tests/data/avro/expected.json
"""
import datetime
import decimal
import glob
import json
import math
import os
import sys

import duckdb
from duckdb_extensions import import_extension

ROOT = os.environ.get("FLOE_TESTDATA", "/work/shared/testdata")
DIR = os.path.join(ROOT, "arrow-testing/data/avro")
EPOCH = datetime.datetime(1970, 1, 1)


def varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), i


def header(path):
    """The metadata map of a container file, parsed by hand."""
    buf = open(path, "rb").read()
    assert buf[:4] == b"Obj\x01"
    i, meta = 4, {}
    while True:
        n, i = varint(buf, i)
        if n == 0:
            return meta
        if n < 0:
            n = -n
            _, i = varint(buf, i)
        for _ in range(n):
            kl, i = varint(buf, i)
            k = buf[i:i + kl].decode()
            i += kl
            vl, i = varint(buf, i)
            meta[k] = buf[i:i + vl]
            i += vl


def conv(s, v, names):
    if isinstance(s, list):
        if v is None:
            return None
        nn = [b for b in s if b != "null"]
        return conv(nn[0], v, names)
    if isinstance(s, str):
        if s in names:
            return conv(names[s], v, names)
        s = {"type": s}
    t = s["type"]
    if isinstance(t, (dict, list)):
        return conv(t, v, names)
    if "name" in s:
        names[s["name"]] = s
    lt = s.get("logicalType")
    if v is None:
        return None
    if t in ("int", "long"):
        if lt in ("timestamp-micros", "local-timestamp-micros"):
            return (v - EPOCH) // datetime.timedelta(microseconds=1)
        if lt in ("timestamp-millis", "local-timestamp-millis"):
            return (v - EPOCH) // datetime.timedelta(milliseconds=1)
        if lt == "date":
            return (v - datetime.date(1970, 1, 1)).days
        return int(v)
    if t in ("float", "double"):
        return "NaN" if math.isnan(v) else float(v)
    if t == "boolean":
        return bool(v)
    if t == "string":
        return str(v)
    if t in ("bytes", "fixed"):
        if isinstance(v, decimal.Decimal):
            unscaled = int(v.scaleb(s.get("scale", 0)))
            size = s["size"] if t == "fixed" else max(1, (unscaled.bit_length() + 8) // 8)
            return unscaled.to_bytes(size, "big", signed=True).hex()
        return bytes(v).hex()
    if t == "enum":
        return str(v)
    if t == "array":
        return [conv(s["items"], x, names) for x in v]
    if t == "map":
        return {k: conv(s["values"], x, names) for k, x in v.items()}
    if t in ("record", "error"):
        return {f["name"]: conv(f["type"], v[f["name"]], names) for f in s["fields"]}
    raise ValueError(t)


# Values checked by hand against the bytes of files DuckDB 1.5 cannot read.
HAND = {
    # null codec; 2 records: id 1 with all zeros, id 2 with 1 s in each unit
    "timestamp_logical_types.avro": [
        {"id": 1, "ts_millis": 0, "ts_micros": 0, "ts_nanos": 0,
         "local_ts_millis": 0, "local_ts_micros": 0, "local_ts_nanos": 0},
        {"id": 2, "ts_millis": 1000, "ts_micros": 1000000, "ts_nanos": 1000000000,
         "local_ts_millis": 1000, "local_ts_micros": 1000000, "local_ts_nanos": 1000000000},
    ],
    # duration = fixed(12): months, days, millis as little-endian u32
    "duration_uuid.avro": [
        {"duration_field": "010000000f000000f4010000",
         "uuid_field": "fe7bc30b-4ce8-4c5e-b67c-2234a2d38e66"},
        {"duration_field": "0000000005000000c4090000",
         "uuid_field": "b33f2ad7-97b4-4de1-8bfe-94941d60156e"},
        {"duration_field": "020000000000000000000000",
         "uuid_field": "5f749264-074b-4005-84bf-115ea84ed20a"},
        {"duration_field": "0c0000001f000000e7030000",
         "uuid_field": "0826cc06-d2e3-4599-b4ad-af5fa6905cdb"},
    ],
    # decimal(76,10) in fixed(32): the values 1..24 (unscaled i * 10^10)
    "fixed256_decimal.avro": [
        {"value": (i * 10**10).to_bytes(32, "big", signed=True).hex()} for i in range(1, 25)
    ],
}
SAME_AS = {"alltypes_plain.zstandard.avro": "alltypes_plain.avro"}
UNSUPPORTED = {"alltypes_plain.bzip2.avro": "bzip2", "alltypes_plain.xz.avro": "xz"}


def main():
    con = duckdb.connect()
    import_extension("avro", con=con)
    con.execute("LOAD avro")
    out = {}
    for path in sorted(glob.glob(os.path.join(DIR, "*.avro"))):
        name = os.path.basename(path)
        meta = header(path)
        if name in UNSUPPORTED:
            out[name] = {"error": "EUNSUPPORTED", "codec": UNSUPPORTED[name]}
            continue
        if name in HAND:
            out[name] = {"rows": HAND[name]}
            continue
        src = os.path.join(DIR, SAME_AS.get(name, name))
        schema = json.loads(header(src)["avro.schema"])
        cur = con.execute("select * from read_avro(?)", [src])
        cols = [d[0] for d in cur.description]
        rows = []
        for row in cur.fetchall():
            rec = dict(zip(cols, row))
            rows.append(conv(schema, rec, {}))
        out[name] = {"codec": meta.get("avro.codec", b"null").decode(), "rows": rows}
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
