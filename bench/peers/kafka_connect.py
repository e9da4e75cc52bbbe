#!/usr/bin/env python3
"""The Apache Iceberg Kafka Connect sink (org.apache.iceberg:iceberg-kafka-connect
1.10.1) in Kafka Connect standalone mode (org.apache.kafka:connect-runtime 4.1.1,
one JVM), reading a topic into an Iceberg table: the Kafka Connect peer of
bench/kafka/run.py's peers run. The jars come from Maven Central through
bench/peers/kafka-connect/pom.xml (copied once into its target/lib by mvn).

floe creates the table (same schema and properties as floe's own run: zstd,
v2, unpartitioned) in its embedded SQLite catalog; the sink writes it through
Iceberg's JdbcCatalog on that catalog (as the Spark peer does), with schemaless
JSON values (JsonConverter, schemas.enable=false), `tasks.max` tasks, and
commits every `iceberg.control.commit.interval-ms` through its control topic.

A Connect worker never ends by itself: run() starts it, waits until the
table's current snapshot holds every record of the topic (total-records),
takes the JVM's CPU seconds (utime + stime) and peak RSS (VmHWM) from /proc,
then stops it. The wait includes the last commit interval (idle CPU).

    kafka_connect.py <floe> <bootstrap servers> <topic> <records> <work dir> [tasks] [commit ms]

prints one JSON line (cpu_s, wall_s, rss_kb, rows, snapshots);
`kafka_connect.py jars` only fetches the jars (scripts/setup).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent / "kafka-connect"
LIB = HERE / "target" / "lib"
CLK = os.sysconf("SC_CLK_TCK")
SCHEMA = "id long not null, ts_ms long, user string, kind string, amount double, pad string"

LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.iceberg.name = org.apache.iceberg.connect
logger.iceberg.level = info
"""


def ensure_jars() -> str:
    """The worker's classpath (fetches the jars with mvn the first time)."""
    pom = HERE / "pom.xml"
    stamp = LIB / ".pom"
    if not stamp.exists() or stamp.read_text() != pom.read_text():
        shutil.rmtree(LIB, ignore_errors=True)
        subprocess.run(["mvn", "-q", "-B", "dependency:copy-dependencies",
                        f"-DoutputDirectory={LIB}", "-DincludeScope=runtime"],
                       cwd=HERE, check=True)
        stamp.write_text(pom.read_text())
    return f"{LIB}/*"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_table(floe, d):
    f = [floe, "--dir", str(d)]
    subprocess.run(f + ["namespace", "create", "bench"], check=True, capture_output=True)
    subprocess.run(f + ["table", "create", "bench.events", "--schema", SCHEMA], check=True,
                   capture_output=True)


def catalog(d):
    from pyiceberg.catalog.sql import SqlCatalog
    wh = Path(d) / "warehouse"
    return SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")


def table_records(d):
    """total-records of the current snapshot (0 before the first commit)."""
    t = catalog(d).load_table("bench.events")
    s = t.current_snapshot()
    if s is None:
        return 0, 0
    return int(s.summary.additional_properties.get("total-records", 0)), len(t.metadata.snapshots)


def proc_usage(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLK  # utime, stime
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                rss = int(line.split()[1])
    return cpu, rss


def write_config(d, bootstrap, topic, tasks, commit_ms, name):
    wh = Path(d) / "warehouse"
    worker = {
        "bootstrap.servers": bootstrap,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "offset.storage.file.filename": str(Path(d) / "connect.offsets"),
        "offset.flush.interval.ms": "10000",
        "listeners": f"http://127.0.0.1:{free_port()}",
        "plugin.discovery": "service_load",  # the jars' ServiceLoader manifests: no scan
    }
    sink = {
        "name": name,
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "tasks.max": str(tasks),
        "topics": topic,
        "consumer.override.auto.offset.reset": "earliest",
        "iceberg.tables": "bench.events",
        "iceberg.catalog": "default",
        "iceberg.catalog.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
        "iceberg.catalog.uri": f"jdbc:sqlite:{wh}/catalog.db",
        "iceberg.catalog.jdbc.schema-version": "V1",
        "iceberg.catalog.warehouse": f"file://{wh}",
        "iceberg.catalog.cache-enabled": "false",
        "iceberg.control.topic": f"control-{name}",
        "iceberg.control.group-id-prefix": f"cg-{name}",
        "iceberg.control.commit.interval-ms": str(commit_ms),
    }
    for fname, props in (("worker.properties", worker), ("sink.properties", sink)):
        (Path(d) / fname).write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    (Path(d) / "log4j2.properties").write_text(LOG4J2.format(log=Path(d) / "connect.log"))


def run(floe, broker, topic, n, d, tasks=2, commit_ms=10000, timeout=900, java_opts=()):
    """broker: a tests/kafka/broker.py Broker (the control topic is created
    through it: the broker does not create topics by itself). java_opts: JVM
    options (none by default: the JVM's own heap and GC, as the Flink peer)."""
    cp = ensure_jars()
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)
    make_table(floe, d)
    name = f"iceberg-{d.name}-{os.getpid()}"
    broker.create_topic(f"control-{name}", 1)
    write_config(d, broker.bootstrap, topic, tasks, commit_ms, name)
    cmd = ["java", *java_opts, f"-Dlog4j2.configurationFile={d / 'log4j2.properties'}", "-cp", cp,
           "org.apache.kafka.connect.cli.ConnectStandalone",
           str(d / "worker.properties"), str(d / "sink.properties")]
    t0 = time.time()
    out = open(d / "stdout.log", "wb")
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        rows = snaps = 0
        while True:
            if p.poll() is not None:
                raise RuntimeError(f"the Connect worker exited ({p.returncode}):\n"
                                   + (d / "stdout.log").read_text()[-3000:]
                                   + (d / "connect.log").read_text()[-3000:])
            if time.time() - t0 > timeout:
                raise RuntimeError(f"the sink committed {rows} of {n} records in {timeout} s:\n"
                                   + (d / "connect.log").read_text()[-3000:])
            rows, snaps = table_records(d)
            if rows >= n:
                break
            time.sleep(0.5)
        cpu, rss = proc_usage(p.pid)
        wall = time.time() - t0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 15)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
        out.close()
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "rss_kb": rss, "rows": rows,
            "snapshots": snaps}


if __name__ == "__main__":
    a = sys.argv[1:]
    if a == ["jars"]:
        if not (LIB / ".pom").exists():
            print("setup: fetching the Kafka Connect peer's jars (Maven Central; once)", flush=True)
        ensure_jars()
        sys.exit(0)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "kafka"))
    from broker import Broker

    class _B:  # an existing broker: only its address and topic creation
        bootstrap = a[1]
        create_topic = Broker.create_topic
        admin = Broker.admin

    print(json.dumps(run(a[0], _B(), a[2], int(a[3]), a[4], *(int(x) for x in a[5:7]))))
