"""The benchmark table's schema, as Arrow and as Iceberg (same as pipeline.yaml)."""
import pyarrow as pa
from pyiceberg.schema import Schema
from pyiceberg.types import (DecimalType, DoubleType, ListType, LongType, NestedField, StringType,
                             TimestamptzType)

ARROW_SCHEMA = pa.schema([
    pa.field("event_id", pa.int64(), nullable=False), ("ts", pa.timestamp("us", tz="UTC")),
    ("user_id", pa.int64()), ("session", pa.string()), ("kind", pa.string()), ("page", pa.string()),
    ("referrer", pa.string()), ("country", pa.string()), ("device", pa.string()),
    ("amount", pa.decimal128(10, 2)), ("latency_ms", pa.float64()), ("tags", pa.list_(pa.string())),
])

ICEBERG_SCHEMA = Schema(
    NestedField(1, "event_id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType(), required=False),
    NestedField(3, "user_id", LongType(), required=False),
    NestedField(4, "session", StringType(), required=False),
    NestedField(5, "kind", StringType(), required=False),
    NestedField(6, "page", StringType(), required=False),
    NestedField(7, "referrer", StringType(), required=False),
    NestedField(8, "country", StringType(), required=False),
    NestedField(9, "device", StringType(), required=False),
    NestedField(10, "amount", DecimalType(10, 2), required=False),
    NestedField(11, "latency_ms", DoubleType(), required=False),
    NestedField(12, "tags", ListType(13, StringType(), element_required=False), required=False),
)
