"""The avro-confluent value format end to end: records in Confluent's wire
format (the magic byte 0, the schema id from a registry, the datum encoded
by fastavro) produced to the real Kafka broker, the schemas registered over
the registry's REST API (tests/interop/schema_registry.py: a Confluent-API
stand-in, because neither Confluent's registry nor Karapace installs here;
see there), `floe run` into an Iceberg table, PyIceberg and DuckDB reading
exactly the model.

Bad input: an unknown schema id (404), the wrong magic byte, a truncated
datum, a datum that does not match its schema, trailing bytes — dead letters
with topic, partition, offset and reason; a registry that is down — retried,
then a clear error and nothing committed, the next run (registry back)
takes every record exactly once."""
import base64
import datetime as dt
import decimal
import io
import json
import subprocess
import uuid

import fastavro
import pytest

from conftest import duckdb_connection, floe_bin
from schema_registry import SchemaRegistry
from test_kafka import kafka_source, run_to_end, topic_name, write_yaml

D = decimal.Decimal
UTC = dt.timezone.utc

ADDRESS = {"type": "record", "name": "Address", "fields": [
    {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "string"], "default": None}]}
ITEM = {"type": "record", "name": "Item", "fields": [
    {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"},
    {"name": "price", "type": ["null", "double"], "default": None}]}
DEC = {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}

V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "amount", "type": DEC},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "at_us", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
     "default": None},
    {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
        {"name": "cid", "type": "int"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "address", "type": ["null", ADDRESS], "default": None}]}},
    {"name": "items", "type": {"type": "array", "items": ITEM}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "tags", "type": ["null", {"type": "array", "items": "string"}], "default": None},
    {"name": "legacy", "type": "string"},
]}
# version 2: `legacy` removed, `channel` (with a default) and `discount` added
V2 = dict(V1, fields=[f for f in V1["fields"] if f["name"] != "legacy"] + [
    {"name": "channel", "type": "string", "default": "web"},
    {"name": "discount", "type": ["null", DEC], "default": None}])

TABLE_SCHEMA = (
    "id long not null, name string, amount decimal(10, 2), day date, at_ms timestamptz, "
    "at_us timestamptz, uid uuid, note string, "
    "customer struct<cid: int, email: string, address: struct<city: string, zip: string>>, "
    "items list<struct<sku: string, qty: int, price: double>>, attrs map<string, long>, "
    "tags list<string>, legacy string, channel string, discount decimal(10, 2)")
COLUMNS = ["id", "name", "amount", "day", "at_ms", "at_us", "uid", "note", "customer", "items",
           "attrs", "tags", "legacy", "channel", "discount"]


def frame(schema_id, parsed, record):
    b = io.BytesIO()
    fastavro.schemaless_writer(b, parsed, record)
    return b"\x00" + schema_id.to_bytes(4, "big") + b.getvalue()


def order(i, version):
    r = {
        "id": i,
        "name": f"order {i} \u00e9\u4e2d",
        "amount": D(-1) ** i * D(f"{i * 37}.{i % 100:02d}"),
        "day": dt.date(1969, 12, 30) + dt.timedelta(days=i * 17),
        "at_ms": dt.datetime(1965 + i % 70, 3, 4, 5, 6, 7, (i % 1000) * 1000, tzinfo=UTC),
        "at_us": None if i % 5 == 0 else dt.datetime(2025, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=i * 1001),
        "uid": str(uuid.UUID(int=i * 104729 + 7)),
        "note": None if i % 3 else f"note {i}",
        "customer": {"cid": i % 17, "email": None if i % 4 == 1 else f"c{i}@example.com",
                     "address": None if i % 6 == 2 else {"city": f"city {i % 9}",
                                                          "zip": None if i % 2 else f"{i:05d}"}},
        "items": [{"sku": f"sku-{i}-{k}", "qty": k - 1, "price": None if k == 1 else k * 1.25}
                  for k in range(i % 4)],
        "attrs": {f"a{k}": i * 1000 + k for k in range(i % 3)},
        "tags": None if i % 7 == 3 else [f"t{k}" for k in range(i % 3)],
    }
    if version == 1:
        r["legacy"] = f"old {i}"
    else:
        r["channel"] = "app" if i % 2 else "web"
        r["discount"] = None if i % 4 == 0 else D(f"{i % 50}.{i % 10}5")
    return r


