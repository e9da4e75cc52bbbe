"""floe sql with Kafka sources (the real broker of the kafka_broker fixture):
a `'connector' = 'kafka'` table with Flink's option names and METADATA
columns feeds a streaming INSERT (PyIceberg reads exactly the routed
records; a re-run resumes without reading anything twice); the upsert hint
on a PRIMARY KEY table keeps one row per key (file source); a debezium-json source and the
upsert hint appear in the job's pipeline configuration as floe's keys; bad
connector options point at themselves."""
import json
import re
import subprocess

from conftest import duckdb_connection, floe_bin

CATALOG = ("CREATE CATALOG lake WITH ('type'='iceberg', 'catalog-type'='jdbc', "
           "'uri'='jdbc:sqlite:catalog.db', 'warehouse'='warehouse');\n"
           "USE CATALOG lake;\nCREATE DATABASE IF NOT EXISTS db;\nUSE db;\n")


def source_ddl(broker, topic, fmt="json", extra=""):
    return f"""CREATE TABLE src (
  id BIGINT, kind STRING, v INT,
  off BIGINT METADATA FROM 'offset', part INT METADATA FROM 'partition', k STRING METADATA FROM 'key'
) WITH (
  'connector' = 'kafka', 'topic' = '{topic}',
  'properties.bootstrap.servers' = '{broker.bootstrap}',
  'properties.session.timeout.ms' = '2000',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = '{fmt}'{extra}
);
"""


def run(cwd, script, *flags, check=True):
    (cwd / "job.sql").write_text(script)
    p = subprocess.run([floe_bin(), *flags, "sql", "-f", "job.sql"], cwd=cwd, capture_output=True,
                       text=True, timeout=180)
    if check:
        assert p.returncode == 0, p.stderr + p.stdout
    return p


def produce(broker, topic, rows, partition=None):
    pr = broker.producer()
    for r in rows:
        kw = {} if partition is None else {"partition": partition}
        pr.produce(topic, json.dumps(r).encode(), key=str(r["id"]).encode(), **kw)
    pr.flush(30)


def catalog(cwd):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("lake", uri=f"sqlite:///{cwd}/catalog.db", warehouse=f"file://{cwd}/warehouse")


def test_kafka_json_insert_with_metadata_columns_resumes(kafka_broker, tmp_path):
    topic = f"sqlk-{abs(hash(str(tmp_path))) % 10**8}"
    kafka_broker.create_topic(topic, 2)
    kinds = ["buy", "view", "click"]
    rows = [{"id": i, "kind": kinds[i % 3], "v": i * 2} for i in range(120)]
    produce(kafka_broker, topic, rows)
    script = (CATALOG + source_ddl(kafka_broker, topic) +
              "CREATE TABLE IF NOT EXISTS buys (id BIGINT, kind STRING, off BIGINT, part INT, k STRING);\n"
              "INSERT INTO buys SELECT id, kind, off, part, k FROM src WHERE kind = 'buy';\n")
    run(tmp_path, script)
    got = catalog(tmp_path).load_table("db.buys").scan().to_arrow().to_pylist()
    assert sorted(r["id"] for r in got) == [r["id"] for r in rows if r["kind"] == "buy"]
    assert all(r["k"] == str(r["id"]) and r["part"] in (0, 1) and r["off"] >= 0 for r in got)
    assert len({(r["part"], r["off"]) for r in got}) == len(got)
    # more records: the same script resumes from the table's offsets
    more = [{"id": i, "kind": kinds[i % 3], "v": 0} for i in range(120, 150)]
    produce(kafka_broker, topic, more)
    run(tmp_path, script)
    ids = sorted(r["id"] for r in catalog(tmp_path).load_table("db.buys").scan().to_arrow().to_pylist())
    assert ids == [r["id"] for r in rows + more if r["kind"] == "buy"]


def test_kafka_computed_projection_with_metadata_columns(kafka_broker, tmp_path):
    """A computed projection over a Kafka source: records decode into the
    source's columns (metadata columns included) and the projection makes
    the table's rows; a record whose CAST fails is its dead letter."""
    topic = f"sqlkp-{abs(hash(str(tmp_path))) % 10**8}"
    kafka_broker.create_topic(topic, 2)
    rows = [{"id": i, "kind": f"{'bv'[i % 2]}{i}", "v": i} for i in range(60)]
    rows[7]["kind"] = "bx"  # CAST(SUBSTRING(kind, 2) AS INT) fails
    produce(kafka_broker, topic, rows)
    script = (CATALOG + source_ddl(kafka_broker, topic) +
              "CREATE TABLE IF NOT EXISTS p (id BIGINT, kind STRING, v10 BIGINT, pos STRING, "
              "n INT);\n"
              "INSERT INTO p SELECT id, UPPER(kind), v * 10, CONCAT(CAST(part AS STRING), ':', "
              "CAST(off AS STRING)), CAST(SUBSTRING(kind, 2) AS INT) FROM src WHERE id >= 0;\n")
    p = run(tmp_path, script)
    got = sorted(catalog(tmp_path).load_table("db.p").scan().to_arrow().to_pylist(),
                 key=lambda r: r["id"])
    assert "59 committed" in p.stdout and "1 dead-lettered" in p.stdout, p.stdout
    assert [r["id"] for r in got] == [i for i in range(60) if i != 7]
    assert all(r["kind"] == rows[r["id"]]["kind"].upper() and r["v10"] == 10 * r["id"] and
               r["n"] == r["id"] and re.fullmatch(r"[01]:\d+", r["pos"]) for r in got), got[:3]
    assert len({r["pos"] for r in got}) == len(got)


