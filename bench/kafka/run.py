#!/usr/bin/env python3
"""Kafka -> Iceberg with floe (one process), on one local Apache Kafka broker
(tests/kafka/broker.py, KRaft, loopback).

  throughput  N ~300-byte JSON records already in a 6-partition topic;
              `floe run` with scan.bounded.mode latest-offset reads them all:
              records per CPU second of the floe process and its peak RSS
              (GNU time).
  latency     records produced at a steady rate while `floe run` commits
              every second: per record, the commit time of the snapshot that
              made it visible minus its produce time (p50, p99).
  kills       K SIGKILLs at random while the producer writes N records, then
              a bounded run: every record exactly once (bench-size version of
              tests/interop/test_kafka.py::test_kafka_sigkill_exactly_once).
  peers       (only with --only peers) the JVM peers side by side on one topic
              of N records: floe `run` (as in throughput), Flink 1.20's
              KafkaSource + Iceberg's FlinkSink (bench/peers/flink, kafka mode:
              same schema, unpartitioned, zstd 3, distribution none, 10 s
              checkpoints, parallelism 2, bounded at the latest offsets) and
              the Iceberg Kafka Connect sink (bench/peers/kafka_connect.py,
              standalone worker, 2 tasks, 10 s commits); --runs interleaved runs
              (floe, Flink, Connect, floe, ...), medians; CPU seconds and peak
              RSS of each process; JVM start-up apart (each side on a
              1,000-record topic); the 1-minute load average at each run.

usage: bench/kafka/run.py [--records 10000000] [--latency-seconds 30]
                          [--kill-records 1000000 --kills 20] [--floe build/release/floe]
       bench/kafka/run.py --only peers --records 2000000 [--runs 3] [--peers flink,connect]
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "kafka"))
from broker import Broker  # noqa: E402

PAD = "x" * 200


TEMPLATE = ('{"id":%d,"ts_ms":%d,"user":"user-%d","kind":"click","amount":%d.%d,"pad":"' + PAD + '"}').encode()


def record(i, ts_ms):
    return TEMPLATE % (i, ts_ms, i % 100000, (i % 1000) // 10, i % 10)


def produce(b, topic, start, n, rate=0):
    pr = b.producer(**{"linger.ms": 20, "batch.num.messages": 10000, "queue.buffering.max.messages": 500000})
    t0 = time.time()
    now = int(t0 * 1000)
    for i in range(start, start + n):
        if (i - start) % 100 == 0:
            now = int(time.time() * 1000)
        if rate and (i - start) % 1000 == 0:
            ahead = (i - start) / rate - (time.time() - t0)
            if ahead > 0:
                time.sleep(ahead)
        while True:
            try:
                pr.produce(topic, record(i, now), key=b"%d" % i)
                break
            except BufferError:
                pr.poll(0.01)
        if i % 10000 == 0:
            pr.poll(0)
    pr.flush(300)


def pipeline(path, name, b, topic, bounded, interval, table, parallelism=2, props=None):
    src = {"name": "k", "type": "kafka", "topic": topic, "properties.bootstrap.servers": b.bootstrap,
           "scan.startup.mode": "earliest-offset", "properties.session.timeout.ms": "3000",
           "properties.heartbeat.interval.ms": "1000"}
    src.update({f"properties.{k}": v for k, v in (props or {}).items()})
    if bounded:
        src["scan.bounded.mode"] = "latest-offset"
    doc = {"pipeline.name": name, "execution.checkpointing.interval": interval,
           "parallelism.default": parallelism, "sources": [src],
           "tables": [{"name": table, "schema": "id long not null, ts_ms long, user string, kind string, "
                                                "amount double, pad string"}]}
    path.write_text(json.dumps(doc))
    return path


def timed_run(floe, d, cfg):
    out = d / "time.txt"
    p = subprocess.run(["/usr/bin/time", "-v", "-o", str(out), floe, "--dir", str(d), "run", str(cfg)],
                       capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(p.stderr)
    t = out.read_text()

    def field(name):
        for line in t.splitlines():
            if line.strip().startswith(name):
                return line.rsplit(": ", 1)[1].strip()  # "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:13.42"
        return "0"
    cpu = float(field("User time")) + float(field("System time"))
    wall = field("Elapsed (wall clock)")
    rss_kb = int(field("Maximum resident set size"))
    return cpu, wall, rss_kb, p.stderr.strip().splitlines()[-1]


def catalog(d):
    from pyiceberg.catalog.sql import SqlCatalog
    return SqlCatalog("default", uri=f"sqlite:///{d}/warehouse/catalog.db", warehouse=f"file://{d}/warehouse")


def bench_throughput(b, floe, n, work, variants=()):
    """One run with floe's librdkafka settings, then one per variant
    ("k=v,k=v": consumer properties) reading the same topic."""
    topic = f"bench-{n}"
    b.create_topic(topic, 6)
    t0 = time.time()
    produce(b, topic, 0, n)
    print(f"produced {n} records in {time.time() - t0:.1f} s", flush=True)
    for k, variant in enumerate(["", *variants]):
        props = dict(kv.split("=", 1) for kv in variant.split(",") if kv)
        d = work / f"tp{k}"
        d.mkdir()
        cfg = pipeline(d / "p.yaml", "bench", b, topic, True, "10s", "bench.events", props=props)
        cpu, wall, rss, summary = timed_run(floe, d, cfg)
        rows = catalog(d).load_table("bench.events").scan(selected_fields=("id",)).to_arrow().num_rows
        assert rows == n, (rows, n)
        print(f"throughput [{variant or 'defaults'}]: {n} records, CPU {cpu:.1f} s "
              f"({n / cpu / 1e3:.0f} K records per CPU second), wall {wall}, peak RSS "
              f"{rss / 1024:.0f} MB; load {os.getloadavg()[0]:.1f}; {summary}", flush=True)


def bench_latency(b, floe, seconds, rate, work):
    import pyarrow.parquet as pq
    topic = "bench-latency"
    b.create_topic(topic, 6)
    d = work / "lat"
    d.mkdir()
    cfg = pipeline(d / "p.yaml", "lat", b, topic, False, "1s", "bench.lat")
    p = subprocess.Popen([floe, "--dir", str(d), "run", str(cfg)], stderr=subprocess.DEVNULL)
    time.sleep(4)  # joined the group
    produce(b, topic, 0, seconds * rate, rate=rate)
    time.sleep(4)
    p.send_signal(signal.SIGTERM)
    p.wait(60)
    t = catalog(d).load_table("bench.lat")
    snaps = {s.snapshot_id: s.timestamp_ms for s in t.metadata.snapshots}
    lat = []
    for e in t.inspect.entries().to_pylist():
        ts = pq.read_table(e["data_file"]["file_path"].replace("file://", ""), columns=["ts_ms"])["ts_ms"].to_pylist()
        lat.extend(snaps[e["snapshot_id"]] - x for x in ts)
    lat.sort()
    assert len(lat) == seconds * rate, (len(lat), seconds * rate)
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]  # noqa: E731
    print(f"latency at {rate} records/s, 1 s checkpoints: p50 {q(0.5)} ms, p99 {q(0.99)} ms, "
          f"max {lat[-1]} ms ({len(lat)} records)", flush=True)


def bench_kills(b, floe, n, kills, work):
    import threading
    topic = "bench-kills"
    b.create_topic(topic, 6)
    d = work / "kills"
    d.mkdir()
    cfg = pipeline(d / "p.yaml", "kills", b, topic, False, "1s", "bench.kills")
    th = threading.Thread(target=produce, args=(b, topic, 0, n, max(1, n // (kills * 4))))
    th.start()
    rnd = random.Random(7)
    for _ in range(kills):
        p = subprocess.Popen([floe, "--dir", str(d), "run", str(cfg)], stderr=subprocess.DEVNULL)
        time.sleep(rnd.uniform(2, 6))
        p.kill()
        p.wait()
    th.join()
    end = pipeline(d / "end.yaml", "kills", b, topic, True, "1s", "bench.kills")
    subprocess.run([floe, "--dir", str(d), "run", str(end)], check=True, capture_output=True)
    ids = catalog(d).load_table("bench.kills").scan(selected_fields=("id",)).to_arrow()["id"].to_pylist()
    ok = len(ids) == n and len(set(ids)) == n
    print(f"kills: {kills} SIGKILLs while producing {n} records: {len(ids)} rows, "
          f"{len(set(ids))} distinct: {'exactly once' if ok else 'WRONG'}", flush=True)
    assert ok


def flink_run(b, topic, n, d, parallelism=2, interval_ms=10000):
    """bench/peers/flink in kafka mode under GNU time: cpu, wall, rss_kb, rows."""
    import glob
    from pyiceberg.table import StaticTable
    out = d / "time.txt"
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(out),
                        str(ROOT / "bench/peers/flink/run.sh"), "kafka", str(d / "warehouse"),
                        str(parallelism), str(interval_ms), "3", b.bootstrap, topic],
                       capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(p.stderr[-4000:])
    wall, user, sys_, rss = out.read_text().split()
    meta = json.loads(p.stdout.strip().splitlines()[-1])["metadata"]
    assert meta == sorted(glob.glob(str(d / "warehouse/bench/events/metadata/v*.metadata.json")),
                          key=lambda m: int(m.rsplit("/v", 1)[1].split(".")[0]))[-1]
    rows = StaticTable.from_metadata(meta).scan(selected_fields=("id",)).to_arrow().num_rows
    return float(user) + float(sys_), float(wall), int(rss), rows


def bench_peers(b, floe, n, runs, peers, work):
    """floe and the JVM peers interleaved on one topic; prints a markdown table."""
    import statistics
    sys.path.insert(0, str(ROOT / "bench" / "peers"))
    import kafka_connect
    if "flink" in peers:
        subprocess.run([str(ROOT / "bench/peers/flink/build.sh")], check=True, capture_output=True)
    if "connect" in peers:
        kafka_connect.ensure_jars()
    topic, small = f"peers-{n}", "peers-startup"
    for t, k in ((topic, n), (small, 1000)):
        b.create_topic(t, 6)
        t0 = time.time()
        produce(b, t, 0, k)
        print(f"produced {k} records to {t} in {time.time() - t0:.1f} s", flush=True)
    res = []
    out = Path(os.environ.get("BENCH_OUT", ROOT / "bench" / "out" / "kafka-peers"))
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "results.jsonl", "w")

    def one(side, run, t, k):
        d = work / f"{side}-{run}-{k}"
        d.mkdir()
        load0 = os.getloadavg()[0]
        if side == "floe":
            cfg = pipeline(d / "p.yaml", f"peers{run}{k}", b, t, True, "10s", "bench.events")
            cpu, wall, rss, _ = timed_run(floe, d, cfg)
            m, sec = wall.split(":")[-2:]
            wall = 60 * float(m) + float(sec)
            rows = catalog(d).load_table("bench.events").scan(selected_fields=("id",)).to_arrow().num_rows
        elif side == "flink":
            cpu, wall, rss, rows = flink_run(b, t, k, d)
        else:
            r = kafka_connect.run(floe, b, t, k, d)
            cpu, wall, rss, rows = r["cpu_s"], r["wall_s"], r["rss_kb"], r["rows"]
        assert rows == k, (side, rows, k)
        r = {"side": side if k == n else side + "-startup", "run": run, "records": k, "cpu_s": cpu,
             "wall_s": wall, "rss_kb": rss, "load": round(max(load0, os.getloadavg()[0]), 1)}
        print(json.dumps(r), file=log, flush=True)
        print(json.dumps(r), flush=True)
        res.append(r)

    for run in range(1, runs + 1):
        for side in ["floe", *peers]:
            one(side, run, small, 1000)
            one(side, run, topic, n)
    med = lambda side, key: statistics.median(r[key] for r in res if r["side"] == side)  # noqa: E731
    names = {"floe": "floe `run`, parallelism 2",
             "flink": "Flink 1.20 KafkaSource + Iceberg 1.10 FlinkSink, p=2",
             "connect": "Iceberg 1.10.1 Kafka Connect sink, 2 tasks"}
    loads = [r["load"] for r in res]
    print(f"\n{n:,} records, median of {runs} interleaved runs; 1-min load {min(loads):.1f}-{max(loads):.1f} "
          f"(2 cores)\n")
    print("| side | records per CPU s | net of start-up | CPU s | wall s | peak RSS | "
          "start-up (1,000 records): CPU s, peak RSS |")
    print("|---|---|---|---|---|---|---|")
    rate = {}
    for s in ["floe", *peers]:
        c, su = med(s, "cpu_s"), med(s + "-startup", "cpu_s")
        rate[s] = n / c
        net = f"{n / (c - su) / 1e3:,.1f}K" if c > su else "-"
        print(f"| {names[s]} | {rate[s] / 1e3:,.1f}K | {net} | {c:.2f} | {med(s, 'wall_s'):.1f} | "
              f"{med(s, 'rss_kb') / 1024:,.0f} MiB | {su:.2f}, {med(s + '-startup', 'rss_kb') / 1024:,.0f} MiB |")
    for s in peers:
        print(f"\nfloe / {s}: {rate['floe'] / rate[s]:.1f}x records per CPU s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--latency-seconds", type=int, default=30)
    ap.add_argument("--latency-rate", type=int, default=20000)
    ap.add_argument("--kill-records", type=int, default=1_000_000)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--floe", default=str(ROOT / "build" / "release" / "floe"))
    ap.add_argument("--only", choices=["throughput", "latency", "kills", "peers"])
    ap.add_argument("--runs", type=int, default=3, help="peers: interleaved runs")
    ap.add_argument("--peers", default="flink,connect", help="peers: flink, connect or both")
    ap.add_argument("--variant", action="append", default=[],
                    help="throughput: also run with these consumer properties (k=v,k=v; repeatable)")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="floe-bench-kafka-"))
    b = Broker(work / "broker", extra={"log.retention.bytes": str(8 << 30)})
    b.start()
    try:
        if a.only in (None, "throughput"):
            bench_throughput(b, a.floe, a.records, work, a.variant)
        if a.only in (None, "latency"):
            bench_latency(b, a.floe, a.latency_seconds, a.latency_rate, work)
        if a.only in (None, "kills"):
            bench_kills(b, a.floe, a.kill_records, a.kills, work)
        if a.only == "peers":
            bench_peers(b, a.floe, a.records, a.runs, [p for p in a.peers.split(",") if p], work)
    finally:
        b.stop()
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
