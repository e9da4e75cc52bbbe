"""Vended credentials (X-Iceberg-Access-Delegation: vended-credentials) from
a REST catalog: Iceberg's REST fixture vends none, so a proxy in front of it
adds them to every LoadTableResult — the keys of a second identity of the S3
server ("vended"), as the spec's storage-credentials list with a prefix or as
the older s3.* keys in the table's config. floe's own AWS keys ("outsider")
have no access to the bucket at all (a user of its own on RGW, which keeps
each user's buckets private: see s3_server.py's identities), so every read and
write that succeeds was signed with the vended keys: create, ingest, scan and
maintain go through them, and a rotation of the vended keys is picked up when
the table is loaded again.

Renewal: the proxy can also serve loadCredentials (GET .../credentials) and
rewrite the config's endpoints list; floe renews through loadCredentials
when the list names it, through loadTable when it does not (the fixture's
own list), and refuses clearly the calls a list leaves out."""
import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import floe_bin
from rest_server import forward, reply


CREDENTIALS_EP = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"


class VendingProxy:
    """Forwards to the REST fixture; answers of loadTable (GET
    .../namespaces/<ns>/tables/<t>) get vended credentials. mode:
    "storage-credentials" or "config". Records the delegation header of each
    request, and counts loadTable and loadCredentials calls. It answers
    loadCredentials itself (the fixture has none) whether or not it is
    advertised; endpoints: None keeps the fixture's config (whose list has no
    loadCredentials), a function rewrites its list (returning None drops the
    field)."""

    def __init__(self, target_port, bucket, keys, mode, endpoints=None):
        self.keys, self.mode, self.bucket = keys, mode, bucket
        self.endpoints = endpoints
        self.delegation = []
        self.vended = 0
        self.calls = {"load": 0, "credentials": 0}
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
                parts = path.strip("/").split("/")
                is_creds = (self.command == "GET" and len(parts) >= 6 and parts[-1] == "credentials"
                            and parts[-3] == "tables")
                if is_creds:
                    # the table's location from the fixture, then its credentials
                    self.path = self.path.split("?", 1)[0].rsplit("/", 1)[0]
                    path = self.path
                status, headers, data = forward(self, target_port, body)
                is_load = (self.command == "GET" and len(parts) >= 5 and parts[-2] == "tables"
                           and parts[-4] == "namespaces")
                if is_creds and status == 200:
                    proxy.calls["credentials"] += 1
                    loc = json.loads(data)["metadata"]["location"]
                    data = json.dumps({"storage-credentials": proxy.credentials(loc)}).encode()
                elif is_load and status == 200:
                    proxy.calls["load"] += 1
                    data = json.dumps(proxy.vend(json.loads(data))).encode()
                elif path == "/v1/config" and status == 200 and proxy.endpoints:
                    doc = json.loads(data)
                    eps = proxy.endpoints(doc.get("endpoints"))
                    doc.pop("endpoints", None)
                    if eps is not None:
                        doc["endpoints"] = eps
                    data = json.dumps(doc).encode()
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

    def credentials(self, location):
        """A LoadCredentialsResponse's storage-credentials for location."""
        return self.vend({"metadata": {"location": location}})["storage-credentials"]

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
    its life. mint="credentials": only loadCredentials mints new keys (a
    loadTable vends the newest, dead or alive), so a run that outlives the
    first key renews through loadCredentials or fails; the answers also
    carry a broader prefix with useless keys, which must lose."""

    LIFETIME = 6.0

    def __init__(self, target_port, bucket, s3, mint="load", endpoints=None, user="expiring"):
        self.s3, self.live, self.user = s3, [], user  # live: [(key id, secret, expires at)]
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.expired = 0
        self.mint = mint
        self.secrets = []
        super().__init__(target_port, bucket, None, "storage-credentials", endpoints)
        threading.Thread(target=self._sweep, daemon=True).start()

    def credentials(self, location):
        return self._vend({"metadata": {"location": location}}, True)["storage-credentials"]

    def _expire(self):
        import time

        now = time.time()
        for k in [k for k in self.live if k[2] <= now]:
            self.s3.delete_key(self.user, k[0])
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
        return self._vend(doc, self.mint == "load")

    def _vend(self, doc, may_mint):
        import time

        with self.lock:
            now = time.time()
            self._expire()
            if (may_mint or not self.secrets) and (not self.live or self.live[-1][2] - now < self.LIFETIME / 2):
                k = (*self.s3.new_key(self.user), now + self.LIFETIME)
                self.live.append(k)
                self.secrets.append(k)
            key, secret, exp = self.secrets[-1]
        self.vended += 1
        doc["storage-credentials"] = [{"prefix": doc["metadata"]["location"], "config": {
            "s3.access-key-id": key, "s3.secret-access-key": secret,
            "s3.session-token-expires-at-ms": str(int(exp * 1000))}}]
        if self.mint == "credentials":
            doc["storage-credentials"].insert(0, {"prefix": f"s3://{self.bucket}/", "config": {
                "s3.access-key-id": "AKIDWRONG", "s3.secret-access-key": "wrong"}})
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
        # the fixture's endpoints list has no loadCredentials: never called
        assert proxy.calls["credentials"] == 0 and proxy.calls["load"] >= 3, proxy.calls
        out = floe_via(rest_servers, identities, proxy.uri, "scan", "expiring.t", "--count").stdout
        assert out.strip() == "3000"
    finally:
        proxy.stop()


RUN_YAML = """pipeline.id: renew
execution.checkpointing.interval: 1s
sources:
  - name: gen
    type: generator
    rows-per-second: 200
    number-of-rows: 3000
