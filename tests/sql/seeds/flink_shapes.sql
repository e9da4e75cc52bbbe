-- The shapes of the Flink SQL that Iceberg jobs are written in (catalogs,
-- DDL, SET blocks, hinted and routed INSERTs, time-travel and streaming
-- reads, monitoring queries), written for floe's tests. Every statement
-- here must parse (`floe sql --check`); what runs today is in ../shop.sql
-- and docs/sql.md; seed_snippets.sql is the runnable copy (test_sql.py runs it).
CREATE CATALOG hive_prod WITH (
  'type' = 'iceberg',
  'catalog-type' = 'hive',
  'uri' = 'thrift://metastore:9083',
  'clients' = '5',
  'property-version' = '1',
  'warehouse' = 's3a://bucket/warehouse'
);
CREATE CATALOG glue_catalog WITH (
  'type' = 'iceberg',
  'catalog-impl' = 'org.apache.iceberg.aws.glue.GlueCatalog',
  'io-impl' = 'org.apache.iceberg.aws.s3.S3FileIO',
  'warehouse' = 's3://bucket/warehouse'
);
CREATE CATALOG rest_catalog WITH ('type'='iceberg', 'catalog-type'='rest', 'uri'='http://rest:8181');
USE CATALOG hive_prod;
CREATE DATABASE IF NOT EXISTS shop;
USE shop;

SET 'execution.checkpointing.interval' = '60s';
SET 'execution.checkpointing.min-pause' = '10s';
SET 'execution.runtime-mode' = 'streaming';
SET 'table.exec.iceberg.use-v2-sink' = 'true';
SET 'pipeline.name' = 'orders-to-iceberg';
SET 'parallelism.default' = '4';
SET execution.runtime-mode = streaming;
SET table.dynamic-table-options.enabled=true;

CREATE TABLE orders (
  order_id BIGINT,
  customer_id BIGINT,
  amount DECIMAL(10, 2),
  status STRING,
  order_ts TIMESTAMP(3),
  PRIMARY KEY (order_id) NOT ENFORCED
) PARTITIONED BY (status) WITH (
  'format-version' = '2',
  'write.upsert.enabled' = 'true'
);
CREATE TABLE my_table (
  id BIGINT COMMENT 'unique id',
  data STRING NOT NULL,
  category STRING,
  ts TIMESTAMP_LTZ(6)
) PARTITIONED BY (category) WITH (
  'format-version' = '2',
  'write.format.default' = 'parquet',
  'write.parquet.compression-codec' = 'zstd',
  'write.target-file-size-bytes' = '536870912',
  'write.distribution-mode' = 'hash',
  'write.metadata.delete-after-commit.enabled' = 'true',
  'write.metadata.previous-versions-max' = '10',
  'history.expire.max-snapshot-age-ms' = '86400000',
  'commit.manifest-merge.enabled' = 'true'
);
CREATE TABLE my_table_copy LIKE my_table;
CREATE TABLE events_by_day (id BIGINT, ts TIMESTAMP_LTZ(6), name STRING)
  PARTITIONED BY (day(ts), bucket(16, id), truncate(4, name));

ALTER TABLE my_table SET ('write.format.default' = 'parquet');
ALTER TABLE my_table RESET ('write.distribution-mode');
ALTER TABLE my_table RENAME TO my_table_v2;
ALTER TABLE my_table_v2 ADD COLUMN note STRING;
ALTER TABLE my_table_v2 RENAME COLUMN note TO remark;
ALTER TABLE my_table_v2 DROP COLUMN remark;

SET 'compaction-enabled' = 'true';
SET 'flink-maintenance.lock.type' = 'jdbc';
SET 'flink-maintenance.lock.jdbc.uri' = 'jdbc:postgresql://db:5432/locks';
SET 'flink-maintenance.lock.lock-id' = 'orders';
SET 'flink-maintenance.rewrite.schedule.commit-count' = '10';
SET 'flink-maintenance.rewrite.schedule.data-file-count' = '1000';
SET 'flink-maintenance.rewrite.schedule.interval-second' = '600';
SET 'flink-maintenance.rewrite.target-file-size-bytes' = '134217728';
SET 'flink-maintenance.rate-limit-seconds' = '60';
SET 'flink-maintenance.expire-snapshots.max-snapshot-age-seconds' = '432000';
SET 'flink-maintenance.expire-snapshots.retain-last' = '5';

CREATE TEMPORARY TABLE kinesis_source (
  event_type STRING,
  order_id BIGINT,
  customer_id BIGINT,
  amount DECIMAL(10, 2),
  status STRING,
  order_ts TIMESTAMP(3),
  WATERMARK FOR order_ts AS order_ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kinesis',
  'stream' = 'orders',
  'aws.region' = 'us-east-1',
  'scan.stream.initpos' = 'LATEST',
  'format' = 'json'
);
INSERT INTO orders /*+ OPTIONS('upsert-enabled'='true') */
SELECT order_id, customer_id, amount, status, order_ts FROM kinesis_source WHERE event_type = 'ORDER';

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO orders SELECT order_id, customer_id, amount, status, order_ts FROM kinesis_source
    WHERE event_type = 'ORDER';
  INSERT INTO refunds SELECT order_id, amount, order_ts FROM kinesis_source WHERE event_type = 'REFUND';
  INSERT INTO audit SELECT * FROM kinesis_source;
END;

INSERT OVERWRITE my_table_v2 SELECT * FROM my_table_copy;
INSERT INTO my_table_v2 VALUES (1, 'a', 'x', TIMESTAMP '2024-01-01 00:00:00');

SELECT * FROM my_table_v2 /*+ OPTIONS('snapshot-id'='3821550127947089987') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('as-of-timestamp'='1700000000000') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('branch'='audit') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('tag'='v1') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('streaming'='true', 'monitor-interval'='10s') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('streaming'='true', 'monitor-interval'='10s',
  'start-snapshot-id'='3821550127947089987') */;

SELECT file_path, file_size_in_bytes, record_count FROM shop.my_table_v2$files
  WHERE file_size_in_bytes < 10485760;
SELECT `partition`, record_count, file_count FROM shop.my_table_v2$partitions
  ORDER BY record_count DESC;
SELECT committed_at, snapshot_id, operation, summary['added-records'] AS added
  FROM shop.my_table_v2$snapshots WHERE committed_at > CURRENT_TIMESTAMP - INTERVAL '1' HOUR
  ORDER BY committed_at DESC LIMIT 10;
SELECT COUNT(*) AS files, AVG(file_size_in_bytes) AS avg_size FROM shop.my_table_v2$files;
SELECT status, COUNT(DISTINCT customer_id), SUM(amount) FROM orders GROUP BY status HAVING SUM(amount) > 100;
SELECT o.order_id, r.amount FROM orders o JOIN refunds r ON o.order_id = r.order_id;
DESCRIBE my_table_v2;
SHOW CREATE TABLE my_table_v2;
DROP TABLE IF EXISTS my_table_copy;
DROP DATABASE IF EXISTS scratch;
