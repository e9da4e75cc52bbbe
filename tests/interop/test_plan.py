"""`floe plan`: the operations guides' worked example (60 s checkpoints, 4
writers, 10 partitions, distribution none: 57,600 files a day, 403,200 after 7
days), a prediction checked against a real short run of the same pipeline,
and one configuration per anti-pattern, each producing its lint."""
import json
import statistics

import pytest

WORKED = """
pipeline: {name: worked}
execution.checkpointing.interval: 60s
parallelism.default: 4
sources:
  - {name: s, type: generator}
tables:
  - name: db.events
    source: s
    schema: "id long not null, region string"
    partition-by: "region"
    distribution-mode: none
"""


def plan(floe, tmp_path, yaml, *args, name="p.yaml"):
    path = tmp_path / name
    path.write_text(yaml)
    p = floe.run("plan", path, "--format", "json", *args, check=False)
    assert p.returncode in (0, 1, 2), p.stderr
    return p.returncode, json.loads(p.stdout)


def test_worked_example(floe, tmp_path):
    (tmp_path / "w.yaml").write_text(WORKED)
    p = floe.run("plan", tmp_path / "w.yaml", "--partitions", "10", "--rate", "20000/s",
                 "--record-size", "300B", "--days", "7", check=False)
    assert p.returncode == 1, p.stderr  # warnings: none distribution, no maintenance
    assert "57,600" in p.stdout and "403,200" in p.stdout, p.stdout
    code, out = plan(floe, tmp_path, WORKED, "--partitions", "10")
    (t,) = out["tables"]
    w = t["without_maintenance"]
    assert (t["writers"], t["partitions"], t["distribution"]) == (4, 10, "none")
    assert w["files_per_commit"] == pytest.approx(40)
    assert w["files_per_day"] == pytest.approx(57600)
    assert w["data_files_after"] == pytest.approx(403200)
    assert w["snapshots_per_day"] == pytest.approx(1440)
    # hash: one file per partition; maintenance keeps a few files per partition
    code, out = plan(floe, tmp_path, WORKED.replace("distribution-mode: none", "distribution-mode: hash"),
                     "--partitions", "10")
    (t,) = out["tables"]
    assert t["without_maintenance"]["files_per_day"] == pytest.approx(14400)
    assert t["with_maintenance"]["data_files_after"] < t["without_maintenance"]["data_files_after"] / 50
    assert t["with_maintenance"]["snapshots_kept"] < t["without_maintenance"]["snapshots_kept"]


REGIONS = ",".join(f"r{i}" for i in range(50))
RUN = f"""
pipeline: {{name: short}}
execution.checkpointing.interval: 1s
parallelism.default: 2
sources:
  - name: gen
    type: generator
    rows-per-second: 40
    number-of-rows: 600
    fields.region.values: "{REGIONS}"
tables:
  - name: db.short
    source: gen
    schema: "id long not null, region string"
    partition-by: "region"
    distribution-mode: hash
"""


def test_prediction_within_ten_percent_of_a_real_run(floe, tmp_path):
    """40 records a checkpoint over 50 partitions: not every partition gets a
    record, so the files per checkpoint (27.7 expected) test the partition
    model, not just a product."""
    code, out = plan(floe, tmp_path, RUN, "--partitions", "50")
    predicted = out["tables"][0]["without_maintenance"]["files_per_commit"]
    assert 27 < predicted < 28.5
    (tmp_path / "run.yaml").write_text(RUN)
    floe.run("run", tmp_path / "run.yaml")
    snaps = floe.json_rows("snapshots", "db.short")
    added = [int(s["summary"]["added-data-files"]) for s in snaps]
    # the last checkpoint of a bounded source is a partial one
    full = added[:-1]
    assert len(full) >= 8, added
    measured = statistics.mean(full)
    assert abs(measured - predicted) <= 0.1 * predicted, (predicted, added)


RANGE_RUN = """
pipeline: {name: ranged}
execution.checkpointing.interval: 500ms
parallelism.default: 4
sources:
  - name: gen
    type: generator
    rows-per-second: 800
    number-of-rows: 4400
    fields.region.values: "r0,r1,r2,r3,r4"
tables:
  - name: db.ranged
    source: gen
    schema: "id long not null, region string"
    partition-by: "region"
    distribution-mode: range
"""


