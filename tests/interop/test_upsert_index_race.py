"""Another writer's commit that lands after floe checked the table's head and
before its catalog swap, for index-mode upserts (write.upsert.mode=index).

The key index's deletion vectors are only right while the table's head is
the index's snapshot. A running `floe ingest --follow` (and a
pipeline.atomic-commit `floe run` over two index-mode tables) meets such a
commit through the test hook FLOE_TEST_CATALOG_FAULT=run (catalog.c): just
before a swap, the hook runs FLOE_TEST_CATALOG_RUN, which here appends rows
of keys the table holds (and of keys it does not) — PyIceberg on v2, another
floe pipeline on v3 — once, when the test has armed it between two rounds.
The swap then meets a stale base; the retry's ancestry check sees the
foreign snapshot and the checkpoint commits its equality deletes instead
(floe.upsert-mode index-fallback, the log says why); the index is rebuilt
after it and every later checkpoint commits DVs again.

The model: rows by key, more than one for a key another writer appended.
The foreign rows land after the rounds before the race and before the race
round's changes, so a change of a key in the race round or later replaces
every row of the key (floe's change is the newer one), and a key the foreign
writer added beside floe's row and nobody changed again keeps both rows.
Floe and DuckDB read exactly that after the race round and at the end.
"""
import json
import random
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import duckdb_connection
from test_upsert_index import cheap_check
from test_upsert_interop import Model, random_round

SCHEMA = "id long not null, region string not null, name string, v long"
RACE = 2  # the round whose first checkpoint meets the foreign commit
ROUNDS = 4
FELL_BACK = "committing its equality deletes instead of the index's deletion vectors"
BUILT = "key index of snapshot"

APPEND_PY = """\
import json, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
db, wh, name, rows, log = sys.argv[1:]
tbl = SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=wh).load_table(name)
tbl.append(pa.Table.from_pylist(json.loads(open(rows).read()), schema=tbl.schema().as_arrow()))
with open(log, "a") as f:
    f.write(f"appended as snapshot {tbl.current_snapshot().snapshot_id}\\n")
"""


class Rows(Model):
    """Model with several live rows per key: another writer's append adds one
    beside the key's rows; floe's next change of the key replaces them all."""

    def apply(self, kind, row, upsert=True):
        if kind in ("+I", "+U", "insert", "update"):
            self.rows[self.k(row)] = [dict(row)]
        elif kind in ("-D", "delete"):
            self.rows.pop(self.k(row), None)

    def append(self, row):
        self.rows.setdefault(self.k(row), []).append(dict(row))

    def values(self):
        return [r for rs in self.rows.values() for r in rs]


def as_row(key_cols, k, **vals):
    r = dict(zip(key_cols, k))
    r.setdefault("region", "eu")
    return {**r, **vals}


