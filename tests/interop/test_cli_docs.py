"""The command line as a new user meets it (issue 18): every command and
subcommand answers --help, and every example in the --help texts and in the
README's tour runs (doc-tests), so none of them can rot.

The examples run with `floe` on the PATH in a sandbox folder (the embedded
default catalog in ./warehouse) that holds what they name:

- table db.events (id long not null, ts timestamptz, kind string,
  amount decimal(10, 2); day(ts)) loaded from events.jsonl;
- events.jsonl, orders.csv, app.log (JSON lines), pipeline.yaml (a bounded
  generator into demo.events), schema.avsc + records.jsonl (avro write),
  events.parquet (the table scanned to Parquet);
- for the README: landing/2026-11-30/*.jsonl and exports/*.parquet.

Examples that never end by themselves (--follow, tail -f) run for a few
seconds and get SIGTERM, which ends a floe load cleanly (exit 0). The README's
fixed metrics port is replaced by a free one; its testdata path by
$FLOE_TESTDATA.
"""
import json
import os
import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, floe_bin

EVENTS_SCHEMA = "id long not null, ts timestamptz, kind string, amount decimal(10, 2)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_floe(*args, cwd=None, check=True):
    p = subprocess.run([floe_bin(), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"floe {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return p


def all_commands():
    return run_floe("help", "--list").stdout.split()


def command_names():
    return [line for line in run_floe("help", "--list").stdout.splitlines() if line]


def examples_of(help_text: str):
    out, on = [], False
    for line in help_text.splitlines():
        if line == "Examples:":
            on = True
        elif on and line.startswith("  floe "):
            out.append(line.strip())
        elif on and not line.startswith("  "):
            on = False
    return out


def write_events(path: Path, n: int, start: int = 0):
    kinds = ("view", "click", "buy")
    with path.open("w") as f:
        for i in range(start, start + n):
            f.write(json.dumps({"id": i, "ts": f"2026-11-{28 + i % 3:02d}T{i % 24:02d}:00:00Z",
                                "kind": kinds[i % 3], "amount": f"{i % 50}.25"}) + "\n")


@pytest.fixture
def sandbox(tmp_path):
    """A folder with floe on the PATH and the files the examples name."""
    box = tmp_path / "box"
    box.mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "floe").symlink_to(floe_bin())
    write_events(box / "events.jsonl", 300)
    (box / "orders.csv").write_text("id,customer,total\n1,ann,12.5\n2,bob,7.25\n")
    (box / "app.log").write_text(
        "".join(json.dumps({"ts": "2026-11-30T10:00:0%dZ" % i, "level": "info", "msg": f"m{i}"}) + "\n"
                for i in range(5)))
    (box / "pipeline.yaml").write_text(
        "pipeline.name: doc-demo\n"
        "execution.checkpointing.interval: 1s\n"
        "sources:\n"
        "  - name: gen\n"
        "    type: generator\n"
        "    number-of-rows: 2000\n"
        "    fields:\n"
        "      event_id: {kind: sequence, start: 1}\n"
        "      ts: {max-past: 3d}\n"
        "tables:\n"
        "  - name: demo.events\n"
        "    schema: \"event_id long not null, ts timestamptz\"\n"
        "    partition-by: \"day(ts)\"\n")
    (box / "job.sql").write_text(
        "CREATE CATALOG lake WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='lake');\n"
        "USE CATALOG lake;\n"
        "CREATE DATABASE IF NOT EXISTS db;\n"
        "CREATE TABLE IF NOT EXISTS db.clicks (id BIGINT NOT NULL, region STRING) PARTITIONED BY (region);\n"
        "CREATE TEMPORARY TABLE gen (id BIGINT NOT NULL, region STRING)\n"
        "  WITH ('connector'='datagen', 'number-of-rows'='1000');\n"
        "SET 'execution.checkpointing.interval' = '60s';\n"
        "SET 'parallelism.default' = '4';\n"
        "INSERT INTO db.clicks SELECT id, region FROM gen;\n")
    (box / "schema.avsc").write_text(json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}]}))
    (box / "records.jsonl").write_text('{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n')
    run_floe("ingest", "db.events", "events.jsonl", "--create-schema", EVENTS_SCHEMA,
             "--partition-by", "day(ts)", "--quiet", cwd=box)
    # one day: add-files takes files of one partition
    run_floe("scan", "db.events", "--where", "ts >= '2026-11-30T00:00:00Z'", "--format", "parquet",
             "--output", "events.parquet", cwd=box)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    return box, env


