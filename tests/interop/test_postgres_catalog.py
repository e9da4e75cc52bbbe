"""The SQL catalog on a real PostgreSQL server: floe and PyIceberg's SqlCatalog
share it (JdbcCatalog's tables and compare-and-swap), and concurrent writers
from both sides never lose a snapshot."""
import os
import subprocess
import sys
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import Floe


def floe_pg(floe: Floe, uri: str, name: str, warehouse):
    def run(*args, check=True):
        return floe.run("--catalog-uri", uri, "--catalog-name", name, "--warehouse", f"file://{warehouse}", *args, check=check)

    return run


def py_catalog(uri: str, name: str, warehouse):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(name, uri=uri.replace("postgresql://", "postgresql+psycopg2://"), warehouse=f"file://{warehouse}")


def cli(floe, uri, name, wh, *args, check=True):
    cmd = [floe.bin, "--catalog-uri", uri, "--catalog-name", name, "--warehouse", f"file://{wh}", *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)}:\n{p.stderr}")
    return p


def test_floe_and_pyiceberg_share_a_postgres_catalog(floe, tmp_path, postgres_uri):
    name = f"c{uuid.uuid4().hex[:8]}"
    wh = tmp_path / "wh"
    cli(floe, postgres_uri, name, wh, "namespace", "create", "db", "--property", "owner=floe")
    cli(floe, postgres_uri, name, wh, "table", "create", "db.t", "--schema", "id long, kind string", "--partition", "kind")
    schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    files = []
    for k, kind in enumerate(["a", "b"]):
        p = tmp_path / f"f{k}.parquet"
        pq.write_table(pa.Table.from_pylist([{"id": k * 10 + j, "kind": kind} for j in range(10)], schema=schema), p)
        files.append(p)
    cli(floe, postgres_uri, name, wh, "add-files", "db.t", *files)

    cat = py_catalog(postgres_uri, name, wh)
    assert ("db",) in cat.list_namespaces()
    assert cat.load_namespace_properties("db")["owner"] == "floe"
    tbl = cat.load_table("db.t")
    assert tbl.scan().to_arrow().num_rows == 20
    assert [f.name for f in tbl.spec().fields] == ["kind"]
    # PyIceberg appends; floe sees it
    tbl.append(pa.Table.from_pylist([{"id": 999, "kind": "c"}], schema=schema))
    out = cli(floe, postgres_uri, name, wh, "snapshots", "db.t", "--format", "csv").stdout.splitlines()
    assert len(out) == 3  # header + 2 snapshots
    # rename and drop through floe, seen by PyIceberg
    cli(floe, postgres_uri, name, wh, "table", "rename", "db.t", "db.t2")
    assert cat.list_tables("db") == [("db", "t2")]
    cli(floe, postgres_uri, name, wh, "table", "drop", "db.t2")
    assert cat.list_tables("db") == []


WRITER = r"""
set -e
for k in $(seq 0 19); do
  "$FLOE" --catalog-uri "$URI" --catalog-name "$NAME" --warehouse "file://$WH" add-files db.race "$FILES/w$W-$k.parquet" > /dev/null
done
"""

PY_WRITER = r"""
import sys, time, random
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
uri, name, wh = sys.argv[1:4]
cat = SqlCatalog(name, uri=uri.replace("postgresql://", "postgresql+psycopg2://"), warehouse=f"file://{wh}")
schema = pa.schema([("id", pa.int64())])
for k in range(20):
    data = pa.Table.from_pylist([{"id": 900000 + k}], schema=schema)
    for attempt in range(500):
        try:
            cat.load_table("db.race").append(data)
            break
        except CommitFailedException:
            time.sleep(random.uniform(0.01, 0.1))
    else:
        raise SystemExit("gave up")
"""


