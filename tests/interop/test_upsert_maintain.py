"""Maintenance of upsert tables.

- Embedded maintenance triggered by delete-file counts only
  (`maintenance.schedule.eq-delete-file-count`, the commit-count trigger
  off): while an upsert pipeline commits equality deletes and position
  deletes (v2) or DVs (v3), compaction runs beside it, applies the deletes,
  removes the delete files it applied, and keeps its data sequence number,
  so the equality deletes the pipeline commits meanwhile still apply to the
  rewritten rows. The table read by floe, DuckDB and Java equals the model;
  the pipeline's metrics count the delete files it committed.
- Afterwards `floe maintain --steps expire,orphans` expires every old
  snapshot of the v3 table: the Puffin files only expired snapshots reached
  are deleted, the ones live DVs sit in are kept, and the readers still
  agree.
- `floe inspect <table> partitions` counts delete files and deletes per
  partition as Java's partitions table does (DVs as position deletes).
"""
import collections
import json
import random
import re
import time

import pytest

from test_upsert_interop import Model, check, norm

REGIONS = ["eu", "us", "ap"]
COLS = ["id", "region", "name", "v"]


def change_files(folder, rng, model, n_files, per_file, n_keys):
    folder.mkdir()
    for k in range(n_files):
        with (folder / f"c{k:03d}.jsonl").open("w") as f:
            for _ in range(per_file):
                i = rng.randrange(n_keys)
                reg = REGIONS[i % 3]
                if rng.random() < 0.8:
                    row = {"id": i, "region": reg,
                           "name": None if rng.random() < 0.1 else f"n{rng.randrange(50)}",
                           "v": rng.randrange(1000)}
                    op = "+U"
                else:
                    row, op = {"id": i, "region": reg}, "-D"
                model.apply(op, row)
                f.write(json.dumps({"op": op, **row}) + "\n")


def num(summary, key):
    return int(summary.get(key) or 0)


@pytest.mark.parametrize("fv", [2, 3])
def test_embedded_maintenance_on_delete_counts(floe, tmp_path, java_peer, fv):
    name = f"db.m{fv}"
    rng = random.Random(4000 + fv)
    model = Model(["id", "region"])
    change_files(tmp_path / "in", rng, model, 24, 1500, 1200)
    cfg = tmp_path / "p.yaml"
    cfg.write_text(f"""
pipeline.name: m{fv}
execution.checkpointing.interval: 20ms
parallelism.default: 2
sources:
  - name: changes
    type: files
    path: {tmp_path}/in
    format: json
    rowkind.field: op
    block-size: 4KiB
tables:
  - name: {name}
    schema: "id long not null, region string not null, name string, v long"
    partition-by: region
    format-version: {fv}
    upsert-enabled: true
    equality-field-columns: id,region
    maintenance:
      mode: auto
      steps: compact
      schedule.commit-count: 0
      schedule.data-file-count: 0
      schedule.interval: 0s
      schedule.eq-delete-file-count: 12
      rate-limit: 0s
      on-finish: false
      compact.min-input-files: 2
""")
    p = floe.run("-v", "run", cfg)
    runs = re.findall(r"maintenance of db\.m\d: (\d+) data files -> (\d+), (\d+) delete files "
                      r"removed", p.stderr)
    assert runs, p.stderr[-3000:]
    tbl = check(floe, name, java_peer, model.values(), COLS, f"v{fv} after embedded maintenance")
    snaps = tbl.metadata.snapshots
    replaces = [s.summary for s in snaps if s.summary.operation.value == "replace"]
    assert replaces
    # compaction dropped delete files it had applied ...
    assert sum(num(s, "removed-delete-files") for s in replaces) > 0
    assert sum(int(r[2]) for r in runs) > 0
    # ... while pipeline commits landed between its start and its commit
    # (the rows they deleted are gone above: the sequence number held)
    ckpts = [s for s in snaps if s.summary.get("floe.checkpoint-id")]
    assert len(ckpts) > 2 * len(replaces)
    live = {r["file_path"] for r in floe.json_rows("files", name) if r["content"] not in ("DATA", 0)}
    added = sum(num(s.summary, "added-delete-files") for s in snaps)
    assert len(live) < added
    # the pipeline counted what it committed (delete files: eq + pos/DV)
    stats = re.search(r"this run committed \d+ data files and (\d+) delete files", p.stderr)
    assert stats and int(stats.group(1)) == sum(num(s.summary, "added-delete-files")
                                                 for s in ckpts), p.stderr[-2000:]

    # the partitions table counts deletes per partition as Java does
    parts = {r["partition"]["region"]: r for r in floe.json_rows("inspect", name, "partitions")}
    want = collections.defaultdict(collections.Counter)
    for f in floe.json_rows("inspect", name, "files"):
        c = want[f["partition"]["region"]]
        if f["content"] == 0:
            c["record_count"] += f["record_count"]
            c["file_count"] += 1
        elif f["content"] == 1:
            c["position_delete_record_count"] += f["record_count"]
            c["position_delete_file_count"] += 1
        else:
            c["equality_delete_record_count"] += f["record_count"]
            c["equality_delete_file_count"] += 1
    assert set(parts) == set(want)
    for reg, c in want.items():
        for k, v in c.items():
            assert parts[reg][k] == v, (reg, k, parts[reg][k], v)

    if fv == 3:
        expire_keeps_live_puffin_files(floe, name, java_peer, model, tmp_path, cfg, rng)


def expire_keeps_live_puffin_files(floe, name, java_peer, model, tmp_path, cfg, rng):
    # one more (small) checkpoint of the pipeline: its previous snapshot, the
    # last one before the compaction, is then no longer the one that holds
    # the pipeline's offsets, and may expire
    change_files(tmp_path / "in2", rng, model, 1, 40, 1200)
    (tmp_path / "in2" / "c000.jsonl").rename(tmp_path / "in" / "c999.jsonl")
    floe.run("run", cfg)

    def puffins():
        return {p for p in (floe.warehouse / "db" / name.split(".")[1] / "data").rglob("*.puffin")}

    before = puffins()
    live = {r["file_path"].removeprefix("file://") for r in floe.json_rows("files", name)
            if r["file_format"] == "PUFFIN"}
    assert live and live <= {str(p) for p in before}
    time.sleep(1.1)
    p = floe.run("maintain", name, "--steps", "expire,orphans", "--retain-last", "1",
                 "--older-than", "0s", "--orphan-older-than", "1s", "--force", "--format", "json")
    r = json.loads(p.stdout)
    after = {str(p) for p in puffins()}
    assert r["expire"]["snapshots_expired"] > 0
    assert live <= after, "a Puffin file holding live DVs was deleted"
    assert after < {str(p) for p in before}, "no Puffin file of the expired snapshots was deleted"
    assert r["expire"]["delete_files_deleted"] > 0
    check(floe, name, java_peer, model.values(), COLS, "v3 after expiry")