def run_example(cmd: str, box: Path, env: dict, prelude: str = ""):
    endless = "--follow" in cmd or "tail -f" in cmd
    p = subprocess.Popen(["bash", "-c", prelude + cmd], cwd=box, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=4 if endless else 120)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        assert endless, f"example did not finish: {cmd}"
        os.killpg(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        rc = 0 if p.returncode in (0, -15, 143) else p.returncode
        # the floe in the pipeline exits 0 on SIGTERM; bash reports its own end
        assert "floe:" not in err or "error" not in err, err
    # doctor and plan exit 1 or 2 for what they find (a warning, a critical finding)
    ok = (0, 1, 2) if re.match(r"floe (doctor|plan) ", cmd) else (0,)
    assert rc in ok, f"example failed ({rc}): {cmd}\n{err}{out[-2000:]}"
    return out, err


def test_help_for_every_command_and_subcommand():
    """`floe <command> [sub] --help` exits 0 with its usage line, for every
    entry of the command table; -h, `floe help <command>` and global options
    after the command say the same."""
    names = command_names()
    assert {"table create", "namespace list", "avro cat", "parquet meta", "ingest", "maintain"} <= set(names)
    for name in names:
        p = run_floe(*name.split(), "--help")
        assert p.stdout.startswith(f"usage: floe {name}"), (name, p.stdout[:200])
        assert p.stderr == ""
        # doctor, plan and sql print their own help (no examples in it yet)
        if " " not in name and name not in ("help", "completion", "doctor", "plan", "sql"):
            assert "Commands:" in p.stdout or "Examples:" in p.stdout, name
    # -h, help <cmd>, and --help after arguments and global options
    assert run_floe("table", "show", "db.x", "-h").stdout.startswith("usage: floe table show")
    assert run_floe("help", "table", "create").stdout == run_floe("table", "create", "--help").stdout
    assert run_floe("-v", "scan", "t", "--dir", "/nonexistent", "--help").stdout.startswith("usage: floe scan")
    top = run_floe("--help").stdout
    for word in ("<command> --help", "--version", "namespace", "completion"):
        assert word in top
    create = run_floe("table", "create", "--help").stdout
    for grammar in ("Column list:", "Partition spec:", "Sort order:", "bucket(N, col)", "nulls last"):
        assert grammar in create


def test_version_names_commit_and_libraries():
    out = run_floe("--version").stdout
    assert re.match(r"floe \d+\.\d+\.\d+ \(commit [0-9a-f]{7,}(-dirty)?\)\n", out), out
    for lib in ("zstd", "zlib", "sqlite", "libpq", "libyaml", "libmicrohttpd"):
        assert lib in out


def test_global_options_anywhere(tmp_path):
    run_floe("namespace", "create", "db", "--dir", tmp_path)
    p = run_floe("table", "list", "-v", "--dir", tmp_path)
    assert p.returncode == 0
    assert (tmp_path / "warehouse" / "catalog.db").exists()
    p = run_floe("--dir", tmp_path, "--quiet", "namespace", "create", "db2")
    assert p.stdout == ""
    p = run_floe("table", "create", "db.q", "--schema", "id long", "-q", "--dir", tmp_path)
    assert p.stdout == ""


def test_completion_scripts_load():
    bash = run_floe("completion", "bash").stdout
    r = subprocess.run(["bash", "-c", bash + "\nCOMP_WORDS=(floe table cr); COMP_CWORD=2; _floe; "
                        "echo ${COMPREPLY[@]}\nCOMP_WORDS=(floe scan t --wh); COMP_CWORD=3; _floe; "
                        "echo ${COMPREPLY[@]}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["create", "--where"], r.stdout
    zsh = run_floe("completion", "zsh").stdout
    assert zsh.startswith("#compdef floe")


def test_help_examples_run(sandbox):
    """Every example of every --help text runs, in the table's order."""
    box, env = sandbox
    n = 0
    for name in command_names():
        for cmd in examples_of(run_floe(*name.split(), "--help").stdout):
            run_example(cmd, box, env)
            n += 1
    assert n >= 40


def readme_commands():
    """The shell lines of the README's tour (from "## A quick tour" up to
    "## Building by hand"), continuation lines joined; variable assignments
    kept as a prelude for the lines after them."""
    text = (ROOT / "README.md").read_text()
    tour = text[text.index("## A quick tour"):text.index("## Building by hand")]
    cmds = []
    for block in re.findall(r"```sh\n(.*?)```", tour, re.S):
        prelude = ""
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if re.match(r"^[a-z_]+=\S+$", line):
                prelude += line + "\n"
                continue
            cmds.append((prelude, line))
    return cmds


def test_readme_examples_run(sandbox, tmp_path):
    box, env = sandbox
    # the README's own inputs: JSON lines in landing/, Parquet files in exports/
    (box / "landing" / "2026-11-30").mkdir(parents=True)
    write_events(box / "landing" / "2026-11-30" / "part-0.jsonl", 100, start=1000)
    (box / "exports").mkdir()
    other = tmp_path / "other"
    run_floe("--dir", other, "namespace", "create", "db")
    run_floe("--dir", other, "table", "create", "db.events", "--schema",
             EVENTS_SCHEMA + ", tags list<string>")
    run_floe("--dir", other, "ingest", "db.events", box / "events.jsonl", "--quiet")
    for day in ("28", "29"):
        run_floe("--dir", other, "scan", "db.events", "--where",
                 f"ts >= '2026-11-{day}T00:00:00Z' AND ts < '2026-11-{day}T23:59:59Z'",
                 "--format", "parquet", "--output", box / "exports" / f"part-{day}.parquet")
    # the README's catalog starts empty (its first line creates the namespace)
    import shutil
    shutil.rmtree(box / "warehouse")
    testdata = os.environ.get("FLOE_TESTDATA", str(ROOT.parent / "shared" / "testdata"))
    port = str(_free_port())
    cmds = readme_commands()
    assert len(cmds) >= 30
    for prelude, cmd in cmds:
        prelude = prelude.replace("../shared/testdata", testdata)
        run_example(cmd.replace("9249", port), box, env, prelude)
