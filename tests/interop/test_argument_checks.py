"""Nonsense is refused with a message that names the option and what it may be
(the integrity issue's list of accepted nonsense), and a schema with one name
twice never becomes a table PyIceberg cannot load."""
import json
import subprocess

import pytest

from conftest import Floe


def refused(p, *words):
    assert p.returncode != 0, f"accepted: {p.stdout}{p.stderr}"
    for w in words:
        assert w in p.stderr, p.stderr
    return p


@pytest.fixture
def table(floe: Floe, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(10)))
    floe.run("ingest", "db.t", src, "--create-schema", "id long not null", "--quiet")
    return "db.t"


@pytest.mark.parametrize(
    "schema, path",
    [
        ("a int, a int", "'a' appears twice"),
        ("a int, s struct<x: int, x: long>", "'s.x' appears twice"),
        ("a int, l list<struct<y: int, y: string>>", "'l.element.y' appears twice"),
        ("m map<string, struct<k: int, K: int>>", "'m.value.k' and 'm.value.K' differ only in case"),
        ("id long, ID string", "'id' and 'ID' differ only in case"),
        ('{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":false,"type":"int"},'
         '{"id":2,"name":"a","required":false,"type":"long"}]}', "'a' appears twice"),
    ],
)
def test_duplicate_columns_are_refused(floe: Floe, schema, path):
    floe.run("namespace", "create", "db")
    refused(floe.run("table", "create", "db.d", "--schema", schema, check=False), path)
    # nothing was created: PyIceberg would fail on it ("multiple fields for name a")
    assert ("db", "d") not in floe.pyiceberg_catalog().list_tables("db")


def test_duplicate_columns_refused_when_ingest_creates_the_table(floe: Floe, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"a": 1}\n')
    refused(floe.run("ingest", "db.x", src, "--create-schema", "a int, a long", "--quiet", check=False),
            "'a' appears twice")


@pytest.mark.parametrize(
    "args, words",
    [
        (["--where", ""], ["--where", "empty"]),
        (["--where", "   "], ["--where", "empty"]),
        (["--columns", ""], ["--columns", "no column names"]),
        (["--columns", ",,,"], ["--columns", "empty column name"]),
        (["--columns", "id,,id"], ["--columns", "empty column name"]),
        (["--snapshot-id", "-1"], ["--snapshot-id", "0 or more"]),
        (["--as-of", "-1"], ["--as-of", "0 or more"]),
        (["--as-of", "2026-02-30T00:00:00"], ["--as-of", "not a time"]),
        (["--as-of", "2026-13-01"], ["--as-of", "not a time"]),
        (["--as-of", "2026-01-01T24:00:00"], ["--as-of", "not a time"]),
        (["--incremental", "--from", "snapshot:-1"], ["--from"]),
        (["--incremental", "--to", "-1"], ["--to", "0 or more"]),
    ],
)
def test_scan_arguments_are_checked(floe: Floe, table, args, words):
    p = refused(floe.run("scan", table, *args, check=False), *words)
    assert p.returncode == 2


def test_as_of_reads_dates_with_zones(floe: Floe, table):
    # a valid date-time with a zone is read (it used to drop the zone)
    out = floe.run("scan", table, "--as-of", "2999-01-01T00:00:00+02:00", "--count").stdout
    assert out.strip() == "10"
    out = floe.run("scan", table, "--as-of", "2999-01-01", "--count").stdout
    assert out.strip() == "10"


def test_inspect_snapshot_id_checked(floe: Floe, table):
    refused(floe.run("inspect", table, "files", "--snapshot-id", "-1", check=False), "--snapshot-id")
    refused(floe.run("files", table, "--snapshot-id", "-1", check=False), "--snapshot-id")


def test_long_or_chains_are_no_memory_error(floe: Floe, table):
    where = " OR ".join(f"id = {i}" for i in range(3000))
    out = floe.run("scan", table, "--where", where, "--count").stdout
    assert out.strip() == "10"


def test_maintain_file_sizes_must_be_ordered(floe: Floe, table):
    p = refused(floe.run("maintain", table, "--min-file-size", "10GB", "--max-file-size", "1KB",
                         check=False), "--min-file-size", "--max-file-size")
    assert p.returncode == 2
    # the target sits between them (Java's planner says the same)
    refused(floe.run("maintain", table, "--min-file-size", "1GB", check=False),
            "min <= target <= max")
    refused(floe.run("maintain", table, "--max-file-size", "1MB", check=False),
            "min <= target <= max")


def test_orphan_age_under_a_day_needs_force(floe: Floe, table):
    p = refused(floe.run("maintain", table, "--orphan-older-than", "0", check=False),
                "--force", "24h")
    assert p.returncode == 2
    refused(floe.run("maintain", table, "--steps", "orphans", "--orphan-older-than", "23h",
                     check=False), "--force")
    floe.run("maintain", table, "--steps", "orphans", "--orphan-older-than", "24h")
    floe.run("maintain", table, "--steps", "orphans", "--orphan-older-than", "0", "--dry-run")
    floe.run("maintain", table, "--steps", "orphans", "--orphan-older-than", "0", "--force")
    # other steps need no --force
    floe.run("maintain", table, "--steps", "expire", "--orphan-older-than", "0")


@pytest.mark.parametrize(
    "fields, words",
    [
        (["id.min=10", "id.max=5"], ["fields.id.min (10) is greater than fields.id.max (5)"]),
        (["id.kind=sequence", "id.start=10", "id.end=5"], ["fields.id.start (10)", "fields.id.end (5)"]),
    ],
)
def test_generator_ranges_are_checked(floe: Floe, fields, words):
    args = ["ingest", "db.g", "--generator", "--create-schema", "id long", "--number-of-rows", "10",
            "--quiet"]
    for f in fields:
        args += ["--field", f]
    refused(floe.run(*args, check=False), *words)


def test_generator_row_count_must_not_be_negative(floe: Floe):
    # it used to run forever: a timeout makes that a failure, not a hang
    p = subprocess.run([floe.bin, "--dir", str(floe.root), "ingest", "db.g", "--generator",
                        "--create-schema", "id long", "--number-of-rows", "-1", "--quiet"],
                       capture_output=True, text=True, timeout=60)
    refused(p, "number-of-rows", "0 or more")


def test_json_numbers_outside_rfc_8259_are_dead_letters(floe: Floe, tmp_path):
    # Jackson and Flink's JSON format refuse these; floe read them as 1.0
    bad = ['{"id": 1.}', '{"id": 01}', '{"id": +1}', '{"id": .5}', '{"id": 2, "x": -}',
           '{"id": 3, "x": [1e]}']
    good = ['{"id": 0}', '{"id": -0}', '{"id": 10, "x": 0.5}', '{"id": 11, "x": 1E+2}']
    src = tmp_path / "n.jsonl"
    src.write_text("\n".join(good[:2] + bad + good[2:]) + "\n")
    dlq = tmp_path / "dead.jsonl"
    floe.run("ingest", "db.n", src, "--create-schema", "id long", "--dead-letter", dlq, "--quiet")
    dead = [json.loads(x) for x in dlq.read_text().splitlines()]
    assert [d["record"] for d in dead] == bad
    assert all("RFC 8259" in d["reason"] for d in dead), dead
    ids = floe.pyiceberg_catalog().load_table("db.n").scan().to_arrow().column("id").to_pylist()
    assert sorted(ids) == [0, 0, 10, 11]
