"""Avro data files (file_format AVRO), written by PyIceberg's Avro writer and
committed through PyIceberg: floe scans them with every primitive type,
nulls, filters and projections (PyIceberg itself reads only Parquet)."""
import base64
import datetime as dt
import decimal
import json
import os
import uuid

N = 100


def build(floe):
    from pyiceberg.avro.file import AvroOutputFile
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType,
                                 FixedType, FloatType, IntegerType, LongType, NestedField,
                                 StringType, TimestampType, TimestamptzType, TimeType, UUIDType)

    decimal.getcontext().prec = 60
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "i", IntegerType()),
        NestedField(3, "f", FloatType()), NestedField(4, "d", DoubleType()),
        NestedField(5, "b", BooleanType()), NestedField(6, "s", StringType()),
        NestedField(7, "bin", BinaryType()), NestedField(8, "day", DateType()),
        NestedField(9, "t", TimeType()), NestedField(10, "ts", TimestampType()),
        NestedField(11, "tz", TimestamptzType()), NestedField(12, "dec", DecimalType(9, 2)),
        NestedField(13, "big", DecimalType(38, 10)), NestedField(14, "u", UUIDType()),
        NestedField(15, "fx", FixedType(4)))
    floe.run("namespace", "create", "db")
    cat = floe.pyiceberg_catalog()
    t = cat.create_table("db.av", schema=schema)
    expected = []
    for n in range(N):
        if n % 7 == 3:
            expected.append({"id": n})
            continue
        expected.append({
            "id": n, "i": n - 50, "f": n / 4, "d": -n * 1.5, "b": n % 2 == 0, "s": f"s{n}é",
            "bin": bytes([n, 255 - n]), "day": 18993 + n - 50,
            "t": n * 1000001, "ts": 1_700_000_000_000_000 + n, "tz": -1_000_000 + n * 7,
            "dec": decimal.Decimal(n * 101 - 5000).scaleb(-2),
            "big": (decimal.Decimal("-12345678901234567890.0123456789") + n).quantize(
                decimal.Decimal(1).scaleb(-10)),
            "u": uuid.UUID(int=n * 0x1234567890ABCDEF), "fx": bytes([n, 1, 2, 3])})
    names = [f.name for f in schema.fields]
    rows = [Record(*[e.get(k) for k in names]) for e in expected]
    path = os.path.join(floe.warehouse, "db", "av", "data", "part-0.avro")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with AvroOutputFile[Record](PyArrowFileIO().new_output(path), file_schema=schema,
                                schema_name="table") as w:
        w.write_block(rows)
    with t.transaction() as tx:
        with tx.update_snapshot().fast_append() as app:
            app.append_data_file(DataFile.from_args(
                content=DataFileContent.DATA, file_path=f"file://{path}", file_format=FileFormat.AVRO,
                partition=Record(), record_count=N, file_size_in_bytes=os.path.getsize(path)))
    return expected


def as_floe(e):
    """The JSON floe prints for an expected row."""
    if "i" not in e:
        return {"id": e["id"], **{k: None for k in ("i", "f", "d", "b", "s", "bin", "day", "t", "ts",
                                                   "tz", "dec", "big", "u", "fx")}}
    epoch = dt.datetime(1970, 1, 1)
    ts = epoch + dt.timedelta(microseconds=e["ts"])
    tz = epoch + dt.timedelta(microseconds=e["tz"])
    t = (epoch + dt.timedelta(microseconds=e["t"])).time()
    return {
        "id": e["id"], "i": e["i"], "f": e["f"], "d": e["d"], "b": e["b"], "s": e["s"],
        "bin": base64.b64encode(e["bin"]).decode(), "day": (dt.date(1970, 1, 1) + dt.timedelta(days=e["day"])).isoformat(),
        "t": t.isoformat(), "ts": ts.isoformat(), "tz": tz.isoformat() + "+00:00",
        "dec": str(e["dec"]), "big": str(e["big"]), "u": str(e["u"]),
        "fx": base64.b64encode(e["fx"]).decode()}


def scan(floe, *args):
    p = floe.run("scan", "db.av", "--format", "json", *args)
    return [json.loads(x) for x in p.stdout.splitlines()]


def test_every_type_from_a_pyiceberg_avro_data_file(floe):
    expected = build(floe)
    got = sorted(scan(floe), key=lambda r: r["id"])
    assert got == [as_floe(e) for e in expected]
    # filters (residuals on the rows; no row-group statistics in Avro) and projections
    got = scan(floe, "--where", "i >= 40 AND s LIKE 's9%'", "--columns", "id,dec,u")
    want = [{"id": e["id"], "dec": str(e["dec"]), "u": str(e["u"])} for e in expected
            if "i" in e and e["i"] >= 40 and e["s"].startswith("s9")]
    assert sorted(got, key=lambda r: r["id"]) == want
    assert floe.run("scan", "db.av", "--count", "--where", "b IS NULL").stdout.strip() == \
        str(sum(1 for e in expected if "i" not in e))
    got = scan(floe, "--where", "big < -12345678901234567880", "--columns", "id,_pos")
    assert [(r["id"], r["_pos"]) for r in got] == [(n, n) for n in range(10) if n % 7 != 3]
