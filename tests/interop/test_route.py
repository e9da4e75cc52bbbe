"""Dynamic routing (issue 16 item 3): a table name template ("db.ev_{kind}")
sends each record to the table its field names, creating tables on first
use from the template (schema, partitioning, properties, unknown-fields).

The stream is test_schema_evolve's: 5 kinds whose fields change over 4
phases; here no table is listed, the route creates all 5, and each evolves
on its own. Bad names and the table cap are dead letters; a SIGKILL
campaign (kills while tables are created, while schemas are committed and
while data commits) loses and duplicates nothing.
"""
import json
import random
import signal
import subprocess
import time

from conftest import duckdb_connection
from test_schema_evolve import BASE, KINDS, check_tables, record, write_extra, write_input


def route_yaml(src, dlq, block="4KiB", max_tables=None, tasks=2):
    cap = f"    route.max-tables: {max_tables}\n" if max_tables else ""
    return f"""pipeline.id: route-test
execution.checkpointing.interval: 30ms
parallelism.default: {tasks}
dead-letter.path: {dlq}
sources:
  - name: in
    type: files
    path: {src}
    pattern: "*.jsonl"
    block-size: {block}
tables:
  - name: "db.ev_{{kind}}"
    schema: "{BASE}"
    partition-by: "bucket(4, id)"
    properties:
      write.distribution-mode: hash
      commit.retry.num-retries: "7"
    unknown-fields: evolve
{cap}"""


def test_route_creates_evolving_tables_from_the_template(floe, tmp_path):
    model = write_input(tmp_path / "in", per_phase=30)
    # records no table may be made for: each a dead letter with its reason
    bad = [{"id": -1, "kind": "K0"}, {"id": -2, "kind": "../x"}, {"id": -3},
           {"id": -4, "kind": None}, {"id": -5, "kind": "k" * 65}]
    with (tmp_path / "in" / "phase-0.jsonl").open("a") as f:
        for r in bad:
            f.write(json.dumps(r) + "\n")
    yaml = tmp_path / "p.yaml"
    dlq = tmp_path / "dlq.jsonl"
    yaml.write_text(route_yaml(tmp_path / "in", dlq))
    p = floe.run("run", str(yaml), "--summary", "json")
    summary = json.loads(p.stdout.splitlines()[-1])
    assert summary["records_committed"] == 600, p.stderr
    check_tables(floe, model)
    cat = floe.pyiceberg_catalog()
    assert sorted(t[1] for t in cat.list_tables("db")) == [f"ev_{k}" for k in KINDS]
    t0 = cat.load_table("db.ev_k0")
    assert [str(f.transform) for f in t0.spec().fields] == ["bucket[4]"]
    assert t0.properties["commit.retry.num-retries"] == "7"
    dead = [json.loads(line) for line in dlq.read_text().splitlines()]
    reasons = {d["record"]: d["reason"] for d in dead}
    assert len(dead) == len(bad) == len(reasons), dead
    assert all(d["table"] == "db.ev_{kind}" for d in dead)
    assert "'K0' (field kind) is not a table name" in reasons[json.dumps(bad[0])]
    assert "'../x' (field kind) is not a table name" in reasons[json.dumps(bad[1])]
    assert "field 'kind' is missing" in reasons[json.dumps(bad[2])]
    assert "field 'kind' is null" in reasons[json.dumps(bad[3])]
    # a second run finds the tables (nothing created, nothing read twice)
    p = floe.run("-v", "run", str(yaml), "--summary", "json")
    assert "creating table" not in p.stderr and "5 tables exist" in p.stderr
    assert json.loads(p.stdout.splitlines()[-1])["records_committed"] == 0


