"""Configuration errors are found before anything is created: every refused
configuration exits non-zero with a message naming the option, and leaves the
catalog unchanged (no namespace, no table, no property stored). Also: catalog
options are honoured or refused, never ignored; read-only commands create no
catalog; dead letters name every table a record was meant for, and a table
whose filter excludes a record does not dead-letter it."""
import json
import subprocess

import pytest

from conftest import Floe


def no_catalog_or_empty(floe: Floe):
    db = floe.warehouse / "catalog.db"
    if not db.exists():
        return True
    import sqlite3

    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='iceberg_tables'").fetchall()
        if not rows:
            return True
        return con.execute("SELECT count(*) FROM iceberg_tables").fetchone()[0] == 0 and \
            con.execute("SELECT count(*) FROM iceberg_namespace_properties").fetchone()[0] == 0
    finally:
        con.close()


def test_check_refuses_a_source_that_is_not_built(floe, tmp_path):
    y = tmp_path / "p.yaml"
    y.write_text("pipeline.name: p\nsources:\n  - name: k\n    type: kafka\n    topic: events\n"
                 "tables:\n  - name: db.t\n    source: k\n    schema: 'id long'\n")
    r = floe.run("run", "--check", y, check=False)
    assert r.returncode != 0
    assert "kafka" in r.stderr
    r = floe.run("run", y, check=False)
    assert r.returncode != 0 and "kafka" in r.stderr
    assert no_catalog_or_empty(floe)


@pytest.mark.parametrize("prop,word", [
    ("write.parquet.compression-codec=lzo", "write.parquet.compression-codec"),
    ("write.format.default=orc", "write.format.default"),
    ("write.format.default=avro", "write.format.default"),
    ("write.target-file-size-bytes=12x", "write.target-file-size-bytes"),
    ("commit.retry.num-retries=-1", "commit.retry.num-retries"),
    ("write.metadata.metrics.default=truncate(0)", "write.metadata.metrics.default"),
])
def test_bad_table_property_creates_nothing(floe, tmp_path, prop, word):
    src = tmp_path / "a.jsonl"
    src.write_text('{"id": 1}\n')
    r = floe.run("ingest", "db.t", src, "--create-schema", "id long", "--property", prop, check=False)
    assert r.returncode != 0
    assert word in r.stderr, r.stderr
    assert no_catalog_or_empty(floe)
    # the same through table create and table set
    floe.run("namespace", "create", "db")
    r = floe.run("table", "create", "db.u", "--schema", "id long", "--property", prop, check=False)
    assert r.returncode != 0 and word in r.stderr
    assert "db.u" not in floe.run("table", "list", "db").stdout
    floe.run("table", "create", "db.v", "--schema", "id long")
    r = floe.run("table", "set", "db.v", prop, check=False)
    assert r.returncode != 0 and word in r.stderr
    key, val = prop.split("=", 1)
    shown = json.loads(floe.run("table", "show", "db.v", "--json").stdout)
    # not stored (a creation default, write.parquet.compression-codec=zstd, may be there)
    assert shown.get("properties", {}).get(key) != val


def test_format_version_upgrades_and_refuses_downgrades(floe):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long", "--format-version", "1")
    floe.run("table", "set", "db.t", "format-version=2")
    tbl = floe.pyiceberg_catalog().load_table("db.t")
    assert tbl.format_version == 2
    floe.run("table", "set", "db.t", "format-version=3")
    assert floe.pyiceberg_catalog().load_table("db.t").format_version == 3
    r = floe.run("table", "set", "db.t", "format-version=2", check=False)
    assert r.returncode != 0 and "downgrade" in r.stderr
    r = floe.run("table", "set", "db.t", "format-version=4", check=False)
    assert r.returncode != 0 and "format-version" in r.stderr
    assert floe.pyiceberg_catalog().load_table("db.t").format_version == 3


