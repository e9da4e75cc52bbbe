"""floe on S3 against floe on local disk, and PyIceberg on the same S3 server.

    bench_s3.py FLOE S3_TOOL OUT RECORDS RUNS

The data is bench/ingest's (gen_events.py: ~300-byte web events, a 4-way
day-partitioned zstd table, four writer tasks with HASH distribution), so the
local-disk side is the same job as bench/ingest's floe side. The S3 server is
the tests' (tests/interop/s3_server.py's RgwS3: Ceph's RADOS Gateway on a
one-node cluster, one monitor and one memstore OSD, SigV4 checked on every
request) on 127.0.0.1; the server's CPU is the three daemons'.

Each run, in turn: floe ingest to a local warehouse, to the S3 warehouse,
PyIceberg's append to the S3 warehouse; then floe scan (CSV to /dev/null) of
the local and the S3 table, PyIceberg's to_arrow of its S3 table; then one
multipart upload of a large file through the S3 FileIO (tests/tools/s3_tool
put) at two part sizes. Every side's process CPU (user + sys), wall time and peak RSS (from /usr/bin/time) are taken, with the S3 server's CPU over the same
interval and the machine's load average; floe's S3 requests come from
FLOE_TEST_HTTP_LOG. One JSON line per measurement in OUT/results.jsonl, then
the medians as Markdown (report()).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "interop"))
sys.path.insert(0, str(ROOT / "bench" / "ingest"))

SCHEMA = ("event_id long not null, ts timestamptz, user_id long, session string, kind string, "
          "page string, referrer string, country string, device string, amount decimal(10, 2), "
          "latency_ms double, tags list<string>")
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pids):
    """user + system seconds of running processes (all their threads)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def load():
    return float(open("/proc/loadavg").read().split()[0])


def measure(side, run, cmd, env, server_pid, stdout=subprocess.DEVNULL, **extra):
    """cmd under /usr/bin/time (a child of this Python process would report
    the parent's resident set as its own peak)"""
    s0 = proc_cpu(server_pid)
    la = load()
    tf = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-s3-time-{os.getpid()}"
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(tf)] + cmd, env=env,
                       stdout=stdout, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"{side}: {cmd} failed ({p.returncode}):\n{p.stderr.decode()[-3000:]}")
    _, user, sys_s, rss_kb = tf.read_text().split()[-4:]
    tf.unlink()
    r = {"side": side, "run": run, "wall_s": round(wall, 3),
         "cpu_s": round(float(user) + float(sys_s), 3), "rss_mb": round(int(rss_kb) / 1024, 1),
         "server_cpu_s": round(proc_cpu(server_pid) - s0, 3), "load": la}
    r.update(extra)
    return r


def http_counts(log):
    """requests by method and by kind of file, from FLOE_TEST_HTTP_LOG."""
    c = Counter()
    for line in log.read_text().splitlines():
        method, url, status = line.split(" ")
        path = url.split("?", 1)[0]
        kind = ("data" if "/data/" in path else "lease" if ".floe-lease-" in path
                else "metadata" if path.endswith(".metadata.json") else "avro")
        c[f"{method} {kind}"] += 1
        c["all"] += 1
        if status[0] != "2":
            c["non-2xx"] += 1
    return dict(c)


def table_files(cat, ident):
    tbl = cat.load_table(ident)
    files = list(tbl.scan().plan_files())
    return tbl, len(files), sum(t.file.file_size_in_bytes for t in files), \
        sum(t.file.record_count for t in files)


