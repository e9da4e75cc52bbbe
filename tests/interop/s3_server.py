"""The tests' S3 servers, and a fault-injecting proxy in front of them.

RgwS3 is the S3 data path's server: Ceph's RADOS Gateway on a single-node
cluster (rgw_server.py; Debian's radosgw/ceph-mon/ceph-osd packages, which
scripts/setup installs), one per test session (conftest.py's s3_rgw). RGW
authenticates every request: a SigV4 signature of the key pair radosgw-admin
made, SignatureDoesNotMatch otherwise, so the tests prove floe's signing
against a real S3 implementation (its XML, its multipart ETags, its
DeleteObjects, aws-chunked payloads), not just its HTTP.

S3Server is moto's server (PyPI, scripts/requirements-test.txt), started
through moto_server.py (Glue's VersionId enforced as AWS does), with request
authentication on: every request after the three that create an IAM user
and its access key must carry a valid SigV4 signature of that key. It stays
for what RGW (16.2) does not have: the Glue Data Catalog, Secrets Manager,
STS, IAM users with policies made on the fly, and S3 Tables' control plane
(test_glue_catalog.py, test_secrets.py, conftest.py's moto_aws). RGW 16.2
also lacks the AWS SDKs' default trailing checksums: see RgwS3.

Identities (identity/new_key/delete_key) are the same on both: a key pair
that can use the tests' buckets or one that cannot. On moto they are IAM
users with or without an allow-all policy; on RGW an allowed identity's keys
are further keys of the buckets' owner ("floe"), and one without access is
a user of its own (RGW keeps each user's buckets private).

The proxy forwards requests unchanged (the Host header too, so signatures
stay valid) and, for a chosen fraction of them, answers 503 SlowDown, 500
InternalError, resets the connection before answering, or cuts the body of
the answer short; with deny="text" it answers AccessDenied in a
DeleteObjects result for every key containing the text (what a bucket
policy denying some keys does: a partial failure reported per key). It
records "METHOD path?query" of every request. Everything listens on
127.0.0.1 only.
"""
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class _Endpoint:
    """What the tests use of either server: a boto3 client, floe's
    environment and PyIceberg's properties for .key/.secret."""

    region = "us-east-1"

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=self.key, aws_secret_access_key=self.secret)

    def bucket(self, name):
        """Creates the bucket unless it is there; returns its name."""
        c = self.client()
        try:
            c.head_bucket(Bucket=name)
        except Exception:
            c.create_bucket(Bucket=name)
        return name

    def env(self, endpoint=None):
        """Environment for floe: the AWS variables as the SDKs read them."""
        e = dict(os.environ)
        e.update(AWS_ACCESS_KEY_ID=self.key, AWS_SECRET_ACCESS_KEY=self.secret,
                 AWS_REGION=self.region, AWS_ENDPOINT_URL_S3=endpoint or self.endpoint,
                 AWS_EC2_METADATA_DISABLED="true")
        for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
            e.pop(k, None)
        return e

    def pyiceberg_props(self):
        return {"s3.endpoint": self.endpoint, "s3.access-key-id": self.key,
                "s3.secret-access-key": self.secret, "s3.region": self.region,
                "s3.path-style-access": "true"}


class RgwS3(_Endpoint):
    """Ceph's RADOS Gateway (rgw_server.py) with state in `directory`."""

    def __init__(self, directory):
        from rgw_server import RgwServer

        # RGW 16.2 has no aws-chunked uploads with trailing checksums
        # (STREAMING-UNSIGNED-PAYLOAD-TRAILER, RGW 18 has them), which the AWS
        # SDKs send by default since 2025 (PyArrow's C++ SDK, boto3, Java's
        # v2 SDK in the REST fixture and Spark): they send them only when an
        # operation requires a checksum with this, as before. This process's
        # environment, so PyIceberg here and the JVMs started from it see it.
        os.environ["AWS_REQUEST_CHECKSUM_CALCULATION"] = "when_required"
        os.environ["AWS_RESPONSE_CHECKSUM_VALIDATION"] = "when_required"
        self.rgw = RgwServer(directory)
        self.port, self.endpoint = self.rgw.port, self.rgw.endpoint
        self.key, self.secret = self.rgw.key, self.rgw.secret
        self.log = self.rgw.dir / "log"
        self.pids = [p.pid for p in self.rgw.procs]  # monitor, OSD, radosgw

    def _keys(self, out):
        return [(k["access_key"], k["secret_key"]) for k in json.loads(out)["keys"]]

    def identity(self, name, allowed):
        if not allowed:
            out = self.rgw.admin("user", "create", "--uid", name, "--display-name", name)
            return self._keys(out)[0]
        return self.new_key(name)

    def new_key(self, name):
        """A further key pair of the buckets' owner (`name` only names it in the test)."""
        before = set(self._keys(self.rgw.admin("user", "info", "--uid", "floe")))
        out = self.rgw.admin("key", "create", "--uid", "floe", "--key-type", "s3",
                             "--gen-access-key", "--gen-secret")
        (new,) = set(self._keys(out)) - before
        return new

    def delete_key(self, name, key_id):
        self.rgw.admin("key", "rm", "--uid", "floe", "--key-type", "s3", "--access-key", key_id)

    def stop(self):
        self.rgw.stop()


