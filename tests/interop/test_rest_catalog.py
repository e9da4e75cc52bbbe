"""floe on Iceberg's REST catalog test server (issue 14): tables created,
written and read by floe and by PyIceberg's RestCatalog, files on the S3
server; OAuth2 client credentials; a commit whose answer is lost."""
import json
import subprocess

import pytest

from conftest import floe_bin
from rest_server import RecordingProxy


@pytest.fixture(scope="module")
def servers(rest_servers):
    return rest_servers


def floe_rest(servers, *args, uri=None, props=(), check=True, input=None):
    s3, rest = servers
    cmd = [floe_bin(), "--catalog-type", "rest", "--catalog-uri", uri or rest.uri,
           "--warehouse", rest.warehouse]
    for p in props:
        cmd += ["--catalog-property", p]
    cmd += [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=s3.env(), input=input, timeout=300)
    if check:
        assert p.returncode == 0, f"{cmd} failed:\n{p.stderr}{p.stdout}"
    return p


def rest_catalog(servers):
    from pyiceberg.catalog.rest import RestCatalog

    s3, rest = servers
    return RestCatalog("rest", uri=rest.uri, warehouse=rest.warehouse, **s3.pyiceberg_props())


def rows(lo, hi, tag):
    return "".join(json.dumps({"id": i, "tag": tag}) + "\n" for i in range(lo, hi))


def scan_ids(servers, table, *args):
    out = floe_rest(servers, "scan", table, "--format", "json", *args).stdout
    return sorted(json.loads(line)["id"] for line in out.splitlines() if line.strip())


def test_floe_and_pyiceberg_share_a_rest_catalog(servers, tmp_path):
    floe_rest(servers, "namespace", "create", "db")
    assert "db" in floe_rest(servers, "namespace", "list").stdout
    floe_rest(servers, "ingest", "db.events", "-", "--create-schema", "id long not null, tag string",
              "--partition-by", "bucket(4, id)", "--quiet", input=rows(0, 2000, "floe"))
    cat = rest_catalog(servers)
    tbl = cat.load_table("db.events")
    assert tbl.metadata_location.startswith("s3://floe/rest/")
    assert tbl.scan().to_arrow().num_rows == 2000
    assert [f.name for f in tbl.schema().fields] == ["id", "tag"]
    assert str(tbl.spec().fields[0].transform) == "bucket[4]"
    # PyIceberg appends through the same server; floe sees both
    import pyarrow as pa

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("tag", pa.string())])
    tbl.append(pa.table({"id": list(range(5000, 5010)), "tag": ["py"] * 10}, schema=schema))
    assert scan_ids(servers, "db.events", "--where", "tag = 'py'") == list(range(5000, 5010))
    # floe appends again on top of PyIceberg's snapshot, then maintains the table
    floe_rest(servers, "ingest", "db.events", "-", "--quiet", input=rows(2000, 2100, "floe"))
    floe_rest(servers, "maintain", "db.events", "--lock-uri", f"sqlite:///{tmp_path}/locks.db")
    tbl = cat.load_table("db.events")
    got = sorted(r["id"] for r in tbl.scan().to_arrow().to_pylist())
    assert got == list(range(2100)) + list(range(5000, 5010))
    # list, rename, drop
    assert "db.events" in floe_rest(servers, "table", "list", "db").stdout
    floe_rest(servers, "table", "rename", "db.events", "db.events2")
    assert cat.load_table("db.events2").scan().to_arrow().num_rows == 2110
    floe_rest(servers, "table", "drop", "db.events2")
    assert ("db", "events2") not in cat.list_tables("db")


def test_pyiceberg_table_read_by_floe(servers):
    import pyarrow as pa

    cat = rest_catalog(servers)
    cat.create_namespace("py")
    data = pa.table({"id": pa.array(range(300), pa.int64()), "tag": pa.array(["p"] * 300)})
    tbl = cat.create_table("py.t", schema=data.schema)
    tbl.append(data)
    assert scan_ids(servers, "py.t") == list(range(300))


def test_oauth2_and_a_lost_commit_answer(servers):
    """Client credentials get a token that every request carries; the answer
    to a commit the server applied is lost: floe reads the table again, sees
    its snapshot, and the rows are there once."""
    s3, rest = servers
    proxy = RecordingProxy(rest.port)
    try:
        creds = ["credential=floe-client:floe-secret", "scope=catalog"]
        floe_rest(servers, "namespace", "create", "lost", uri=proxy.uri, props=creds)
        floe_rest(servers, "ingest", "lost.t", "-", "--create-schema", "id long not null, tag string",
                  "--quiet", uri=proxy.uri, props=creds, input=rows(0, 100, "a"))
        assert proxy.seen[0] == "POST /v1/oauth/tokens"
        assert all(a and a.startswith("Bearer ")
                   for s, a in zip(proxy.seen, proxy.auth) if s != "POST /v1/oauth/tokens")
        proxy.drop_commits = 1
        p = floe_rest(servers, "-v", "ingest", "lost.t", "-", "--quiet", uri=proxy.uri, props=creds,
                      input=rows(100, 200, "b"))
        assert proxy.dropped == 1
        assert "reading the catalog to find out" in p.stderr
    finally:
        proxy.stop()
    tbl = rest_catalog(servers).load_table("lost.t")
    assert sorted(r["id"] for r in tbl.scan().to_arrow().to_pylist()) == list(range(200))
    assert len(tbl.snapshots()) == 2


