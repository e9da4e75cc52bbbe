package floe.peers;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.core.fs.Path;
import org.apache.flink.formats.common.TimestampFormat;
import org.apache.flink.formats.json.JsonParserRowDataDeserializationSchema;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.SimpleUserCodeClassLoader;
import org.apache.flink.util.UserCodeClassLoader;
import org.apache.iceberg.DistributionMode;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;

/**
 * The Flink side of floe's ingest and upsert benchmarks (bench/peers/run-flink.sh):
 * JSON lines files -> Flink DataStream (local MiniCluster) -> Iceberg's FlinkSink
 * on a HadoopCatalog table created here through the Iceberg Java API (Flink SQL
 * DDL cannot declare day(ts)).
 *
 *   FlinkIngest ingest|upsert <warehouse> <parallelism> <checkpoint ms> <zstd level> <input files...>
 *
 * ingest: bench/ingest's table (schema.py / pipeline.yaml): day(ts), zstd, HASH, v2.
 * upsert: bench/upsert's table: identity(region), equality fields id,region,
 * upsert mode, Flink's row kind taken from the record's "op" (+I / +U).
 *
 *   FlinkIngest kafka <warehouse> <parallelism> <checkpoint ms> <zstd level> <bootstrap servers> <topic>
 *
 * kafka: bench/kafka's table (run.py's pipeline: id long not null, ts_ms, user,
 * kind, amount double, pad; unpartitioned, zstd, distribution none, v2) fed by
 * Flink's KafkaSource from the earliest offsets, bounded at the latest offsets
 * of its start (so the job ends and can be timed); the values decoded by
 * Flink's JSON format as the SQL `json` format does for a Kafka table.
 * Prints one JSON line (table location, snapshot count) on stdout at the end.
 */
public final class FlinkIngest {
  static Schema ingestSchema() {
    return new Schema(
        Types.NestedField.required(1, "event_id", Types.LongType.get()),
        Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
        Types.NestedField.optional(3, "user_id", Types.LongType.get()),
        Types.NestedField.optional(4, "session", Types.StringType.get()),
        Types.NestedField.optional(5, "kind", Types.StringType.get()),
        Types.NestedField.optional(6, "page", Types.StringType.get()),
        Types.NestedField.optional(7, "referrer", Types.StringType.get()),
        Types.NestedField.optional(8, "country", Types.StringType.get()),
        Types.NestedField.optional(9, "device", Types.StringType.get()),
        Types.NestedField.optional(10, "amount", Types.DecimalType.of(10, 2)),
        Types.NestedField.optional(11, "latency_ms", Types.DoubleType.get()),
        Types.NestedField.optional(12, "tags", Types.ListType.ofOptional(13, Types.StringType.get())));
  }

  static Schema upsertSchema() {
    // identifier fields = the equality fields (Flink's upsert needs them to be required)
    return new Schema(
        List.of(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.required(2, "region", Types.StringType.get()),
            Types.NestedField.optional(3, "name", Types.StringType.get()),
            Types.NestedField.optional(4, "v", Types.LongType.get()),
            Types.NestedField.optional(5, "ts", Types.LongType.get())),
        java.util.Set.of(1, 2));
  }

