"""Commits that fail in every way a catalog can fail leave a table that
PyIceberg reads, at the old or at the new version, with no file deleted that
a version that may be current needs; and a pipeline started twice never
applies its input twice.

- Injected faults (FLOE_TEST_CATALOG_FAULT, a test hook in the catalog
  layer) at each step of the swap, for the SQLite, PostgreSQL and
  file-system catalogs: refused before the swap, swap done and its answer
  lost, swap lost on its way.
- PostgreSQL with the TCP connection cut by a proxy right after the UPDATE
  reached the server (the commit happened, floe never heard) and right
  before it did (nothing happened, floe cannot know).
- Two `floe ingest` processes of one pipeline over the same input, killed and
  restarted at random: every record exactly once.
"""
import json
import os
import random
import signal
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from conftest import Floe

SCHEMA = "id long not null, kind string"


def write_jsonl(path: Path, start: int, n: int):
    with path.open("w") as f:
        for i in range(start, start + n):
            f.write(json.dumps({"id": i, "kind": "k%d" % (i % 3)}) + "\n")


class Target:
    """A catalog on the command line, and how PyIceberg opens its table."""

    def __init__(self, floe: Floe, kind: str, tmp: Path, pg_uri=None):
        self.floe, self.kind, self.tmp = floe, kind, tmp
        self.name = f"c{uuid.uuid4().hex[:8]}"
        self.wh = tmp / "wh"
        self.pg_uri = pg_uri

    def args(self, uri=None):
        if self.kind == "sqlite":
            return ["--dir", str(self.floe.root)]
        if self.kind == "filesystem":
            return ["--catalog-type", "filesystem", "--warehouse", f"file://{self.wh}"]
        return ["--catalog-uri", uri or self.pg_uri, "--catalog-name", self.name,
                "--warehouse", f"file://{self.wh}"]

    def run(self, *args, env=None, uri=None):
        cmd = [self.floe.bin, *self.args(uri), *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, timeout=600)

    def table(self):
        if self.kind == "sqlite":
            return self.floe.pyiceberg_catalog().load_table("db.t")
        if self.kind == "filesystem":
            from pyiceberg.table import StaticTable

            hint = (self.wh / "db" / "t" / "metadata" / "version-hint.text").read_text().strip()
            return StaticTable.from_metadata(str(self.wh / "db" / "t" / "metadata" / f"v{hint}.metadata.json"))
        from pyiceberg.catalog.sql import SqlCatalog

        cat = SqlCatalog(self.name, uri=self.pg_uri.replace("postgresql://", "postgresql+psycopg2://"),
                         warehouse=f"file://{self.wh}")
        return cat.load_table("db.t")


def referenced_files_exist(tbl):
    """Every manifest list, manifest and data file of every snapshot is there."""
    io = tbl.io
    for snap in tbl.metadata.snapshots:
        assert os.path.exists(snap.manifest_list.removeprefix("file:")), snap.manifest_list
        for mf in snap.manifests(io):
            assert os.path.exists(mf.manifest_path.removeprefix("file:")), mf.manifest_path
            for e in mf.fetch_manifest_entry(io, discard_deleted=True):
                p = e.data_file.file_path.removeprefix("file:")
                assert os.path.exists(p), p


def ids(tbl):
    return sorted(tbl.scan().to_arrow().column("id").to_pylist())


def ingest(target, src, env=None, uri=None):
    return target.run("ingest", "db.t", src, "--create-schema", SCHEMA, "--quiet", env=env, uri=uri)


@pytest.mark.parametrize("kind", ["sqlite", "filesystem", "postgres"])
@pytest.mark.parametrize("fault", ["before-swap", "after-swap", "lose-swap"])
def test_injected_fault_leaves_a_readable_table(floe, tmp_path, kind, fault, request):
    pg = request.getfixturevalue("postgres_uri") if kind == "postgres" else None
    tg = Target(floe, kind, tmp_path, pg)
    if kind != "sqlite":
        r = tg.run("namespace", "create", "db")
        assert r.returncode == 0, r.stderr
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, 0, 100)
    write_jsonl(b, 100, 50)
    r = ingest(tg, a)
    assert r.returncode == 0, r.stderr
    # the second load's commit meets the fault (it is the second commit of
    # that process: the first creates nothing, the table exists)
    env = {"FLOE_TEST_CATALOG_FAULT": f"{fault}:*"}
    r = ingest(tg, b, env=env)
    tbl = tg.table()
    referenced_files_exist(tbl)
    got = ids(tbl)
    if fault == "after-swap":
        # the commit happened and floe found out by reading the catalog again
        assert r.returncode == 0, r.stderr
        assert got == list(range(150))
    else:
        assert r.returncode != 0
        assert got == list(range(100))
        if fault == "lose-swap":
            assert "commit state unknown" in r.stderr, r.stderr
            # the metadata file it names is still there (it could have been current)
            named = r.stderr.split("metadata '")[1].split("'")[0]
            assert os.path.exists(named.removeprefix("file:")), named
    # the same load again, without faults: exactly once in every case
    r = ingest(tg, b)
    assert r.returncode == 0, r.stderr
    tbl = tg.table()
    referenced_files_exist(tbl)
    assert ids(tbl) == list(range(150))


