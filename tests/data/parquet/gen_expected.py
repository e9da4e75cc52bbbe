#!/usr/bin/env python3
"""Regenerate the expected rows of the Parquet conformance corpus.

For every Parquet file under $FLOE_TESTDATA/parquet-testing and the Iceberg
encoding golden files, read it with pyarrow and write what `floe parquet cat`
must print for it (JSON lines, see include/floe/parquet.h for the value
forms) to tests/data/parquet/expected/<path>.jsonl. Outputs larger than
LIMIT bytes are stored as a summary instead ({"rows", "bytes", "crc32"} of the
whole output). MANIFEST.tsv lists every file with what is expected of it:

    <path>  jsonl|summary   -                     rows must match
    <path>  error           <reason>              floe must fail cleanly

Files that no reader can read without keys (encryption) or that are invalid
on purpose are listed in UNSUPPORTED / BAD below, each with its reason.

Run: .venv/bin/python tests/data/parquet/gen_expected.py [testdata-root]
"""
import base64
import decimal
import math
import os
import pathlib
import struct
import sys
import zlib

import pyarrow as pa
import pyarrow.parquet as pq

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "expected"
LIMIT = 64_000

# Files floe does not read, on purpose, and why. Keep this list explicit.
UNSUPPORTED = {
    "parquet-testing/data/encrypt_columns_and_footer.parquet.encrypted": "encrypted (needs keys; floe has no Parquet modular encryption)",
    "parquet-testing/data/encrypt_columns_and_footer_aad.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/encrypt_columns_and_footer_bloom_filter.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/encrypt_columns_and_footer_ctr.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/encrypt_columns_plaintext_footer.parquet.encrypted": "encrypted columns (plaintext footer; column data needs keys)",
    "parquet-testing/data/external_key_material_java.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/uniform_encryption.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/aes256/encrypt_columns_and_footer.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/aes256/encrypt_columns_and_footer_ctr.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted": "encrypted (needs keys)",
    "parquet-testing/data/aes256/encrypt_columns_plaintext_footer.parquet.encrypted": "encrypted columns (needs keys)",
    "parquet-testing/data/aes256/uniform_encryption.parquet.encrypted": "encrypted (needs keys)",
}

# Files pyarrow rejects but floe reads, with the rows checked by hand against
# DuckDB (which reads them too) and the reason.
OTHER_ORACLE = {
    "parquet-testing/data/incorrect_map_schema.parquet": (
        '{"my_map":[{"key":"parent","value":"another"},{"key":"name","value":"report"}]}\n',
        "optional map key: pyarrow rejects it; floe reads the MAP as a list of key/value "
        "structs (no data lost); DuckDB reads the same two entries",
    ),
}

# Files floe rejects although they are valid, and why.
LIMITS = {
    "parquet-testing/data/large_string_map.brotli.parquet":
        "2 GiB of string data in 2 rows: past 32-bit Arrow offsets and the 1 GiB page limit "
        "(pyarrow cannot read it either)",
}

# Files that must be rejected (corrupt on purpose), with the reason.
BAD = {
    "parquet-testing/data/datapage_v1-corrupt-checksum.parquet": "page CRC mismatch (read with --verify-crc)",
    "parquet-testing/data/rle-dict-uncompressed-corrupt-checksum.parquet": "page CRC mismatch (read with --verify-crc)",
}


def roots(testdata):
    yield "parquet-testing/data", True
    yield "parquet-testing/shredded_variant", True
    yield "parquet-testing/bad_data", False
    yield "apache-iceberg/parquet/src/testFixtures/resources/encodings", True


