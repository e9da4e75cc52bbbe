"""Writes fuzz/corpus/avro_confluent/: inputs of fuzz_avro_confluent.c (the
first byte picks the table, then values each preceded by a one-byte length)
with values in Confluent's wire format encoded by fastavro against the
schemas the target gives the decoder (ids 1 and 2), plus bad ones (no magic
byte, an unknown id, a truncated datum, the id with references).

    .venv/bin/python fuzz/gen_avro_confluent_seeds.py
"""
import datetime as dt
import decimal
import io
from pathlib import Path

import fastavro

OUT = Path(__file__).resolve().parent / "corpus" / "avro_confluent"
UTC = dt.timezone.utc

P = {"type": "record", "name": "P", "fields": [
    {"name": "id", "type": "long"}, {"name": "s", "type": "string"},
    {"name": "d", "type": "double"}, {"name": "ok", "type": "boolean"},
    {"name": "b", "type": "bytes"},
    {"name": "amt", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "tu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "fx", "type": {"type": "fixed", "name": "F3", "size": 3}},
    {"name": "k", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}}]}
N = {"type": "record", "name": "N", "fields": [
    {"name": "id", "type": "int"},
    {"name": "tags", "type": ["null", {"type": "array", "items": "string"}]},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "pt", "type": ["null", {"type": "record", "name": "Pt", "fields": [
        {"name": "x", "type": "double"}, {"name": "y", "type": "double"}]}]},
    {"name": "deep", "type": {"type": "array", "items": {"type": "record", "name": "Dp", "fields": [
        {"name": "a", "type": {"type": "map", "values": {"type": "array", "items": "string"}}},
        {"name": "b", "type": ["null", "string", "long"]}]}}}]}


def enc(sid, schema, rec):
    b = io.BytesIO()
    fastavro.schemaless_writer(b, fastavro.parse_schema(schema), rec)
    return b"\x00" + sid.to_bytes(4, "big") + b.getvalue()


def seq(table, values):
    out = bytes([table])
    for v in values:
        assert len(v) < 256
        out += bytes([len(v)]) + v
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    p = [enc(1, P, {"id": i, "s": f"s{i}\u00e9", "d": i / 3, "ok": bool(i % 2), "b": bytes([i, 255]),
                    "amt": decimal.Decimal(f"-{i}.25"), "day": dt.date(1970, 1, 1 + i),
                    "ts": dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),
                    "tu": dt.datetime(2024, 2, 29, 1, 2, 3, i, tzinfo=UTC),
                    "u": "0c2b8f4e-6c61-4b8e-9a57-3f1f0d6e9a%02d" % i, "fx": b"abc",
                    "k": "B" if i % 2 else "A"}) for i in range(3)]
    n = [enc(2, N, {"id": i, "tags": None if i == 1 else ["x", "y"] * i,
                    "attrs": {"k": i, "l": -i}, "pt": None if i == 2 else {"x": 1.5, "y": -2.0},
                    "deep": [{"a": {"m": ["p", "q"]}, "b": None if i else "t"}, {"a": {}, "b": i}]})
         for i in range(3)]
    bad = [b"\x01" + p[0][1:], b"\x00\x00\x00\x00\x09" + p[0][5:], p[0][:9], p[0] + b"\x00",
           b"\x00\x00\x00\x00\x03\x02", b"", b"\x00\x00"]
    seeds = {
        "seed-primitives.bin": seq(0, p),
        "seed-nested.bin": seq(1, n),
        "seed-mixed.bin": seq(2, p[:1] + n[:1] + p[1:2]),
        "seed-bad.bin": seq(0, p[:1] + bad + p[1:2]),
        "seed-nested-into-primitives.bin": seq(3, n + bad[:2]),
    }
    for name, data in seeds.items():
        (OUT / name).write_bytes(data)


if __name__ == "__main__":
    main()
