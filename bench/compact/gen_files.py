#!/usr/bin/env python3
"""Small Parquet files of the 10-column event table (bench/write/README.md),
as a streaming writer leaves them: one file per writer per checkpoint.

    gen_files.py <out dir> <files> <rows per file>

Files are written by pyarrow (zstd, no Iceberg field ids: the tables get a
name mapping from add-files), seeded so every run sees the same data.
"""
import os
import sys

import random

import pyarrow as pa
import pyarrow.parquet as pq

COUNTRIES = [f"country-{i:02d}" for i in range(20)]
TYPES = ["view", "click", "cart", "buy", "search", "login", "logout", "share", "like", "play"]


def batch(rng, start, n):
    r = rng.random
    ids = range(start, start + n)
    return pa.table({
        "event_id": pa.array(ids, pa.int64()),
        "user_id": pa.array([rng.randrange(1_000_000) for _ in ids], pa.int64()),
        "ts": pa.array([1_700_000_000_000_000 + i * 10_000 for i in ids], pa.timestamp("us", tz="UTC")),
        "amount": pa.array([None if r() < 0.05 else r() * 500 for _ in ids], pa.float64()),
        "score": pa.array([r() for _ in ids], pa.float64()),
        "qty": pa.array([None if r() < 0.05 else rng.randrange(1, 10) for _ in ids], pa.int32()),
        "country": pa.array([COUNTRIES[rng.randrange(20)] for _ in ids]),
        "event_type": pa.array([TYPES[rng.randrange(10)] for _ in ids]),
        "session_id": pa.array([f"{rng.getrandbits(128):032x}" for _ in ids]),
        "url": pa.array([f"https://shop.example/p/{rng.randrange(10**8):08d}" for _ in ids]),
    })


def main():
    out, files, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    rng = random.Random(42)
    for i in range(files):
        pq.write_table(batch(rng, i * rows, rows), os.path.join(out, f"part-{i:05d}.parquet"),
                       compression="zstd")


if __name__ == "__main__":
    main()
