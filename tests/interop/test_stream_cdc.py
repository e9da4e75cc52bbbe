"""Upserts and change records from message sources: a Debezium change
stream (op c/r/u/d, some events in Kafka Connect's envelope, tombstones
after deletes) over the real Kafka broker into an upsert table while floe
is SIGKILLed at random, and over Kinesis (moto) into a CDC-mode table (the
before images delete); plain JSON upserts whose tombstones delete by key
(key.format json). The tables as floe, DuckDB and Java read them must equal
a model of the stream: no change lost, none applied twice."""
import json
import random
import signal
import time

from conftest import duckdb_connection
from test_kafka import Run, kafka_source, run_to_end, topic_name, write_yaml
from test_kinesis import Run as KRun
from test_kinesis import kinesis_source, last_offsets, stream_name, write_cfg

COLS = ["id", "name", "v"]
DBZ_SCHEMA = {"type": "struct", "name": "dbserver1.inventory.t.Envelope", "optional": False}


def norm(rows):
    return sorted(tuple(r.get(c) for c in COLS) for r in rows)


def dbz_changes(rng, n, keys, model):
    """n Debezium events over `keys` ids as [(id, value or None)], applied
    to model ({id: row}); a delete is followed by its tombstone."""
    out = []
    for _ in range(n):
        i = rng.randrange(keys)
        cur = model.get(i)
        new = {"id": i, "name": None if rng.random() < 0.1 else f"n{rng.randrange(999)}",
               "v": rng.randrange(10**6)}
        src = {"ts_ms": 1700000000000 + len(out), "db": "inventory", "table": "t"}
        if cur is None:
            ev = {"before": None, "after": new, "source": src, "op": rng.choice("cr")}
            model[i] = new
        elif rng.random() < 0.7:
            ev = {"before": cur, "after": new, "source": src, "op": "u"}
            model[i] = new
        else:
            ev = {"before": cur, "after": None, "source": src, "op": "d"}
            del model[i]
        if rng.random() < 0.3:
            ev = {"schema": DBZ_SCHEMA, "payload": ev}
        out.append((i, json.dumps(ev).encode()))
        if ev.get("op", ev.get("payload", {}).get("op")) == "d":
            out.append((i, None))
    return out


