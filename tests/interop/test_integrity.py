"""No silent data loss from truncated metadata or maintenance races.

- A manifest list or manifest cut back to its Avro header, cut mid-block or
  with one block dropped is still (or nearly) a valid Avro file: floe checks
  what it reads against what the metadata promises (the list's file and row
  counts, the snapshot summary's totals), so a scan fails naming the file
  (or, with --skip-corrupt, says what it skipped), and ingest and maintain
  refuse: nothing is committed on top, nothing is deleted.
- Orphan cleanup beside running writers (--force --orphan-older-than 0 in a
  loop): every record exactly once and every referenced file present.
"""
import io
import json
import os
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from conftest import Floe

# ---- a small Avro container reader/writer (the test's own; no fastavro) ----------------


def _read_long(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (result >> 1) ^ -(result & 1), pos


def _write_long(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _skip(schema, buf, pos, names):
    """Skip one datum of `schema` in buf at pos; return the new position."""
    if isinstance(schema, list):  # union
        i, pos = _read_long(buf, pos)
        return _skip(schema[i], buf, pos, names)
    if isinstance(schema, str):
        t = schema
        if t in names:
            return _skip(names[t], buf, pos, names)
    else:
        t = schema["type"]
        if isinstance(t, (dict, list)):
            return _skip(t, buf, pos, names)
    if t == "null":
        return pos
    if t == "boolean":
        return pos + 1
    if t in ("int", "long", "enum"):
        return _read_long(buf, pos)[1]
    if t == "float":
        return pos + 4
    if t == "double":
        return pos + 8
    if t in ("bytes", "string"):
        n, pos = _read_long(buf, pos)
        return pos + n
    if t == "fixed":
        if "name" in schema:
            names[schema["name"]] = schema
        return pos + schema["size"]
    if t == "record":
        names[schema["name"]] = schema
        for f in schema["fields"]:
            pos = _skip(f["type"], buf, pos, names)
        return pos
    if t in ("array", "map"):
        while True:
            n, pos = _read_long(buf, pos)
            if n == 0:
                return pos
            if n < 0:
                n = -n
                _, pos = _read_long(buf, pos)
            for _ in range(n):
                if t == "map":
                    pos = _skip("string", buf, pos, names)
                    pos = _skip(schema["values"], buf, pos, names)
                else:
                    pos = _skip(schema["items"], buf, pos, names)
    raise AssertionError(f"unknown Avro type {t}")


class Container:
    def __init__(self, data: bytes):
        assert data[:4] == b"Obj\x01"
        pos, self.meta = 4, {}
        while True:
            n, pos = _read_long(data, pos)
            if n == 0:
                break
            if n < 0:
                n = -n
                _, pos = _read_long(data, pos)
            for _ in range(n):
                kl, pos = _read_long(data, pos)
                k = data[pos:pos + kl].decode()
                pos += kl
                vl, pos = _read_long(data, pos)
                self.meta[k] = data[pos:pos + vl]
                pos += vl
        self.sync = data[pos:pos + 16]
        self.header = data[:pos + 16]
        pos += 16
        self.blocks = []  # (count, raw payload, start offset)
        while pos < len(data):
            start = pos
            count, pos = _read_long(data, pos)
            size, pos = _read_long(data, pos)
            self.blocks.append((count, data[pos:pos + size], start))
            pos += size + 16
        self.codec = self.meta.get("avro.codec", b"null").decode()
        self.schema = json.loads(self.meta["avro.schema"])

    def records(self):
        """Every record's encoded bytes."""
        out = []
        for count, raw, _ in self.blocks:
            data = zlib.decompress(raw, -15) if self.codec == "deflate" else raw
            pos = 0
            for _ in range(count):
                end = _skip(self.schema, data, pos, {})
                out.append(data[pos:end])
                pos = end
        return out

    def encode(self, groups):
        """The same header, one block per group of encoded records."""
        out = bytearray(self.header)
        for g in groups:
            payload = b"".join(g)
            if self.codec == "deflate":
                c = zlib.compressobj(6, zlib.DEFLATED, -15)
                payload = c.compress(payload) + c.flush()
            out += _write_long(len(g)) + _write_long(len(payload)) + payload + self.sync
        return bytes(out)


def damage(path: Path, how: str):
    data = path.read_bytes()
    c = Container(data)
    if how == "header":
        path.write_bytes(c.header)
    elif how == "mid-block":
        first = c.blocks[0]
        end = first[2] + (len(data) - first[2]) // 2
        path.write_bytes(data[:end])
    elif how == "drop-block":
        recs = c.records()
        assert len(recs) >= 2, "need two records to make two blocks"
        half = len(recs) // 2
        # two valid blocks, then the second one dropped: a valid Avro file
        two = c.encode([recs[:half], recs[half:]])
        assert len(Container(two).blocks) == 2
        path.write_bytes(c.encode([recs[:half]]))
    else:
        raise AssertionError(how)


# ---- the truncation matrix -----------------------------------------------------------


def write_jsonl(path: Path, start: int, n: int):
    with path.open("w") as f:
        for i in range(start, start + n):
            f.write(json.dumps({"id": i, "k": i % 10}) + "\n")


def all_files(root: Path):
    return {p for p in root.rglob("*") if p.is_file()}


def local(p: str) -> Path:
    return Path(p.removeprefix("file://").removeprefix("file:"))


@pytest.mark.parametrize("how", ["header", "mid-block", "drop-block"])
@pytest.mark.parametrize("target", ["manifest-list", "manifest"])
def test_truncated_metadata_is_refused(floe: Floe, tmp_path, target, how):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long not null, k int", "--partition-by", "k")
    for n in range(3):
        src = tmp_path / f"in{n}.jsonl"
        write_jsonl(src, n * 1000, 1000)
        floe.run("ingest", "db.t", src, "--quiet")
    tbl = floe.pyiceberg_catalog().load_table("db.t")
    snap = tbl.current_snapshot()
    assert snap.summary["total-records"] == "3000"
    if target == "manifest-list":
        victim = local(snap.manifest_list)
    else:
        victim = local(snap.manifests(tbl.io)[0].manifest_path)
    damage(victim, how)
    table_dir = floe.warehouse / "db" / "t"
    before = all_files(table_dir)
    snapshots = [s.snapshot_id for s in tbl.metadata.snapshots]

    # the scan fails and names the file (it used to count fewer rows, exit 0)
    p = floe.run("scan", "db.t", "--count", check=False)
    assert p.returncode != 0, p.stdout
    assert victim.name in p.stderr, p.stderr
    # --skip-corrupt reads what is there and says what it skipped
    p = floe.run("scan", "db.t", "--count", "--skip-corrupt", check=False)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout) < 3000
    assert victim.name in p.stderr and "skip" in p.stderr, p.stderr

    # ingest refuses: nothing is committed on top
    more = tmp_path / "more.jsonl"
    write_jsonl(more, 10_000, 100)
    p = floe.run("ingest", "db.t", more, "--quiet", check=False)
    assert p.returncode != 0
    assert victim.name in p.stderr, p.stderr
    # maintenance refuses: no commit, nothing deleted (expire everything it may,
    # delete every orphan: what used to destroy the old data)
    p = floe.run("maintain", "db.t", "--older-than", "0", "--retain-last", "1",
                 "--orphan-older-than", "0", "--force", check=False)
    assert p.returncode != 0, p.stdout
    assert victim.name in p.stderr, p.stderr

    tbl = floe.pyiceberg_catalog().load_table("db.t")
    assert [s.snapshot_id for s in tbl.metadata.snapshots] == snapshots
    assert tbl.current_snapshot().snapshot_id == snap.snapshot_id
    missing = before - all_files(table_dir)
    assert not missing, f"deleted: {sorted(map(str, missing))}"


# ---- orphan cleanup beside running writers ---------------------------------------------


def referenced_files_exist(tbl):
    """Every manifest list, manifest and data file of every snapshot is there."""
    for snap in tbl.metadata.snapshots:
        assert local(snap.manifest_list).exists(), snap.manifest_list
        for mf in snap.manifests(tbl.io):
            assert local(mf.manifest_path).exists(), mf.manifest_path
            for e in mf.fetch_manifest_entry(tbl.io, discard_deleted=True):
                assert local(e.data_file.file_path).exists(), e.data_file.file_path


def test_orphan_cleanup_beside_two_writers(floe: Floe, tmp_path):
    """The integrity issue's reproduction: `floe maintain --orphan-older-than 0`
    in a loop beside two `floe ingest --follow` writers corrupted the table in
    3 of 3 runs (a manifest written on attempt 1 of a commit deleted as an
    orphan before attempt 3 reused it; data files of a checkpoint deleted
    before its commit). Now: every record exactly once, every referenced file
    present, and cleanup still deletes real orphans."""
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long not null, w int")
    table_dir = floe.warehouse / "db" / "t"
    # a real orphan, two days old: cleanup must still find it
    stray = table_dir / "data" / "stray-orphan.parquet"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"x")
    old = time.time() - 2 * 86400
    os.utime(stray, (old, old))

    inputs = [tmp_path / "in0", tmp_path / "in1"]
    for d in inputs:
        d.mkdir()
    written = [0, 0]
    per_file = 300

    def feed(w: int):
        """One more input file for writer w (renamed into place: whole)."""
        n = written[w] // per_file
        start = w * 10_000_000 + written[w]
        tmp = inputs[w] / f".part-{n:05d}.tmp"
        with tmp.open("w") as f:
            for i in range(start, start + per_file):
                f.write(json.dumps({"id": i, "w": w}) + "\n")
        tmp.rename(inputs[w] / f"part-{n:05d}.jsonl")
        written[w] += per_file

    def writer(w: int, follow: bool):
        cmd = [floe.bin, "--dir", str(floe.root), "ingest", "db.t", str(inputs[w]),
               "--pipeline-id", f"writer-{w}", "--checkpoint-interval", "250ms",
               "--parallelism", "1", "--quiet"]
        if follow:
            cmd.append("--follow")
        return cmd

    logs = [tmp_path / "w0.log", tmp_path / "w1.log"]
    procs = [subprocess.Popen(writer(w, True), stdout=subprocess.DEVNULL,
                              stderr=logs[w].open("w")) for w in range(2)]
    maint_runs = maint_ok = deleted = 0
    maint_errors = []
    try:
        deadline = time.time() + 60
        maint = None
        while time.time() < deadline:
            for w in range(2):
                feed(w)
                assert procs[w].poll() is None, \
                    f"writer {w} stopped ({procs[w].returncode}):\n{logs[w].read_text()[-3000:]}"
            if maint is None:
                maint = subprocess.Popen(
                    [floe.bin, "--dir", str(floe.root), "maintain", "db.t", "--force",
                     "--orphan-older-than", "0", "--format", "json"],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            elif maint.poll() is not None:
                out, errs = maint.communicate()
                maint_runs += 1
                if maint.returncode == 0:
                    maint_ok += 1
                    deleted += json.loads(out)["orphans"]["files_deleted"]
                else:
                    maint_errors.append(errs.strip()[-500:])
                maint = None
            time.sleep(0.1)
        if maint is not None:
            maint.wait(timeout=600)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()  # a clean stop: the current checkpoint commits
        codes = [p.wait(timeout=600) for p in procs]
    assert codes == [0, 0], "\n".join(l.read_text()[-3000:] for l in logs)
    # what the writers had not read yet when stopped: the same pipelines resume
    for w in range(2):
        r = subprocess.run(writer(w, False), capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
    assert maint_runs >= 3 and maint_ok >= 1, (maint_runs, maint_ok, maint_errors)
    assert not stray.exists(), "orphan cleanup deleted nothing"
    assert deleted >= 1

    tbl = floe.pyiceberg_catalog().load_table("db.t")
    referenced_files_exist(tbl)
    ids = tbl.scan().to_arrow().column("id").to_pylist()
    total = sum(written)
    assert len(ids) == total, f"{len(ids)} rows for {total} records ({maint_errors[:3]})"
    assert len(set(ids)) == total
