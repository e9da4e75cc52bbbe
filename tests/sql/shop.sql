-- floe sql acceptance script: a JDBC (SQLite) catalog, a table with every
-- Flink type, a primary key, Iceberg partition transforms and properties,
-- one JSON source routed to three tables by a statement set, and queries
-- over a table and its metadata tables. Paths are relative to the script's
-- working directory (tests/interop/test_sql.py runs it in a fresh folder).
CREATE CATALOG shop WITH (
  'type' = 'iceberg',
  'catalog-type' = 'jdbc',
  'uri' = 'jdbc:sqlite:catalog.db',
  'warehouse' = 'warehouse'
);
USE CATALOG shop;
CREATE DATABASE IF NOT EXISTS sales;
USE sales;

SET 'execution.checkpointing.interval' = '1s';
SET 'pipeline.name' = 'shop-routing';

CREATE TABLE IF NOT EXISTS everything (
  id BIGINT NOT NULL COMMENT 'the key',
  i INT,
  s SMALLINT,
  b BOOLEAN,
  f FLOAT,
  d DOUBLE,
  amount DECIMAL(12, 3),
  name STRING,
  code VARCHAR(8),
  day_ DATE,
  ts TIMESTAMP(6),
  lts TIMESTAMP_LTZ(6),
  raw BYTES,
  tags ARRAY<STRING>,
  attrs MAP<STRING, INT>,
  loc ROW<lat DOUBLE, lon DOUBLE>,
  PRIMARY KEY (id) NOT ENFORCED
) COMMENT 'every type'
PARTITIONED BY (day(lts), bucket(4, id), truncate(2, name))
WITH ('format-version' = '2', 'write.parquet.compression-codec' = 'snappy', 'write.upsert.enabled' = 'false');

CREATE TABLE events (
  id BIGINT,
  kind STRING,
  amount DECIMAL(12, 3),
  lts TIMESTAMP_LTZ(6)
) WITH ('connector' = 'filesystem', 'path' = 'input/events', 'format' = 'json');

CREATE TABLE IF NOT EXISTS clicks (id BIGINT, kind STRING, amount DECIMAL(12, 3), lts TIMESTAMP_LTZ(6));
CREATE TABLE IF NOT EXISTS buys (id BIGINT, kind STRING, amount DECIMAL(12, 3), lts TIMESTAMP_LTZ(6))
  PARTITIONED BY (kind);
CREATE TABLE IF NOT EXISTS big (id BIGINT, amount DECIMAL(12, 3)) PARTITIONED BY (bucket(2, id));

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO clicks SELECT * FROM events WHERE kind = 'click';
  INSERT INTO buys SELECT id, kind, amount, lts FROM events WHERE kind IN ('buy', 'refund') AND amount > 0;
  INSERT INTO big SELECT id, amount FROM events WHERE amount BETWEEN 50 AND 1000;
END;

SELECT id, kind, amount FROM clicks WHERE id < 10 LIMIT 2;
SELECT operation, parent_id FROM buys$snapshots;
SELECT record_count FROM big$files;