@pytest.mark.parametrize("args,word", [
    (["--warehouse", "/tmp/somewhere"], "--warehouse"),
    (["--catalog-type", "sql"], "--catalog-type"),
    (["--catalog-type", "bogus"], "bogus"),
    (["--catalog-type", "filesystem"], "--warehouse"),
    (["--catalog-type", "filesystem", "--warehouse", "file:///tmp/x", "--catalog-uri", "sqlite:///x.db"], "--catalog-uri"),
])
def test_catalog_options_are_honoured_or_refused(floe, tmp_path, args, word):
    cmd = [floe.bin, "--dir", str(floe.root), *args, "namespace", "create", "db"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert word in r.stderr
    assert not (floe.root / "warehouse").exists()


def test_catalog_options_from_the_environment_are_checked_too(floe):
    import os

    r = subprocess.run([floe.bin, "--dir", str(floe.root), "table", "list"], capture_output=True, text=True,
                       env={**os.environ, "FLOE_WAREHOUSE": "/tmp/x"})
    assert r.returncode == 2 and "FLOE_WAREHOUSE" in r.stderr


def test_read_only_commands_create_no_catalog(floe, tmp_path):
    d = tmp_path / "nothing" / "here"
    for args in (["table", "list"], ["namespace", "list"], ["table", "show", "db.t"], ["scan", "db.t"],
                 ["snapshots", "db.t"], ["inspect", "db.t", "files"]):
        r = subprocess.run([floe.bin, "--dir", str(d), *args], capture_output=True, text=True)
        assert r.returncode != 0, args
        assert "does not exist" in r.stderr and "catalog.db" in r.stderr, r.stderr
    assert not (tmp_path / "nothing").exists()
    # a missing table names the embedded catalog it was looked up in
    floe.run("namespace", "create", "db")
    r = floe.run("table", "show", "db.missing", check=False)
    assert r.returncode != 0 and "catalog.db" in r.stderr


def test_one_dead_letter_per_record_with_every_table(floe, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    lines = [
        '{"id": 1, "kind": "click", "n": 1}',          # both tables
        '{"id": "x", "kind": "click", "n": 2}',        # bad id: meant for both
        '{"id": 3, "kind": "buy", "n": "many"}',       # bad n: only b wants buys
        '{"id": 4, "kind": "view", "n": "many"}',      # bad n, but neither filter wants views
        'not json',                                    # nobody can tell: both
    ]
    (src / "e.jsonl").write_text("\n".join(lines) + "\n")
    y = tmp_path / "p.yaml"
    dlq = tmp_path / "dead.jsonl"
    y.write_text(f"""
pipeline.name: dl
execution.checkpointing.interval: 100ms
dead-letter.path: {dlq}
sources:
  - name: s
    type: files
    path: {src}
tables:
  - name: db.a
    source: s
    schema: "id long, kind string"
    filter: "kind = 'click'"
  - name: db.b
    source: s
    schema: "id long, kind string, n long"
    filter: "kind = 'click' or kind = 'buy'"
""")
    floe.run("run", y)
    dead = [json.loads(x) for x in dlq.read_text().splitlines()]
    by_off = {d["record"]: d for d in dead}
    assert len(dead) == 3, dead
    assert sorted(by_off['{"id": "x", "kind": "click", "n": 2}']["tables"]) == ["db.a", "db.b"]
    assert by_off['{"id": 3, "kind": "buy", "n": "many"}']["tables"] == ["db.b"]
    assert sorted(by_off["not json"]["tables"]) == ["db.a", "db.b"]
    for d in dead:
        assert set(d["reasons"]) == set(d["tables"])
        assert d["table"] == d["tables"][0] and d["reason"] == d["reasons"][d["table"]]
    cat = floe.pyiceberg_catalog()
    assert sorted(cat.load_table("db.a").scan().to_arrow().column("id").to_pylist()) == [1]
    assert sorted(cat.load_table("db.b").scan().to_arrow().column("id").to_pylist()) == [1]


def test_errors_fail_writes_the_record_to_the_dead_letter_file(floe, tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text('{"id": 1}\n{"id": "oops"}\n{"id": 3}\n')
    dlq = tmp_path / "dead.jsonl"
    r = floe.run("ingest", "db.t", src, "--create-schema", "id long", "--errors", "fail",
                 "--dead-letter", dlq, check=False)
    assert r.returncode != 0
    assert str(dlq) in r.stderr
    dead = [json.loads(x) for x in dlq.read_text().splitlines()]
    assert [d["record"] for d in dead] == ['{"id": "oops"}']


def test_configuration_reference_lists_the_property_registry(floe):
    """docs/configuration.md shows exactly what `floe table properties` prints
    (the registry that parsing and validation use)."""
    from conftest import ROOT

    doc = (ROOT / "docs" / "configuration.md").read_text()
    begin = doc.index("<!-- properties:begin")
    block = doc[doc.index("\n", begin) + 1:doc.index("<!-- properties:end -->")]
    out = subprocess.run([floe.bin, "table", "properties"], capture_output=True, text=True, check=True).stdout
    assert block == out
    rows = [json.loads(x) for x in subprocess.run([floe.bin, "table", "properties", "--format", "json"],
                                                  capture_output=True, text=True, check=True).stdout.splitlines()]
    keys = {r["key"]: r for r in rows}
    assert keys["write.target-file-size-bytes"]["default"] == "536870912"
    assert keys["write.format.default"]["refused"] == "orc|avro"


def test_table_show_reads_the_registry(floe):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long", "--property", "write.parquet.compression-codec=snappy",
             "--property", "my.team=ingest", "--property", "write.upsert.enabled=false")
    out = floe.run("table", "show", "db.t").stdout
    props = out[out.index("Properties"):]
    assert "write.parquet.compression-codec = snappy\n" in props
    assert "my.team = ingest  (not a floe setting" in props
    defaults = out[out.index("Defaults in effect"):]
    assert "write.target-file-size-bytes = 536870912" in defaults
    assert "write.parquet.compression-codec" not in defaults  # set, so not a default