def main():
    floe, tool, out, n, runs = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), \
        int(sys.argv[5])
    from pyiceberg.catalog.sql import SqlCatalog
    from s3_server import RgwS3

    out.mkdir(parents=True, exist_ok=True)
    data = out / f"events-{n}.jsonl"
    if not data.exists():
        subprocess.run([sys.executable, str(ROOT / "bench/ingest/gen_events.py"), str(n), str(data)],
                       check=True)
    nbytes = data.stat().st_size
    shutil.rmtree(out / "rgw", ignore_errors=True)
    s3 = RgwS3(out / "rgw")
    s3.bucket("floe")
    env = s3.env()
    pid = s3.pids
    results = []

    def emit(r):
        results.append(r)
        print(json.dumps(r), flush=True)

    ingest_args = ["ingest", "bench.events", str(data), "--create-schema", SCHEMA,
                   "--partition-by", "day(ts)", "--parallelism", "4", "--distribution", "hash",
                   "--property", "write.parquet.compression-codec=zstd", "--quiet"]
    try:
        for run in range(1, runs + 1):
            work = out / f"run-{run}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            wh = {"local": f"file://{work}/wh", "s3": f"s3://floe/bench/run-{run}"}
            cats = {}
            for side in ("local", "s3"):
                cat_uri = f"sqlite:///{work}/{side}.db"
                base = [floe, "--catalog-uri", cat_uri, "--warehouse", wh[side]]
                subprocess.run(base + ["namespace", "create", "bench"], env=env, check=True,
                               capture_output=True)
                e = dict(env)
                log = work / f"http-{side}-ingest.log"
                e["FLOE_TEST_HTTP_LOG"] = str(log)
                r = measure(f"floe-{side} ingest", run, base + ingest_args, e, pid,
                            records=n, bytes=nbytes)
                cats[side] = SqlCatalog("default", uri=cat_uri, warehouse=wh[side],
                                        **s3.pyiceberg_props())
                _, files, fbytes, recs = table_files(cats[side], "bench.events")
                assert recs == n, (side, recs, n)
                r.update(files=files, file_bytes=fbytes)
                if side == "s3":
                    r["requests"] = http_counts(log)
                emit(r)
            # PyIceberg's append on the same server
            py_wh = f"s3://floe/bench/py-{run}"
            py_uri = f"sqlite:///{work}/py.db"
            emit(measure("pyiceberg-s3 append", run,
                         [sys.executable, str(Path(__file__).parent / "pyiceberg_side.py"), "write",
                          py_uri, py_wh, json.dumps(s3.pyiceberg_props()), str(data)], env, pid,
                         records=n, bytes=nbytes))
            for side in ("local", "s3"):
                _, files, fbytes, _ = table_files(cats[side], "bench.events")
                e = dict(env)
                log = work / f"http-{side}-scan.log"
                e["FLOE_TEST_HTTP_LOG"] = str(log)
                r = measure(f"floe-{side} scan", run,
                            [floe, "--catalog-uri", f"sqlite:///{work}/{side}.db", "--warehouse",
                             wh[side], "scan", "bench.events", "--format", "csv"], e, pid,
                            records=n, file_bytes=fbytes, files=files)
                if side == "s3":
                    r["requests"] = http_counts(log)
                emit(r)
            pycat = SqlCatalog("py", uri=py_uri, warehouse=py_wh, **s3.pyiceberg_props())
            _, files, fbytes, recs = table_files(pycat, "bench.events")
            assert recs == n, recs
            emit(measure("pyiceberg-s3 scan", run,
                         [sys.executable, str(Path(__file__).parent / "pyiceberg_side.py"), "read",
                          py_uri, py_wh, json.dumps(s3.pyiceberg_props())], env, pid,
                         records=n, file_bytes=fbytes, files=files))
            # memory of one multipart upload of a large file, at two part sizes
            for part_mib in (8, 32):
                mib = 256
                emit(measure(f"multipart {mib} MiB, {part_mib} MiB parts", run,
                             [tool, "put", f"s3://floe/bench/big-{run}-{part_mib}.bin", str(mib),
                              f"s3.multipart.part-size-bytes={part_mib << 20}"], env, pid,
                             bytes=mib << 20, part_bytes=part_mib << 20))
                s3.client().delete_object(Bucket="floe", Key=f"bench/big-{run}-{part_mib}.bin")
    finally:
        s3.stop()
    with open(out / "results.jsonl", "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    report(results)


def report(results):
    by = defaultdict(list)
    for r in results:
        by[r["side"]].append(r)
    med = statistics.median

    def m(side, key):
        return med([r[key] for r in by[side]])

    print(f"\n{len(by[next(iter(by))])} interleaved runs; load average "
          f"{min(r['load'] for r in results):.1f}–{max(r['load'] for r in results):.1f}\n")
    print("| side | records/s per core | MB/s per core | CPU s | wall s | MB/s wall | S3 server CPU s "
          "| peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for side in by:
        if side.startswith("multipart"):
            continue
        cpu, wall = m(side, "cpu_s"), m(side, "wall_s")
        recs = by[side][0]["records"]
        b = by[side][0].get("bytes") or by[side][0]["file_bytes"]
        print(f"| {side} | {recs / cpu / 1000:.0f}K | {b / cpu / 1e6:.0f} | {cpu:.2f} | {wall:.2f} | "
              f"{b / wall / 1e6:.0f} | {m(side, 'server_cpu_s'):.2f} | {m(side, 'rss_mb'):.0f} MB |")
    print("\n(ingest MB: the JSON input; scan MB: the Parquet files read)\n")
    for side in by:
        if not side.startswith("multipart"):
            continue
        print(f"- {side}: peak RSS {m(side, 'rss_mb'):.0f} MB (median), CPU {m(side, 'cpu_s'):.2f} s, "
              f"wall {m(side, 'wall_s'):.2f} s")
    for side in ("floe-s3 ingest", "floe-s3 scan"):
        r = by[side][0]
        print(f"- {side} requests (run 1, {r['files']} data files): {json.dumps(r['requests'])}")


if __name__ == "__main__":
    main()
