"""Spark as an interop peer: pyspark (from scripts/requirements-test.txt) with
Iceberg's Spark runtime and the SQLite JDBC driver from Maven Central, on
floe's embedded SQLite catalog through Iceberg's JdbcCatalog, under floe's
catalog name ("default").

The jars are fetched into the local Maven repository by scripts/setup (and
here, when a fresh machine runs the tests without it); a jar that cannot be
had is an error, never a skip. One session serves a whole test module
(local[1], small memory: the machine has two cores)."""
import os
import subprocess
from pathlib import Path

ICEBERG_VERSION = "1.10.1"
SQLITE_JDBC_VERSION = "3.50.3.0"
ARTIFACTS = [
    ("org.apache.iceberg", "iceberg-spark-runtime-3.5_2.12", ICEBERG_VERSION),
    ("org.xerial", "sqlite-jdbc", SQLITE_JDBC_VERSION),
    # S3FileIO's AWS SDK: on every session, since a test suite's Spark is one
    # session (getOrCreate ignores spark.jars once it runs) and the REST + S3
    # tests need it after others started Spark
    ("org.apache.iceberg", "iceberg-aws-bundle", ICEBERG_VERSION),
]


def _m2_repo() -> Path:
    return Path(os.environ.get("FLOE_M2_REPO", Path.home() / ".m2" / "repository"))


def jar_path(group: str, artifact: str, version: str) -> Path:
    return _m2_repo() / group.replace(".", "/") / artifact / version / f"{artifact}-{version}.jar"