class CutProxy:
    """TCP proxy in front of PostgreSQL that cuts the connection carrying the
    catalog's compare-and-swap UPDATE: after the server answered it (the swap
    happened; the client never hears) or before forwarding it (nothing
    happened; the client cannot know). Cuts once, then forwards."""

    def __init__(self, target_port: int, when: str):
        self.target_port, self.when = target_port, when
        self.cut = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            s = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pump, args=(c, s), daemon=True).start()

    def _pump(self, c, s):
        import select

        armed = False
        try:
            while True:
                r, _, _ = select.select([c, s], [], [], 30)
                if not r:
                    continue
                if c in r:
                    data = c.recv(65536)
                    if not data:
                        break
                    if not self.cut.is_set() and b"UPDATE iceberg_tables SET metadata_location" in data:
                        if self.when == "before":
                            self.cut.set()
                            break
                        armed = True
                    s.sendall(data)
                if s in r:
                    data = s.recv(65536)
                    if not data:
                        break
                    if armed:
                        # the server ran the UPDATE and answered: drop the answer
                        self.cut.set()
                        time.sleep(0.2)
                        break
                    c.sendall(data)
        except OSError:
            pass
        finally:
            for x in (c, s):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                x.close()

    def close(self):
        self.sock.close()


@pytest.mark.parametrize("when", ["after", "before"])
def test_postgres_connection_cut_at_the_swap(floe, tmp_path, postgres_uri, when):
    tg = Target(floe, "postgres", tmp_path, postgres_uri)
    assert tg.run("namespace", "create", "db").returncode == 0
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, 0, 100)
    write_jsonl(b, 100, 50)
    assert ingest(tg, a).returncode == 0
    port = int(postgres_uri.rsplit(":", 1)[1].split("/")[0])
    proxy = CutProxy(port, when)
    try:
        r = ingest(tg, b, uri=postgres_uri.replace(f":{port}/", f":{proxy.port}/"))
    finally:
        proxy.close()
    assert proxy.cut.is_set(), "the proxy never saw the swap"
    tbl = tg.table()
    referenced_files_exist(tbl)
    if when == "after":
        assert r.returncode == 0, r.stderr
        assert ids(tbl) == list(range(150))
    else:
        assert r.returncode != 0
        assert "commit state unknown" in r.stderr, r.stderr
        assert ids(tbl) == list(range(100))
    r = ingest(tg, b)
    assert r.returncode == 0, r.stderr
    assert ids(tg.table()) == list(range(150))


def test_two_processes_of_one_pipeline_apply_the_input_once(floe, tmp_path):
    """The hardening issue's reproduction (two `floe ingest` of the same
    pipeline at once turned 60,000 records into 116,676 rows), with 20 random
    SIGKILLs and restarts on top: every record exactly once."""
    src = tmp_path / "in"
    src.mkdir()
    files, per = 16, 200_000
    total = files * per
    for k in range(files):
        write_jsonl(src / f"part-{k}.jsonl", k * per, per)
    cmd = [floe.bin, "--dir", str(floe.root), "ingest", "db.t", str(src), "--create-schema", SCHEMA,
           "--checkpoint-interval", "40ms", "--block-size", "16KiB", "--quiet"]
    assert floe.run("namespace", "create", "db").returncode == 0
    rng = random.Random(20261201)
    procs = [None, None]
    logs = [tmp_path / "p0.log", tmp_path / "p1.log"]
    kills = fenced = 0
    done = False
    deadline = time.time() + 900
    while not done and kills < 20 and time.time() < deadline:
        for i in range(2):
            p = procs[i]
            if p is not None and p.poll() is not None:
                text = logs[i].read_text()
                if p.returncode == 0:
                    done = True  # the input is in the table
                else:
                    assert "is fenced" in text, text[-3000:]
                    fenced += 1
                procs[i] = None
            if procs[i] is None and not done:
                procs[i] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=logs[i].open("w"))
        time.sleep(rng.uniform(0.01, 0.12))
        i = rng.randrange(2)
        if procs[i] is not None and procs[i].poll() is None:
            procs[i].send_signal(signal.SIGKILL)
            procs[i].wait()
            procs[i] = None
            kills += 1
    for p in procs:
        if p is not None:
            p.wait(timeout=600)
    assert kills == 20, f"the input was loaded after {kills} kills: make it larger"
    # whatever is left: one last run to the end
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    tbl = floe.pyiceberg_catalog().load_table("db.t")
    got = tbl.scan().to_arrow().column("id").to_pylist()
    assert len(got) == total, f"{len(got)} rows for {total} records (fenced {fenced} times)"
    assert len(set(got)) == total
    referenced_files_exist(tbl)