def test_upsert_hint_keeps_one_row_per_key(tmp_path):
    """The seed's hinted INSERT on a PRIMARY KEY table (a JSON file source here:
    upserts from Kafka are the pipeline's to add, helper work in progress)."""
    (tmp_path / "in").mkdir()
    lines = [{"id": i, "kind": "v1", "v": i} for i in range(40)] + \
            [{"id": i, "kind": "v2", "v": -i} for i in range(15)]
    (tmp_path / "in" / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    script = (CATALOG + "CREATE TABLE src (id BIGINT, kind STRING, v INT) WITH ("
              "'connector' = 'filesystem', 'path' = 'in', 'format' = 'json');\n"
              "CREATE TABLE IF NOT EXISTS orders (id BIGINT, kind STRING, v INT, PRIMARY KEY (id) NOT ENFORCED)"
              " WITH ('format-version' = '2');\n"
              "INSERT INTO orders /*+ OPTIONS('upsert-enabled'='true') */ SELECT id, kind, v FROM src;\n")
    run(tmp_path, script)
    loc = catalog(tmp_path).load_table("db.orders").metadata_location
    con = duckdb_connection()  # reads the equality deletes (PyIceberg does not yet)
    got = {r[0]: {"kind": r[1], "v": r[2]}
           for r in con.execute(f"SELECT id, kind, v FROM iceberg_scan('{loc}')").fetchall()}
    assert sorted(got) == list(range(40))
    assert all(got[i]["kind"] == ("v2" if i < 15 else "v1") for i in range(40))
    assert all(got[i]["v"] == (-i if i < 15 else i) for i in range(40))


def test_debezium_and_kinesis_ddl_map_onto_the_pipeline(kafka_broker, tmp_path):
    topic = f"sqld-{abs(hash(str(tmp_path))) % 10**8}"
    kafka_broker.create_topic(topic, 1)
    script = (CATALOG + source_ddl(kafka_broker, topic, fmt="debezium-json") +
              "CREATE TABLE IF NOT EXISTS mirror (id BIGINT, kind STRING, v INT, PRIMARY KEY (id) NOT ENFORCED)"
              " WITH ('format-version' = '2', 'write.upsert.enabled' = 'true');\n"
              "INSERT INTO mirror /*+ OPTIONS('upsert-enabled'='true', 'equality-field-columns'='id') */"
              " SELECT id, kind, v FROM src;\n")
    p = run(tmp_path, script, "-v", check=False)
    cfg = p.stderr[p.stderr.index("pipeline for line"):]
    assert "type: kafka" in cfg and f'topic: "{topic}"' in cfg
    assert 'format: "debezium-json"' in cfg and 'scan.startup.mode: "earliest-offset"' in cfg
    assert 'metadata.offset: "off"' in cfg and 'metadata.key: "k"' in cfg
    assert 'upsert-enabled: "true"' in cfg and 'equality-field-columns: "id"' in cfg
    # kinesis: Flink's option names
    (tmp_path / "k.sql").write_text(CATALOG + """
CREATE TABLE ks (id BIGINT, sh STRING METADATA FROM 'shard-id') WITH (
  'connector' = 'kinesis', 'stream' = 'orders', 'aws.region' = 'us-east-1',
  'aws.endpoint' = 'http://127.0.0.1:1', 'scan.stream.initpos' = 'TRIM_HORIZON', 'format' = 'json');
CREATE TABLE IF NOT EXISTS kt (id BIGINT, sh STRING);
INSERT INTO kt SELECT id, sh FROM ks;
""")
    p = subprocess.run([floe_bin(), "-v", "sql", "-f", "k.sql"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    cfg = p.stderr[p.stderr.index("pipeline for line"):]
    assert "type: kinesis" in cfg and 'stream: "orders"' in cfg and 'aws.region: "us-east-1"' in cfg
    assert 'scan.stream.initpos: "TRIM_HORIZON"' in cfg and 'metadata.shard-id: "sh"' in cfg
    # an option floe does not take points at itself, before anything runs
    bad = run(tmp_path, CATALOG + source_ddl(kafka_broker, topic, extra=", 'sink.partitioner' = 'fixed'") +
              "CREATE TABLE IF NOT EXISTS b2 (id BIGINT);\nINSERT INTO b2 SELECT id FROM src;\n",
              check=False)
    assert bad.returncode != 0
    assert re.search(r"line \d+, column \d+: kafka option 'sink.partitioner' is not supported", bad.stderr), bad.stderr
    assert "^" in bad.stderr