def test_range_files_per_checkpoint_modelled_and_measured(floe, tmp_path):
    """RANGE splits a partition at each task boundary that falls inside it:
    files per checkpoint are hash's plus at most tasks - 1. Five even
    partitions over four tasks: boundaries at 1.25, 2.5 and 3.75 partitions
    split three of them (8 files against hash's 5), which a real run
    measures from its second checkpoint on (the first routes as hash)."""
    files = {}
    for dist in ("hash", "range"):
        for parts, skew in ((5, 0), (10, 0), (21, 0), (21, 3), (200, 1)):
            _, out = plan(floe, tmp_path, WORKED.replace("distribution-mode: none",
                                                         f"distribution-mode: {dist}"),
                          "--partitions", str(parts), "--skew", str(skew))
            (t,) = out["tables"]
            assert t["distribution"] == dist
            files[dist, parts, skew] = t["without_maintenance"]["files_per_commit"]
    for (dist, parts, skew), n in files.items():
        if dist == "range":
            h = files["hash", parts, skew]
            assert h <= n <= h + 4 - 1, (parts, skew, n, h)
    assert files["range", 5, 0] == pytest.approx(8)
    assert files["range", 10, 0] == pytest.approx(12)  # 2.5 and 7.5 split; 5 falls between
    # the table property says range too
    _, out = plan(floe, tmp_path, WORKED.replace("distribution-mode: none",
                                                 "properties: {write.distribution-mode: range}"),
                  "--partitions", "5")
    assert out["tables"][0]["distribution"] == "range"
    code, out = plan(floe, tmp_path, RANGE_RUN, "--partitions", "5")
    predicted = out["tables"][0]["without_maintenance"]["files_per_commit"]
    assert predicted == pytest.approx(8)
    (tmp_path / "run.yaml").write_text(RANGE_RUN)
    floe.run("run", tmp_path / "run.yaml")
    added = [int(s["summary"]["added-data-files"]) for s in floe.json_rows("snapshots", "db.ranged")]
    steady = added[1:-1]  # the first routes as hash, the last is partial
    assert len(steady) >= 6, added
    assert abs(statistics.mean(steady) - predicted) <= 0.1 * predicted, (predicted, added)


BASE = """
pipeline: {{name: lint}}
execution.checkpointing.interval: {interval}
parallelism.default: {writers}
sources:
  - {{name: s, type: generator}}
tables:
  - name: db.t
    source: s
    schema: "id long not null, region string, user_id long, ts timestamptz"
    partition-by: "{partition}"
    distribution-mode: {dist}
{extra}
"""

MAINT = """    maintenance:
      mode: auto
      steps: {steps}
      expire.max-snapshot-age: {age}
"""


def cfg(interval="5m", writers=4, partition="bucket(8, id)", dist="hash", extra=None):
    if extra is None:
        extra = MAINT.format(steps="compact,expire,orphans,manifests", age="2h")
    return BASE.format(interval=interval, writers=writers, partition=partition, dist=dist, extra=extra)


ANTI_PATTERNS = {
    "checkpoint-interval": (cfg(interval="5s"), ()),
    "distribution-none": (cfg(dist="none"), ()),
    "upsert-distribution-none": (cfg(dist="none"), ("--update-ratio", "0.3", "--equality-fields", "id")),
    "upsert-partition-not-in-key": (cfg(partition="region"), ("--update-ratio", "0.3", "--equality-fields", "id")),
    "upsert-without-key": (cfg(), ("--update-ratio", "0.3")),
    "no-maintenance": (cfg(extra=""), ()),
    "time-based-retention": (cfg(interval="30s", extra=MAINT.format(steps="compact,expire", age="7d")), ()),
    "maintenance-order": (cfg(extra=MAINT.format(steps="expire,compact", age="2h")), ()),
    "compaction-without-expiry": (cfg(extra=MAINT.format(steps="compact,manifests", age="2h")), ()),
    "high-cardinality-partition": (cfg(partition="user_id"), ()),
    "small-files": (cfg(extra=""), ("--rate", "10/s")),
}


def test_healthy_config_has_no_lint(floe, tmp_path):
    code, out = plan(floe, tmp_path, cfg())
    assert code == 0 and out["lints"] == [], out["lints"]


@pytest.mark.parametrize("lint_id", sorted(ANTI_PATTERNS))
def test_each_anti_pattern_lints(floe, tmp_path, lint_id):
    yaml, args = ANTI_PATTERNS[lint_id]
    code, out = plan(floe, tmp_path, yaml, *args)
    ids = {l["id"]: l for l in out["lints"]}
    assert lint_id in ids, out["lints"]
    assert code == max({"warn": 1, "critical": 2}[l["severity"]] for l in out["lints"])
    assert ids[lint_id]["message"]


# ---- the same from a Flink SQL job: `floe plan job.sql` ---------------------------

