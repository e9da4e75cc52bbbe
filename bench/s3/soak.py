"""The 1M-record fault soak of issue 14's acceptance: with the fault proxy
(tests/interop/s3_server.py) answering 10% of floe's S3 requests with 503
SlowDown, 500 InternalError, a connection reset or a cut body, one
load of N records (default 1,000,000) into a table of the REST
catalog on the tests' S3 server (Ceph's RADOS Gateway), then `floe maintain` (compaction first),
must leave every record exactly once, every file the snapshots name in
place, and no multipart upload behind. The load is ten `floe ingest` runs
of one input file each (one pipeline id), each committing every 100 ms
(many snapshots, each data file a multipart upload of 5 MiB parts or a
PUT), so that the faults land in table loads, commits, uploads and reads
alike.

CI runs the same check at 500K (tests/interop/test_s3_rest_crash.py,
test_large_ingest_and_compaction_under_faults); this is the full size.
Usage: bench/s3/soak.sh [records] (prints one JSON line with the result).
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "interop"))

from rest_server import RestServer  # noqa: E402
from s3_server import FaultProxy, RgwS3  # noqa: E402

FAST_RETRY = ["s3.retry.min-wait-ms=5", "s3.retry.max-wait-ms=40", "s3.retry.num-retries=10"]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    floe = os.environ.get("FLOE_BIN", str(ROOT / "build" / "release" / "floe"))
    tmp = Path(tempfile.mkdtemp(prefix="floe-s3-soak-"))
    src = tmp / "in"
    src.mkdir()
    files = 10
    per = n // files
    for k in range(files):
        with (src / f"part-{k}.jsonl").open("w") as f:
            for i in range(k * per, (k + 1) * per):
                f.write('{"id":%d,"kind":"k%d","v":%d.25}\n' % (i, i % 7, i % 1000))
    n = files * per
    s3 = RgwS3(tmp / "rgw")
    s3.bucket("floe")
    rest = RestServer(s3, "floe", tmp / "rest.log", tmp)
    faults = FaultProxy(s3.port, rate=0.10, seed=1405)
    env = s3.env(faults.endpoint)
    result = {"records": n, "fault_rate": 0.10}
    try:
        def run(step, *args):
            cmd = [floe, "--catalog-type", "rest", "--catalog-uri", rest.uri,
                   "--warehouse", rest.warehouse]
            for p in FAST_RETRY:
                cmd += ["--catalog-property", p]
            t0 = time.monotonic()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run(cmd + [str(a) for a in args], env=env, capture_output=True,
                               text=True, timeout=3600)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                raise SystemExit(f"{step} failed ({p.returncode}):\n{p.stderr[-4000:]}")
            result[step] = {"wall_s": round(time.monotonic() - t0, 2),
                            "cpu_s": round(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, 2),
                            "requests": faults.requests}
            return p

        run("namespace", "namespace", "create", "soak")
        # one ingest per input file: a fast build reads 1M records in a few
        # checkpoints, too few requests (41 once) for every kind of fault to
        # land; ten runs load the table, commit and upload ten times over
        for k in range(files):
            extra = ["--create-schema", "id long not null, kind string, v double"] if k == 0 else []
            run(f"ingest-{k}", "ingest", "soak.events", src / f"part-{k}.jsonl", *extra,
                "--pipeline-id", "soak", "--checkpoint-interval", "100ms", "--block-size", "256KiB",
                "--catalog-property", "s3.multipart.part-size-bytes=5242880",
                "--parallelism", "2", "--quiet")
        ingests = [result.pop(f"ingest-{k}") for k in range(files)]
        result["ingest"] = {"runs": files,
                            "wall_s": round(sum(r["wall_s"] for r in ingests), 2),
                            "cpu_s": round(sum(r["cpu_s"] for r in ingests), 2),
                            "requests": ingests[-1]["requests"]}
        run("maintain", "maintain", "soak.events", "--lock-uri", f"sqlite:///{tmp}/locks.db",
            "--min-input-files", "2")
        result["faults"] = dict(faults.counts)
        result["proxied_requests"] = faults.requests
    finally:
        faults.stop()
    try:
        from pyiceberg.catalog.rest import RestCatalog

        tbl = RestCatalog("rest", uri=rest.uri, warehouse=rest.warehouse,
                          **s3.pyiceberg_props()).load_table("soak.events")
        ids = tbl.scan(selected_fields=("id",)).to_arrow().column("id")
        import pyarrow.compute as pc

        result["rows"] = len(ids)
        result["distinct_ids"] = pc.count_distinct(ids).as_py()
        result["operation"] = tbl.current_snapshot().summary.operation.value
        result["snapshots"] = len(tbl.metadata.snapshots)
        cl = s3.client()
        missing = 0
        checked = set()
        for snap in tbl.metadata.snapshots:
            for t in tbl.scan(snapshot_id=snap.snapshot_id).plan_files():
                p = t.file.file_path
                if p in checked:
                    continue
                checked.add(p)
                bucket, key = p.removeprefix("s3://").split("/", 1)
                try:
                    if cl.head_object(Bucket=bucket, Key=key)["ContentLength"] != t.file.file_size_in_bytes:
                        missing += 1
                except Exception:
                    missing += 1
        result["files_checked"] = len(checked)
        result["files_missing_or_wrong_size"] = missing
        result["multipart_uploads_left"] = len(
            cl.list_multipart_uploads(Bucket="floe", Prefix="rest/soak").get("Uploads", []))
        ok = (result["rows"] == n and result["distinct_ids"] == n and missing == 0
              and result["multipart_uploads_left"] == 0 and result["operation"] == "replace"
              and all(v > 0 for v in result["faults"].values()))
        result["ok"] = ok
        print(json.dumps(result))
        sys.exit(0 if ok else 1)
    finally:
        rest.stop()
        s3.stop()


if __name__ == "__main__":
    main()