def test_route_max_tables_and_bad_templates(floe, tmp_path):
    (tmp_path / "in").mkdir()
    with (tmp_path / "in" / "a.jsonl").open("w") as f:
        for i in range(30):
            f.write(json.dumps({"id": i, "kind": KINDS[i % 3], "n": i, "req": "r"}) + "\n")
    yaml = tmp_path / "p.yaml"
    dlq = tmp_path / "dlq.jsonl"
    # a table that exists counts toward the cap, and is the route's
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.ev_k2", "--schema", BASE)
    yaml.write_text(route_yaml(tmp_path / "in", dlq, max_tables=2))
    p = floe.run("run", str(yaml), "--summary", "json")
    summary = json.loads(p.stdout.splitlines()[-1])
    assert summary["records_committed"] == 20, p.stderr
    cat = floe.pyiceberg_catalog()
    assert sorted(t[1] for t in cat.list_tables("db")) == ["ev_k0", "ev_k2"]
    assert len(cat.load_table("db.ev_k2").scan().to_arrow()) == 10
    dead = [json.loads(line) for line in dlq.read_text().splitlines()]
    assert len(dead) == 10 and all("route.max-tables (2) reached" in d["reason"] for d in dead)
    # templates that could not route safely are refused when the file is read
    for name, why in [("db.{kind}_{n}", "one {field}"), ("{ns}.ev", "after the namespace"),
                      ("db.ev-{kind}", "letters, digits and _")]:
        yaml.write_text(route_yaml(tmp_path / "in", dlq).replace("db.ev_{kind}", name))
        p = floe.run("run", str(yaml), check=False)
        assert p.returncode != 0 and why in p.stderr, (name, p.stderr)