def sql_job(wh, table_ddl, insert, sets=("SET 'execution.checkpointing.interval' = '60s';",
                                          "SET 'parallelism.default' = '4';")):
    return "\n".join([
        f"CREATE CATALOG lake WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='{wh}');",
        "USE CATALOG lake;",
        "CREATE DATABASE IF NOT EXISTS db;",
        table_ddl,
        "CREATE TEMPORARY TABLE gen (id BIGINT NOT NULL, region STRING) WITH ('connector'='datagen');",
        *sets,
        insert,
        "SELECT * FROM db.events;",  # skipped by plan: it would read the table
        ""])


WORKED_SQL_TABLE = ("CREATE TABLE IF NOT EXISTS db.events (id BIGINT NOT NULL, region STRING) "
                    "PARTITIONED BY (region) WITH ('write.distribution-mode'='none');")


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_worked_example_from_sql_creates_nothing(floe, tmp_path):
    wh = tmp_path / "wh"
    job = tmp_path / "job.sql"
    job.write_text(sql_job(wh, WORKED_SQL_TABLE, "INSERT INTO db.events SELECT id, region FROM gen;"))
    before_root, before_tmp = tree(floe.root), tree(tmp_path)
    p = floe.run("plan", job, "--partitions", "10", "--rate", "20000/s", "--days", "7", check=False)
    assert p.returncode == 1, p.stderr  # warnings: none distribution, no maintenance
    assert "57,600" in p.stdout and "403,200" in p.stdout, p.stdout
    assert "job sql-" in p.stdout and "(line 8)" in p.stdout, p.stdout
    p = floe.run("plan", job, "--partitions", "10", "--format", "json", check=False)
    assert p.returncode == 1, p.stderr
    (j,) = json.loads(p.stdout)["jobs"]
    assert j["job"].startswith("sql-") and j["line"] == 8 and j["severity"] == "warn"
    (t,) = j["plan"]["tables"]
    w = t["without_maintenance"]
    assert (t["table"], t["writers"], t["partitions"], t["distribution"]) == ("db.events", 4, 10, "none")
    assert t["checkpoint_interval_s"] == pytest.approx(60)
    assert t["rate"] == pytest.approx(10000)  # datagen's default rows-per-second
    assert w["files_per_day"] == pytest.approx(57600)
    assert w["data_files_after"] == pytest.approx(403200)
    # plan opened no catalog: no warehouse, no catalog file, nothing new anywhere
    assert not wh.exists()
    assert tree(floe.root) == before_root and tree(tmp_path) == before_tmp


def test_sql_lints_and_worst_exit_code(floe, tmp_path):
    """Two jobs: an upsert table (PRIMARY KEY, write.upsert.enabled) written
    with distribution none (critical), and a healthy hash-distributed job
    with maintenance: the exit code is the worst job's."""
    up = ("CREATE TABLE IF NOT EXISTS db.users (id BIGINT, region STRING, PRIMARY KEY (id) NOT ENFORCED) "
          "PARTITIONED BY (bucket(8, id)) WITH ('format-version'='2', 'write.upsert.enabled'='true', "
          "'write.distribution-mode'='none');")
    text = sql_job(tmp_path / "wh", WORKED_SQL_TABLE + "\n" + up,
                   "INSERT INTO db.users SELECT id, region FROM gen;\n"
                   "INSERT INTO db.events /*+ OPTIONS('distribution-mode'='hash') */ SELECT id, region FROM gen;",
                   sets=("SET 'execution.checkpointing.interval' = '5min';", "SET 'parallelism.default' = '4';",
                         "SET 'compaction-enabled' = 'true';",
                         "SET 'flink-maintenance.expire-snapshots.retain-last' = '100';",
                         "SET 'flink-maintenance.expire-snapshots.max-snapshot-age-seconds' = '3600';"))
    code, out = plan(floe, tmp_path, text, name="up.sql")
    assert code == 2
    users, events = out["jobs"]
    ids = {l["id"] for l in users["plan"]["lints"]}
    assert "upsert-distribution-none" in ids and "upsert-without-key" not in ids, users
    assert users["severity"] == "critical"
    assert events["plan"]["tables"][0]["distribution"] == "hash"
    assert events["plan"]["tables"][0]["maintenance"] is True
    # a target table the script does not create: plan opens no catalog to find it
    (tmp_path / "x.sql").write_text(text.replace("INSERT INTO db.users", "INSERT INTO db.other"))
    p = floe.run("plan", tmp_path / "x.sql", check=False)
    assert p.returncode == 3 and "CREATE TABLE IF NOT EXISTS" in p.stderr, p.stderr
    assert not (tmp_path / "wh").exists()