def jstr(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def f32(x):
    """x rounded to float32 as C's (float) cast does (overflow gives infinity)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def fmt_double(x):
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    for p in range(1, 18):
        s = "%.*g" % (p, x)
        if float(s) == x:
            return s
    return s


def fmt_float(x):
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    for p in range(1, 10):
        s = "%.*g" % (p, x)
        if f32(float(s)) == x:
            return s
    return s


def floordiv(a, b):
    return a // b


def civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return y + (m <= 2), m, d


def fmt_date(days):
    y, m, d = civil_from_days(days)
    if 0 <= y <= 9999:
        return "%04d-%02d-%02d" % (y, m, d)
    if y < 0:
        return "-%04d-%02d-%02d" % (-y, m, d)
    return "+%d-%02d-%02d" % (y, m, d)


UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def fmt_tod(ns_of_day, digits):
    sec, frac = divmod(ns_of_day, 10**9)
    s = "%02d:%02d:%02d" % (sec // 3600, sec // 60 % 60, sec % 60)
    if digits:
        s += "." + ("%09d" % frac)[:digits]
    return s


def fmt_time(v, unit):
    return '"' + fmt_tod(v * UNIT_NS[unit], UNIT_DIGITS[unit]) + '"'


def fmt_timestamp(v, unit, tz):
    ns = v * UNIT_NS[unit]
    days, rem = divmod(ns, 86400 * 10**9)
    digits = UNIT_DIGITS[unit]
    if unit == "s":
        # minimal form: no fraction
        s = fmt_date(days) + "T" + fmt_tod(rem, 0)
    else:
        s = fmt_date(days) + "T" + fmt_tod(rem, digits)
    return '"' + s + ("Z" if tz else "") + '"'


def fmt_decimal(d, scale):
    if d is None:
        return "null"
    sign, digits, exp = d.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exp + scale
    if shift >= 0:
        unscaled *= 10**shift
    else:
        unscaled //= 10 ** (-shift)
    s = str(unscaled).rjust(scale + 1, "0")
    if scale > 0:
        s = s[:-scale] + "." + s[-scale:]
    return '"' + ("-" if sign and unscaled else ("-" if sign else "")) + s + '"'


def b64(b):
    return '"' + base64.b64encode(b).decode() + '"'


def encode(arr):
    """JSON text of every element of a pyarrow Array."""
    t = arr.type
    n = len(arr)
    if isinstance(t, pa.BaseExtensionType):
        return encode(arr.storage)
    if pa.types.is_null(t):
        return ["null"] * n
    valid = [v for v in arr.is_valid().to_pylist()]
    if pa.types.is_struct(t):
        kids = [encode(arr.field(i)) for i in range(t.num_fields)]
        names = [jstr(t.field(i).name) for i in range(t.num_fields)]
        return [
            "{" + ",".join(names[k] + ":" + kids[k][i] for k in range(len(kids))) + "}" if valid[i] else "null"
            for i in range(n)
        ]
    if pa.types.is_map(t):
        offs = arr.offsets.to_pylist()
        entries = arr.values
        keys = encode(entries.field(0))
        vals = encode(entries.field(1))
        return [
            "[" + ",".join("[" + keys[j] + "," + vals[j] + "]" for j in range(offs[i], offs[i + 1])) + "]"
            if valid[i] else "null"
            for i in range(n)
        ]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offs = arr.offsets.to_pylist()
        vals = encode(arr.values)
        return ["[" + ",".join(vals[offs[i]:offs[i + 1]]) + "]" if valid[i] else "null" for i in range(n)]
    if pa.types.is_fixed_size_list(t):
        w = t.list_size
        vals = encode(arr.values)
        off = arr.offset
        return ["[" + ",".join(vals[(off + i) * w:(off + i + 1) * w]) + "]" if valid[i] else "null" for i in range(n)]
    if pa.types.is_boolean(t):
        return [("true" if v else "false") if v is not None else "null" for v in arr.to_pylist()]
    if pa.types.is_integer(t):
        return [str(v) if v is not None else "null" for v in arr.to_pylist()]
    if pa.types.is_float16(t):
        vals = arr.cast(pa.float32()).to_pylist()
        return [fmt_float(v) if v is not None else "null" for v in vals]
    if pa.types.is_float32(t):
        return [fmt_float(v) if v is not None else "null" for v in arr.to_pylist()]
    if pa.types.is_float64(t):
        return [fmt_double(v) if v is not None else "null" for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [fmt_decimal(v, t.scale) for v in arr.to_pylist()]
    if pa.types.is_date32(t):
        return ['"' + fmt_date(v) + '"' if v is not None else "null" for v in arr.cast(pa.int32()).to_pylist()]
    if pa.types.is_date64(t):
        return ['"' + fmt_date(v // 86400000) + '"' if v is not None else "null" for v in arr.cast(pa.int64()).to_pylist()]
    if pa.types.is_time(t):
        ints = arr.cast(pa.int64() if t.bit_width == 64 else pa.int32()).to_pylist()
        return [fmt_time(v, t.unit) if v is not None else "null" for v in ints]
    if pa.types.is_timestamp(t):
        ints = arr.cast(pa.int64()).to_pylist()
        return [fmt_timestamp(v, t.unit, t.tz) if v is not None else "null" for v in ints]
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return [jstr(v) if v is not None else "null" for v in arr.to_pylist()]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t):
        return [b64(v) if v is not None else "null" for v in arr.to_pylist()]
    if pa.types.is_dictionary(t):
        return encode(arr.cast(t.value_type))
    raise TypeError("no JSON form for %s" % t)


def table_lines(table):
    cols = [encode(table.column(i).combine_chunks()) for i in range(table.num_columns)]
    names = [jstr(f.name) for f in table.schema]
    for r in range(table.num_rows):
        yield "{" + ",".join(names[c] + ":" + cols[c][r] for c in range(len(cols))) + "}\n"


def main():
    testdata = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("FLOE_TESTDATA", "/work/shared/testdata"))
    if OUT.exists():
        import shutil
        shutil.rmtree(OUT)
    OUT.mkdir()
    manifest = []
    for rel_root, must_read in roots(testdata):
        base = testdata / rel_root
        for path in sorted(base.rglob("*")):
            if not path.is_file() or not (path.name.endswith(".parquet") or path.name.endswith(".parquet.encrypted")):
                continue
            rel = str(path.relative_to(testdata))
            if rel in UNSUPPORTED:
                manifest.append((rel, "error", UNSUPPORTED[rel]))
                continue
            if rel in LIMITS:
                manifest.append((rel, "error", LIMITS[rel]))
                continue
            if rel in OTHER_ORACLE:
                text, why = OTHER_ORACLE[rel]
                dst = OUT / (rel + ".jsonl")
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(text)
                manifest.append((rel, "jsonl", why))
                continue
            try:
                table = pq.read_table(path)
            except Exception as e:  # noqa: BLE001
                first = str(e).splitlines()[0]
                if not must_read:
                    manifest.append((rel, "error", "corrupt on purpose (bad_data); pyarrow: %s" % first))
                else:
                    manifest.append((rel, "error", "pyarrow cannot read it either: %s" % first))
                continue
            why = "-"
            if not must_read:
                # in bad_data for a crash it once caused, yet valid: one
                # dictionary entry, indices of bit width 0
                why = "in bad_data for a past reader crash, but valid: pyarrow reads the same rows"
            text = "".join(table_lines(table))
            data = text.encode()
            dst = OUT / (rel + ".jsonl")
            dst.parent.mkdir(parents=True, exist_ok=True)
            if len(data) <= LIMIT:
                dst.write_bytes(data)
                kind = "jsonl"
            else:
                dst = OUT / (rel + ".summary")
                dst.write_text('{"rows":%d,"bytes":%d,"crc32":%d}\n' % (table.num_rows, len(data), zlib.crc32(data)))
                kind = "summary"
            manifest.append((rel, kind, why))
            if rel in BAD:
                manifest.append((rel, "crc-error", BAD[rel]))
    with open(OUT / "MANIFEST.tsv", "w") as f:
        f.write("# path\texpectation\treason (generated by gen_expected.py)\n")
        for rel, kind, why in manifest:
            f.write("%s\t%s\t%s\n" % (rel, kind, why))


if __name__ == "__main__":
    main()