class S3Server(_Endpoint):
    """moto's server with SigV4 checked; .key/.secret are a valid key pair."""

    def __init__(self, log_path, glue_control=None):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3", MOTO_PORT=str(self.port))
        if glue_control:  # moto_server.py's fault control file
            env["MOTO_GLUE_CONTROL"] = str(glue_control)
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          "moto_server.py"),
             "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.pids = [self.proc.pid]
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto's server did not start (see {log_path})")
                time.sleep(0.2)
        import boto3

        iam = boto3.client("iam", endpoint_url=self.endpoint, region_name=self.region,
                           aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
        iam.create_user(UserName="floe")
        iam.put_user_policy(UserName="floe", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17",
             "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        k = iam.create_access_key(UserName="floe")["AccessKey"]
        self.key, self.secret = k["AccessKeyId"], k["SecretAccessKey"]

    def _iam(self):
        import boto3

        return boto3.client("iam", endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=self.key, aws_secret_access_key=self.secret)

    def identity(self, name, allowed):
        iam = self._iam()
        iam.create_user(UserName=name)
        if allowed:
            iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=json.dumps(
                {"Version": "2012-10-17",
                 "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": "*"}]}))
        return self.new_key(name)

    def new_key(self, name):
        k = self._iam().create_access_key(UserName=name)["AccessKey"]
        return k["AccessKeyId"], k["SecretAccessKey"]

    def delete_key(self, name, key_id):
        self._iam().delete_access_key(UserName=name, AccessKeyId=key_id)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class FaultProxy:
    """Forwards to target; injects a fault into `rate` of the requests."""

    FAULTS = ("slowdown", "internal", "reset", "truncate")

    def __init__(self, target_port, rate=0.1, seed=14, deny=None):
        self.rate = rate
        self.deny = deny
        self.seen = []
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.counts = {f: 0 for f in self.FAULTS}
        self.requests = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with proxy.lock:
                    proxy.requests += 1
                    proxy.seen.append(f"{self.command} {self.path}")
                    fault = None
                    if proxy.rng.random() < proxy.rate:
                        # the kinds in turn, so that a short run sees each
                        fault = proxy.FAULTS[sum(proxy.counts.values()) % len(proxy.FAULTS)]
                        proxy.counts[fault] += 1
                if fault == "reset":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if fault in ("slowdown", "internal"):
                    code, status = ("SlowDown", 503) if fault == "slowdown" else ("InternalError", 500)
                    doc = (f"<?xml version=\"1.0\"?><Error><Code>{code}</Code>"
                           f"<Message>injected</Message></Error>").encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(doc)))
                    self.end_headers()
                    self.wfile.write(doc)
                    return
                c = http.client.HTTPConnection("127.0.0.1", target_port, timeout=60)
                c.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    c.putheader(k, v)
                c.endheaders(body if body else None)
                r = c.getresponse()
                data = r.read()
                if (proxy.deny and self.command == "POST" and "delete" in self.path.split("?", 1)[-1]
                        and r.status == 200):
                    import re
                    from xml.sax.saxutils import escape

                    keys = [k for k in re.findall(r"<Key>(.*?)</Key>", body.decode()) if proxy.deny in k]
                    errs = "".join(f"<Error><Key>{k}</Key><Code>AccessDenied</Code>"
                                   f"<Message>denied by the test</Message></Error>" for k in keys)
                    data = data.replace(b"</DeleteResult>", errs.encode() + b"</DeleteResult>")
                    if b"</DeleteResult>" not in data:
                        data = data.replace(b"<DeleteResult/>", b"<DeleteResult>" + errs.encode()
                                            + b"</DeleteResult>")
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                        self.send_header(k, v)
                if self.command == "HEAD":
                    self.send_header("Content-Length", r.getheader("Content-Length") or "0")
                else:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if fault == "truncate" and self.command != "HEAD" and len(data) > 1:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if self.command != "HEAD":
                    self.wfile.write(data)
                c.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # a client that goes away (a killed floe, a reset it was sent) is no error here
        self.server.handle_error = lambda request, address: None
        self.port = self.server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
