"""Shared fixtures for the interoperability tests: the floe binary, a fresh
embedded-default directory per test, and PyIceberg / DuckDB handles on it."""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def floe_bin() -> str:
    env = os.environ.get("FLOE_BIN")
    if env:
        return env
    for preset in ("asan", "dev", "release"):
        p = ROOT / "build" / preset / "floe"
        if p.exists():
            return str(p)
    raise RuntimeError("floe binary not found: build it or set FLOE_BIN")


class Floe:
    """Runs the floe command against one embedded-default directory."""

    def __init__(self, root: Path):
        self.root = root
        self.bin = floe_bin()

    def run(self, *args, check=True, input=None):
        cmd = [self.bin, "--dir", str(self.root), *map(str, args)]
        p = subprocess.run(cmd, capture_output=True, text=True, input=input)
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
        return p

    def json_rows(self, *args):
        out = self.run(*args, "--format", "json").stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse"

    def pyiceberg_catalog(self):
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog(
            "default",
            uri=f"sqlite:///{self.warehouse}/catalog.db",
            warehouse=f"file://{self.warehouse}",
        )


# Columns of floe's files tables (and of entries' data_file) that Java's
# metadata tables have (Spark shows them) and PyIceberg 0.12's inspect lacks.
JAVA_FILE_COLUMNS = ("first_row_id", "referenced_data_file", "content_offset", "content_size_in_bytes")


def without_java_columns(row: dict) -> dict:
    """A floe metadata-table row as PyIceberg's inspect has it."""
    out = {k: v for k, v in row.items() if k not in JAVA_FILE_COLUMNS}
    if isinstance(out.get("data_file"), dict):
        out["data_file"] = without_java_columns(out["data_file"])
    return out


def summary_pairs(row: dict) -> dict:
    """A snapshots row's summary (a JSON object in floe's output) as the
    [key, value] pairs PyIceberg's inspect gives."""
    if isinstance(row.get("summary"), dict):
        row = dict(row, summary=[[k, v] for k, v in row["summary"].items()])
    return row


@pytest.fixture
def floe(tmp_path) -> Floe:
    return Floe(tmp_path)