def model(r):
    """What the table holds for record r (a field the writer's schema lacks
    is null, as in Flink, whose reader schema is the table's)."""
    m = {c: r.get(c) for c in COLUMNS}
    m["uid"] = uuid.UUID(r["uid"])
    m["customer"] = dict(r["customer"])
    m["items"] = [dict(x) for x in r["items"]]
    return m


def norm(row):
    """A row from PyIceberg or DuckDB in the model's terms."""
    g = dict(row)
    if g["uid"] is not None and not isinstance(g["uid"], uuid.UUID):
        g["uid"] = uuid.UUID(bytes=bytes(g["uid"])) if isinstance(g["uid"], (bytes, bytearray)) \
            else uuid.UUID(str(g["uid"]))
    if isinstance(g["attrs"], list):  # PyIceberg: [(k, v), ...]
        g["attrs"] = dict(g["attrs"])
    for k in ("at_ms", "at_us"):
        if g[k] is not None and g[k].tzinfo is None:
            g[k] = g[k].replace(tzinfo=UTC)
        elif g[k] is not None:
            g[k] = g[k].astimezone(UTC)
    return g


@pytest.fixture
def registry():
    r = SchemaRegistry().start()
    try:
        yield r
    finally:
        r.stop()


def read_dead(path):
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_avro_confluent_evolution_logical_types_nested(floe, kafka_broker, registry, tmp_path):
    """Two versions of a subject's schema (v2 drops a field and adds one with a
    default and an optional decimal), logical types (decimal, date,
    timestamp-millis/-micros, uuid), unions with null, nested records,
    arrays of records, maps; records of both versions interleaved on three
    partitions. The table equals the model in PyIceberg and in DuckDB; each
    id's schema is asked of the registry once per writer task."""
    topic = topic_name(tmp_path, "avroevo")
    subject = f"{topic}-value"
    id1 = registry.register(subject, V1)
    id2 = registry.register(subject, V2)
    assert id1 != id2
    assert registry.register(subject, V2) == id2  # the same schema, the same id
    assert registry.get(f"/subjects/{subject}/versions")[1] == [1, 2]
    p1, p2 = fastavro.parse_schema(V1), fastavro.parse_schema(V2)
    kafka_broker.create_topic(topic, 3)
    pr = kafka_broker.producer()
    records = []
    for i in range(240):
        version = 1 if i < 80 or i % 3 == 0 else 2
        r = order(i, version)
        records.append(r)
        pr.produce(topic, frame(id1 if version == 1 else id2, p1 if version == 1 else p2, r),
                   key=str(i).encode(), partition=i % 3)
    assert pr.flush(30) == 0
    cfg = write_yaml(tmp_path / "p.yaml", "avroevo", kafka_source(
        kafka_broker, topic, format="avro-confluent",
        **{"avro-confluent.url": registry.url, "scan.bounded.mode": "latest-offset"}),
        {"name": "db.avroevo", "schema": TABLE_SCHEMA})
    run_to_end(floe, cfg)
    assert read_dead(tmp_path / "dead-letter.jsonl") == []
    want = sorted((model(r) for r in records), key=lambda r: r["id"])
    tbl = floe.pyiceberg_catalog().load_table("db.avroevo")
    got = sorted((norm(r) for r in tbl.scan().to_arrow().to_pylist()), key=lambda r: r["id"])
    assert len(got) == len(want)
    for w, g in zip(want, got):
        assert g == w, (w["id"], {k: (w[k], g[k]) for k in w if w[k] != g[k]})
    con = duckdb_connection()
    cur = con.execute(f"SELECT {', '.join(COLUMNS)} FROM iceberg_scan('{tbl.metadata_location}') "
                      "ORDER BY id")
    names = [d[0] for d in cur.description]
    duck = [norm(dict(zip(names, r))) for r in cur.fetchall()]
    for r in duck:
        if r["attrs"] is not None and not isinstance(r["attrs"], dict):
            r["attrs"] = dict(zip(r["attrs"]["key"], r["attrs"]["value"]))
    for w, g in zip(want, duck):
        assert g == w, (w["id"], {k: (w[k], g[k]) for k in w if w[k] != g[k]})
    # at most one request per id and writer task (parallelism 2)
    assert 1 <= registry.id_hits(id1) <= 2 and 1 <= registry.id_hits(id2) <= 2


