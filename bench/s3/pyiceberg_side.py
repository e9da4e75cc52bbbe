"""PyIceberg on the benchmark's S3 server (bench_s3.py runs it as its own process).
    pyiceberg_side.py write <catalog uri> <warehouse> <s3 props json> <in.jsonl>
    pyiceberg_side.py read  <catalog uri> <warehouse> <s3 props json>
write: pyarrow's read_json, then Table.append into the same day-partitioned zstd
table floe writes (bench/ingest/schema.py); read: scan().to_arrow() of it."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))

import pyarrow.json as pj  # noqa: E402
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.transforms import DayTransform  # noqa: E402

from schema import ARROW_SCHEMA, ICEBERG_SCHEMA  # noqa: E402

mode, uri, wh, props = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
cat = SqlCatalog("py", uri=uri, warehouse=wh, **props)
if mode == "write":
    cat.create_namespace("bench")
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=DayTransform(),
                                        name="ts_day"))
    tbl = cat.create_table("bench.events", schema=ICEBERG_SCHEMA, partition_spec=spec,
                           properties={"write.parquet.compression-codec": "zstd"})
    t = pj.read_json(sys.argv[5], parse_options=pj.ParseOptions(explicit_schema=ARROW_SCHEMA))
    tbl.append(t.cast(ARROW_SCHEMA))
else:
    n = cat.load_table("bench.events").scan().to_arrow().num_rows
    print(n)