class Race:
    """The foreign rows, the command the hook runs, and its arming."""

    def __init__(self, floe, tmp_path, fv):
        self.floe, self.dir, self.fv = floe, tmp_path / "race", fv
        self.dir.mkdir()
        self.arm, self.done, self.log = (self.dir / n for n in ("arm", "done", "append.log"))
        self.rows_file = self.dir / "rows.json"

    def command(self, name):
        q = shlex.quote
        if self.fv == 2:  # PyIceberg (it cannot write v3 tables)
            script = self.dir / "append.py"
            script.write_text(APPEND_PY)
            act = " ".join(q(str(a)) for a in (
                sys.executable, script, self.floe.warehouse / "catalog.db",
                f"file://{self.floe.warehouse}", name, self.rows_file, self.log))
        else:  # a plain append of another floe pipeline, without the hook
            jl = self.dir / "rows.jsonl"
            act = (f"env -u FLOE_TEST_CATALOG_FAULT -u FLOE_TEST_CATALOG_RUN "
                   f"{q(self.floe.bin)} --dir {q(str(self.floe.root))} ingest {q(name)} {q(str(jl))} "
                   f"--pipeline-id other --quiet && echo appended >> {q(str(self.log))}")
        a, d = q(str(self.arm)), q(str(self.done))
        return f"if [ -e {a} ] && [ ! -e {d} ]; then touch {d} && {act}; fi"

    def env(self, name):
        import os
        return {**os.environ, "FLOE_TEST_CATALOG_FAULT": "run:*",
                "FLOE_TEST_CATALOG_RUN": self.command(name)}

    def prepare(self, rows):
        self.rows_file.write_text(json.dumps(rows))
        (self.dir / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        self.arm.touch()


def foreign_keys(rng, model, n_existing=16, n_new=6):
    """Keys the table holds, and keys no round has touched (ids from 1000)."""
    existing = rng.sample(sorted(model.rows), n_existing)
    new = [(1000 + i,) if len(model.key) == 1 else (1000 + i, "us") for i in range(n_new)]
    return existing, new


def deliberate(key_cols, ups, dels, tag):
    """Changes of chosen keys: an update of each of ups, a delete of each of dels."""
    out = [("+U", as_row(key_cols, k, name=tag, v=7)) for k in ups]
    out += [("-D", as_row(key_cols, k)) for k in dels]
    return out


def newest(tbl, pid):
    snaps = [s for s in tbl.metadata.snapshots if s.summary.get("floe.pipeline-id") == pid]
    return max(snaps, key=lambda s: s.sequence_number) if snaps else None


def read_all_of(floe, name, pid, path):
    """Whether pipeline pid's newest commit of name read all of path."""
    from pyiceberg.exceptions import NoSuchTableError
    try:
        s = newest(floe.pyiceberg_catalog().load_table(name), pid)
    except NoSuchTableError:
        return False
    if s is None:
        return False
    offs = json.loads(s.summary.get("floe.source-offsets") or "{}")
    size = path.stat().st_size
    return any(str(k).endswith(path.name) and v == size for k, v in offs.items())


def wait_read(floe, proc, log, tables, pid, path):
    deadline = time.time() + 180
    while not all(read_all_of(floe, t, pid, path) for t in tables):
        assert proc.poll() is None, log.read_text()[-4000:]
        assert time.time() < deadline, f"{path.name} not committed: " + log.read_text()[-4000:]
        time.sleep(0.2)


def chain(tbl):
    """The current snapshot's ancestry, oldest first."""
    by_id = {s.snapshot_id: s for s in tbl.metadata.snapshots}
    out, s = [], tbl.current_snapshot()
    while s is not None:
        out.append(s)
        s = by_id.get(s.parent_snapshot_id)
    return out[::-1]


def n_eq(s):
    return int(s.summary.get("added-equality-delete-files") or 0)


def check_race(tbl, pids, err):
    """The foreign snapshot landed on one of floe's DV commits; floe's next
    commit (the race round's) has its equality deletes; every one after it
    DVs again. Returns (foreign snapshot, fallback snapshot)."""
    snaps = chain(tbl)
    foreign = [i for i, s in enumerate(snaps) if s.summary.get("floe.pipeline-id") not in pids]
    assert len(foreign) == 1, [s.summary for s in snaps]
    i = foreign[0]
    f, before, fb = snaps[i], snaps[i - 1], snaps[i + 1]
    # another writer's append: data files only, of the foreign rows
    assert int(f.summary.get("added-delete-files") or 0) == 0, f.summary
    assert int(f.summary.get("added-records") or 0) == 22, f.summary
    assert before.summary.get("floe.upsert-mode") == "index", before.summary
    assert fb.summary.get("floe.upsert-mode") == "index-fallback", fb.summary
    assert n_eq(fb) > 0, fb.summary
    after = snaps[i + 2:]
    assert after, "no checkpoint after the race"
    for s in after:
        assert s.summary.get("floe.upsert-mode") == "index" and n_eq(s) == 0, s.summary
    # no other checkpoint fell back
    for s in snaps[:i]:
        if s.summary.get("floe.pipeline-id") in pids:
            assert s.summary.get("floe.upsert-mode") == "index" and n_eq(s) == 0, s.summary
    # the check ran after the head check chose DVs and met the foreign snapshot
    assert f"snapshot {f.snapshot_id} landed after the key index's snapshot {before.snapshot_id}" \
        in err, err[-4000:]
    assert err.count(FELL_BACK) == 1, err[-4000:]
    # the index was rebuilt (not refreshed: another writer's commit) on the fallback's snapshot
    assert f"the key index is rebuilt (snapshot {f.snapshot_id}: " in err, err[-4000:]
    assert f"{BUILT} {fb.snapshot_id}:" in err, err[-4000:]
    return f, fb


def unnamed_index_files(tbl):
    """floe-key-index files in the table's metadata folder no snapshot names."""
    mdir = Path(tbl.metadata.location.removeprefix("file://")) / "metadata"
    named = {(s.summary.get("floe.key-index") or "").removeprefix("file://")
             for s in tbl.metadata.snapshots}
    return sorted(str(p) for p in mdir.glob("floe-key-index-*") if str(p) not in named)


def create(floe, name, src0, lines, key, fv):
    (src0 / "r00.jsonl").write_text("\n".join(lines) + "\n")
    args = ["ingest", name, src0, "--upsert", "--equality-fields", key, "--rowkind-field", "op",
            "--pipeline-id", "ix", "--parallelism", "2", "--block-size", "4KiB", "--quiet",
            "--create-schema", SCHEMA, "--format-version", fv,
            "--property", "write.upsert.mode=index",
            "--property", "write.upsert.index.persist-interval=1"]
    if "region" in key:
        args += ["--partition-by", "region"]
    floe.run(*args)


def race_rounds(rng, models, key_cols, race, write_round):
    """ROUNDS rounds of changes; before round RACE the foreign rows (of
    models[0]'s table) are armed. The race round starts with changes of
    some foreign keys, the round after with changes of others (a key with
    two rows then loses both to DVs); the rest stay as the foreign writer
    left them unless a random change meets them."""
    m0 = models[0]
    plan = {}
    for rnd in range(1, ROUNDS + 1):
        changes = []
        if rnd == RACE:
            existing, new = foreign_keys(rng, m0)
            rows = [as_row(key_cols, k, name="foreign", v=-1) for k in existing + new]
            for r in rows:
                m0.append(r)
            race.prepare(rows)
            changes = deliberate(key_cols, existing[:6] + new[:3], existing[6:8] + new[3:4],
                                 "race")
            plan["next"] = deliberate(key_cols, existing[8:12] + new[4:5],
                                      existing[12:14] + new[5:6], "after")
        if rnd == RACE + 1:
            changes = plan["next"]
        lines = []
        for op, row in changes:
            for m in models:
                m.apply(op, row)
            lines.append(json.dumps({"op": op, **row}))
        # one random stream, applied to every model
        rnd_lines = random_round(rng, Model(m0.key), 300, 150)
        for l in rnd_lines:
            d = json.loads(l)
            op = d.pop("op")
            for m in models:
                m.apply(op, d)
        write_round(rnd, lines + rnd_lines)


@pytest.mark.parametrize("fv,key", [(2, "id, region"), (2, "id"), (3, "id")],
                         ids=["v2-composite", "v2-long", "v3-long"])
def test_foreign_append_before_the_swap(floe, tmp_path, fv, key):
    """A following index-mode ingest; before the swap of the race round's
    checkpoint another writer appends rows of 16 keys the table holds and 6
    it never held. That checkpoint falls back to equality deletes (a long key
    writes them only now, from the keys it kept: the lazy fallback), the
    index is rebuilt, later checkpoints commit DVs (deleting both rows of a
    key the foreign writer duplicated). The table equals the model after the
    race round and at the end; no key index file is left that no snapshot
    names."""
    con = duckdb_connection()
    key_cols = [c.strip() for c in key.split(",")]
    name = "db.race" + ("c" if len(key_cols) > 1 else "l") + str(fv)
    src0, src = tmp_path / "in0", tmp_path / "in"
    src0.mkdir()
    src.mkdir()
    rng = random.Random(3131 + fv + len(key_cols))
    model = Rows(key_cols)
    create(floe, name, src0, random_round(rng, model, 600, 150), key, str(fv))
    race = Race(floe, tmp_path, fv)
    log = tmp_path / "follow.log"
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "ingest", name, str(src), "--follow",
           "--upsert", "--equality-fields", key, "--rowkind-field", "op",
           "--pipeline-id", "ix", "--parallelism", "2", "--checkpoint-interval", "200ms"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=out, env=race.env(name))

    def write_round(rnd, lines):
        p = src / f"r{rnd:02d}.jsonl"
        p.write_text("\n".join(lines) + "\n")
        wait_read(floe, proc, log, [name], "ix", p)
        if rnd == RACE:
            assert race.done.exists() and "appended" in race.log.read_text(), log.read_text()[-4000:]
            cheap_check(floe, con, name, model.values(), f"{name} after the race round")

    try:
        race_rounds(rng, [model], key_cols, race, write_round)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=120)
    err = log.read_text()
    assert rc == 0, err[-4000:]
    tbl, _ = cheap_check(floe, con, name, model.values(), f"{name} at the end")
    check_race(tbl, {"ix"}, err)
    assert race.log.read_text().count("appended") == 1
    assert unnamed_index_files(tbl) == []