def test_avro_confluent_bad_input_dead_letters(floe, kafka_broker, registry, tmp_path):
    """An id the registry does not have (404, asked for once), the wrong
    magic byte, a value shorter than the framing, a truncated datum, a datum
    that does not match its schema (a union branch out of range, bytes
    after the record, a string longer than the datum): each a dead letter with its
    topic, partition, offset and reason; every good record once."""
    topic = topic_name(tmp_path, "avrobad")
    sid = registry.register(f"{topic}-value", V1)
    p1 = fastavro.parse_schema(V1)
    kafka_broker.create_topic(topic, 2)
    pr = kafka_broker.producer()
    good = frame(sid, p1, order(5, 1))
    bad = {
        "unknown id": b"\x00" + (4242).to_bytes(4, "big") + good[5:],
        "unknown id again": b"\x00" + (4242).to_bytes(4, "big") + good[5:],
        "wrong magic": b"\x01" + good[1:],
        "json": b'{"id": 1}',
        "short": b"\x00\x00\x00",
        "truncated": good[:len(good) // 2],
        "bytes after": good + b"\x02",
        "long string": good[:5] + b"\x02" + b"\x7e" + b"ab",  # id 1, then a 63-byte name of 2
        "union branch": None,
    }
    # a union branch index of 7 where at_us is ["null", long]
    b = io.BytesIO()
    fastavro.schemaless_writer(b, p1, dict(order(9, 1), at_us=None))
    body = b.getvalue()
    head = io.BytesIO()
    fastavro.schemaless_writer(head, fastavro.parse_schema({
        "type": "record", "name": "H", "fields": V1["fields"][:5]}), order(9, 1))
    k = len(head.getvalue())
    assert body[k] == 0  # the null branch of at_us
    bad["union branch"] = b"\x00" + sid.to_bytes(4, "big") + body[:k] + b"\x0e" + body[k + 1:]
    want_ids = []
    where = {}
    n = 0
    for i in range(60):
        pr.produce(topic, frame(sid, p1, order(i, 1)), partition=i % 2)
        want_ids.append(i)
        if i % 6 == 5 and n < len(bad):
            what = list(bad)[n]
            pr.produce(topic, bad[what], partition=n % 2)
            where[what] = n % 2
            n += 1
    assert n == len(bad)
    assert pr.flush(30) == 0
    cfg = write_yaml(tmp_path / "p.yaml", "avrobad", kafka_source(
        kafka_broker, topic, format="avro-confluent",
        **{"avro-confluent.url": registry.url + "/", "scan.bounded.mode": "latest-offset"}),
        {"name": "db.avrobad", "schema": TABLE_SCHEMA},
        extra={"parallelism.default": 1})
    run_to_end(floe, cfg)
    ids = sorted(floe.pyiceberg_catalog().load_table("db.avrobad").scan(
        selected_fields=("id",)).to_arrow()["id"].to_pylist())
    assert ids == want_ids
    dead = read_dead(tmp_path / "dead-letter.jsonl")
    assert len(dead) == len(bad), [d["reason"] for d in dead]
    for d in dead:
        assert d["topic"] == topic and d["partition"] in (0, 1) and d["offset"] >= 0
    reasons = [d["reason"] for d in dead]
    assert sum("schema id 4242 is not in the schema registry" in r for r in reasons) == 2
    assert registry.id_hits(4242) == 1  # remembered
    assert any("first byte is 0x01" in r for r in reasons)
    assert sum("not Confluent's wire format" in r for r in reasons) == 3  # magic, json, short
    assert sum(f"Avro datum (schema {sid})" in r for r in reasons) == 4, reasons
    assert any("bytes after the record" in r for r in reasons)
    # the offsets are the records' own, and the dead letters keep the bytes to replay
    offs = {(d["partition"], d["offset"]) for d in dead}
    assert len(offs) == len(dead)
    kept = sorted(base64.b64decode(d["record_base64"]) if "record_base64" in d
                  else d["record"].encode() for d in dead)
    assert kept == sorted(bad.values())


def test_avro_confluent_registry_down_then_back(floe, kafka_broker, registry, tmp_path):
    """The registry down when floe needs a schema: retried with backoff,
    then `floe run` fails with a clear error naming the registry, the topic,
    partition and offset, and commits nothing it could not decode (no
    record is dead-lettered for the registry's fault). With the registry
    back the next run takes every record exactly once; a registry failing
    a few requests (HTTP 500) only delays it."""
    topic = topic_name(tmp_path, "avrodown")
    sid = registry.register(f"{topic}-value", V1)
    p1 = fastavro.parse_schema(V1)
    kafka_broker.create_topic(topic, 2)
    pr = kafka_broker.producer()
    for i in range(100):
        pr.produce(topic, frame(sid, p1, order(i, 1)), partition=i % 2)
    assert pr.flush(30) == 0
    cfg = write_yaml(tmp_path / "p.yaml", "avrodown", kafka_source(
        kafka_broker, topic, format="avro-confluent",
        **{"avro-confluent.url": registry.url, "scan.bounded.mode": "latest-offset"}),
        {"name": "db.avrodown", "schema": TABLE_SCHEMA}, extra={"parallelism.default": 1})
    registry.stop()
    p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg)], capture_output=True,
                       text=True, timeout=180, cwd=tmp_path)
    assert p.returncode != 0, p.stdout + p.stderr
    assert "schema registry" in p.stderr and registry.url in p.stderr, p.stderr
    assert f"topic {topic}" in p.stderr and "offset" in p.stderr, p.stderr
    assert read_dead(tmp_path / "dead-letter.jsonl") == []
    cat = floe.pyiceberg_catalog()
    if cat.table_exists("db.avrodown"):
        assert len(cat.load_table("db.avrodown").scan().to_arrow()) == 0
    # back, failing its first two answers: retried
    registry.start()
    registry.fail_next(2, 503)
    run_to_end(floe, cfg)
    ids = sorted(cat.load_table("db.avrodown").scan(selected_fields=("id",)).to_arrow()["id"]
                 .to_pylist())
    assert ids == list(range(100))
    assert read_dead(tmp_path / "dead-letter.jsonl") == []
    # more records: resumed from the table's offsets, nothing twice
    for i in range(100, 130):
        pr.produce(topic, frame(sid, p1, order(i, 1)), partition=i % 2)
    assert pr.flush(30) == 0
    run_to_end(floe, cfg)
    ids = sorted(cat.load_table("db.avrodown").scan(selected_fields=("id",)).to_arrow()["id"]
                 .to_pylist())
    assert ids == list(range(130))


