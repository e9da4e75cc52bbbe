CREATE CATALOG glue WITH ('type'='iceberg', 'catalog-impl'='org.apache.iceberg.aws.glue.GlueCatalog', 'warehouse'='s3://b/w');
CREATE CATALOG j WITH ('type'='iceberg', 'catalog-type'='jdbc', 'uri'='jdbc:sqlite:/tmp/c.db', 'jdbc.user'='u');
CREATE TABLE my_table (
  id BIGINT COMMENT 'unique id', data STRING NOT NULL, c CHAR(3), v VARCHAR(10), d DEC(5), t TIME(3),
  ts TIMESTAMP(3) WITHOUT TIME ZONE, lt TIMESTAMP WITH LOCAL TIME ZONE, b BINARY(16), vb VARBINARY(4),
  m MULTISET<INT>, r ROW(a INT NOT NULL, b ARRAY<MAP<STRING, ROW<x BIGINT>>>), dp DOUBLE PRECISION,
  comp AS id + 1, meta TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  CONSTRAINT pk PRIMARY KEY (id) NOT ENFORCED
) COMMENT 'a table' PARTITIONED BY (bucket(16, id), truncate(4, data), days(ts), `c`)
WITH ('format-version'='2', 'write.upsert.enabled'='true', 'n' = 5, 'b' = true);
ALTER TABLE my_table SET ('k'='v'); ALTER TABLE my_table RESET ('k');
ALTER TABLE my_table RENAME TO t2; ALTER TABLE t2 ADD (a INT, b STRING COMMENT 'x');
ALTER TABLE t2 RENAME COLUMN a TO aa; ALTER TABLE t2 DROP (aa, b);
DROP TABLE IF EXISTS t2; DROP DATABASE IF EXISTS db CASCADE; SHOW CURRENT CATALOG; SHOW TABLES FROM c.db;
DESCRIBE EXTENDED t; DESC t; SHOW CREATE TABLE t; RESET; RESET 'a.b';
