"""Spark (Iceberg's Java RESTCatalog and S3FileIO) and floe share tables on
the S3 server through Iceberg's REST catalog server (issue 14): Spark reads
what floe wrote, row for row, and floe reads what Spark wrote."""
import json
import subprocess

import pytest

import spark_session
from conftest import floe_bin
from rest_server import fixture_jars


@pytest.fixture(scope="module")
def spark_rest(rest_servers):
    s3, rest = rest_servers
    aws = sorted(fixture_jars().glob("iceberg-aws-bundle-*.jar"))
    assert aws, "Iceberg's AWS bundle is not in the REST fixture's jars"
    spark = spark_session.start_rest(rest.uri, rest.warehouse, s3.endpoint, s3.key, s3.secret,
                                     s3.region, extra_jars=aws)
    try:
        yield s3, rest, spark
    finally:
        spark.stop()


def floe_rest(s3, rest, *args, input=None):
    cmd = [floe_bin(), "--catalog-type", "rest", "--catalog-uri", rest.uri,
           "--warehouse", rest.warehouse, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=s3.env(), input=input, timeout=300)
    assert p.returncode == 0, f"{cmd} failed:\n{p.stderr}{p.stdout}"
    return p


def test_spark_reads_floe_and_floe_reads_spark_on_s3(spark_rest):
    s3, rest, spark = spark_rest
    floe_rest(s3, rest, "namespace", "create", "sp")
    rows = "".join(json.dumps({"id": i, "name": f"n{i}" if i % 5 else None,
                               "ts": f"2026-12-0{1 + i % 3}T10:{i % 60:02d}:00Z",
                               "amount": f"{i}.{i % 100:02d}"}) + "\n" for i in range(2000))
    floe_rest(s3, rest, "ingest", "sp.floe_t", "-", "--create-schema",
              "id long not null, name string, ts timestamptz, amount decimal(10,2)",
              "--partition-by", "day(ts)", "--quiet", input=rows)
    floe_rest(s3, rest, "ingest", "sp.floe_t", "-", "--quiet",
              input="".join(json.dumps({"id": i, "name": "late", "ts": "2026-12-04T00:00:00Z",
                                        "amount": "1.00"}) + "\n" for i in range(2000, 2100)))
    got = spark.sql("SELECT count(*) AS n, sum(id) AS s, count(name) AS names, "
                    "sum(amount) AS amt FROM rest.sp.floe_t").collect()[0]
    assert (got.n, got.s) == (2100, sum(range(2100)))
    assert got.names == 2100 - len([i for i in range(2000) if i % 5 == 0])
    out = floe_rest(s3, rest, "scan", "sp.floe_t", "--format", "json").stdout
    floe_rows = {r["id"]: r for r in map(json.loads, out.splitlines())}
    for r in spark.sql("SELECT id, name, CAST(ts AS STRING) AS ts, CAST(amount AS STRING) AS amount "
                       "FROM rest.sp.floe_t WHERE id % 97 = 0").collect():
        f = floe_rows[r.id]
        assert r.name == f["name"] and r.amount == str(f["amount"])
        assert r.ts.replace(" ", "T")[:19] == f["ts"][:19]
    assert spark.sql("SELECT count(*) FROM rest.sp.floe_t.snapshots").collect()[0][0] == 2

    # Spark writes (partitioned, two commits); floe reads and appends; Spark sees all
    spark.sql("CREATE TABLE rest.sp.spark_t (id BIGINT, tag STRING) USING iceberg "
              "PARTITIONED BY (bucket(4, id))")
    spark.sql("INSERT INTO rest.sp.spark_t SELECT id, concat('s', id) FROM range(0, 1500)")
    spark.sql("INSERT INTO rest.sp.spark_t VALUES (5000, 'late')")
    out = floe_rest(s3, rest, "scan", "sp.spark_t", "--format", "json").stdout
    ids = sorted(json.loads(line)["id"] for line in out.splitlines() if line.strip())
    assert ids == list(range(1500)) + [5000]
    floe_rest(s3, rest, "ingest", "sp.spark_t", "-", "--quiet",
              input="".join(json.dumps({"id": i, "tag": "floe"}) + "\n" for i in range(6000, 6010)))
    assert spark.sql("SELECT count(*) FROM rest.sp.spark_t WHERE tag = 'floe'").collect()[0][0] == 10
    assert spark.sql("SELECT count(*) FROM rest.sp.spark_t").collect()[0][0] == 1511