def test_writers_race_on_postgres(floe, tmp_path, postgres_uri):
    name = f"c{uuid.uuid4().hex[:8]}"
    wh = tmp_path / "wh"
    cli(floe, postgres_uri, name, wh, "namespace", "create", "db")
    cli(floe, postgres_uri, name, wh, "table", "create", "db.race", "--schema", "id long",
        "--property", "commit.retry.num-retries=1000", "--property", "commit.retry.min-wait-ms=5",
        "--property", "commit.retry.max-wait-ms=200")
    files = tmp_path / "files"
    files.mkdir()
    schema = pa.schema([("id", pa.int64())])
    for w in (1, 2):
        for k in range(20):
            pq.write_table(pa.Table.from_pylist([{"id": w * 1000 + k}], schema=schema), files / f"w{w}-{k}.parquet")
    env = dict(os.environ, FLOE=floe.bin, URI=postgres_uri, NAME=name, WH=str(wh), FILES=str(files))
    procs = [subprocess.Popen(["bash", "-c", WRITER], env=dict(env, W=str(w)), stderr=subprocess.PIPE, text=True) for w in (1, 2)]
    procs.append(subprocess.Popen([sys.executable, "-c", PY_WRITER, postgres_uri, name, str(wh)], stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    tbl = py_catalog(postgres_uri, name, wh).load_table("db.race")
    assert len(tbl.snapshots()) == 60
    assert tbl.scan().to_arrow().num_rows == 60


def test_maintenance_lock_in_postgres(floe, tmp_path, postgres_uri):
    """On a PostgreSQL catalog the maintenance lock lives in its database:
    a row held as Iceberg Flink's JdbcLockFactory holds it stops floe; once
    it is gone floe compacts, and leaves no lock behind."""
    import psycopg2

    name = f"c{uuid.uuid4().hex[:8]}"
    wh = tmp_path / "wh"
    cli(floe, postgres_uri, name, wh, "namespace", "create", "db")
    cli(floe, postgres_uri, name, wh, "table", "create", "db.m", "--schema", "id long, kind string")
    schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    files = []
    for k in range(6):
        p = tmp_path / f"m{k}.parquet"
        pq.write_table(pa.Table.from_pylist([{"id": k * 10 + j, "kind": "x"} for j in range(10)], schema=schema), p)
        files.append(p)
    for f in files:
        cli(floe, postgres_uri, name, wh, "add-files", "db.m", f)
    lock_id = f"{name}.db.m"
    con = psycopg2.connect(postgres_uri)
    con.autocommit = True
    cur = con.cursor()
    cur.execute("CREATE TABLE IF NOT EXISTS flink_maintenance_lock (LOCK_TYPE CHAR(1) NOT NULL, "
                "LOCK_ID VARCHAR(100) NOT NULL, INSTANCE_ID CHAR(36) NOT NULL, "
                "PRIMARY KEY (LOCK_TYPE, LOCK_ID))")
    cur.execute("INSERT INTO flink_maintenance_lock VALUES ('m', %s, %s)", (lock_id, str(uuid.uuid4())))
    p = cli(floe, postgres_uri, name, wh, "maintain", "db.m", "--steps", "compact", check=False)
    assert p.returncode == 1 and "being maintained by" in p.stderr
    cur.execute("DELETE FROM flink_maintenance_lock WHERE LOCK_ID = %s", (lock_id,))
    cli(floe, postgres_uri, name, wh, "maintain", "db.m", "--steps", "compact")
    tbl = py_catalog(postgres_uri, name, wh).load_table("db.m")
    assert sorted(tbl.scan().to_arrow().column("id").to_pylist()) == list(range(60))
    assert len(tbl.inspect.files()) == 1
    cur.execute("SELECT count(*) FROM flink_maintenance_lock WHERE LOCK_ID = %s", (lock_id,))
    assert cur.fetchone()[0] == 0


def test_embedded_maintenance_on_postgres(floe, tmp_path, postgres_uri):
    """floe ingest --maintenance auto on a PostgreSQL catalog: the runner opens
    its own connection to the same database, compacts while checkpoints
    commit, and once the input ends a final run leaves the files packed; the
    lock row is gone afterwards and PyIceberg reads every row once."""
    import psycopg2

    name = f"c{uuid.uuid4().hex[:8]}"
    wh = tmp_path / "wh"
    # a rate-limited generator: about 20 checkpoints however fast the machine
    cli(floe, postgres_uri, name, wh, "ingest", "db.e", "--generator", "--rows-per-second", "10000",
        "--number-of-rows", "20000", "--field", "id.kind=sequence", "--create-schema",
        "id long not null, kind string", "--checkpoint-interval", "100ms", "--parallelism", "1",
        "--maintenance", "auto", "--maintenance-option", "schedule.commit-count=5",
        "--maintenance-option", "rate-limit=0s", "--quiet")
    tbl = py_catalog(postgres_uri, name, wh).load_table("db.e")
    assert sorted(tbl.scan().to_arrow().column("id").to_pylist()) == list(range(20000))
    ops = [s.summary.operation.value for s in tbl.snapshots()]
    assert "replace" in ops and ops.count("append") > 5, ops
    assert len(tbl.inspect.files()) <= 2
    con = psycopg2.connect(postgres_uri)
    cur = con.cursor()
    cur.execute("SELECT count(*) FROM flink_maintenance_lock WHERE LOCK_ID = %s", (f"{name}.db.e",))
    assert cur.fetchone()[0] == 0
