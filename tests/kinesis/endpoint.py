"""Starts and stops tests/kinesis/server.py (moto's Kinesis, loopback) for
the interop tests, and hands out boto3 clients on it."""
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REGION = "us-east-1"
# moto checks no signature; floe and boto3 sign with these
CREDS = {"AWS_ACCESS_KEY_ID": "AKIDFLOETEST", "AWS_SECRET_ACCESS_KEY": "floe-test-secret"}


class Kinesis:
    def __init__(self, base: Path):
        self.base = Path(base)
        self.proc = None
        self.url = None

    def start(self, timeout=60):
        self.log = open(self.base / "moto.log", "wb")
        self.proc = subprocess.Popen([sys.executable, str(HERE / "server.py")],
                                     stdout=subprocess.PIPE, stderr=self.log)
        deadline = time.time() + timeout
        line = b""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith(b"PORT "):
                self.url = f"http://127.0.0.1:{int(line.split()[1])}"
                return self
            if self.proc.poll() is not None:
                break
        raise RuntimeError(f"the Kinesis server did not start ({line!r}); see {self.base}/moto.log")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        self.log.close()

    def client(self):
        import boto3

        return boto3.client("kinesis", endpoint_url=self.url, region_name=REGION,
                            aws_access_key_id=CREDS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDS["AWS_SECRET_ACCESS_KEY"])

    def env(self):
        """Environment for a floe process that reads this endpoint."""
        e = dict(os.environ)
        e.update(CREDS)
        e["AWS_REGION"] = REGION
        e["AWS_EC2_METADATA_DISABLED"] = "true"
        return e
