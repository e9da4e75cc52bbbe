"""PyIceberg's upsert on the benchmark's change stream: the JSON lines read
with pyarrow, cut into batches of B changes (default 100,000), each batch
reduced to its last change per key (PyIceberg's upsert refuses duplicate keys
in its input) and applied with Table.upsert(join_cols=["id", "region"]) —
copy-on-write: matching rows are rewritten, no delete files.

    bench_pyiceberg.py <changes.jsonl> <warehouse dir> [batch]
"""
import json
import sys
import time

import pyarrow as pa
import pyarrow.json as pj
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType


def main():
    src, wh = sys.argv[1], sys.argv[2]
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    cat.create_namespace("bench")
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "region", StringType(), required=True),
                    NestedField(3, "name", StringType(), required=False),
                    NestedField(4, "v", LongType(), required=False),
                    NestedField(5, "ts", LongType(), required=False),
                    identifier_field_ids=[1, 2])
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    tbl = cat.create_table("bench.up", schema, partition_spec=spec,
                           properties={"format-version": "2"})
    arrow_schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("region", pa.string(), False),
                              pa.field("name", pa.string()), pa.field("v", pa.int64()),
                              pa.field("ts", pa.int64())])
    t = pj.read_json(src).drop_columns(["op"])
    t0 = time.perf_counter()
    n = 0
    for off in range(0, t.num_rows, batch):
        b = t.slice(off, batch)
        # the last change of each key in the batch
        idx = pa.array(range(b.num_rows))
        b = b.append_column("_i", idx)
        last = b.group_by(["id", "region"]).aggregate([("_i", "max")]).column("_i_max")
        b = b.take(last).drop_columns(["_i"])
        b = b.cast(arrow_schema)
        tbl.upsert(b, join_cols=["id", "region"])
        n += b.num_rows
    print(json.dumps({"applied_rows": n, "seconds": round(time.perf_counter() - t0, 2)}), file=sys.stderr)


main()