def test_avro_confluent_basic_auth(floe, kafka_broker, tmp_path, monkeypatch):
    """avro-confluent.basic-auth.user-info from the environment is sent to
    the registry; wrong credentials are the registry's refusal (a clear
    error, no dead letters), not the records' fault; the value itself in
    the file is refused."""
    reg = SchemaRegistry(users={"floe": "s3cret"}).start()
    try:
        topic = topic_name(tmp_path, "avroauth")
        sid = reg.register(f"{topic}-value", V1)
        p1 = fastavro.parse_schema(V1)
        kafka_broker.create_topic(topic, 1)
        pr = kafka_broker.producer()
        for i in range(20):
            pr.produce(topic, frame(sid, p1, order(i, 1)))
        assert pr.flush(30) == 0

        def cfg(user_info):
            return write_yaml(tmp_path / "p.yaml", "avroauth", kafka_source(
                kafka_broker, topic, format="avro-confluent",
                **{"avro-confluent.url": reg.url, "scan.bounded.mode": "latest-offset",
                   "avro-confluent.basic-auth.user-info": user_info}),
                {"name": "db.avroauth", "schema": TABLE_SCHEMA}, extra={"parallelism.default": 1})

        p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run", str(cfg("floe:s3cret"))],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert p.returncode != 0 and "holds a credential" in p.stderr, p.stderr
        monkeypatch.setenv("REGISTRY_USER_INFO", "floe:wrong")
        p = subprocess.run([floe_bin(), "--dir", str(floe.root), "run",
                            str(cfg("${REGISTRY_USER_INFO}"))],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert p.returncode != 0 and "HTTP 401" in p.stderr and "refused the credentials" in \
            p.stderr, p.stderr
        assert read_dead(tmp_path / "dead-letter.jsonl") == []
        monkeypatch.setenv("REGISTRY_USER_INFO", "floe:s3cret")
        run_to_end(floe, cfg("${REGISTRY_USER_INFO}"))
        ids = floe.pyiceberg_catalog().load_table("db.avroauth").scan().to_arrow()["id"].to_pylist()
        assert sorted(ids) == list(range(20))
    finally:
        reg.stop()
