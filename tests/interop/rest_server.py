"""Iceberg's REST catalog test server (RESTCatalogServer from the
iceberg-open-api test fixtures, what the iceberg-rest-fixture image runs),
backed by a JDBC (SQLite) catalog and S3FileIO on the tests' S3 server, and
a recording proxy that can drop the answer to a commit.

The jars come from Maven Central (tests/rest-fixture/pom.xml) into
build/rest-fixture/lib, by scripts/setup or on first use here.
"""
import http.client
import os
import socket
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from s3_server import free_port

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "build" / "rest-fixture" / "lib"


def fixture_jars() -> Path:
    if not (LIB / ".complete").exists():
        subprocess.run(["mvn", "-q", "-B", "-f", str(ROOT / "tests" / "rest-fixture" / "pom.xml"),
                        "dependency:copy-dependencies", f"-DoutputDirectory={LIB}"],
                       check=True, timeout=900)
        (LIB / ".complete").write_text("")
    return LIB


class RestServer:
    def __init__(self, s3, bucket, log_path, tmp):
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.warehouse = f"s3://{bucket}/rest"
        env = dict(os.environ)
        env.update(
            CATALOG_REST_PORT=str(self.port),
            CATALOG_WAREHOUSE=self.warehouse,
            CATALOG_URI=f"jdbc:sqlite:{tmp}/rest-catalog.db",
            CATALOG_JDBC_USER="user", CATALOG_JDBC_PASSWORD="password",
            CATALOG_IO__IMPL="org.apache.iceberg.aws.s3.S3FileIO",
            CATALOG_S3_ENDPOINT=s3.endpoint,
            CATALOG_S3_PATH__STYLE__ACCESS="true",
            CATALOG_S3_ACCESS__KEY__ID=s3.key,
            CATALOG_S3_SECRET__ACCESS__KEY=s3.secret,
            CATALOG_CLIENT_REGION=s3.region,
            AWS_REGION=s3.region,
        )
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(["java", "-cp", f"{fixture_jars()}/*",
                                      "org.apache.iceberg.rest.RESTCatalogServer"],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{self.uri}/v1/config", timeout=2).read()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the REST catalog server did not start (see {log_path})")
                time.sleep(0.3)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def sigv4_valid(method, url, headers, body, key, secret, service, region):
    """Recompute the SigV4 signature of a received request with botocore
    (over the headers its Authorization names) and compare."""
    import re

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    auth = headers.get("Authorization") or ""
    m = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                 r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$", auth)
    if not m or m.group(1) != key or m.group(3) != region or m.group(4) != service:
        return False
    signed = m.group(5).split(";")
    lower = {k.lower(): v for k, v in headers.items()}
    if "host" not in signed or "x-amz-date" not in signed:
        return False
    req = AWSRequest(method=method, url=url, data=body,
                     headers={h: lower.get(h, "") for h in signed})
    req.context["timestamp"] = lower["x-amz-date"]
    signer = SigV4Auth(Credentials(key, secret), service, region)
    canonical = signer.canonical_request(req)
    want = signer.signature(signer.string_to_sign(req, canonical), req)
    return want == m.group(6)


def forward(handler, target_port, body):
    """Send handler's request (with body) to 127.0.0.1:target_port; ->
    (status, headers, data) of the answer."""
    c = http.client.HTTPConnection("127.0.0.1", target_port, timeout=60)
    c.putrequest(handler.command, handler.path, skip_accept_encoding=True)
    for k, v in handler.headers.items():
        if k.lower() not in ("host", "accept-encoding"):
            c.putheader(k, v)
    c.endheaders(body if body else None)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, r.getheaders(), data


def reply(handler, status, headers, data):
    """Answer handler's request with a forwarded answer (data possibly changed)."""
    handler.send_response(status)
    for k, v in headers:
        if k.lower() not in ("transfer-encoding", "connection", "content-length",
                             "date", "server", "content-encoding"):
            handler.send_header(k, v)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


class RecordingProxy:
    """Forwards HTTP to target and records "METHOD path" and whether an
    Authorization header came along; drop_commits=N forwards the next N
    commits (POST .../tables/<t>) and then closes the connection instead of
    answering, as a network that lost the answer would."""

    def __init__(self, target_port, sigv4=None):
        # sigv4 = (key, secret, service, region): refuse what is not signed so
        self.sigv4 = sigv4
        self.verified = 0
        self.rejected = 0
        self.seen = []
        self.auth = []
        self.drop_commits = 0
        self.dropped = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                path = self.path.split("?", 1)[0]
                is_commit = (self.command == "POST" and "/tables/" in path
                             and not path.endswith("/metrics") and "/rename" not in path)
                if proxy.sigv4:
                    host = self.headers.get("Host")
                    ok = sigv4_valid(self.command, f"http://{host}{self.path}", dict(self.headers.items()),
                                     body, *proxy.sigv4)
                    with proxy.lock:
                        if ok:
                            proxy.verified += 1
                        else:
                            proxy.rejected += 1
                    if not ok:
                        doc = (b'{"error":{"message":"The request signature we calculated does not '
                               b'match","type":"SignatureDoesNotMatch","code":403}}')
                        self.send_response(403)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(doc)))
                        self.end_headers()
                        self.wfile.write(doc)
                        return
                with proxy.lock:
                    proxy.seen.append(f"{self.command} {path}")
                    proxy.auth.append(self.headers.get("Authorization"))
                    drop = is_commit and proxy.drop_commits > 0
                    if drop:
                        proxy.drop_commits -= 1
                        proxy.dropped += 1
                status, headers, data = forward(self, target_port, body)
                if drop:
                    # the server applied the commit; its answer never arrives
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                reply(self, status, headers, data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
