"""floe on S3 (issue 14, S3 FileIO): a real S3 server that checks SigV4
(Ceph's RADOS Gateway, see s3_server.py), a fault-injecting proxy, and
tables written by floe on S3 read by PyIceberg and DuckDB, and the other way
round."""
import json
import subprocess

import pytest

from conftest import ROOT, duckdb_connection, floe_bin
from s3_server import FaultProxy


def tool():
    return str(ROOT / "build" / "asan" / "tests" / "s3_tool") if "asan" in floe_bin() else \
        str(ROOT / "build" / "release" / "tests" / "s3_tool")


@pytest.fixture(scope="module")
def s3(s3_rgw):
    s3_rgw.bucket("floe")
    return s3_rgw


def run_tool(s3, *args, endpoint=None, check=True):
    p = subprocess.run([tool(), *args], capture_output=True, text=True, env=s3.env(endpoint),
                       timeout=600)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def test_fileio_contract_on_a_signing_server(s3):
    """Single PUT, If-None-Match no-replace (and a race for one name), a
    3-part multipart upload, an aborted one, ranged reads, paged listing,
    stat and delete; every request signed (a wrong secret is refused)."""
    p = run_tool(s3, "contract", "s3://floe/contract", "s3.multipart.part-size-bytes=5242880",
                 "s3.list.max-keys=2")
    assert "0 failed" in p.stdout
    assert s3.client().list_multipart_uploads(Bucket="floe", Prefix="contract").get("Uploads", []) == []
    env = s3.env()
    env["AWS_SECRET_ACCESS_KEY"] = "wrong"
    p = subprocess.run([tool(), "contract", "s3://floe/refused"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 1 and "SignatureDoesNotMatch" in p.stdout


def test_fileio_contract_virtual_hosted(s3, tmp_path):
    """The same contract with virtual-hosted addressing (s3.path-style-access
    false): every request goes to floe.localhost, signed for that host, and
    RGW (its rgw dns name is localhost) takes the bucket from the host."""
    log = tmp_path / "http.log"
    env = s3.env(s3.endpoint.replace("127.0.0.1", "localhost"))
    env["FLOE_TEST_HTTP_LOG"] = str(log)
    p = subprocess.run([tool(), "contract", "s3://floe/vhost", "s3.path-style-access=false",
                        "s3.multipart.part-size-bytes=5242880", "s3.list.max-keys=2"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0 and "0 failed" in p.stdout, p.stdout + p.stderr
    urls = [line.split(" ")[1] for line in log.read_text().splitlines()]
    assert urls and all(u.startswith(f"http://floe.localhost:{s3.port}/") for u in urls), urls[:5]
    assert s3.client().list_multipart_uploads(Bucket="floe", Prefix="vhost").get("Uploads", []) == []


def test_faults_are_retried(s3):
    """Through a proxy that answers 10% of requests with 503 SlowDown, 500,
    a reset or a cut body, every object is written and read back intact,
    deleted in DeleteObjects batches (of 5 here), and no multipart upload is
    left behind."""
    proxy = FaultProxy(s3.port, rate=0.1)
    try:
        p = run_tool(s3, "stress", "s3://floe/faults", "16", "s3.multipart.part-size-bytes=5242880",
                     "s3.retry.min-wait-ms=5", "s3.retry.max-wait-ms=50", "s3.retry.num-retries=8",
                     "s3.delete.batch-size=5", endpoint=proxy.endpoint)
        assert "0 failed" in p.stdout, p.stdout
        assert all(n > 0 for n in proxy.counts.values()), (proxy.counts, proxy.requests)
        assert len([s for s in proxy.seen if s.startswith("POST /floe?delete")]) >= 4
        assert not [s for s in proxy.seen if s.startswith("DELETE ")]
    finally:
        proxy.stop()
    assert s3.client().list_multipart_uploads(Bucket="floe", Prefix="faults").get("Uploads", []) == []


def test_batch_delete_reports_each_key(s3):
    """floe_io_remove_batch on S3: DeleteObjects of at most s3.delete.batch-size
    keys (names with XML's special characters escaped), absent keys count as
    deleted, and keys the server refuses (AccessDenied in the result, from
    the proxy) are reported one by one while the rest are gone."""
    proxy = FaultProxy(s3.port, rate=0.0, deny="denied")
    try:
        p = run_tool(s3, "batch", "s3://floe/batch", "25", "s3.delete.batch-size=10",
                     endpoint=proxy.endpoint)
        assert "0 failed" in p.stdout and "denied 2" in p.stdout, p.stdout + p.stderr
        assert "AccessDenied" in p.stderr and p.stderr.count("cannot delete") == 2, p.stderr
        posts = [s for s in proxy.seen if s.startswith("POST /floe?delete")]
        assert len(posts) == 3, proxy.seen  # 27 keys, 10 a request
    finally:
        proxy.stop()


def floe_s3(s3, tmp_path, *args, check=True, input=None):
    cmd = [floe_bin(), "--catalog-uri", f"sqlite:///{tmp_path}/catalog.db",
           "--warehouse", "s3://floe/wh", *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=s3.env(), input=input, timeout=300)
    if check:
        assert p.returncode == 0, f"{cmd} failed:\n{p.stderr}{p.stdout}"
    return p


def pyiceberg(s3, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db",
                      warehouse="s3://floe/wh", **s3.pyiceberg_props())


def test_floe_table_on_s3_read_by_pyiceberg_and_duckdb(s3, tmp_path):
    rows = "".join(json.dumps({"id": i, "name": f"n{i}", "v": i * 0.5}) + "\n" for i in range(3000))
    floe_s3(s3, tmp_path, "namespace", "create", "db")
    floe_s3(s3, tmp_path, "ingest", "db.t", "-", "--create-schema",
            "id long not null, name string, v double", "--quiet", input=rows)
    floe_s3(s3, tmp_path, "ingest", "db.t", "-", "--quiet",
            input="".join(json.dumps({"id": i, "name": None, "v": 0.0}) + "\n" for i in range(3000, 3100)))
    tbl = pyiceberg(s3, tmp_path).load_table("db.t")
    assert tbl.metadata_location.startswith("s3://floe/wh/")
    got = tbl.scan().to_arrow().to_pylist()
    assert len(got) == 3100
    assert sorted(r["id"] for r in got) == list(range(3100))
    assert {r["name"] for r in got if r["id"] == 7} == {"n7"}
    # floe reads back what it wrote on S3
    out = floe_s3(s3, tmp_path, "scan", "db.t", "--where", "id < 5", "--format", "json").stdout
    assert sorted(json.loads(line)["id"] for line in out.splitlines() if line.strip()) == [0, 1, 2, 3, 4]
    # DuckDB with its S3 secret
    con = duckdb_connection()
    from duckdb_extensions import import_extension

    import_extension("httpfs", con=con)
    con.execute("LOAD httpfs")
    ep = s3.endpoint.split("//", 1)[1]
    con.execute(f"CREATE SECRET s (TYPE S3, KEY_ID '{s3.key}', SECRET '{s3.secret}', "
                f"REGION '{s3.region}', ENDPOINT '{ep}', URL_STYLE 'path', USE_SSL false)")
    n, s = con.execute(f"SELECT count(*), sum(id) FROM iceberg_scan('{tbl.metadata_location}')").fetchone()
    assert (n, s) == (3100, sum(range(3100)))


def test_pyiceberg_table_on_s3_read_by_floe(s3, tmp_path):
    import pyarrow as pa

    cat = pyiceberg(s3, tmp_path)
    cat.create_namespace("py")
    data = pa.table({"id": pa.array(range(500), pa.int64()), "s": [f"s{i}" for i in range(500)]})
    tbl = cat.create_table("py.t", schema=data.schema)
    tbl.append(data)
    tbl.append(data.slice(0, 10))
    out = floe_s3(s3, tmp_path, "scan", "py.t", "--format", "json").stdout
    ids = sorted(json.loads(line)["id"] for line in out.splitlines() if line.strip())
    assert ids == sorted(list(range(500)) + list(range(10)))
    # and appends to it: PyIceberg sees both
    floe_s3(s3, tmp_path, "ingest", "py.t", "-", "--quiet",
            input="".join(json.dumps({"id": i, "s": "floe"}) + "\n" for i in range(1000, 1005)))
    tbl = cat.load_table("py.t")
    assert tbl.scan(row_filter="s == 'floe'").to_arrow().num_rows == 5


def http_log(path):
    """(method, key, status) of each request floe made (FLOE_TEST_HTTP_LOG)."""
    out = []
    for line in path.read_text().splitlines():
        method, url, status = line.split(" ")
        key = url.split("//", 1)[1].split("/", 1)[1].split("?", 1)[0]
        out.append((method, key.removeprefix("floe/"), status))
    return out


def test_requests_per_commit(s3, tmp_path):
    """The S3 requests of a create and of commits, counted (not timed), so a
    change that adds a read cannot pass unseen: a file floe wrote is never
    read back by the process that wrote it (not the metadata it just wrote,
    nor the manifest list a commit builds on twice), a file read whole costs
    one GET and no HEAD, and a commit HEADs only the data files it adds
    (still there? see check_before_swap); a scan makes no HEAD."""
    log = tmp_path / "http.log"
    env = s3.env()
    env["FLOE_TEST_HTTP_LOG"] = str(log)
    rows = "".join(json.dumps({"id": i, "s": f"n{i}"}) + "\n" for i in range(5000))

    def run(*args, input=None):
        log.write_text("")
        p = subprocess.run([floe_bin(), "--catalog-uri", f"sqlite:///{tmp_path}/catalog.db",
                            "--warehouse", "s3://floe/count", *map(str, args)],
                           capture_output=True, text=True, env=env, input=input, timeout=300)
        assert p.returncode == 0, p.stderr
        return http_log(log)

    run("namespace", "create", "db")

    def kinds(reqs):
        return sorted((m, "data" if "/data/" in k else "lease" if ".floe-lease-" in k
                       else "metadata" if k.endswith(".metadata.json") else "avro")
                      for m, k, _ in reqs)

    # a create and a first commit, in one process: nothing read back
    reqs = run("ingest", "db.t", "-", "--create-schema", "id long not null, s string",
               "--parallelism", "2", "--quiet", input=rows)
    n = len([k for m, k, _ in reqs if m == "PUT" and "/data/" in k])
    assert n >= 1
    assert kinds(reqs) == sorted([("PUT", "metadata")] * 2 + [("PUT", "lease"), ("DELETE", "lease")]
                                 + [("PUT", "data"), ("HEAD", "data")] * n
                                 + [("PUT", "avro")] * 2), reqs
    # a commit on the existing table, in a new process: the current metadata,
    # its manifest list and manifest are read once each (one GET, no HEAD)
    reqs = run("ingest", "db.t", "-", "--parallelism", "2", "--quiet", input=rows)
    n = len([k for m, k, _ in reqs if m == "PUT" and "/data/" in k])
    assert kinds(reqs) == sorted([("PUT", "metadata"), ("GET", "metadata")]
                                 + [("PUT", "lease"), ("DELETE", "lease")]
                                 + [("PUT", "data"), ("HEAD", "data")] * n
                                 + [("PUT", "avro")] * 2 + [("GET", "avro")] * 2), reqs
    gets = [k for m, k, _ in reqs if m == "GET"]
    assert len(set(gets)) == 3 and not {k for m, k, _ in reqs if m == "PUT"} & set(gets), reqs
    # a scan: metadata, list, manifests one GET each; a small data file one
    # GET (its footer's suffix range holds it whole); no HEAD
    reqs = run("scan", "db.t", "--format", "csv")
    meta = [(m, k) for m, k, _ in reqs if "/data/" not in k]
    assert all(m == "GET" for m, _ in meta) and len(meta) == len(set(meta)) == 4, reqs
    data = [(m, k) for m, k, _ in reqs if "/data/" in k]
    assert all(m == "GET" for m, _ in data) and len(data) == len(set(data)) >= 2, reqs


def test_scan_coalesces_a_row_groups_column_chunks(s3, tmp_path):
    """A scan reads a row group's column chunks in merged ranged GETs (the
    reader announces them, the S3 input fetches adjacent ones together), not
    one series of GETs per column: a 6-column file of a few MB costs its
    footer GET and one GET for its row group's chunks."""
    import random

    log = tmp_path / "http.log"
    env = s3.env()
    rng = random.Random(7)
    rows = "".join(json.dumps({"id": i, "a": rng.random(), "b": f"{rng.getrandbits(64):x}",
                               "c": rng.getrandbits(40), "d": f"x{rng.getrandbits(48)}",
                               "e": rng.random() * 1e6}) + "\n" for i in range(60000))
    base = [floe_bin(), "--catalog-uri", f"sqlite:///{tmp_path}/catalog.db", "--warehouse", "s3://floe/coalesce"]
    for args in (["namespace", "create", "db"],
                 ["ingest", "db.t", "-", "--quiet", "--create-schema",
                  "id long, a double, b string, c long, d string, e double"]):
        p = subprocess.run(base + args, capture_output=True, text=True, env=env, input=rows, timeout=300)
        assert p.returncode == 0, p.stderr
    env["FLOE_TEST_HTTP_LOG"] = str(log)
    p = subprocess.run(base + ["scan", "db.t", "--count"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "60000", p.stderr
    log.write_text("")
    p = subprocess.run(base + ["scan", "db.t", "--format", "csv"], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 60001, p.stderr
    data = [(m, k, st) for m, k, st in http_log(log) if "/data/" in k]
    assert data and all(m == "GET" for m, _, _ in data), data
    # per file: the footer's suffix range, then the row group's six chunks in one request
    per_file = {}
    for _, k, _ in data:
        per_file[k] = per_file.get(k, 0) + 1
    assert set(per_file.values()) == {2}, per_file
