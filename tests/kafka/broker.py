"""One Apache Kafka broker in KRaft mode (broker and controller in one JVM,
no ZooKeeper) on loopback, for the interop tests and bench/kafka.

The jars come from Maven Central through tests/kafka/pom.xml (fetched once
into tests/kafka/target/lib with mvn). start() formats a fresh log directory
with a random cluster id (kafka-storage format, here through StorageTool's
main class) and starts `kafka.Kafka server.properties`; it returns once the
broker answers a metadata request. The broker's own log goes to
<dir>/broker.log.
"""
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIB = HERE / "target" / "lib"
SASL_USER = "floe"
SASL_PASSWORD = "floe-secret"

LOG4J2_PROPS = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka.server
logger.kafka.level = info
"""


def ensure_jars() -> str:
    """The broker's classpath (fetches the jars with mvn the first time)."""
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


class Broker:
    def __init__(self, base: Path, port: int = 0, extra: dict | None = None):
        self.base = Path(base)
        self.port = port or free_port()
        self.controller_port = free_port()
        self.sasl_port = free_port()
        self.extra = extra or {}
        self.proc = None
        self.cp = ensure_jars()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def sasl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_port}"

    def _java(self, main, *args, log=None):
        env = dict(os.environ)
        cmd = ["java", "-Xms256m", "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               f"-Dlog4j2.configurationFile={self.base / 'log4j2.properties'}",
               "-cp", self.cp, main, *map(str, args)]
        return cmd, env

    def write_config(self):
        self.base.mkdir(parents=True, exist_ok=True)
        (self.base / "log4j2.properties").write_text(LOG4J2_PROPS.format(log=self.base / "broker.log"))
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            # PLAINTEXT for the tests, SASL_PLAINTEXT (PLAIN, user floe) for the
            # authentication tests
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port},"
                         f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                              "CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config":
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'user_floe="{SASL_PASSWORD}";',
            # a killed consumer leaves its group quickly (tests use 2 s sessions)
            "group.min.session.timeout.ms": "1000",
            "log.dirs": str(self.base / "data"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false",
            "delete.topic.enable": "true",
            "log.segment.bytes": str(64 << 20),
            "message.max.bytes": str(2 << 20),
            "num.io.threads": "2",
            "num.network.threads": "2",
            "background.threads": "2",
            "log.cleaner.enable": "false",
        }
        props.update(self.extra)
        text = "".join(f"{k}={v}\n" for k, v in props.items())
        (self.base / "server.properties").write_text(text)

    def format(self):
        self.write_config()
        cid = uuid.uuid4().bytes
        import base64
        cluster = base64.urlsafe_b64encode(cid).decode().rstrip("=")
        cmd, env = self._java("kafka.tools.StorageTool", "format", f"--cluster-id={cluster}",
                              "-c", self.base / "server.properties", "--ignore-formatted")
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"kafka-storage format failed:\n{p.stdout}{p.stderr}")

    def start(self, timeout=90):
        if not (self.base / "data" / "meta.properties").exists():
            self.format()
        else:
            self.write_config()
        cmd, env = self._java("kafka.Kafka", self.base / "server.properties")
        out = open(self.base / "stdout.log", "ab")
        self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout=90):
        from confluent_kafka.admin import AdminClient

        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"the Kafka broker exited ({self.proc.returncode}): "
                                   f"{(self.base / 'stdout.log').read_text()[-4000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            except OSError as e:
                last = e
                time.sleep(0.3)
                continue
            try:
                a = AdminClient({"bootstrap.servers": self.bootstrap})
                md = a.list_topics(timeout=2)
                if md.brokers:
                    return
            except Exception as e:  # not up yet
                last = e
            time.sleep(0.5)
        raise RuntimeError(f"the Kafka broker did not start in {timeout}s: {last}")

    def stop(self, kill=False):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    # ---- admin helpers ------------------------------------------------------------

    def admin(self):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def create_topic(self, name, partitions=1, config=None):
        from confluent_kafka.admin import NewTopic

        a = self.admin()
        fs = a.create_topics([NewTopic(name, num_partitions=partitions,
                                       replication_factor=1, config=config or {})])
        for f in fs.values():
            f.result(timeout=30)
        # wait until the metadata shows every partition with a leader
        deadline = time.time() + 30
        while time.time() < deadline:
            md = a.list_topics(topic=name, timeout=5)
            t = md.topics.get(name)
            if t and not t.error and len(t.partitions) == partitions and all(
                    p.leader >= 0 for p in t.partitions.values()):
                return
            time.sleep(0.2)
        raise RuntimeError(f"topic {name} has no leaders after 30 s")

    def delete_topic(self, name):
        a = self.admin()
        fs = a.delete_topics([name])
        for f in fs.values():
            f.result(timeout=30)

    def producer(self, **conf):
        from confluent_kafka import Producer

        c = {"bootstrap.servers": self.bootstrap, "linger.ms": 5,
             "enable.idempotence": True, "acks": "all"}
        c.update(conf)
        return Producer(c)

    def end_offsets(self, topic):
        """{partition: high watermark}"""
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "floe-test-probe",
                      "enable.auto.commit": False})
        try:
            md = c.list_topics(topic, timeout=10)
            out = {}
            for p in md.topics[topic].partitions:
                lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                out[p] = hi
            return out
        finally:
            c.close()

    def committed(self, group, topic):
        """{partition: committed offset (-1001 when none)}"""
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                      "enable.auto.commit": False})
        try:
            md = c.list_topics(topic, timeout=10)
            tps = [TopicPartition(topic, p) for p in md.topics[topic].partitions]
            return {tp.partition: tp.offset for tp in c.committed(tps, timeout=10)}
        finally:
            c.close()


if __name__ == "__main__":  # python3 tests/kafka/broker.py DIR: run a broker until ^C
    import sys

    b = Broker(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/floe-kafka"),
               port=int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    b.start()
    print(b.bootstrap, flush=True)
    try:
        b.proc.wait()
    except KeyboardInterrupt:
        b.stop()
