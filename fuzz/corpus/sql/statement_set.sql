SET 'execution.checkpointing.interval' = '10s';
SET pipeline.name = routing;
EXECUTE STATEMENT SET BEGIN
  INSERT INTO orders /*+ OPTIONS('upsert-enabled'='true', 'write-parallelism'='2') */
    SELECT * FROM kinesis_source WHERE event_type = 'ORDER';
  INSERT INTO `db`.`clicks` (id, ts) SELECT id, ts FROM src WHERE kind IN ('a', 'b') AND NOT amount BETWEEN -1.5e3 AND 10;
END;
BEGIN STATEMENT SET; INSERT INTO a SELECT x FROM s; END;
SELECT * FROM db.t$snapshots /*+ OPTIONS('snapshot-id'='123') */ WHERE x IS NOT NULL LIMIT 10;
SELECT COUNT(*), SUM(DISTINCT a), CAST(b AS DECIMAL(10,2)), CASE WHEN a > 1 THEN 'x' ELSE 'y' END AS c
  FROM t GROUP BY b HAVING COUNT(*) > 1 ORDER BY c DESC;
SELECT CURRENT_TIMESTAMP - INTERVAL '1' HOUR, DATE '2024-01-01', TIMESTAMP '2024-01-01 00:00:00' FROM t;
