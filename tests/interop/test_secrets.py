"""${secret:NAME#field} references resolved through AWS Secrets Manager
(moto's server, SigV4 and IAM checked): the Glue and S3 keys of a catalog and
the password of a maintenance lock database come from secrets, are used, and
appear in no log (-v, FLOE_TEST_HTTP_LOG), no metadata file, no snapshot
summary and no Glue parameter. The process's own AWS keys may only read
secrets, so every Glue and S3 request that succeeds proves the secret's keys
were used. Missing secrets and fields and a denied read fail before anything
is created."""
import json
import subprocess

import boto3
import pytest

from conftest import floe_bin

PG_PASSWORD = "pg-Pa/ss@wo:rd%1"


@pytest.fixture(scope="module")
def aws(moto_aws):
    srv = moto_aws
    srv.client().create_bucket(Bucket="vault")
    iam = boto3.client("iam", endpoint_url=srv.endpoint, region_name=srv.region,
                       aws_access_key_id=srv.key, aws_secret_access_key=srv.secret)
    users = {}
    for name, actions in (("reader", ["secretsmanager:GetSecretValue"]), ("nobody", None)):
        iam.create_user(UserName=name)
        if actions:
            iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=json.dumps(
                {"Version": "2012-10-17",
                 "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}))
        k = iam.create_access_key(UserName=name)["AccessKey"]
        users[name] = (k["AccessKeyId"], k["SecretAccessKey"])
    sm = boto3.client("secretsmanager", endpoint_url=srv.endpoint, region_name=srv.region,
                      aws_access_key_id=srv.key, aws_secret_access_key=srv.secret)
    sm.create_secret(Name="floe/lake", SecretString=json.dumps(
        {"access-key-id": srv.key, "secret-access-key": srv.secret}))
    sm.create_secret(Name="floe/pg", SecretString=json.dumps(
        {"username": "floe", "password": PG_PASSWORD}))
    sm.create_secret(Name="plain", SecretString="just-a-string")
    sm.create_secret(Name="floe/lake-secret", SecretString=srv.secret)  # a whole-string secret
    srv.users = users
    return srv


def env_as(aws, user, http_log=None):
    e = aws.env()
    e["AWS_ACCESS_KEY_ID"], e["AWS_SECRET_ACCESS_KEY"] = aws.users[user]
    e["AWS_ENDPOINT_URL_GLUE"] = aws.endpoint
    e["AWS_ENDPOINT_URL_SECRETS_MANAGER"] = aws.endpoint
    if http_log:
        e["FLOE_TEST_HTTP_LOG"] = str(http_log)
    return e


KEYS = ["--catalog-property", "glue.access-key-id=${secret:floe/lake#access-key-id}",
        "--catalog-property", "glue.secret-access-key=${secret:floe/lake#secret-access-key}",
        "--catalog-property", "s3.access-key-id=${secret:floe/lake#access-key-id}",
        "--catalog-property", "s3.secret-access-key=${secret:floe/lake-secret}"]


def floe_glue(aws, *args, user="reader", keys=True, check=True, input=None, http_log=None):
    cmd = [floe_bin(), "--catalog-type", "glue", "--warehouse", "s3://vault/wh",
           *(KEYS if keys else []), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env_as(aws, user, http_log),
                       input=input, timeout=300)
    if check:
        assert p.returncode == 0, f"{cmd} failed:\n{p.stderr}{p.stdout}"
    return p


def secrets_of(aws):
    return [aws.secret, PG_PASSWORD, PG_PASSWORD.replace("/", "%2F").replace("@", "%40")]


def assert_nowhere(aws, texts, what):
    for s in secrets_of(aws):
        for name, t in texts.items():
            assert s not in t, f"a secret value is in {name} ({what})"


def bucket_texts(aws):
    s3 = aws.client()
    out = {}
    for o in s3.list_objects_v2(Bucket="vault").get("Contents", []):
        out[o["Key"]] = s3.get_object(Bucket="vault", Key=o["Key"])["Body"].read().decode("latin-1")
    return out


def glue_params(aws, db, table):
    g = boto3.client("glue", endpoint_url=aws.endpoint, region_name=aws.region,
                     aws_access_key_id=aws.key, aws_secret_access_key=aws.secret)
    return json.dumps(g.get_table(DatabaseName=db, Name=table)["Table"], default=str)


def test_catalog_and_storage_keys_from_secrets(aws, postgres_uri, tmp_path):
    log = tmp_path / "http.log"
    outs = {}
    outs["namespace"] = floe_glue(aws, "-v", "namespace", "create", "sec", http_log=log)
    rows = "".join(json.dumps({"id": i, "k": f"v{i % 4}"}) + "\n" for i in range(200))
    for i in range(2):
        outs[f"ingest{i}"] = floe_glue(aws, "-v", "ingest", "sec.t", "-", "--create-schema",
                                       "id long not null, k string", http_log=log, input=rows)
    scan = floe_glue(aws, "-v", "scan", "sec.t", "--format", "json", http_log=log)
    assert len([ln for ln in scan.stdout.splitlines() if ln.strip()]) == 400
    # the lock database's password from a secret (percent-encoded in the URI's user info)
    lock = postgres_uri.replace("postgresql://floe@", "postgresql://floe:${secret:floe/pg#password}@")
    outs["maintain"] = floe_glue(aws, "-v", "maintain", "sec.t", "--lock-uri", lock,
                                 "--min-input-files", "2", http_log=log)
    assert "compact" in outs["maintain"].stderr + outs["maintain"].stdout
    texts = {f"{k} output": p.stdout + p.stderr for k, p in outs.items()}
    texts["http log"] = log.read_text()
    texts.update(bucket_texts(aws))
    texts["glue table"] = glue_params(aws, "sec", "t")
    # the metadata files hold the table properties and every snapshot summary
    assert sum("floe.pipeline-id" in t for k, t in texts.items() if k.endswith(".metadata.json")) >= 3
    assert_nowhere(aws, texts, "after create, ingest, scan, maintain")
    # control: the process's own keys read secrets only, so without the
    # secret's keys Glue refuses
    p = floe_glue(aws, "table", "list", "sec", keys=False, check=False)
    assert p.returncode != 0, p.stdout


def test_pipeline_file_with_secrets(aws, postgres_uri, tmp_path):
    floe_glue(aws, "namespace", "create", "pipe")
    lock = postgres_uri.replace("postgresql://floe@", "postgresql://floe:${secret:floe/pg#password}@")
    cfg = tmp_path / "p.yaml"
    cfg.write_text(f"""
pipeline.name: secret-pipe
execution.checkpointing.interval: 200ms
catalog:
  type: glue
  warehouse: s3://vault/wh
  properties:
    glue.access-key-id: ${{secret:floe/lake#access-key-id}}
    glue.secret-access-key: ${{secret:floe/lake#secret-access-key}}
    s3.access-key-id: ${{secret:floe/lake#access-key-id}}
    s3.secret-access-key: ${{secret:floe/lake#secret-access-key}}
sources:
  - name: gen
    type: generator
    number-of-rows: 3000
    rows-per-second: 3000
    fields.id.kind: sequence
tables:
  - name: pipe.events
    schema: "id long not null"
    maintenance:
      mode: auto
      schedule.commit-count: 2
      lock-uri: "{lock}"
""")
    log = tmp_path / "http.log"
    p = subprocess.run([floe_bin(), "-v", "run", str(cfg)], capture_output=True, text=True,
                       env=env_as(aws, "reader", log), timeout=300)
    assert p.returncode == 0, p.stderr
    scan = floe_glue(aws, "scan", "pipe.events", "--format", "json")
    ids = sorted(json.loads(ln)["id"] for ln in scan.stdout.splitlines() if ln.strip())
    assert len(ids) == 3000 and len(set(ids)) == 3000
    texts = {"run output": p.stdout + p.stderr, "http log": log.read_text(),
             "glue table": glue_params(aws, "pipe", "events"), **bucket_texts(aws)}
    assert_nowhere(aws, texts, "after floe run")
    # the file keeps the references, and a table property may not hold one
    bad = tmp_path / "bad.yaml"
    bad.write_text(cfg.read_text().replace(
        '    schema: "id long not null"\n',
        '    schema: "id long not null"\n    properties:\n'
        '      s3.secret-access-key: ${secret:floe/lake#secret-access-key}\n'))
    p = subprocess.run([floe_bin(), "run", "--check", str(bad)], capture_output=True, text=True,
                       env=env_as(aws, "reader"), timeout=60)
    assert p.returncode != 0 and "is for the catalog's settings" in p.stderr, p.stderr


@pytest.mark.parametrize("ref,user,message", [
    ("${secret:floe/missing#access-key-id}", "reader", "secret 'floe/missing' does not exist"),
    ("${secret:floe/lake#nope}", "reader", "secret 'floe/lake' has no field 'nope' (it has: access-key-id, secret-access-key)"),
    ("${secret:plain#field}", "reader", "secret 'plain' is not a JSON object"),
    ("${secret:floe/lake#access-key-id}", "nobody", "access denied"),
])
def test_secret_errors_before_anything_is_created(aws, ref, user, message):
    cmd = [floe_bin(), "--catalog-type", "glue", "--warehouse", "s3://vault/wh",
           "--catalog-property", f"glue.access-key-id={ref}",
           "--catalog-property", "glue.secret-access-key=${secret:floe/lake#secret-access-key}",
           "namespace", "create", "never"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env_as(aws, user), timeout=120)
    assert p.returncode != 0
    assert message in p.stderr and "catalog property 'glue.access-key-id'" in p.stderr, p.stderr
    assert_nowhere(aws, {"stderr": p.stderr}, "an error")
    g = boto3.client("glue", endpoint_url=aws.endpoint, region_name=aws.region,
                     aws_access_key_id=aws.key, aws_secret_access_key=aws.secret)
    assert "never" not in [d["Name"] for d in g.get_databases()["DatabaseList"]]