def test_route_sigkill_during_creation_schema_and_data_commits_is_exactly_once(floe, tmp_path):
    model = write_input(tmp_path / "in", per_phase=300)
    yaml = tmp_path / "p.yaml"
    yaml.write_text(route_yaml(tmp_path / "in", tmp_path / "dlq.jsonl", block="16KiB"))
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "run", str(yaml), "--quiet"]
    rng = random.Random(16_31)
    kills = create_kills = schema_kills = runs = extra = 0
    extra_fields = []
    created = False
    next_id = sum(len(m) for m in model.values())
    finished = False
    while not finished and runs < 200:
        runs += 1
        log = tmp_path / f"run-{runs}.log"
        want_more = kills < 20 or schema_kills < 2 or (create_kills < 1 and not created)
        # the first runs create the tables: kill inside that (from the first
        # create to the reopen that finds them)
        mode = "create" if create_kills < 1 and not created else (
            "schema" if want_more and rng.random() < 0.4 else "data")
        early = rng.uniform(0.05, 0.3) if rng.random() < 0.5 else None
        with log.open("w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            try:
                if not want_more:
                    proc.wait(timeout=300)
                else:
                    deadline = time.time() + 15
                    start = time.time()
                    while time.time() < deadline and proc.poll() is None:
                        text = log.read_text()
                        if mode == "create" and "creating table" in text:
                            time.sleep(rng.uniform(0, 0.003))
                            break
                        if mode == "create" and time.time() - start > 3:
                            created = True  # an earlier run made them all
                            break
                        if mode == "schema" and "committing a schema update" in text:
                            time.sleep(rng.uniform(0, 0.005))
                            break
                        if mode == "data" and early is not None and time.time() - start > early:
                            break
                        if mode == "data" and ("committed as" in text or time.time() - start > 0.5):
                            time.sleep(rng.uniform(0, 0.02))
                            break
                        time.sleep(0.002)
                    proc.wait(timeout=0.001)
                finished = proc.returncode == 0
                assert finished, log.read_text()[-2000:]
                if want_more:
                    # everything was loaded before the kills were done: more
                    # input (a file name after the others), and go on killing
                    finished = False
                    extra += 1
                    # while schema kills are missing, the new file brings a new
                    # field: a schema commit left to kill in
                    next_id, field = write_extra(tmp_path / "in", extra, model, next_id, 60, schema_kills < 2)
                    if field:
                        extra_fields.append(field)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                text = log.read_text()
                if mode == "create" and text.rfind("creating table") > text.rfind("tables exist"):
                    create_kills += 1
                if mode == "schema" and "committing a schema update" in text:
                    schema_kills += 1
    assert finished and kills >= 20 and create_kills >= 1 and schema_kills >= 2, \
        (runs, kills, create_kills, schema_kills)
    check_tables(floe, model, extra_fields)


def test_kafka_json_route_and_debezium_upsert_evolve(floe, kafka_broker, tmp_path):
    """unknown-fields: evolve on message sources: JSON values routed by a
    template, and a Debezium change stream into an upsert table (a column
    added by the after images, a number widened, the key kept required)."""
    from test_kafka import kafka_source, run_to_end, topic_name, write_yaml
    ev, cdc = topic_name(tmp_path, "rev"), topic_name(tmp_path, "rcdc")
    kafka_broker.create_topic(ev, 2)
    kafka_broker.create_topic(cdc, 1)
    pr = kafka_broker.producer()
    model = {"a": {}, "b": {}}
    for i in range(200):
        k = "ab"[i % 2]
        r = {"id": i, "kind": k, "n": i}
        if i >= 80:
            r[f"x_{k}"] = f"s{i}"
        if i >= 150:
            r["n"] = 5_000_000_000 + i
        model[k][i] = r
        pr.produce(ev, json.dumps(r).encode(), partition=i % 2)
    rows = {}
    for i in range(120):
        key, op = i % 40, "c" if i < 40 else "u"
        after = {"id": key, "name": f"n{i}", "v": i}
        if i >= 60:
            after["email"] = f"e{i}@x"
        if i >= 100:
            after["v"] = 3_000_000_000 + i
        ev_ = {"before": rows.get(key), "after": after, "op": op,
               "source": {"ts_ms": 1700000000000 + i}}
        if i % 3 == 0:
            ev_ = {"schema": {"type": "struct"}, "payload": ev_}
        rows[key] = after
        pr.produce(cdc, json.dumps(ev_).encode(), key=json.dumps({"id": key}).encode())
        if i == 70:  # no key in the image: a dead letter, the key stays required
            bad = {"before": None, "after": {"name": "nokey", "v": 1, "email": "e"}, "op": "c"}
            pr.produce(cdc, json.dumps(bad).encode(), key=b'{"id": 999}')
    pr.flush(60)
    bounded = {"scan.bounded.mode": "latest-offset"}
    cfg = write_yaml(
        tmp_path / "p.yaml", "kev",
        kafka_source(kafka_broker, ev, **bounded),
        {"name": "db.kev_{kind}", "source": "k", "schema": "id long not null, kind string, n int",
         "unknown-fields": "evolve"},
        interval="200ms")
    doc = json.loads(cfg.read_text())
    src2 = kafka_source(kafka_broker, cdc, format="debezium-json", **{"key.format": "json"}, **bounded)
    src2["name"] = "c"
    src2["properties.group.id"] = "kev-cdc"  # one consumer group a source
    doc["sources"].append(src2)
    doc["tables"].append({"name": "db.kcdc", "source": "c",
                          "schema": "id long not null, name string not null, v int",
                          "upsert-enabled": True, "equality-field-columns": "id",
                          "unknown-fields": "evolve"})
    cfg.write_text(json.dumps(doc))
    run_to_end(floe, cfg)
    cat = floe.pyiceberg_catalog()
    for k in "ab":
        t = cat.load_table(f"db.kev_{k}")
        assert [(f.name, str(f.field_type), f.required) for f in t.schema().fields] == [
            ("id", "long", True), ("kind", "string", False), ("n", "long", False),
            (f"x_{k}", "string", False)]
        got = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
        assert len(got) == len(model[k])
        assert all(got[i]["n"] == m["n"] and got[i][f"x_{k}"] == m.get(f"x_{k}")
                   for i, m in model[k].items())
    t = cat.load_table("db.kcdc")
    assert [(f.name, str(f.field_type), f.required) for f in t.schema().fields] == [
        ("id", "long", True), ("name", "string", True), ("v", "long", False),
        ("email", "string", False)]
    want = [(k, r["name"], r["v"], r.get("email")) for k, r in sorted(rows.items())]
    # equality deletes: floe and DuckDB read them (PyIceberg does not yet)
    got = sorted((r["id"], r["name"], r["v"], r["email"]) for r in floe.json_rows("scan", "db.kcdc"))
    assert got == want
    duck = sorted(duckdb_connection().execute(
        f"SELECT id, name, v, email FROM iceberg_scan('{t.metadata_location}')").fetchall())
    assert duck == want
    dead = [json.loads(x) for x in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert [(d["table"], d["offset"]) for d in dead] == [("db.kcdc", 71)], dead


def test_route_tables_created_concurrently_by_two_pipelines(floe, tmp_path):
    """Two pipelines (two ids, two inputs) start together and route to the
    same new tables: one creates each table, the other loads it."""
    procs, want = [], {k: set() for k in KINDS}
    for n in range(2):
        src = tmp_path / f"in{n}"
        src.mkdir()
        with (src / "a.jsonl").open("w") as f:
            for i in range(n * 1000, n * 1000 + 100):
                kx = i % 5
                f.write(json.dumps(record(kx, i, 0)) + "\n")
                want[KINDS[kx]].add(i)
        yaml = tmp_path / f"p{n}.yaml"
        yaml.write_text(route_yaml(src, tmp_path / f"dlq{n}.jsonl").replace(
            "pipeline.id: route-test", f"pipeline.id: route-{n}"))
    for n in range(2):
        procs.append(subprocess.Popen([floe.bin, "--dir", str(floe.root), "run",
                                       str(tmp_path / f"p{n}.yaml"), "--quiet"],
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    cat = floe.pyiceberg_catalog()
    for k in KINDS:
        ids = [r["id"] for r in cat.load_table(f"db.ev_{k}").scan().to_arrow().to_pylist()]
        assert sorted(ids) == sorted(want[k]), k


def test_kafka_table_created_by_the_route_follows_the_others(floe, kafka_broker, tmp_path):
    """A table the route creates has no offsets: the source resumes from the
    other tables' positions, not from scan.startup.mode (latest-offset here
    would skip the records that made the table, and the others' too)."""
    from test_kafka import kafka_source, run_to_end, topic_name, write_yaml
    topic = topic_name(tmp_path, "rlate")
    kafka_broker.create_topic(topic, 1)
    pr = kafka_broker.producer()

    def send(first, kinds):
        for i in range(first, first + 20):
            pr.produce(topic, json.dumps({"id": i, "kind": kinds[i % len(kinds)]}).encode())
        pr.flush(60)

    table = {"name": "db.late_{kind}", "schema": "id long not null, kind string"}
    send(0, "a")
    run_to_end(floe, write_yaml(tmp_path / "p1.yaml", "late", kafka_source(
        kafka_broker, topic, **{"scan.bounded.mode": "latest-offset"}), table, interval="200ms"))
    send(20, "ab")
    run_to_end(floe, write_yaml(tmp_path / "p2.yaml", "late", kafka_source(
        kafka_broker, topic, **{"scan.bounded.mode": "latest-offset",
                                "scan.startup.mode": "latest-offset"}), table, interval="200ms"))
    cat = floe.pyiceberg_catalog()
    a = sorted(r["id"] for r in cat.load_table("db.late_a").scan().to_arrow().to_pylist())
    b = sorted(r["id"] for r in cat.load_table("db.late_b").scan().to_arrow().to_pylist())
    assert a == list(range(20)) + list(range(20, 40, 2)) and b == list(range(21, 40, 2))
