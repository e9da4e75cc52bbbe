#!/usr/bin/env python3
"""Monitoring aggregates over `t$files` of bench/scan's table: floe sql, DuckDB, PyIceberg.

Usage: bench/sql/files_agg.py [--floe build/release/floe] [--files 1000000]
                              [--manifests 1000] [--runs 3] [--engines floe,duckdb,pyiceberg]

The table is bench/scan's generated path-based v2 table (bench_scan gen: 1,000,000
data files in 1,000 deflate manifests, Java's metrics for 4 columns, partitioned by
day(ts), region), written once under bench/out/sql-files/wh/db/t so that a hadoop
catalog names it db.t; bench_scan is linked against the release build's libfloe.a.
Each query runs as its own process, rounds interleaved (every engine and query once
per round), and the answers of the three engines are compared:

  floe       floe sql -q --format csv -e '<query over db.t$files>' (release build)
  duckdb     the same SQL over the manifests' Avro (DuckDB's avro extension,
             read_avro of every manifest the manifest list names, live entries):
             DuckDB 1.5's iceberg_metadata() has no file_size_in_bytes or partition
             column, so SQL over the metadata itself is its way to these answers;
             `iceberg_metadata` is timed too on the queries it can answer (count)
  pyiceberg  StaticTable.inspect.files() (a pyarrow table), then pyarrow compute
             group_by/aggregate, all queries in one process: its per-query figure
             is inspect.files() plus that query's aggregate

CPU = user + system of the process (wait4's rusage, every thread), peak RSS =
ru_maxrss. Prints one JSON line per run and a Markdown table of medians. Figures are
recorded in bench/RESULTS.md, never asserted.
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# name -> floe SQL over {t} (db.t$files in floe, the manifests' view in DuckDB)
QUERIES = {
    "totals": "SELECT count(*), sum(file_size_in_bytes), sum(record_count), avg(record_count) FROM {t}",
    "by_partition": "SELECT partition, count(*), sum(record_count) FROM {t} "
                    "GROUP BY partition ORDER BY 3 DESC, 1 LIMIT 10",
    "by_region": "SELECT partition.region, count(*), sum(record_count), sum(file_size_in_bytes) "
                 "FROM {t} GROUP BY 1 ORDER BY 1",
    "by_content": "SELECT content, count(*), sum(file_size_in_bytes) FROM {t} GROUP BY content ORDER BY 1",
    "small_files": "SELECT count(*), sum(file_size_in_bytes) FROM {t} WHERE file_size_in_bytes < 41000",
}


def norm_value(v):
    """Engines print values differently: compare as text of ints and rounded floats."""
    if isinstance(v, dict):
        return tuple(norm_value(x) for x in v.values())
    if isinstance(v, str):
        if v.startswith("{"):
            return norm_value(json.loads(v))
        try:
            return norm_value(int(v))
        except ValueError:
            pass
        try:
            return norm_value(float(v))
        except ValueError:
            return v
    if isinstance(v, float):
        return f"{v:.6f}"
    return str(v)


def norm_rows(rows):
    return [[norm_value(v) for v in r] for r in rows]


def spawn(cmd, cwd=None):
    """Run cmd to completion; return (rc, stdout, stderr, cpu_s, rss_mib)."""
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            if cwd:
                os.chdir(cwd)
            os.dup2(w_out, 1)
            os.dup2(w_err, 2)
            os.close(r_out)
            os.close(r_err)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(w_out)
    os.close(w_err)
    import selectors

    sel = selectors.DefaultSelector()
    bufs = {r_out: bytearray(), r_err: bytearray()}
    for fd in bufs:
        sel.register(fd, selectors.EVENT_READ)
    open_fds = set(bufs)
    while open_fds:
        for key, _ in sel.select():
            chunk = os.read(key.fd, 1 << 16)
            if chunk:
                bufs[key.fd] += chunk
            else:
                sel.unregister(key.fd)
                os.close(key.fd)
                open_fds.discard(key.fd)
    _, status, ru = os.wait4(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    return (rc, bufs[r_out].decode(), bufs[r_err].decode(), ru.ru_utime + ru.ru_stime,
            ru.ru_maxrss / 1024.0)


def build_table(args):
    work = Path(args.work)
    table = work / "wh" / "db" / "t"
    if (table / ".done").exists():
        return table
    lib = Path(args.floe).resolve().parent / "libfloe.a"
    if not lib.exists():
        sys.exit(f"files_agg: {lib} missing: cmake --build --preset release --target floe")
    work.mkdir(parents=True, exist_ok=True)
    gen = work / "bench_scan"
    libs = subprocess.check_output(
        ["pkg-config", "--libs", "libzstd", "snappy", "libdeflate", "liblz4", "libbrotlienc",
         "libbrotlidec", "zlib", "sqlite3", "libpq", "libcurl", "libcrypto", "yaml-0.1",
         "libmicrohttpd", "rdkafka"], text=True).split()
    subprocess.check_call(["cc", "-O2", "-DNDEBUG", "-std=c17", "-D_POSIX_C_SOURCE=200809L",
                           "-D_DEFAULT_SOURCE", f"-I{ROOT}/include", f"-I{ROOT}/src",
                           str(ROOT / "bench/scan/bench_scan.c"), str(lib), *libs, "-lm",
                           "-lpthread", "-ledit", "-o", str(gen)])
    subprocess.run(["rm", "-rf", str(table)], check=True)
    (work / "wh" / "db").mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    subprocess.check_call([str(gen), "gen", str(table), str(args.files), str(args.manifests)])
    print(f"# generated {args.files} files in {args.manifests} manifests: {time.time() - t0:.1f} s",
          file=sys.stderr)
    (table / ".done").touch()
    return table


# ---- the engines' children (run as separate processes) ---------------------------------------


def child_duckdb(meta, query):
    import glob

    import duckdb
    from duckdb_extensions import import_extension

    con = duckdb.connect()
    import_extension("avro", con=con)
    import_extension("iceberg", con=con)
    con.execute("LOAD avro")
    con.execute("LOAD iceberg")
    con.execute("SET threads = 1")
    c0 = time.process_time()
    if query == "iceberg_metadata_count":
        sql = f"SELECT count(*), sum(record_count) FROM iceberg_metadata('{meta}') WHERE status <> 'DELETED'"
    else:
        mlist = glob.glob(str(Path(meta).parent / "snap-*.avro"))[0]
        paths = [r[0] for r in con.execute(f"SELECT manifest_path FROM read_avro('{mlist}')").fetchall()]
        con.execute(f"CREATE VIEW f AS SELECT data_file.* FROM read_avro({paths!r}) WHERE status <> 2")
        sql = QUERIES[query].format(t="f")
    rows = con.execute(sql).fetchall()
    print(json.dumps({"rows": [[v if isinstance(v, (int, float)) or v is None else
                                ({k: str(x) for k, x in v.items()} if isinstance(v, dict) else str(v))
                                for v in r] for r in rows],
                      "query_cpu": time.process_time() - c0}))


def pyiceberg_queries(files):
    import pyarrow as pa
    import pyarrow.compute as pc

    out = {}
    t0 = time.process_time()
    size, rec = files["file_size_in_bytes"], files["record_count"]
    out["totals"] = ([[len(files), pc.sum(size).as_py(), pc.sum(rec).as_py(), pc.mean(rec).as_py()]],
                     time.process_time() - t0)
    t0 = time.process_time()
    part = files["partition"].combine_chunks()
    flat = pa.table({"ts_day": part.field("ts_day"), "region": part.field("region"), "r": rec})
    g = flat.group_by(["ts_day", "region"]).aggregate([("r", "count"), ("r", "sum")])
    g = g.sort_by([("r_sum", "descending"), ("ts_day", "ascending"), ("region", "ascending")]).slice(0, 10)
    out["by_partition"] = ([[{"ts_day": str(d), "region": r}, n, s] for d, r, n, s in
                            zip(g["ts_day"].to_pylist(), g["region"].to_pylist(),
                                g["r_count"].to_pylist(), g["r_sum"].to_pylist())],
                           time.process_time() - t0)
    t0 = time.process_time()
    flat = pa.table({"region": part.field("region"), "r": rec, "size": size})
    g = flat.group_by("region").aggregate([("r", "count"), ("r", "sum"), ("size", "sum")]).sort_by("region")
    out["by_region"] = ([list(r.values()) for r in g.select(["region", "r_count", "r_sum", "size_sum"]).to_pylist()],
                        time.process_time() - t0)
    t0 = time.process_time()
    g = files.group_by("content").aggregate([("file_size_in_bytes", "count"),
                                             ("file_size_in_bytes", "sum")]).sort_by("content")
    out["by_content"] = ([list(r.values()) for r in g.select(
        ["content", "file_size_in_bytes_count", "file_size_in_bytes_sum"]).to_pylist()],
                         time.process_time() - t0)
    t0 = time.process_time()
    small = files.filter(pc.less(size, 41000))
    out["small_files"] = ([[len(small), pc.sum(small["file_size_in_bytes"]).as_py()]],
                          time.process_time() - t0)
    return out


def child_pyiceberg(meta):
    from pyiceberg.table import StaticTable

    c0, w0 = time.process_time(), time.perf_counter()
    tbl = StaticTable.from_metadata(meta)
    files = tbl.inspect.files()
    inspect_cpu, inspect_wall = time.process_time() - c0, time.perf_counter() - w0
    res = pyiceberg_queries(files)
    print(json.dumps({"inspect_cpu": inspect_cpu, "inspect_wall": inspect_wall,
                      "queries": {k: {"rows": v[0], "cpu": v[1]} for k, v in res.items()}}))


# ---- the driver ------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", default=str(ROOT / "build/release/floe"))
    ap.add_argument("--files", type=int, default=1000000)
    ap.add_argument("--manifests", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--floe-before", default=None,
                    help="another floe binary (an older build) to run beside --floe")
    ap.add_argument("--engines", default="floe,duckdb,pyiceberg")
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--work", default=None)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--meta", help=argparse.SUPPRESS)
    ap.add_argument("--query", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "duckdb":
        return child_duckdb(args.meta, args.query)
    if args.child == "pyiceberg":
        return child_pyiceberg(args.meta)
    args.work = args.work or str(ROOT / f"bench/out/sql-files-{args.files}-{args.manifests}")
    table = build_table(args)
    meta = str(table / "metadata/v1.metadata.json")
    wh = table.parent.parent
    engines = args.engines.split(",")
    queries = args.queries.split(",")
    head = (f"CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='{wh}');"
            " USE CATALOG c; ")
    py = sys.executable
    me = str(Path(__file__).resolve())
    results = {}  # (engine, query) -> list of (cpu, rss)
    answers = {}  # (engine, query) -> normalised rows

    def record(engine, query, cpu, rss, rows, extra=None):
        results.setdefault((engine, query), []).append((cpu, rss))
        if rows is not None:
            answers.setdefault((engine, query), norm_rows(rows))
        print(json.dumps({"engine": engine, "query": query, "cpu_seconds": round(cpu, 3),
                          "peak_rss_mib": round(rss, 1), "load": os.getloadavg()[0], **(extra or {})}),
              flush=True)

    for rnd in range(args.runs):
        for q in queries:
            if "floe" in engines:
                rc, out, err, cpu, rss = spawn([args.floe, "sql", "-q", "--format", "csv", "-e",
                                                head + QUERIES[q].format(t="db.t$files") + ";"])
                if rc:
                    sys.exit(f"floe failed on {q}: {err}")
                rows = list(csv.reader(io.StringIO(out)))[1:]
                record("floe", q, cpu, rss, rows)
                if args.floe_before:
                    rc, out, err, cpu, rss = spawn([args.floe_before, "sql", "-q", "--format", "csv",
                                                    "-e", head + QUERIES[q].format(t="db.t$files") + ";"])
                    if rc:
                        sys.exit(f"floe (before) failed on {q}: {err}")
                    record("floe-before", q, cpu, rss, list(csv.reader(io.StringIO(out)))[1:])
            if "duckdb" in engines:
                rc, out, err, cpu, rss = spawn([py, me, "--child", "duckdb", "--meta", meta, "--query", q])
                if rc:
                    sys.exit(f"duckdb failed on {q}: {err}")
                d = json.loads(out)
                record("duckdb", q, cpu, rss, d["rows"], {"query_cpu": round(d["query_cpu"], 3)})
        if "duckdb" in engines:
            rc, out, err, cpu, rss = spawn([py, me, "--child", "duckdb", "--meta", meta,
                                            "--query", "iceberg_metadata_count"])
            if rc:
                sys.exit(f"duckdb iceberg_metadata failed: {err}")
            d = json.loads(out)
            record("duckdb-iceberg_metadata", "count", cpu, rss, d["rows"],
                   {"query_cpu": round(d["query_cpu"], 3)})
        if "pyiceberg" in engines:
            rc, out, err, cpu, rss = spawn([py, me, "--child", "pyiceberg", "--meta", meta])
            if rc:
                sys.exit(f"pyiceberg failed: {err}")
            d = json.loads(out)
            record("pyiceberg", "inspect.files()+all", cpu, rss, None,
                   {"inspect_cpu": round(d["inspect_cpu"], 3), "inspect_wall": round(d["inspect_wall"], 3)})
            for q in queries:
                qd = d["queries"][q]
                results.setdefault(("pyiceberg-agg", q), []).append((qd["cpu"], rss))
                answers.setdefault(("pyiceberg", q), norm_rows(qd["rows"]))
            results.setdefault(("pyiceberg-inspect", "-"), []).append((d["inspect_cpu"], rss))

    # the answers agree
    bad = 0
    for q in queries:
        ref = answers.get(("floe", q))
        for e in ("floe-before", "duckdb", "pyiceberg"):
            got = answers.get((e, q))
            if ref is not None and got is not None and got != ref:
                print(f"MISMATCH {q}: floe {ref[:3]} vs {e} {got[:3]}", file=sys.stderr)
                bad += 1
    if ("floe", "totals") in answers and ("duckdb-iceberg_metadata", "count") in answers:
        t = answers[("floe", "totals")][0]
        if answers[("duckdb-iceberg_metadata", "count")][0] != [t[0], t[2]]:
            print("MISMATCH iceberg_metadata count", file=sys.stderr)
            bad += 1

    def med(xs):
        return statistics.median(xs)

    print(f"\n{args.files} files, {args.manifests} manifests; medians of {args.runs} runs "
          f"(load average now {os.getloadavg()[0]:.1f}); answers {'agree' if not bad else 'DIFFER'}\n")
    if args.floe_before:
        print("| query | floe before: CPU s | peak RSS | floe after: CPU s | peak RSS |")
        print("|---|---:|---:|---:|---:|")
        for q in queries:
            b, a = results.get(("floe-before", q)), results.get(("floe", q))
            print(f"| `{q}` | {med([x[0] for x in b]):.2f} | {med([x[1] for x in b]):.0f} MiB | "
                  f"{med([x[0] for x in a]):.2f} | {med([x[1] for x in a]):.0f} MiB |")
        print()
    print("| query | floe CPU s | floe peak RSS | DuckDB CPU s | DuckDB peak RSS | PyIceberg CPU s "
          "(inspect + aggregate) | PyIceberg peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    insp = results.get(("pyiceberg-inspect", "-"))
    for q in queries:
        cells = [f"`{q}`"]
        for e in ("floe", "duckdb"):
            r = results.get((e, q))
            cells += [f"{med([x[0] for x in r]):.2f}", f"{med([x[1] for x in r]):.0f} MiB"] if r else ["—", "—"]
        r = results.get(("pyiceberg-agg", q))
        if r and insp:
            cells += [f"{med([x[0] for x in insp]):.1f} + {med([x[0] for x in r]):.3f}",
                      f"{med([x[1] for x in r]):.0f} MiB"]
        else:
            cells += ["—", "—"]
        print("| " + " | ".join(cells) + " |")
    r = results.get(("duckdb-iceberg_metadata", "count"))
    if r:
        print(f"\nDuckDB iceberg_metadata count(*), sum(record_count): {med([x[0] for x in r]):.2f} CPU s, "
              f"{med([x[1] for x in r]):.0f} MiB")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