def check_readers(floe, java_peer, ident, model):
    want = norm(model.values())
    got = norm(floe.json_rows("scan", ident))
    assert len(got) == len(want), f"floe: {len(got)} rows, want {len(want)}"
    assert got == want
    tbl = floe.pyiceberg_catalog().load_table(ident)
    con = duckdb_connection()
    duck = norm(dict(zip(COLS, r)) for r in con.execute(
        f"SELECT id, name, v FROM iceberg_scan('{tbl.metadata_location}')").fetchall())
    assert duck == want, "duckdb"
    out = java_peer("scan", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", ident)
    assert norm(json.loads(l) for l in out.splitlines() if l.strip()) == want, "java"
    return tbl


def test_kafka_debezium_upsert_sigkill(floe, kafka_broker, java_peer, tmp_path):
    """Debezium JSON over a 3-partition topic, keyed by the row's key (as
    Debezium's Kafka Connect source produces it), into an upsert table with
    checkpoints every 300 ms; floe is SIGKILLed 6 times while the producer
    keeps writing, then a bounded run reads to the end."""
    topic = topic_name(tmp_path, "dbz")
    kafka_broker.create_topic(topic, 3)
    rng = random.Random(1313)
    model = {}
    waves = [dbz_changes(rng, 2500, 400, model) for _ in range(8)]
    pr = kafka_broker.producer()

    def send(wave):
        for i, val in wave:
            key = {"id": i} if i % 2 else {"schema": {"type": "struct"}, "payload": {"id": i}}
            pr.produce(topic, val, key=json.dumps(key).encode())
        assert pr.flush(60) == 0

    send(waves[0])
    cfg = write_yaml(tmp_path / "p.yaml", "dbz",
                     kafka_source(kafka_broker, topic, format="debezium-json",
                                  **{"key.format": "json"}),
                     {"name": "db.dbz", "schema": "id long not null, name string, v long",
                      "upsert-enabled": True, "equality-field-columns": "id"},
                     interval="300ms")
    for k in range(6):
        r = Run(floe, cfg, f"run{k}")
        time.sleep(rng.uniform(1.0, 2.5))
        send(waves[k + 1])
        rc = r.kill()
        assert rc == -signal.SIGKILL, f"floe exited on its own ({rc}):\n{r.text()[-3000:]}"
    send(waves[7])
    data = json.loads(cfg.read_text())
    data["sources"][0]["scan.bounded.mode"] = "latest-offset"
    end_cfg = tmp_path / "end.yaml"
    end_cfg.write_text(json.dumps(data))
    run_to_end(floe, end_cfg, timeout=300)
    tbl = check_readers(floe, java_peer, "db.dbz", model)
    ends = kafka_broker.end_offsets(topic)
    offs = json.loads(tbl.current_snapshot().summary["floe.source-offsets"])
    assert offs == {f"kafka:{topic}:{p}": ends[p] for p in range(3)}
    # the deletes went out as delete files, not as a rewrite
    assert int(tbl.current_snapshot().summary["total-delete-files"]) > 0


def test_kafka_json_upsert_tombstones_delete_by_key(floe, kafka_broker, tmp_path):
    """Plain JSON upserts (Flink's upsert-kafka): every value replaces its
    key's row, a tombstone deletes its key (key.format json), and one
    without a key it can read goes to the dead letters."""
    topic = topic_name(tmp_path, "ups")
    kafka_broker.create_topic(topic, 2)
    pr = kafka_broker.producer()
    model = {}
    rng = random.Random(7)
    for n in range(3000):
        i = rng.randrange(200)
        if i in model and rng.random() < 0.25:
            pr.produce(topic, None, key=json.dumps({"id": i}).encode())
            del model[i]
        else:
            model[i] = {"id": i, "name": f"x{n}", "v": n}
            pr.produce(topic, json.dumps(model[i]).encode(), key=json.dumps({"id": i}).encode())
    pr.produce(topic, None, key=b"not json")
    pr.produce(topic, None)  # no key: nothing to delete
    assert pr.flush(60) == 0
    cfg = write_yaml(tmp_path / "p.yaml", "ups",
                     kafka_source(kafka_broker, topic, **{"key.format": "json",
                                                          "scan.bounded.mode": "latest-offset"}),
                     {"name": "db.ups", "schema": "id long not null, name string, v long",
                      "upsert-enabled": True, "equality-field-columns": "id"})
    run_to_end(floe, cfg)
    assert norm(floe.json_rows("scan", "db.ups")) == norm(model.values())
    tbl = floe.pyiceberg_catalog().load_table("db.ups")
    con = duckdb_connection()
    duck = norm(dict(zip(COLS, r)) for r in con.execute(
        f"SELECT id, name, v FROM iceberg_scan('{tbl.metadata_location}')").fetchall())
    assert duck == norm(model.values())
    dead = [json.loads(l) for l in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    reasons = sorted(d["reason"] for d in dead)
    assert len(dead) == 2, dead
    assert any("the key" in x and "JSON" in x for x in reasons), reasons
    assert any("without a key" in x for x in reasons), reasons


def test_kinesis_debezium_cdc_sigkill(floe, kinesis_endpoint, java_peer, tmp_path):
    """Debezium JSON over a 2-shard Kinesis stream (partition key = the
    row's key) into a change-record table (not upsert: deletes and updates
    carry their before images), SIGKILLed 3 times while records arrive."""
    ep, kc = kinesis_endpoint, kinesis_endpoint.client()
    name = stream_name(tmp_path, "kdbz")
    kc.create_stream(StreamName=name, ShardCount=2)
    rng = random.Random(99)
    model = {}
    waves = [[(i, v) for i, v in dbz_changes(rng, 1200, 300, model) if v is not None]
             for _ in range(4)]
    total = sum(len(w) for w in waves)

    def send(wave):
        recs = [{"Data": v, "PartitionKey": str(i)} for i, v in wave]
        for k in range(0, len(recs), 500):
            r = kc.put_records(StreamName=name, Records=recs[k:k + 500])
            assert r["FailedRecordCount"] == 0

    send(waves[0])
    cfg = write_cfg(tmp_path / "p.yaml", "kdbz",
                    kinesis_source(ep, name, format="debezium-json"),
                    {"name": "db.kdbz", "schema": "id long not null, name string, v long",
                     "equality-field-columns": "id"}, interval="300ms")
    for k in range(3):
        r = KRun(floe, cfg, f"run{k}", ep.env())
        time.sleep(rng.uniform(1.0, 2.5))
        send(waves[k + 1])
        rc = r.kill()
        assert rc == -signal.SIGKILL, f"floe exited on its own ({rc}):\n{r.text()[-3000:]}"
    r = KRun(floe, cfg, "last", ep.env())
    deadline = time.monotonic() + 120
    n = -1
    while time.monotonic() < deadline:
        try:
            n = sum(o["n"] for o in last_offsets(floe, "db.kdbz").values())
        except Exception:
            n = -1
        if n >= total:
            break
        assert r.p.poll() is None, r.text()[-3000:]
        time.sleep(0.5)
    assert r.kill(signal.SIGTERM) == 0, r.text()[-3000:]
    assert n == total, f"{n} records committed of {total}"
    check_readers(floe, java_peer, "db.kdbz", model)
