-- a Flink SQL job
CREATE CATALOG hadoop_cat WITH (
  'type' = 'iceberg',
  'catalog-type' = 'hadoop',
  'warehouse' = 'file:///tmp/k_sql/wh'
);
USE CATALOG hadoop_cat;
CREATE DATABASE IF NOT EXISTS db;
USE db;
SET 'execution.checkpointing.interval' = '1s';
CREATE TABLE IF NOT EXISTS `events` (
  id BIGINT NOT NULL COMMENT 'the id',
  kind STRING,
  amount DECIMAL(10, 2),
  ts TIMESTAMP_LTZ(6),
  tags ARRAY<STRING>,
  attrs MAP<STRING, INT>,
  loc ROW<lat DOUBLE, lon DOUBLE>,
  PRIMARY KEY (id) NOT ENFORCED
) PARTITIONED BY (day(ts), bucket(4, id)) WITH ('write.parquet.compression-codec' = 'zstd', 'format-version' = '2');
CREATE TABLE src (id BIGINT, kind STRING, amount DECIMAL(10, 2), ts TIMESTAMP_LTZ(6), tags ARRAY<STRING>, attrs MAP<STRING, INT>, loc ROW<lat DOUBLE, lon DOUBLE>)
  WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'json');
INSERT INTO events SELECT * FROM src WHERE kind = 'buy';
SHOW TABLES;
DESCRIBE events;
SHOW CREATE TABLE events;
SELECT id, kind, amount FROM events WHERE id > 1 LIMIT 5;
SELECT snapshot_id, operation FROM events$snapshots;
ALTER TABLE events SET ('write.target-file-size-bytes' = '1000000');
ALTER TABLE events ADD COLUMN note STRING COMMENT 'added';
ALTER TABLE events RENAME COLUMN note TO remark;
ALTER TABLE events DROP COLUMN remark;
ALTER TABLE events RESET ('write.target-file-size-bytes');
SHOW CATALOGS;
SHOW DATABASES;
