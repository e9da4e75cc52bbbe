"""A small Confluent-API-compatible Schema Registry for the avro-confluent
tests, in memory, on loopback.

Why a stand-in: neither Confluent's Schema Registry (not on Maven Central)
nor Karapace (Aiven's Apache-2.0 one: not published on PyPI, only as
source and container images) can be installed here by the project's own
setup, so the tests run against this one. It speaks the part of the REST
API (https://docs.confluent.io/platform/current/schema-registry/develop/api.html)
that producers and consumers use, with the registry's error bodies and
codes:

  POST /subjects/<s>/versions      register ({"schema", "schemaType", "references"})
                                   -> {"id"}; the same schema again -> the same id;
                                   BACKWARD compatibility against the latest version
                                   (409, error_code 409) and schema validity
                                   (422, error_code 42201) checked
  POST /subjects/<s>               look a schema up -> {"subject", "version", "id", "schema"}
                                   (404: 40401 no subject, 40403 no such schema)
  GET  /subjects                   ["<s>", ...]
  GET  /subjects/<s>/versions      [1, 2, ...] (404: 40401)
  GET  /subjects/<s>/versions/<v|latest>   (404: 40401, 40402)
  GET  /schemas/ids/<id>           {"schema"} (+ "schemaType" when not AVRO, "references"
                                   when any) (404: 40403)
  GET  /schemas/ids/<id>/versions  [{"subject", "version"}]
  GET  /config                     {"compatibilityLevel": "BACKWARD"}

Content-Type application/vnd.schemaregistry.v1+json. With users set, every
request needs HTTP basic authentication (401 {"error_code": 401, ...}
otherwise). For the bad-input tests: fail_next(n, status) answers the next n
requests with status (5xx bodies as the registry's 50001), stop() and
start() take it down and bring it back on the same port, and `hits` lists
every request's path.
"""
import base64
import http.server
import json
import threading
import urllib.error
import urllib.request

CT = "application/vnd.schemaregistry.v1+json"


def _canonical(schema_text, schema_type):
    if schema_type != "AVRO":
        return schema_text
    return json.dumps(json.loads(schema_text), sort_keys=True, separators=(",", ":"))


def _fields(schema):
    s = json.loads(schema) if isinstance(schema, str) else schema
    if isinstance(s, dict) and s.get("type") == "record":
        return {f["name"]: f for f in s.get("fields", [])}
    return None


def _backward_ok(new, old):
    """BACKWARD: a reader with the new schema reads data written with the
    old one: every field the new record adds needs a default (the top-level
    record's fields; enough for these tests)."""
    nf, of = _fields(new), _fields(old)
    if nf is None or of is None:
        return True
    return all(name in of or "default" in f for name, f in nf.items())


