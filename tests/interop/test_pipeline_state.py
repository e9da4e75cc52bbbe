"""Pipelines that held snapshots forever (issue 18, deliver 6): every
one-shot `floe ingest` is a pipeline of its own, and expiry kept each one's
newest snapshot (its offsets), so daily loads kept every file on disk.
Now a completed load's state is held for history.expire.keep-pipeline-state-for
(a re-run within it adds nothing), `floe pipelines list` shows what is held,
and `floe pipelines forget` lets go of one."""
import json


def test_thirty_loads_compaction_and_expiry_leave_only_live_files(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.daily", "--schema", "id long, day int")
    files = []
    for d in range(30):
        f = tmp_path / f"day-{d:02d}.jsonl"
        f.write_text("".join(json.dumps({"id": d * 10 + i, "day": d}) + "\n" for i in range(5)))
        floe.run("ingest", "db.daily", f, "--quiet")
        files.append(f)
    states = floe.json_rows("pipelines", "list", "db.daily")
    assert len(states) == 30
    assert all(s["state"] == "complete" and s["held"] is True and s["held_until"].endswith("Z") for s in states)

    # within the retention a re-run adds nothing
    p = floe.run("ingest", "db.daily", files[0])
    assert "nothing new" in p.stderr, p.stderr
    assert floe.run("scan", "db.daily", "--count").stdout.strip() == "150"

    # expiry says what it holds and why
    plan = json.loads(floe.run("maintain", "db.daily", "--dry-run", "--steps", "expire", "--older-than", "0s",
                               "--format", "json").stdout)
    assert plan["expire"]["snapshots_held_for_pipelines"] == 29  # the 30th is the current snapshot
    assert "29 held as pipeline state" in floe.run("maintain", "db.daily", "--dry-run", "--steps", "expire",
                                                    "--older-than", "0s").stdout

    # past the retention: compaction and expiry leave only the live files
    floe.run("table", "set", "db.daily", "history.expire.keep-pipeline-state-for=0s")
    floe.run("maintain", "db.daily", "--steps", "compact,expire", "--min-input-files", "2",
             "--older-than", "0s", "--retain-last", "1")
    live = {f["file_path"].removeprefix("file://") for f in floe.json_rows("files", "db.daily")}
    on_disk = {str(p) for p in (floe.warehouse / "db" / "daily" / "data").rglob("*.parquet")}
    assert on_disk == live and len(live) == 1, (len(on_disk), len(live))
    assert floe.run("scan", "db.daily", "--count").stdout.strip() == "150"
    assert floe.json_rows("pipelines", "list", "db.daily") == []


def test_forget_lets_a_pipeline_start_over(floe, tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"id": 1}\n{"id": 2}\n')
    floe.run("ingest", "db.t", f, "--create-schema", "id long", "--pipeline-id", "daily", "--quiet")
    (s,) = floe.json_rows("pipelines", "list", "db.t")
    assert s["pipeline_id"] == "daily" and s["last_checkpoint"] == 1 and s["state"] == "complete"
    assert s["source_offsets"] == {str(f): 20}
    out = floe.run("pipelines", "forget", "db.t", "daily").stdout
    assert out.startswith("forgot pipeline daily of db.t")
    assert floe.json_rows("pipelines", "list", "db.t") == []
    # a re-run starts from nothing (and is not fenced by its forgotten commit)
    floe.run("ingest", "db.t", f, "--pipeline-id", "daily", "--quiet")
    assert floe.run("scan", "db.t", "--count").stdout.strip() == "4"
    p = floe.run("pipelines", "forget", "db.t", "nope", check=False)
    assert p.returncode == 1 and "no pipeline 'nope'" in p.stderr
