"""Plan the benchmark table with PyIceberg (plan_files) and DuckDB (iceberg
extension); one JSON line per (engine, filter), like bench_scan's output.

    others.py <metadata.json> pyiceberg|duckdb

The data files do not exist, so every DuckDB query is one that needs no data
file: count(*) of iceberg_metadata (every entry decoded) and iceberg_scan with
filters that match no file. PyIceberg's plan_files opens no data file at all.
"""
import json
import sys
import time

FILTERS = [
    # (name, PyIceberg row_filter, DuckDB WHERE) — floe's --where text is the name
    ("-", None, None),
    ("region = 'eu'", "region == 'eu'", None),
    ("region = 'zz'", "region == 'zz'", "region = 'zz'"),
    ("ts >= '2022-01-10' AND ts < '2022-01-11'",
     "ts >= '2022-01-10T00:00:00+00:00' and ts < '2022-01-11T00:00:00+00:00'", None),
    ("ts < '2000-01-01'", "ts < '2000-01-01T00:00:00+00:00'",
     "ts < TIMESTAMPTZ '2000-01-01 00:00:00+00'"),
    ("id = 123456", "id == 123456", None),
]


def emit(**kw):
    print(json.dumps(kw), flush=True)


def pyiceberg(meta):
    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(meta)
    for name, pf, _ in FILTERS:
        t0, c0 = time.perf_counter(), time.process_time()
        sc = t.scan(row_filter=pf) if pf else t.scan()
        n = sum(1 for _ in sc.plan_files())
        emit(engine="pyiceberg", filter=name, seconds=round(time.perf_counter() - t0, 3),
             cpu_seconds=round(time.process_time() - c0, 3), files=n)


def duckdb_side(meta, threads):
    import duckdb
    from duckdb_extensions import import_extension

    con = duckdb.connect()
    import_extension("iceberg", con=con)
    con.execute("LOAD iceberg")
    con.execute(f"SET threads = {threads}")
    queries = [("-", f"SELECT count(*) FROM iceberg_metadata('{meta}')")]
    queries += [(name, f"SELECT count(*) FROM iceberg_scan('{meta}') WHERE {w}")
                for name, _, w in FILTERS if w]
    for name, q in queries:
        t0, c0 = time.perf_counter(), time.process_time()
        n = con.execute(q).fetchone()[0]
        emit(engine=f"duckdb-{duckdb.__version__}", threads=threads, filter=name,
             seconds=round(time.perf_counter() - t0, 3),
             cpu_seconds=round(time.process_time() - c0, 3), rows=n)


if __name__ == "__main__":
    if sys.argv[2] == "pyiceberg":
        pyiceberg(sys.argv[1])
    else:
        duckdb_side(sys.argv[1], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
