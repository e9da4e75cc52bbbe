"""floe on the AWS Glue Data Catalog API (moto's server, requests SigV4-checked),
tables on its S3: floe and PyIceberg's GlueCatalog read and write the same
tables. moto's server runs through moto_server.py, which enforces UpdateTable's
VersionId as Glue does (moto alone ignores it), so concurrent writers are
tested: floe compares metadata_location before its UpdateTable and sends the
VersionId it read, as Java's GlueCatalog; a refusal is a lost race, retried."""
import json
import subprocess
import threading

import pytest

from conftest import floe_bin


@pytest.fixture(scope="module")
def aws(moto_aws):
    moto_aws.client().create_bucket(Bucket="lake")
    return moto_aws


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


def glue_client(aws):
    import boto3

    return boto3.client("glue", endpoint_url=aws.endpoint, region_name=aws.region,
                        aws_access_key_id=aws.key, aws_secret_access_key=aws.secret)


def control(aws, **ctl):
    """moto_server.py's fault control: returns the counters so far, sets new ones."""
    path = aws.glue_control
    before = json.loads(path.read_text()) if path.exists() and path.read_text().strip() else {}
    if ctl:
        path.write_text(json.dumps({**before, **ctl}))
    return before


def ids_of(aws, table):
    return glue_catalog(aws).load_table(table).scan(selected_fields=("id",)).to_arrow() \
        .column("id").to_pylist()


def rows(lo, hi, who):
    return "".join(json.dumps({"id": i, "who": who}) + "\n" for i in range(lo, hi))


def test_glue_refuses_a_stale_version_id(aws):
    g = glue_client(aws)
    g.create_database(DatabaseInput={"Name": "vers"})
    g.create_table(DatabaseName="vers", TableInput={"Name": "t", "Parameters": {"n": "0"}})
    v = g.get_table(DatabaseName="vers", Name="t")["Table"]["VersionId"]
    g.update_table(DatabaseName="vers", VersionId=v,
                   TableInput={"Name": "t", "Parameters": {"n": "1"}})
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as e:
        g.update_table(DatabaseName="vers", VersionId=v,
                       TableInput={"Name": "t", "Parameters": {"n": "2"}})
    assert e.value.response["Error"]["Code"] == "ConcurrentModificationException"
    assert g.get_table(DatabaseName="vers", Name="t")["Table"]["Parameters"]["n"] == "1"


def test_refused_version_id_is_a_retried_conflict_and_lost_answer_unknown(aws):
    floe_glue(aws, "namespace", "create", "race")
    floe_glue(aws, "ingest", "race.r", "-", "--create-schema", "id long not null, who string",
              "--quiet", input=rows(0, 10, "a"))
    snaps = lambda: len(glue_catalog(aws).load_table("race.r").metadata.snapshots)
    # another writer's update lands between floe's GetTable and its
    # UpdateTable, twice: Glue refuses the stale VersionId, floe re-reads and
    # commits once
    before = control(aws, refuse=2)
    floe_glue(aws, "ingest", "race.r", "-", "--quiet", input=rows(10, 20, "a"))
    after = control(aws)
    assert after["refused"] - before.get("refused", 0) == 2 and after["refuse"] == 0
    assert sorted(ids_of(aws, "race.r")) == list(range(20)) and snaps() == 2
    # the update is applied and its answer lost (HTTP 500): the outcome is
    # unknown, floe re-reads Glue, finds its metadata current and reports
    # the commit once; nothing of the new version is deleted
    control(aws, lose=1)
    p = floe_glue(aws, "ingest", "race.r", "-", "--quiet", input=rows(20, 30, "a"), check=False)
    assert control(aws)["lost"] >= 1
    tbl = glue_catalog(aws).load_table("race.r")
    assert sorted(ids_of(aws, "race.r")) == list(range(30)), p.stderr
    assert len(tbl.metadata.snapshots) == 3
    assert tbl.scan().to_arrow().num_rows == 30  # every file of the new version is there
    assert p.returncode == 0, p.stderr  # the re-read found the commit current


def test_concurrent_commits_resolved_by_version_id(aws):
    """Two floe processes and PyIceberg commit to one Glue table at once,
    many times: every commit lands exactly once."""
    floe_glue(aws, "namespace", "create", "conc")
    floe_glue(aws, "ingest", "conc.t", "-", "--create-schema", "id long not null, who string",
              "--quiet", input=rows(0, 1, "init"))
    before = control(aws).get("refused", 0)
    commits, per = 4, 5
    failures = []

    def floe_writer(w):
        for k in range(commits):
            lo = 1000 * (w + 1) + k * per
            # each load its own pipeline: two processes of one pipeline fence each other off
            p = floe_glue(aws, "ingest", "conc.t", "-", "--quiet", "--pipeline-id", f"w{w}-{k}",
                          input=rows(lo, lo + per, f"f{w}"), check=False)
            if p.returncode != 0:
                failures.append(p.stderr)

    def pyiceberg_writer():
        import pyarrow as pa
        from pyiceberg.exceptions import CommitFailedException

        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("who", pa.string())])
        cat = glue_catalog(aws)
        for k in range(commits // 2):
            lo = 9000 + k * per
            batch = pa.table({"id": list(range(lo, lo + per)), "who": ["py"] * per}, schema=schema)
            for _ in range(50):
                try:
                    cat.load_table("conc.t").append(batch)
                    break
                except CommitFailedException:
                    continue  # a lost race: re-read and try again
            else:
                failures.append(f"pyiceberg commit {k} never landed")

    threads = [threading.Thread(target=floe_writer, args=(w,)) for w in range(2)]
    threads.append(threading.Thread(target=pyiceberg_writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    ids = ids_of(aws, "conc.t")
    expect = [0] + [1000 * (w + 1) + i for w in range(2) for i in range(commits * per)] + \
        [9000 + i for i in range(commits // 2 * per)]
    assert sorted(ids) == sorted(expect)  # none lost, none twice
    tbl = glue_catalog(aws).load_table("conc.t")
    assert len(tbl.metadata.snapshots) == 1 + 2 * commits + commits // 2
    # each snapshot's parent is the one before: a linear history of all commits
    by_id = {s.snapshot_id: s for s in tbl.metadata.snapshots}
    chain, s = 0, tbl.current_snapshot()
    while s is not None:
        chain += 1
        s = by_id.get(s.parent_snapshot_id)
    assert chain == len(tbl.metadata.snapshots)
    print(f"Glue refused {control(aws).get('refused', 0) - before} stale VersionIds")
