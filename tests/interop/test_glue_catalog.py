"""floe on the AWS Glue Data Catalog API (moto's server, requests SigV4-checked),
tables on its S3: floe and PyIceberg's GlueCatalog read and write the same
tables. moto's UpdateTable ignores VersionId, so concurrent writers are not
tested here (floe compares metadata_location before its UpdateTable and sends
the VersionId it read, as Java's GlueCatalog; real Glue enforces it)."""
import json
import subprocess

import pytest

from conftest import floe_bin
from s3_server import S3Server


@pytest.fixture(scope="module")
def aws(tmp_path_factory):
    srv = S3Server(tmp_path_factory.mktemp("glue") / "moto.log")
    srv.client().create_bucket(Bucket="lake")
    yield srv
    srv.stop()


def floe_glue(aws, *args, check=True, input=None):
    env = aws.env()
    env["AWS_ENDPOINT_URL_GLUE"] = aws.endpoint
    cmd = [floe_bin(), "--catalog-type", "glue", "--warehouse", "s3://lake/wh", *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, input=input, timeout=300)
    if check:
        assert p.returncode == 0, f"{cmd} failed:\n{p.stderr}{p.stdout}"
    return p


def glue_catalog(aws):
    from pyiceberg.catalog.glue import GlueCatalog

    return GlueCatalog("glue", **{"glue.endpoint": aws.endpoint, "glue.region": aws.region,
                                  "glue.access-key-id": aws.key,
                                  "glue.secret-access-key": aws.secret,
                                  "warehouse": "s3://lake/wh", **aws.pyiceberg_props()})


def test_floe_and_pyiceberg_share_glue(aws):
    floe_glue(aws, "namespace", "create", "sales")
    rows = "".join(json.dumps({"id": i, "region": f"r{i % 3}"}) + "\n" for i in range(1000))
    floe_glue(aws, "ingest", "sales.orders", "-", "--create-schema", "id long not null, region string",
              "--quiet", input=rows)
    cat = glue_catalog(aws)
    tbl = cat.load_table("sales.orders")
    assert tbl.metadata_location.startswith("s3://lake/wh/sales.db/orders/metadata/0000")
    assert tbl.scan().to_arrow().num_rows == 1000
    import pyarrow as pa

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string())])
    tbl.append(pa.table({"id": [5000, 5001], "region": ["py", "py"]}, schema=schema))
    out = floe_glue(aws, "scan", "sales.orders", "--where", "region = 'py'", "--format", "json").stdout
    assert sorted(json.loads(line)["id"] for line in out.splitlines() if line.strip()) == [5000, 5001]
    # floe commits on top of PyIceberg's: previous_metadata_location is kept as Java does
    floe_glue(aws, "ingest", "sales.orders", "-", "--quiet",
              input="".join(json.dumps({"id": i, "region": "x"}) + "\n" for i in range(1000, 1010)))
    import boto3

    g = boto3.client("glue", endpoint_url=aws.endpoint, region_name=aws.region,
                     aws_access_key_id=aws.key, aws_secret_access_key=aws.secret)
    params = g.get_table(DatabaseName="sales", Name="orders")["Table"]["Parameters"]
    assert params["table_type"] == "ICEBERG"
    assert params["previous_metadata_location"] == cat.load_table("sales.orders").metadata.metadata_log[-1].metadata_file
    assert cat.load_table("sales.orders").scan().to_arrow().num_rows == 1012
    assert "sales.orders" in floe_glue(aws, "table", "list", "sales").stdout
    floe_glue(aws, "table", "rename", "sales.orders", "sales.orders2")
    assert cat.load_table("sales.orders2").scan().to_arrow().num_rows == 1012
    floe_glue(aws, "table", "drop", "sales.orders2")
    assert cat.list_tables("sales") == []
    # Glue databases are one level
    p = floe_glue(aws, "namespace", "create", "a.b", check=False)
    assert p.returncode != 0 and "one level" in p.stderr