tables:
  - name: {table}
    source: gen
    schema: "id long not null, v double"
"""


def expiring_user(s3, name):
    """an identity allowed on the bucket whose keys the proxy mints and deletes"""
    key = s3.identity(name, allowed=True)
    s3.delete_key(name, key[0])
    return s3


def test_renewal_goes_through_load_credentials_when_advertised(rest_servers, identities, tmp_path):
    """A server whose endpoints list names loadCredentials: new keys come
    from GET .../credentials (only it mints them, so a renewal by loadTable
    would get the dead first key), the location's own prefix beats the
    bucket-wide one with useless keys, and no secret reaches the log."""
    s3, rest = rest_servers
    expiring_user(s3, "expiring-lc")
    proxy = ExpiringProxy(int(rest.uri.rsplit(":", 1)[1]), "floe", s3, mint="credentials",
                          endpoints=lambda eps: [*eps, CREDENTIALS_EP], user="expiring-lc")
    try:
        floe_via(rest_servers, identities, proxy.uri, "namespace", "create", "lcreds")
        yaml = tmp_path / "p.yaml"
        yaml.write_text(RUN_YAML.format(table="lcreds.t"))
        p = floe_via(rest_servers, identities, proxy.uri, "-v", "run", yaml)
        assert proxy.expired >= 2, proxy.expired  # keys died during the run
        assert proxy.calls["credentials"] >= 2, proxy.calls
        assert len(proxy.secrets) >= 3
        for _, secret, _ in proxy.secrets:
            assert secret not in p.stderr and secret not in p.stdout
        out = floe_via(rest_servers, identities, proxy.uri, "scan", "lcreds.t", "--count").stdout
        assert out.strip() == "3000"
        # a scan renews too, at its first request: by now the key a loadTable
        # vends is dead
        import time

        time.sleep(ExpiringProxy.LIFETIME)
        n = proxy.calls["credentials"]
        out = floe_via(rest_servers, identities, proxy.uri, "scan", "lcreds.t", "--count").stdout
        assert out.strip() == "3000"
        assert proxy.calls["credentials"] > n, proxy.calls
    finally:
        proxy.stop()


def test_endpoints_the_server_leaves_out(rest_servers, identities, tmp_path):
    """A config whose endpoints list lacks a call floe needs: floe does not
    call it and says which endpoint is missing; a config without the field
    offers the spec's default set (no loadCredentials: renewal falls back to
    loadTable, which is what a create's credentials come from here)."""
    s3, rest = rest_servers
    port = int(rest.uri.rsplit(":", 1)[1])
    keep = lambda eps: [e for e in eps if "rename" not in e and "transactions" not in e]
    proxy = VendingProxy(port, "floe", identities["vended"], "storage-credentials", endpoints=keep)
    try:
        run = lambda *a, **kw: floe_via(rest_servers, identities, proxy.uri, *a, **kw)
        run("namespace", "create", "leftout")
        run("ingest", "leftout.t", "-", "--create-schema", "id long not null, k string",
            "--pipeline-id", "l0", input=rows(0, 10))
        n = len(proxy.delegation)
        p = run("table", "rename", "leftout.t", "leftout.u", check=False)
        assert p.returncode != 0
        assert "does not offer renaming tables" in p.stderr, p.stderr
        assert "POST /v1/{prefix}/tables/rename" in p.stderr, p.stderr
        assert not any("/rename" in path for _, path, _ in proxy.delegation[n:])
        yaml = tmp_path / "atomic.yaml"
        yaml.write_text("""pipeline.name: leftout
pipeline.atomic-commit: true
sources:
  - name: gen
    type: generator
    number-of-rows: 10
tables:
  - name: leftout.a
    schema: "id long not null"
  - name: leftout.b
    schema: "id long not null"
""")
        p = run("run", yaml, check=False)
        assert p.returncode != 0
        assert "does not offer multi-table transactions" in p.stderr, p.stderr
        assert not any("transactions" in path for _, path, _ in proxy.delegation)
    finally:
        proxy.stop()
    # no endpoints field at all: the default set, without loadCredentials
    proxy = VendingProxy(port, "floe", identities["vended"], "storage-credentials",
                         endpoints=lambda eps: None)
    try:
        floe_via(rest_servers, identities, proxy.uri, "ingest", "leftout.t", "-",
                 "--pipeline-id", "l1", input=rows(10, 20))
        assert proxy.calls["credentials"] == 0 and proxy.calls["load"] >= 1, proxy.calls
    finally:
        proxy.stop()
