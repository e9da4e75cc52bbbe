"""PyIceberg's append of the same records into the same partitioned zstd table
(records read with pyarrow's read_json first, as PyIceberg takes Arrow tables).
    bench_pyiceberg.py <in.jsonl> <warehouse dir>"""
import json
import sys
import time

import pyarrow.json as pj
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.transforms import DayTransform

from schema import ARROW_SCHEMA, ICEBERG_SCHEMA

wh = sys.argv[2]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
cat.create_namespace("bench")
spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"))
tbl = cat.create_table("bench.events", schema=ICEBERG_SCHEMA, partition_spec=spec,
                       properties={"write.parquet.compression-codec": "zstd"})
t0 = time.time()
t = pj.read_json(sys.argv[1], parse_options=pj.ParseOptions(explicit_schema=ARROW_SCHEMA))
t = t.cast(ARROW_SCHEMA)  # read_json leaves every field nullable
t1 = time.time()
tbl.append(t)
t2 = time.time()
print(json.dumps({"side": "pyiceberg", "rows": t.num_rows,
                  "read_s": round(t1 - t0, 3), "append_s": round(t2 - t1, 3)}))