def test_atomic_commit_foreign_append_on_one_table(floe, tmp_path):
    """pipeline.atomic-commit over two index-mode tables fed the same changes;
    before the swap of the race round's transaction a PyIceberg append lands
    on db.ra only. The catalog refuses the transaction, its retry meets the
    foreign snapshot, and the transaction is built again: db.ra with its
    equality deletes, db.rb still with DVs (nothing landed on it), both at
    the same checkpoint. Later transactions carry DVs for both. Both tables
    equal their models; neither keeps a key index file no snapshot names."""
    con = duckdb_connection()
    src0, src = tmp_path / "in0", tmp_path / "in"
    src0.mkdir()
    src.mkdir()
    rng = random.Random(5353)
    ma, mb = Rows(["id"]), Rows(["id"])
    lines0 = random_round(rng, ma, 600, 150)
    for l in lines0:
        d = json.loads(l)
        mb.apply(d.pop("op"), d)
    for t in ("db.ra", "db.rb"):
        (src0 / t).mkdir()
        create(floe, t, src0 / t, lines0, "id", "2")
    race = Race(floe, tmp_path, 2)
    tables = "".join(f"""  - name: {t}
    source: ch
    upsert-enabled: true
    equality-field-columns: id
    distribution-mode: hash
""" for t in ("db.ra", "db.rb"))
    cfg = tmp_path / "p.yaml"
    cfg.write_text(f"""pipeline.name: rax
pipeline.atomic-commit: true
execution.checkpointing.interval: 200ms
parallelism.default: 2
sources:
  - name: ch
    type: files
    path: {src}
    pattern: "*.jsonl"
    follow: true
    format: json
    rowkind.field: op
tables:
{tables}""")
    log = tmp_path / "rax.log"
    with log.open("w") as out:
        proc = subprocess.Popen([floe.bin, "--dir", str(floe.root), "-v", "run", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=out, env=race.env("db.ra"))

    def write_round(rnd, lines):
        p = src / f"r{rnd:02d}.jsonl"
        p.write_text("\n".join(lines) + "\n")
        wait_read(floe, proc, log, ["db.ra", "db.rb"], "rax", p)
        if rnd == RACE:
            assert race.done.exists() and "appended" in race.log.read_text(), log.read_text()[-4000:]
            cheap_check(floe, con, "db.ra", ma.values(), "db.ra after the race round")
            cheap_check(floe, con, "db.rb", mb.values(), "db.rb after the race round")

    try:
        race_rounds(rng, [ma, mb], ["id"], race, write_round)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=120)
    err = log.read_text()
    assert rc == 0, err[-4000:]
    ta, _ = cheap_check(floe, con, "db.ra", ma.values(), "db.ra at the end")
    tb, _ = cheap_check(floe, con, "db.rb", mb.values(), "db.rb at the end")
    f, fb = check_race(ta, {"ix", "rax"}, err)
    assert f"table db.ra: checkpoint {fb.summary['floe.checkpoint-id']}: " in err, err[-4000:]
    assert "table db.rb: checkpoint" not in "\n".join(
        l for l in err.splitlines() if FELL_BACK in l), err[-4000:]
    # db.rb: every transaction's commit with DVs, the race's included
    rb = [s for s in chain(tb) if s.summary.get("floe.pipeline-id") == "rax"]
    ra = [s for s in chain(ta) if s.summary.get("floe.pipeline-id") == "rax"]
    assert [s.summary["floe.checkpoint-id"] for s in ra] == \
        [s.summary["floe.checkpoint-id"] for s in rb]
    for s in ra + rb:
        assert s.summary.get("floe.atomic-commit") == "true", s.summary
    for s in rb:
        assert s.summary.get("floe.upsert-mode") == "index" and n_eq(s) == 0, s.summary
    assert fb.summary["floe.checkpoint-id"] in {s.summary["floe.checkpoint-id"] for s in rb}
    assert "in one transaction with 2 tables" in err, err[-4000:]
    assert race.log.read_text().count("appended") == 1
    assert unnamed_index_files(ta) == []
    assert unnamed_index_files(tb) == []