class SchemaRegistry:
    def __init__(self, users=None):
        self.users = dict(users or {})
        self.schemas = []  # index id-1: {"schema", "schemaType", "references", "canon"}
        self.subjects = {}  # subject -> [id of version 1, 2, ...]
        self.hits = []
        self.lock = threading.Lock()
        self._fail = []  # statuses of the next requests
        self.port = 0
        self.srv = None

    # ---- control ----------------------------------------------------------------------

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        reg = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                reg._serve(self, "GET")

            def do_POST(self):
                reg._serve(self, "POST")

            def log_message(self, *a):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.srv:
            self.srv.shutdown()
            self.srv.server_close()
            self.srv = None

    def fail_next(self, n, status=500):
        with self.lock:
            self._fail.extend([status] * n)

    def id_hits(self, sid):
        return self.hits.count(f"/schemas/ids/{sid}")

    # ---- the client side, over the REST API ---------------------------------------------

    def _request(self, method, path, body=None):
        req = urllib.request.Request(self.url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": CT, "Accept": CT})
        if self.users:
            user, pw = next(iter(self.users.items()))
            req.add_header("Authorization",
                           "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode())
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def register(self, subject, schema, schema_type="AVRO"):
        """Register schema (a dict or text) under subject; its id."""
        text = schema if isinstance(schema, str) else json.dumps(schema)
        body = {"schema": text}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        st, out = self._request("POST", f"/subjects/{subject}/versions", body)
        if st != 200:
            raise RuntimeError(f"register {subject}: HTTP {st}: {out}")
        return out["id"]

    def get(self, path):
        return self._request("GET", path)

    # ---- the server side ----------------------------------------------------------------

    def _serve(self, h, method):
        path = h.path.split("?")[0]
        n = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(n) if n else b""
        with self.lock:
            self.hits.append(path)
            fail = self._fail.pop(0) if self._fail else None
        if fail:
            code = 50001 if fail >= 500 else fail
            return self._send(h, fail, {"error_code": code, "message": "injected failure"})
        if self.users:
            auth = h.headers.get("Authorization") or ""
            ok = False
            if auth.startswith("Basic "):
                try:
                    user, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
                    ok = self.users.get(user) == pw
                except ValueError:
                    ok = False
            if not ok:
                return self._send(h, 401, {"error_code": 401, "message": "Unauthorized"})
        parts = [p for p in path.split("/") if p]
        try:
            with self.lock:
                st, body = self._route(method, parts, raw)
        except Exception as e:  # a bug here shows as the registry's internal error
            st, body = 500, {"error_code": 50001, "message": f"Error in the backend: {e}"}
        self._send(h, st, body)

    @staticmethod
    def _send(h, st, body):
        data = json.dumps(body).encode()
        h.send_response(st)
        h.send_header("Content-Type", CT)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _schema_body(self, sid):
        s = self.schemas[sid - 1]
        out = {"schema": s["schema"]}
        if s["schemaType"] != "AVRO":
            out["schemaType"] = s["schemaType"]
        if s["references"]:
            out["references"] = s["references"]
        return out

    def _version_body(self, subject, version):
        sid = self.subjects[subject][version - 1]
        out = {"subject": subject, "version": version, "id": sid}
        out.update(self._schema_body(sid))
        return out

    def _route(self, method, parts, raw):
        not_subject = (404, {"error_code": 40401, "message": "Subject not found."})
        if method == "GET" and parts == ["config"]:
            return 200, {"compatibilityLevel": "BACKWARD"}
        if method == "GET" and parts == ["subjects"]:
            return 200, sorted(self.subjects)
        if len(parts) >= 3 and parts[:2] == ["schemas", "ids"] and method == "GET":
            try:
                sid = int(parts[2])
            except ValueError:
                return 404, {"error_code": 40403, "message": "Schema not found"}
            if not 1 <= sid <= len(self.schemas):
                return 404, {"error_code": 40403, "message": f"Schema {sid} not found"}
            if len(parts) == 3:
                return 200, self._schema_body(sid)
            if parts[3:] == ["versions"]:
                return 200, [{"subject": s, "version": i + 1}
                             for s, ids in sorted(self.subjects.items())
                             for i, x in enumerate(ids) if x == sid]
        if len(parts) >= 2 and parts[0] == "subjects":
            subject = parts[1]
            if method == "POST":
                try:
                    req = json.loads(raw or b"{}")
                    text = req["schema"]
                    stype = req.get("schemaType", "AVRO")
                    refs = req.get("references") or []
                    canon = _canonical(text, stype)
                    if stype == "AVRO":
                        import fastavro
                        fastavro.parse_schema(json.loads(text))
                except Exception as e:
                    return 422, {"error_code": 42201, "message": f"Invalid schema: {e}"}
                ids = self.subjects.get(subject, [])
                found = [i for i, sid in enumerate(ids) if self.schemas[sid - 1]["canon"] == canon]
                if len(parts) == 2:  # look up
                    if subject not in self.subjects:
                        return not_subject
                    if not found:
                        return 404, {"error_code": 40403, "message": "Schema not found"}
                    return 200, self._version_body(subject, found[0] + 1)
                if parts[2:] == ["versions"]:  # register
                    if found:
                        return 200, {"id": ids[found[0]]}
                    if ids and not _backward_ok(text, self.schemas[ids[-1] - 1]["schema"]):
                        return 409, {"error_code": 409, "message":
                                     "Schema being registered is incompatible with an earlier "
                                     "schema for subject \"%s\"" % subject}
                    same = [i for i, s in enumerate(self.schemas) if s["canon"] == canon]
                    if same:
                        sid = same[0] + 1
                    else:
                        self.schemas.append({"schema": text, "schemaType": stype,
                                             "references": refs, "canon": canon})
                        sid = len(self.schemas)
                    self.subjects.setdefault(subject, []).append(sid)
                    return 200, {"id": sid}
            if method == "GET":
                if subject not in self.subjects:
                    return not_subject
                ids = self.subjects[subject]
                if parts[2:] == ["versions"]:
                    return 200, list(range(1, len(ids) + 1))
                if len(parts) == 4 and parts[2] == "versions":
                    v = len(ids) if parts[3] == "latest" else int(parts[3]) if parts[3].isdigit() else 0
                    if not 1 <= v <= len(ids):
                        return 404, {"error_code": 40402, "message": "Version not found."}
                    return 200, self._version_body(subject, v)
        return 404, {"error_code": 404, "message": "HTTP 404 Not Found"}