def duckdb_connection():
    import duckdb
    from duckdb_extensions import import_extension

    con = duckdb.connect()
    # the iceberg extension loads avro on first use; from PyPI too, so that
    # nothing is downloaded whatever test runs first
    import_extension("avro", con=con)
    import_extension("iceberg", con=con)
    con.execute("LOAD iceberg")
    return con


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_uri(tmp_path_factory):
    """A throwaway PostgreSQL server (Debian's postgresql package) for the SQL
    catalog tests; started here, stopped at the end of the session."""
    import glob
    import shutil
    import time

    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins:
        raise RuntimeError("PostgreSQL server binaries not found: run scripts/setup")
    import tempfile

    bindir = bins[-1]
    # not under pytest's tmp dir: its parents are private to root, and the
    # server runs as the postgres user when we are root
    base = Path(tempfile.mkdtemp(prefix="floe-pg-"))
    os.chmod(base, 0o755)
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    as_user = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(base, "postgres")
        shutil.chown(sock, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*as_user, f"{bindir}/initdb", "-D", str(data), "-U", "floe", "-A", "trust"], check=True, capture_output=True)
    port = _free_port()
    subprocess.run(
        [*as_user, f"{bindir}/pg_ctl", "-D", str(data), "-l", str(base / "log"), "-w",
         "-o", f"-p {port} -k {sock} -c listen_addresses=127.0.0.1", "start"],
        check=True, capture_output=True,
    )
    try:
        for _ in range(50):
            p = subprocess.run([f"{bindir}/psql", "-h", "127.0.0.1", "-p", str(port), "-U", "floe", "-d", "postgres",
                                "-c", "CREATE DATABASE catalog"], capture_output=True, text=True)
            if p.returncode == 0:
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"PostgreSQL did not start: {p.stderr}")
        yield f"postgresql://floe@127.0.0.1:{port}/catalog"
    finally:
        subprocess.run([*as_user, f"{bindir}/pg_ctl", "-D", str(data), "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def spark_floe(tmp_path_factory):
    """One Spark session per test module (tests/interop/spark_session.py) on a
    floe directory of the module's own: Spark's catalog "default" is floe's
    SQLite catalog. Tests of a module share both, with tables of their own."""
    import spark_session

    floe = Floe(tmp_path_factory.mktemp("spark"))
    floe.run("namespace", "create", "fl")  # creates the embedded catalog
    spark = spark_session.start(floe.warehouse)
    try:
        yield floe, spark
    finally:
        spark.stop()


@pytest.fixture(scope="session")
def java_peer():
    """Iceberg's Java JdbcCatalog as a peer (tests/java, built with Maven)."""
    proj = ROOT / "tests" / "java"
    jar = proj / "target" / "floe-java-peer-1.jar"
    srcs = list((proj / "src").rglob("*.java")) + [proj / "pom.xml"]
    if not jar.exists() or max(p.stat().st_mtime for p in srcs) > jar.stat().st_mtime:
        subprocess.run(["mvn", "-q", "-B", "package", "-DskipTests"], cwd=proj, check=True)
    cp = f"{jar}:{proj / 'target' / 'lib'}/*"

    def run(*args):
        p = subprocess.run(["java", "-cp", cp, "floe.Peer", *map(str, args)], capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(f"java peer {args[0]} failed:\n{p.stderr}")
        return p.stdout

    return run


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    """One Apache Kafka broker (KRaft, tests/kafka/broker.py) for the session:
    started here, stopped at the end. A test that needs it and cannot get it
    fails (the setup fetches the jars with mvn)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "kafka"))
    from broker import Broker

    b = Broker(tmp_path_factory.mktemp("kafka"))
    b.start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="session")
def kinesis_endpoint(tmp_path_factory):
    """moto's Kinesis server (tests/kinesis/server.py) for the session:
    started here, stopped at the end. A test that needs it and cannot get it
    fails (moto is in scripts/requirements-test.txt)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "kinesis"))
    from endpoint import Kinesis

    k = Kinesis(tmp_path_factory.mktemp("kinesis")).start()
    try:
        yield k
    finally:
        k.stop()


@pytest.fixture(scope="session")
def moto_aws(tmp_path_factory):
    """moto's server (s3_server.S3Server, through moto_server.py: Glue's
    VersionId enforced, its fault control file at .glue_control) for Glue,
    Secrets Manager, IAM and the S3 of the Glue tables (what RGW lacks: see
    s3_server.py), one for the session; each module uses its own buckets
    and Glue databases."""
    from s3_server import S3Server

    tmp = tmp_path_factory.mktemp("moto-aws")
    srv = S3Server(tmp / "moto.log", glue_control=tmp / "glue-control.json")
    srv.glue_control = tmp / "glue-control.json"
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def s3_rgw(tmp_path_factory):
    """The tests' S3 server: Ceph's RADOS Gateway on a one-OSD cluster
    (s3_server.RgwS3, rgw_server.py), one for the session (it starts in a
    second or two); each module uses its own bucket or prefix. A test that
    needs it and cannot get it fails (scripts/setup installs Ceph)."""
    import rgw_server
    from s3_server import RgwS3

    if not rgw_server.available():
        pytest.fail("Ceph's radosgw, ceph-mon and ceph-osd are not installed (scripts/setup installs them)")
    srv = RgwS3(tmp_path_factory.mktemp("rgw"))
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def rest_servers(s3_rgw, tmp_path_factory):
    """The tests' S3 server (RGW, bucket "floe") and Iceberg's REST catalog
    server on it (rest_server.py), one pair for the session."""
    from rest_server import RestServer

    tmp = tmp_path_factory.mktemp("rest")
    s3_rgw.bucket("floe")
    rest = RestServer(s3_rgw, "floe", tmp / "rest.log", tmp)
    yield s3_rgw, rest
    rest.stop()


# ---- the 5-minute plan run (issue 17) ---------------------------------------------------------
# bench/plan/run.py runs a real 5-minute pipeline and checks floe plan's
# prediction against it. It spends its time waiting on the generator's rate,
# so the suite starts it in the background when the test that checks it is
# collected (test_zz_plan_five_minutes.py, collected last) and that test
# waits for it: the five minutes overlap the rest of the suite.

PLAN_RUN = {}


def pytest_collection_modifyitems(session, config, items):
    if not any(it.nodeid.endswith("test_plan_prediction_within_ten_percent_of_a_five_minute_run")
               for it in items):
        return
    import sys
    import tempfile

    out = tempfile.NamedTemporaryFile(prefix="floe-plan-5min-", suffix=".log", delete=False)
    PLAN_RUN["log"] = out.name
    PLAN_RUN["proc"] = subprocess.Popen(
        # 50 regions at 200 records a checkpoint: a checkpoint that runs late
        # on a loaded machine (more records) barely changes the files a
        # checkpoint makes, so the check is of the model, not of the load
        [sys.executable, str(ROOT / "bench" / "plan" / "run.py"), "--minutes", "5", "--partitions", "50",
         "--floe", floe_bin()],
        stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def pytest_sessionfinish(session, exitstatus):
    proc = PLAN_RUN.get("proc")
    if proc and proc.poll() is None:
        proc.kill()
        proc.wait()
