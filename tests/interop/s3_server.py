"""An S3 server for the tests, and a fault-injecting proxy in front of it.

The server is moto's (PyPI, scripts/requirements-test.txt) in server mode,
started through moto_server.py (Glue's VersionId enforced as AWS does), with
request authentication on: every request after the three that create
an IAM user and its access key must carry a valid SigV4 signature of that
key (moto recomputes it and answers SignatureDoesNotMatch otherwise), so the
tests prove floe's signing, not just its HTTP.

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


class S3Server:
    """moto's server with SigV4 checked; .key/.secret are a valid key pair."""

    region = "us-east-1"

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

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=self.key, aws_secret_access_key=self.secret)

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
