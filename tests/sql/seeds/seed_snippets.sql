-- The seed guides' Flink SQL snippets (flink_shapes.sql), as written, with only what the issue
-- allows changed so that they run here: the catalog is a JDBC (SQLite) catalog with a local
-- warehouse instead of Hive on S3; the Kinesis source reads the same JSON records from files;
-- the maintenance lock's database is SQLite. More changes, each marked "runnable:": the orders
-- key, the statement set's other two targets, the branch and tag the hints read,
-- and the time-travel ids and streaming reads are the test's (tests/interop/test_sql.py
-- substitutes ${SNAPSHOT_ID} and ${AS_OF_MS}; a streaming SELECT gets a LIMIT so that it ends).
CREATE CATALOG hive_prod WITH (
  'type' = 'iceberg',
  'catalog-type' = 'jdbc',
  'uri' = 'jdbc:sqlite:catalog.db',
  'clients' = '5',
  'property-version' = '1',
  'warehouse' = 'warehouse'
);
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
  -- runnable: the key holds the partition column; as written (PRIMARY KEY (order_id)) Flink's
  -- sink and floe both refuse the upsert INSERT, since a delete would miss a row that changed
  -- partition (test_sql.py checks floe's refusal)
  PRIMARY KEY (order_id, status) NOT ENFORCED
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
SET 'flink-maintenance.lock.jdbc.uri' = 'jdbc:sqlite:locks.db';
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
  'connector' = 'filesystem',
  'path' = 'input/orders',
  'format' = 'json'
);
INSERT INTO orders /*+ OPTIONS('upsert-enabled'='true') */
SELECT order_id, customer_id, amount, status, order_ts FROM kinesis_source WHERE event_type = 'ORDER';

-- runnable: the statement set's other targets
CREATE TABLE refunds (order_id BIGINT, amount DECIMAL(10, 2), order_ts TIMESTAMP(3));
CREATE TABLE audit (event_type STRING, order_id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2),
  status STRING, order_ts TIMESTAMP(3));
EXECUTE STATEMENT SET
BEGIN
  INSERT INTO orders SELECT order_id, customer_id, amount, status, order_ts FROM kinesis_source
    WHERE event_type = 'ORDER';
  INSERT INTO refunds SELECT order_id, amount, order_ts FROM kinesis_source WHERE event_type = 'REFUND';
  INSERT INTO audit SELECT * FROM kinesis_source;
END;

INSERT OVERWRITE my_table_v2 SELECT * FROM my_table_copy;
INSERT INTO my_table_v2 VALUES (1, 'a', 'x', TIMESTAMP '2024-01-01 00:00:00');

-- runnable: the branch and the tag the hints below read
ALTER TABLE my_table_v2 CREATE BRANCH audit;
ALTER TABLE my_table_v2 CREATE TAG v1;

SELECT * FROM my_table_v2 /*+ OPTIONS('snapshot-id'='${SNAPSHOT_ID}') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('as-of-timestamp'='${AS_OF_MS}') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('branch'='audit') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('tag'='v1') */;
SELECT * FROM my_table_v2 /*+ OPTIONS('streaming'='true', 'monitor-interval'='10s') */ LIMIT 1;
SELECT * FROM my_table_v2 /*+ OPTIONS('streaming'='true', 'monitor-interval'='10s',
  'start-snapshot-id'='${SNAPSHOT_ID}') */ LIMIT 1;

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
