"""floe scan --consistent-with (issue 16 item 5): without pipeline.atomic-commit
the tables of one pipeline commit one by one, so one may be a checkpoint
ahead; a scan consistent with the other table reads the newest snapshot at or
before the checkpoint both have reached (or a given one)."""
import json


def write_batch(path, lo, hi):
    with path.open("w") as f:
        for i in range(lo, hi):
            f.write(json.dumps({"id": i, "kind": "odd" if i % 2 else "even"}) + "\n")


def pipeline(path, src, tables):
    spec = {"db.evens": "kind = 'even'", "db.odds": "kind = 'odd'"}
    body = "".join(f'  - name: {t}\n    schema: "id long not null"\n    filter: "{spec[t]}"\n'
                   for t in tables)
    path.write_text(f"pipeline.name: two\nsources:\n  - name: in\n    type: files\n"
                    f"    path: {src}\ntables:\n{body}")
    return path


def checkpoint(floe, ident):
    snaps = floe.json_rows("snapshots", ident)
    cur = [s for s in snaps if s.get("current")][0]
    return int(cur["summary"]["floe.checkpoint-id"])


def ids(floe, ident, *extra):
    p = floe.run("scan", ident, "--columns", "id", "--format", "json", *extra)
    return sorted(json.loads(l)["id"] for l in p.stdout.splitlines() if l.strip())


def test_scan_consistent_with(floe, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    both = pipeline(tmp_path / "both.yaml", src, ["db.evens", "db.odds"])
    write_batch(src / "a.jsonl", 0, 100)
    floe.run("run", both, "--quiet")
    ck1 = checkpoint(floe, "db.evens")
    assert checkpoint(floe, "db.odds") == ck1
    # two more loads that reach db.evens only: it is ahead of db.odds
    only_evens = pipeline(tmp_path / "evens.yaml", src, ["db.evens"])
    write_batch(src / "b.jsonl", 100, 200)
    floe.run("run", only_evens, "--quiet")
    write_batch(src / "c.jsonl", 200, 300)
    floe.run("run", only_evens, "--quiet")
    ck3 = checkpoint(floe, "db.evens")
    assert ck3 > ck1 and checkpoint(floe, "db.odds") == ck1
    assert ids(floe, "db.evens") == list(range(0, 300, 2))

    # db.evens as far as db.odds got; db.odds is behind already: all of it
    p = floe.run("-v", "scan", "db.evens", "--consistent-with", "db.odds", "--columns", "id",
                 "--format", "json")
    assert sorted(json.loads(l)["id"] for l in p.stdout.splitlines()) == list(range(0, 100, 2))
    assert f"pipeline 'two' checkpoint {ck1}" in p.stderr
    assert ids(floe, "db.odds", "--consistent-with", "db.evens") == list(range(1, 100, 2))
    # db.odds catches up in a new checkpoint that db.evens (nothing new for it)
    # does not commit: db.odds is now ahead, and its new snapshot is not
    # known to be consistent with db.evens
    floe.run("run", both, "--quiet")
    ck4 = checkpoint(floe, "db.odds")
    assert ck4 > ck3 and checkpoint(floe, "db.evens") == ck3
    assert ids(floe, "db.odds") == list(range(1, 300, 2))
    assert ids(floe, "db.odds", "--consistent-with", "db.evens") == list(range(1, 100, 2))
    assert ids(floe, "db.evens", "--consistent-with", "db.odds") == list(range(0, 300, 2))
    # explicit checkpoints: each load of db.evens
    cks = sorted(int(s["summary"]["floe.checkpoint-id"]) for s in floe.json_rows("snapshots", "db.evens"))
    assert cks[0] == ck1 and cks[-1] == ck3 and len(cks) == 3
    for ck, hi in zip(cks, (100, 200, 300)):
        assert ids(floe, "db.evens", "--consistent-with", f"db.odds@{ck}") == list(range(0, hi, 2))
    assert ids(floe, "db.odds", "--consistent-with", f"db.evens@{cks[1]}") == list(range(1, 100, 2))

    # errors: a checkpoint not in both tables, not a number, no shared pipeline
    p = floe.run("scan", "db.odds", "--consistent-with", f"db.evens@{ck4}", check=False)
    assert p.returncode == 1
    assert (f"checkpoint {ck4} of pipeline 'two' is not in both tables yet (db.odds is at "
            f"checkpoint {ck4}, db.evens at {ck3})") in p.stderr
    p = floe.run("scan", "db.evens", "--consistent-with", "db.odds@x", check=False)
    assert p.returncode == 2 and "'x' is not a checkpoint id" in p.stderr
    write_batch(tmp_path / "o.jsonl", 0, 10)
    floe.run("ingest", "db.other", tmp_path / "o.jsonl", "--create-schema", "id long, kind string",
             "--quiet")
    p = floe.run("scan", "db.evens", "--consistent-with", "db.other", check=False)
    assert p.returncode == 1 and "db.evens and db.other share no pipeline" in p.stderr
    p = floe.run("scan", "db.evens", "--consistent-with", "db.odds", "--snapshot-id", "1",
                 check=False)
    assert p.returncode == 2 and "does not go with --snapshot-id" in p.stderr
