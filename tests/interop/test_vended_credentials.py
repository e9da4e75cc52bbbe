"""Vended credentials (X-Iceberg-Access-Delegation: vended-credentials) from
a REST catalog: Iceberg's REST fixture vends none, so a proxy in front of it
adds them to every LoadTableResult — the keys of a second identity of the S3
server ("vended"), as the spec's storage-credentials list with a prefix or as
the older s3.* keys in the table's config. floe's own AWS keys ("outsider")
have no access to the bucket at all (a user of its own on RGW, which keeps
each user's buckets private: see s3_server.py's identities), so every read and
write that succeeds was signed with the vended keys: create, ingest, scan and
maintain go through them, and a rotation of the vended keys is picked up when
the table is loaded again."""
import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import floe_bin
from rest_server import forward, reply


class VendingProxy:
    """Forwards to the REST fixture; answers of loadTable (GET
    .../namespaces/<ns>/tables/<t>) get vended credentials. mode:
    "storage-credentials" or "config". Records the delegation header of each
    request."""

    def __init__(self, target_port, bucket, keys, mode):
        self.keys, self.mode, self.bucket = keys, mode, bucket
        self.delegation = []
        self.vended = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                path = self.path.split("?", 1)[0]
                proxy.delegation.append((self.command, path, self.headers.get("X-Iceberg-Access-Delegation")))
                status, headers, data = forward(self, target_port, body)
                parts = path.strip("/").split("/")
                is_load = (self.command == "GET" and len(parts) >= 5 and parts[-2] == "tables"
                           and parts[-4] == "namespaces")
                if is_load and status == 200:
                    data = json.dumps(proxy.vend(json.loads(data))).encode()
                reply(self, status, headers, data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def vend(self, doc):
        key, secret = self.keys
        creds = {"s3.access-key-id": key, "s3.secret-access-key": secret,
                 "s3.session-token-expires-at-ms": "4102444800000"}
        self.vended += 1
        cfg = dict(doc.get("config") or {})
        if self.mode == "config":
            cfg.update(creds)
        else:
            # a broader prefix with other (useless) keys: the longest prefix must win
            doc["storage-credentials"] = [
                {"prefix": f"s3://{self.bucket}/", "config": {"s3.access-key-id": "AKIDWRONG",
                                                               "s3.secret-access-key": "wrong"}},
                {"prefix": doc["metadata"]["location"], "config": creds},
            ]
        doc["config"] = cfg
        return doc

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def identities(rest_servers):
    s3, rest = rest_servers
    return {"vended": s3.identity("vended", allowed=True),
            "outsider": s3.identity("outsider", allowed=False)}


def floe_via(rest_servers, identities, uri, *args, check=True, input=None):
    s3, rest = rest_servers
    env = s3.env()
    env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = identities["outsider"]
    cmd = [floe_bin(), "--catalog-type", "rest", "--catalog-uri", uri, "--warehouse",
           rest.warehouse, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, input=input, timeout=300)
    if check:
        assert p.returncode == 0, f"{cmd} failed:\n{p.stderr}{p.stdout}"
    return p


def rows(lo, hi):
    return "".join(json.dumps({"id": i, "k": f"k{i % 5}"}) + "\n" for i in range(lo, hi))


@pytest.mark.parametrize("mode", ["storage-credentials", "config"])
def test_table_files_use_vended_credentials(rest_servers, identities, tmp_path, mode):
    s3, rest = rest_servers
    proxy = VendingProxy(int(rest.uri.rsplit(":", 1)[1]), "floe", identities["vended"], mode)
    ns = "vend_" + mode.replace("-", "_")
    try:
        run = lambda *a, **kw: floe_via(rest_servers, identities, proxy.uri, *a, **kw)
        run("namespace", "create", ns)
        for i in range(2):
            run("ingest", f"{ns}.t", "-", "--create-schema", "id long not null, k string",
                "--pipeline-id", f"p{i}", input=rows(i * 100, i * 100 + 100))
        # every request after the config one asks for credentials
        assert {d for _, p, d in proxy.delegation if p != "/v1/config"} == {"vended-credentials"}
        assert proxy.vended > 0
        m = run("maintain", f"{ns}.t", "--lock-uri", f"sqlite:///{tmp_path}/locks.db",
                "--min-input-files", "2")
        assert "compact" in m.stdout + m.stderr
        out = run("scan", f"{ns}.t", "--format", "json").stdout
        assert sorted(json.loads(ln)["id"] for ln in out.splitlines() if ln.strip()) == list(range(200))
        # the process's own keys cannot touch the bucket: straight to the
        # fixture (no vended keys) the same scan is refused
        p = floe_via(rest_servers, identities, rest.uri, "scan", f"{ns}.t", check=False)
        assert p.returncode != 0 and ("AccessDenied" in p.stderr or "HTTP 403" in p.stderr), p.stderr
        # the vended keys rotate: the old key is deleted, the next load vends the new one
        old = proxy.keys
        proxy.keys = s3.new_key("vended")
        s3.delete_key("vended", old[0])
        identities["vended"] = proxy.keys
        run("ingest", f"{ns}.t", "-", "--pipeline-id", "after-rotation", input=rows(200, 210))
        # and nothing of the keys was written into the table
        from pyiceberg.catalog.rest import RestCatalog

        tbl = RestCatalog("rest", uri=rest.uri, warehouse=rest.warehouse,
                          **s3.pyiceberg_props()).load_table(f"{ns}.t")
        assert sorted(tbl.scan().to_arrow().column("id").to_pylist()) == list(range(210))
        meta = json.dumps(tbl.metadata.model_dump(), default=str)
        assert proxy.keys[1] not in meta and old[1] not in meta
    finally:
        proxy.stop()


class ExpiringProxy(VendingProxy):
    """Vends keys (of identity "expiring") that expire LIFETIME seconds after
    they are minted, as STS credentials do: a key is deleted from the S3 server once it has
    expired, and a load vends a new one when the current one is past half
    its life."""

    LIFETIME = 6.0

    def __init__(self, target_port, bucket, s3):
        self.s3, self.live = s3, []  # [(key id, secret, expires at)]
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.expired = 0
        super().__init__(target_port, bucket, None, "storage-credentials")
        threading.Thread(target=self._sweep, daemon=True).start()

    def _expire(self):
        import time

        now = time.time()
        for k in [k for k in self.live if k[2] <= now]:
            self.s3.delete_key("expiring", k[0])
            self.live.remove(k)
            self.expired += 1

    def _sweep(self):
        while not self.done.wait(0.25):
            with self.lock:
                self._expire()

    def stop(self):
        self.done.set()
        super().stop()

    def vend(self, doc):
        import time

        with self.lock:
            now = time.time()
            self._expire()
            if not self.live or self.live[-1][2] - now < self.LIFETIME / 2:
                self.live.append((*self.s3.new_key("expiring"), now + self.LIFETIME))
            key, secret, exp = self.live[-1]
        self.vended += 1
        doc["storage-credentials"] = [{"prefix": doc["metadata"]["location"], "config": {
            "s3.access-key-id": key, "s3.secret-access-key": secret,
            "s3.session-token-expires-at-ms": str(int(exp * 1000))}}]
        return doc


def test_a_pipeline_renews_vended_credentials_before_they_expire(rest_servers, identities, tmp_path):
    """A pipeline that outlives its vended credentials loads the table again
    before they expire (at a commit, within three checkpoint intervals or 5
    minutes of the expiry): the keys the run started with are deleted 6 s
    in, and every record of the 15 s run still lands."""
    s3, rest = rest_servers
    proxy = ExpiringProxy(int(rest.uri.rsplit(":", 1)[1]), "floe", s3)
    try:
        floe_via(rest_servers, identities, proxy.uri, "namespace", "create", "expiring")
        yaml = tmp_path / "p.yaml"
        yaml.write_text("""pipeline.id: renew
execution.checkpointing.interval: 1s
sources:
  - name: gen
    type: generator
    rows-per-second: 200
    number-of-rows: 3000
tables:
  - name: expiring.t
    source: gen
    schema: "id long not null, v double"
""")
        p = floe_via(rest_servers, identities, proxy.uri, "-v", "run", yaml)
        assert "vended credentials expire in" in p.stderr, p.stderr[-2000:]
        assert proxy.expired >= 2 and proxy.vended >= 3  # keys died during the run
        out = floe_via(rest_servers, identities, proxy.uri, "scan", "expiring.t", "--count").stdout
        assert out.strip() == "3000"
    finally:
        proxy.stop()
