-- the ALTER statements on shop.sql's tables (run after it)
CREATE CATALOG shop WITH ('type' = 'iceberg', 'catalog-type' = 'jdbc',
  'uri' = 'jdbc:sqlite:catalog.db', 'warehouse' = 'warehouse');
USE CATALOG shop;
USE sales;
ALTER TABLE clicks SET ('write.target-file-size-bytes' = '134217728', 'commit.retry.num-retries' = '5');
ALTER TABLE clicks RESET ('commit.retry.num-retries');
ALTER TABLE clicks ADD COLUMN note STRING COMMENT 'added later';
ALTER TABLE clicks ADD (score DOUBLE, extra ROW<a INT, b ARRAY<STRING>>);
ALTER TABLE clicks RENAME COLUMN note TO remark;
ALTER TABLE clicks DROP COLUMN score;
ALTER TABLE big RENAME TO large;
DESCRIBE clicks;
SHOW TABLES;