  static Schema kafkaSchema() {
    return new Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "ts_ms", Types.LongType.get()),
        Types.NestedField.optional(3, "user", Types.StringType.get()),
        Types.NestedField.optional(4, "kind", Types.StringType.get()),
        Types.NestedField.optional(5, "amount", Types.DoubleType.get()),
        Types.NestedField.optional(6, "pad", Types.StringType.get()));
  }

  /** JSON line -> RowData with Flink's own JSON format (the one the SQL `json` format uses). */
  static final class ParseJson extends RichMapFunction<String, RowData> {
    private final RowType rowType;
    private final boolean rowKindInOp;
    private transient JsonParserRowDataDeserializationSchema json;

    ParseJson(RowType rowType, boolean rowKindInOp) {
      this.rowType = rowType;
      this.rowKindInOp = rowKindInOp;
    }

    @Override
    public void open(Configuration parameters) throws Exception {
      json = new JsonParserRowDataDeserializationSchema(
          rowType, InternalTypeInfo.of(rowType), false, false, TimestampFormat.ISO_8601);
      final ClassLoader cl = getClass().getClassLoader();
      json.open(new DeserializationSchema.InitializationContext() {
        @Override public MetricGroup getMetricGroup() { return new UnregisteredMetricsGroup(); }
        @Override public UserCodeClassLoader getUserCodeClassLoader() { return SimpleUserCodeClassLoader.create(cl); }
      });
    }

    @Override
    public RowData map(String line) throws Exception {
      RowData row = json.deserialize(line.getBytes(StandardCharsets.UTF_8));
      if (rowKindInOp) {
        int at = line.indexOf("\"op\":\"");
        if (at < 0) throw new IllegalArgumentException("no \"op\" in: " + line);
        row.setRowKind(rowKind(line.substring(at + 6, at + 8)));
      }
      return row;
    }
  }

  static RowKind rowKind(String shortString) {
    for (RowKind k : RowKind.values()) if (k.shortString().equals(shortString)) return k;
    throw new IllegalArgumentException("unknown row kind " + shortString);
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 6 || (args[0].equals("kafka") && args.length != 7)) {
      System.err.println("usage: FlinkIngest ingest|upsert <warehouse> <parallelism> <checkpoint ms> <zstd level> <input files...>\n"
          + "       FlinkIngest kafka <warehouse> <parallelism> <checkpoint ms> <zstd level> <bootstrap servers> <topic>");
      System.exit(2);
    }
    final boolean upsert = args[0].equals("upsert");
    final boolean kafka = args[0].equals("kafka");
    final String warehouse = args[1];
    final int parallelism = Integer.parseInt(args[2]);
    final long checkpointMs = Long.parseLong(args[3]);
    final String zstdLevel = args[4];
    final List<Path> inputs = new ArrayList<>();
    if (!kafka)
      for (int i = 5; i < args.length; i++) inputs.add(Path.fromLocalFile(new java.io.File(args[i])));

    org.apache.hadoop.conf.Configuration hadoop = new org.apache.hadoop.conf.Configuration();
    HadoopCatalog catalog = new HadoopCatalog(hadoop, warehouse);
    Schema schema = upsert ? upsertSchema() : kafka ? kafkaSchema() : ingestSchema();
    PartitionSpec spec = upsert
        ? PartitionSpec.builderFor(schema).identity("region").build()
        : kafka ? PartitionSpec.unpartitioned() : PartitionSpec.builderFor(schema).day("ts").build();
    // floe's bench/kafka pipeline: no distribution (each task writes what it reads)
    final DistributionMode distribution = kafka ? DistributionMode.NONE : DistributionMode.HASH;
    Map<String, String> props = new HashMap<>();
    props.put("format-version", "2");
    props.put("write.parquet.compression-codec", "zstd");
    props.put("write.parquet.compression-level", zstdLevel);
    props.put("write.distribution-mode", distribution.modeName());
    if (upsert) props.put("write.upsert.enabled", "true");
    TableIdentifier id = TableIdentifier.of(Namespace.of("bench"), upsert ? "up" : "events");
    Table table = catalog.createTable(id, schema, spec, props);
    final String location = table.location();

    Configuration conf = new Configuration();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    env.enableCheckpointing(checkpointMs);

    RowType rowType = FlinkSchemaUtil.convert(schema);
    DataStream<RowData> rows;
    if (kafka) {
      // the value bytes go straight to Flink's JSON format (KafkaSource opens it)
      KafkaSource<RowData> source = KafkaSource.<RowData>builder()
          .setBootstrapServers(args[5])
          .setTopics(args[6])
          .setGroupId("floe-peer-flink")
          .setStartingOffsets(OffsetsInitializer.earliest())
          .setBounded(OffsetsInitializer.latest())
          .setDeserializer(KafkaRecordDeserializationSchema.valueOnly(
              new JsonParserRowDataDeserializationSchema(
                  rowType, InternalTypeInfo.of(rowType), false, false, TimestampFormat.ISO_8601)))
          .build();
      rows = env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka");
    } else {
      FileSource<String> source =
          FileSource.forRecordStreamFormat(new TextLineInputFormat(), inputs.toArray(new Path[0])).build();
      rows = env
          .fromSource(source, WatermarkStrategy.noWatermarks(), "json-lines")
          .map(new ParseJson(rowType, upsert), InternalTypeInfo.of(rowType))
          .name("parse-json");
    }

    FlinkSink.Builder sink = FlinkSink.forRowData(rows)
        .table(table)
        .tableLoader(TableLoader.fromHadoopTable(location, hadoop))
        .distributionMode(distribution)
        .writeParallelism(parallelism);
    if (upsert) sink = sink.equalityFieldColumns(List.of("id", "region")).upsert(true);
    sink.append();
    env.execute(upsert ? "floe-peer-upsert" : kafka ? "floe-peer-kafka" : "floe-peer-ingest");

    table.refresh();
    int snapshots = 0;
    for (var s : table.snapshots()) snapshots++;
    System.out.println("{\"location\": \"" + location + "\", \"metadata\": \""
        + ((org.apache.iceberg.HasTableOperations) table).operations().current().metadataFileLocation()
        + "\", \"snapshots\": " + snapshots + "}");
  }
}