def spark_jars() -> list:
    """The jars Spark needs, fetched with Maven when they are not there yet."""
    jars = []
    for g, a, v in ARTIFACTS:
        p = jar_path(g, a, v)
        if not p.exists():
            r = subprocess.run(["mvn", "-q", "-B", "dependency:get", f"-Dartifact={g}:{a}:{v}",
                                "-Dtransitive=false"], capture_output=True, text=True)
            if r.returncode != 0 or not p.exists():
                raise RuntimeError(f"cannot fetch {g}:{a}:{v} with Maven (run scripts/setup):\n"
                                   f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
        jars.append(str(p))
    return jars


def start(warehouse: Path):
    """A Spark session whose catalog "default" is floe's catalog in warehouse
    (warehouse/catalog.db). The caller stops it."""
    import time

    from pyspark.sql import SparkSession

    # pyspark turns timestamps into naive datetimes in the process's zone
    os.environ["TZ"] = "UTC"
    time.tzset()
    jars = ",".join(spark_jars())
    cat = "spark.sql.catalog.default"
    b = (SparkSession.builder.master("local[1]")
         .appName("floe-interop")
         .config("spark.jars", jars)
         .config("spark.driver.memory", "1g")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.default.parallelism", "1")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC -XX:+UseSerialGC")
         .config("spark.sql.extensions",
                 "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config(cat, "org.apache.iceberg.spark.SparkCatalog")
         .config(f"{cat}.catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog")
         .config(f"{cat}.uri", f"jdbc:sqlite:{warehouse}/catalog.db")
         .config(f"{cat}.jdbc.schema-version", "V1")
         .config(f"{cat}.warehouse", f"file://{warehouse}")
         .config(f"{cat}.cache-enabled", "false")
         .config("spark.sql.defaultCatalog", "default"))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return SparkOnFloe(spark)


def start_rest(uri: str, warehouse: str, s3_endpoint: str, key: str, secret: str, region: str,
               extra_jars=()):
    """A Spark session whose catalog "rest" is Iceberg's RESTCatalog at uri,
    files through S3FileIO on the tests' S3 server (extra_jars: Iceberg's
    AWS bundle, which the REST fixture's setup fetched). The caller stops it."""
    import time

    from pyspark.sql import SparkSession

    os.environ["TZ"] = "UTC"
    time.tzset()
    jars = ",".join([*spark_jars(), *map(str, extra_jars)])
    cat = "spark.sql.catalog.rest"
    b = (SparkSession.builder.master("local[1]")
         .appName("floe-interop-rest")
         .config("spark.jars", jars)
         .config("spark.driver.memory", "1g")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.default.parallelism", "1")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.extraJavaOptions",
                 f"-Duser.timezone=UTC -XX:+UseSerialGC -Daws.region={region}")
         .config("spark.sql.extensions",
                 "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config(cat, "org.apache.iceberg.spark.SparkCatalog")
         .config(f"{cat}.type", "rest")
         .config(f"{cat}.uri", uri)
         .config(f"{cat}.warehouse", warehouse)
         .config(f"{cat}.cache-enabled", "false")
         .config(f"{cat}.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
         .config(f"{cat}.s3.endpoint", s3_endpoint)
         .config(f"{cat}.s3.path-style-access", "true")
         .config(f"{cat}.s3.access-key-id", key)
         .config(f"{cat}.s3.secret-access-key", secret)
         .config(f"{cat}.client.region", region)
         .config("spark.sql.defaultCatalog", "rest"))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class SparkOnFloe:
    """The Spark session, with a fresh catalog for every statement.

    Iceberg 1.10's JdbcCatalog leaves a JDBC metadata ResultSet open when it
    initialises, so the pooled SQLite connection that ran it keeps a WAL read
    transaction open and goes on reading the catalog as it was then: tables
    floe creates or commits afterwards are not seen. Closing the catalog and
    letting Spark make a new one before each statement gives every statement
    the catalog as it is (a Spark user on floe's catalog file needs the same:
    REFRESH does not reopen the connection)."""

    def __init__(self, spark):
        self._spark = spark
        self._used = False

    def refresh(self):
        cm = self._spark._jsparkSession.sessionState().catalogManager()
        if self._used:
            cm.catalog("default").icebergCatalog().close()
        cm.reset()
        self._used = True

    def sql(self, *args, **kwargs):
        self.refresh()
        return self._spark.sql(*args, **kwargs)

    def table(self, name):
        self.refresh()
        return self._spark.table(name)

    def __getattr__(self, name):
        return getattr(self._spark, name)


# ---- comparing rows ---------------------------------------------------------------------------

def norm(v):
    """One canonical Python form for a value from Spark (Row) or from pyarrow
    (floe's Parquet output): UTC-naive datetimes, decimals and uuids as text,
    bytes as hex, maps as sorted item lists, NaN as "nan"."""
    import datetime as dt
    import decimal
    import math
    import uuid

    if v is None:
        return None
    if hasattr(v, "asDict"):
        return {k: norm(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return ("-0.0" if math.copysign(1, v) < 0 else "0.0") if v == 0 else repr(v)
    return v


def canon(rows):
    import json

    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def spark_rows(df, maps=()):
    """Rows of a Spark DataFrame, normalised; columns in `maps` are maps."""
    out = []
    for r in df.collect():
        d = r.asDict(recursive=False)
        out.append({k: _norm_col(k, x, maps) for k, x in d.items()})
    return canon(out)


def _norm_col(k, x, maps):
    if k in maps and isinstance(x, dict):  # a Spark map
        return sorted((norm(a), norm(b)) for a, b in x.items())
    if k in maps and isinstance(x, list):  # a pyarrow map: (key, value) pairs
        return sorted((norm(a), norm(b)) for a, b in x)
    if hasattr(x, "asDict"):
        return {a: _norm_col(a, b, maps) for a, b in x.asDict(recursive=False).items()}
    if isinstance(x, dict):
        return {a: _norm_col(a, b, maps) for a, b in x.items()}
    return norm(x)


def floe_rows(floe, table, *args, maps=()):
    """Rows of floe scan (through its Parquet output), normalised like spark_rows."""
    import tempfile

    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rows.parquet"
        floe.run("scan", table, *args, "--format", "parquet", "--output", out)
        rows = pq.read_table(out).to_pylist()
    return canon([{k: _norm_col(k, x, maps) for k, x in r.items()} for r in rows])


if __name__ == "__main__":
    # scripts/setup: fetch the jars now, so the tests find them
    for jar in spark_jars():
        print(f"spark jar: {jar}")