def test_sigv4_signed_requests(servers):
    """rest.sigv4-enabled: every request carries a SigV4 signature for the
    signing name and region (checked with botocore in front of the server,
    as AWS Glue's endpoint would); a wrong secret is refused."""
    s3, rest = servers
    proxy = RecordingProxy(rest.port, sigv4=("AKIDFLOETEST", "secret/key+x", "glue", "eu-west-1"))
    try:
        sig = ["rest.sigv4-enabled=true", "rest.signing-name=glue", "rest.signing-region=eu-west-1",
               "rest.access-key-id=AKIDFLOETEST", "rest.secret-access-key=secret/key+x"]
        floe_rest(servers, "namespace", "create", "signed.ns", uri=proxy.uri, props=sig)
        floe_rest(servers, "ingest", "signed.ns.t", "-", "--create-schema", "id long", "--quiet",
                  uri=proxy.uri, props=sig, input=rows(0, 10, "s"))
        assert scan_ids(servers, "signed.ns.t") == list(range(10))
        assert proxy.verified >= 5 and proxy.rejected == 0
        bad = sig[:-1] + ["rest.secret-access-key=wrong"]
        p = floe_rest(servers, "table", "list", "signed.ns", uri=proxy.uri, props=bad, check=False)
        assert p.returncode != 0 and "SignatureDoesNotMatch" in p.stderr
    finally:
        proxy.stop()


def test_s3_tables_endpoint_is_not_maintained_by_floe(servers, tmp_path):
    """rest.signing-name=s3tables names AWS S3 Tables, which compacts and
    expires its tables itself: floe refuses to run maintenance there."""
    s3, rest = servers
    proxy = RecordingProxy(rest.port, sigv4=("AKIDFLOETEST", "s3t-secret", "s3tables", "us-east-1"))
    try:
        sig = ["rest.sigv4-enabled=true", "rest.signing-name=s3tables", "rest.signing-region=us-east-1",
               "rest.access-key-id=AKIDFLOETEST", "rest.secret-access-key=s3t-secret"]
        floe_rest(servers, "namespace", "create", "s3t", uri=proxy.uri, props=sig)
        floe_rest(servers, "ingest", "s3t.t", "-", "--create-schema", "id long", "--quiet",
                  uri=proxy.uri, props=sig, input=rows(0, 5, "s"))
        p = floe_rest(servers, "maintain", "s3t.t", "--lock-uri", f"sqlite:///{tmp_path}/l.db",
                      uri=proxy.uri, props=sig, check=False)
        assert p.returncode != 0 and "maintains s3t.t itself" in p.stderr
        assert proxy.rejected == 0
    finally:
        proxy.stop()


def test_pipeline_file_names_the_rest_catalog(servers, tmp_path):
    """floe run with catalog.type rest and catalog.properties.*: the OAuth2
    credential comes from the environment (never the file)."""
    import os

    s3, rest = servers
    proxy = RecordingProxy(rest.port)
    try:
        (tmp_path / "in.jsonl").write_text(rows(0, 50, "p"))
        (tmp_path / "p.yaml").write_text(
            "pipeline.name: restpipe\n"
            f"catalog:\n  type: rest\n  uri: {proxy.uri}\n  warehouse: {rest.warehouse}\n"
            "  properties:\n    credential: ${FLOE_TEST_REST_CRED}\n"
            f"sources: [{{name: a, type: files, path: {tmp_path / 'in.jsonl'}}}]\n"
            "tables: [{name: pipe.t, schema: \"id long not null, tag string\"}]\n")
        rest_catalog(servers).create_namespace("pipe")
        env = dict(s3.env(), FLOE_TEST_REST_CRED="pipe-client:pipe-secret")
        p = subprocess.run([floe_bin(), "run", str(tmp_path / "p.yaml"), "--quiet"],
                           capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert proxy.seen[0] == "POST /v1/oauth/tokens"
    finally:
        proxy.stop()
    tbl = rest_catalog(servers).load_table("pipe.t")
    assert sorted(r["id"] for r in tbl.scan().to_arrow().to_pylist()) == list(range(50))
