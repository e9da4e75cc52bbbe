package floe;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.JsonUtil;

/**
 * Java's JdbcCatalog on floe's catalog file.
 *   read  <catalog.db> <warehouse>             JSON lines: one per table (schema, spec, snapshots, files)
 *   write <catalog.db> <warehouse> <ns.table> <path:records:kind>...   create + one append
 *   dv    <catalog.db> <warehouse> <ns.table> <data file path>=<pos,pos,...>...
 *         deletion vectors (one Puffin file) for live data files, committed as a row delta
 *   scan  <catalog.db> <warehouse> <ns.table> [branch or tag]
 *         the table's rows through IcebergGenerics (deletes applied), one JSON object a line
 *   scan-at <catalog.db> <warehouse> <ns.table>@<snapshot id>...
 *         the rows of each table's snapshot in one JVM, each JSON object with "_table" and
 *         "_snapshot"
 *   append  <catalog.db> <warehouse> <ns.table> <path:records:partition-path>...
 *         one AppendFiles on an existing table (prints the snapshot id)
 *   replace <catalog.db> <warehouse> <ns.table> <from-snapshot> <path:records:partition-path>...
 *         ReplacePartitions validated from a snapshot (validateNoConflictingData): prints
 *         "ok <snapshot id>" or "conflict: <Java's message>"
 *   count <catalog.db> <warehouse> <ns.table> [repeats]
 *         (bench/upsert) reads the table through IcebergGenerics `repeats` times (default 3)
 *         in one JVM and prints {"rows":N,"ms":[...],"cpu_ms":[...]} — wall and CPU time (of the
 *         whole JVM, GC and JIT included) of each read, warm-up included
 */
public class Peer {
  static JdbcCatalog open(String db, String warehouse) {
    JdbcCatalog cat = new JdbcCatalog();
    Map<String, String> props = new HashMap<>();
    props.put("uri", "jdbc:sqlite:" + db);
    props.put("warehouse", warehouse);
    props.put("io-impl", LocalFileIO.class.getName());
    cat.setConf(null);
    cat.initialize("default", props);
    return cat;
  }

  public static void main(String[] args) throws Exception {
    JdbcCatalog cat = open(args[1], args[2]);
    if (args[0].equals("read")) {
      read(cat);
    } else if (args[0].equals("dv")) {
      dv(cat, args);
    } else if (args[0].equals("scan")) {
      scan(cat, args);
    } else if (args[0].equals("scan-at")) {
      scanAt(cat, args);
    } else if (args[0].equals("append") || args[0].equals("replace")) {
      appendOrReplace(cat, args);
    } else if (args[0].equals("count")) {
      count(cat, args);
    } else {
      write(cat, args);
    }
  }

  static void read(JdbcCatalog cat) throws IOException {
    for (Namespace ns : cat.listNamespaces()) {
      for (TableIdentifier id : cat.listTables(ns)) {
        Table t = cat.loadTable(id);
        List<String> files = new ArrayList<>();
        long rows = 0;
        try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
          for (FileScanTask task : tasks) {
            DataFile f = task.file();
            rows += f.recordCount();
            files.add(f.location() + "|" + f.recordCount() + "|" + f.fileSizeInBytes() + "|"
                + t.specs().get(f.specId()).partitionToPath(f.partition()));
          }
        }
        List<String> snaps = new ArrayList<>();
        for (Snapshot s : t.snapshots()) {
          snaps.add(s.snapshotId() + "|" + s.parentId() + "|" + s.sequenceNumber() + "|" + s.operation()
              + "|" + s.summary().get("total-records"));
        }
        String json = JsonUtil.generate(gen -> {
          gen.writeStartObject();
          gen.writeStringField("table", id.toString());
          gen.writeNumberField("format_version",
              ((HasTableOperations) t).operations().current().formatVersion());
          gen.writeStringField("schema", SchemaParser.toJson(t.schema()));
          gen.writeStringField("spec", PartitionSpecParser.toJson(t.spec()));
          gen.writeArrayFieldStart("snapshots");
          for (String s : snaps) gen.writeString(s);
          gen.writeEndArray();
          gen.writeArrayFieldStart("files");
          for (String s : files) gen.writeString(s);
          gen.writeEndArray();
          gen.writeNumberField("rows", 0L + 0);
          gen.writeEndObject();
        }, false);
        System.out.println(json.replace("\"rows\":0", "\"rows\":" + rows));
      }
    }
  }

  static void dv(JdbcCatalog cat, String[] args) throws IOException {
    Table t = cat.loadTable(TableIdentifier.parse(args[3]));
    Map<String, DataFile> live = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        live.put(task.file().location(), task.file());
      }
    }
    OutputFileFactory files = OutputFileFactory.builderFor(t, 1, 1).format(FileFormat.PUFFIN).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, path -> null);
    for (int i = 4; i < args.length; i++) {
      int eq = args[i].lastIndexOf('=');
      String path = args[i].substring(0, eq);
      DataFile f = live.get(path);
      if (f == null) {
        throw new IllegalArgumentException("not a live data file: " + path);
      }
      for (String pos : args[i].substring(eq + 1).split(",")) {
        writer.delete(f.location(), Long.parseLong(pos), t.specs().get(f.specId()), f.partition());
      }
    }
    writer.close();
    DeleteWriteResult result = writer.result();
    RowDelta delta = t.newRowDelta();
    for (DeleteFile d : result.deleteFiles()) {
      delta.addDeletes(d);
    }
    delta.commit();
    System.out.println(t.currentSnapshot().snapshotId());
  }

  /** Java's generic reader: position deletes, equality deletes and DVs applied. */
  static void count(JdbcCatalog cat, String[] args) throws IOException {
    int repeats = args.length > 4 ? Integer.parseInt(args[4]) : 3;
    long rows = 0;
    StringBuilder ms = new StringBuilder(), cpu = new StringBuilder();
    // the whole process's CPU: Iceberg reads delete files on a worker pool
    com.sun.management.OperatingSystemMXBean mx = (com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    for (int i = 0; i < repeats; i++) {
      long t0 = System.nanoTime(), c0 = mx.getProcessCpuTime();
      Table t = cat.loadTable(TableIdentifier.parse(args[3]));
      rows = 0;
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        for (Record r : it) {
          rows++;
        }
      }
      ms.append(i > 0 ? "," : "").append((System.nanoTime() - t0) / 1000000);
      cpu.append(i > 0 ? "," : "").append((mx.getProcessCpuTime() - c0) / 1000000);
    }
    System.out.println("{\"rows\":" + rows + ",\"ms\":[" + ms + "],\"cpu_ms\":[" + cpu + "]}");
  }

  static void scan(JdbcCatalog cat, String[] args) throws IOException {
    Table t = cat.loadTable(TableIdentifier.parse(args[3]));
    IcebergGenerics.ScanBuilder sb = IcebergGenerics.read(t);
    if (args.length > 4) {
      sb = sb.useSnapshot(t.snapshot(args[4]).snapshotId());
    }
    StringBuilder out = new StringBuilder();
    rows(t, sb, null, null, out);
    System.out.print(out);
  }

  static void scanAt(JdbcCatalog cat, String[] args) throws IOException {
    StringBuilder out = new StringBuilder();
    for (int i = 3; i < args.length; i++) {
      int at = args[i].lastIndexOf('@');
      String name = args[i].substring(0, at);
      long id = Long.parseLong(args[i].substring(at + 1));
      Table t = cat.loadTable(TableIdentifier.parse(name));
      rows(t, IcebergGenerics.read(t).useSnapshot(id), name, id, out);
    }
    System.out.print(out);
  }

  static void rows(Table t, IcebergGenerics.ScanBuilder sb, String name, Long snapshot,
      StringBuilder out) throws IOException {
    try (CloseableIterable<Record> rows = sb.build()) {
      for (Record r : rows) {
        List<Types.NestedField> fields = t.schema().columns();
        String json = JsonUtil.generate(gen -> {
          gen.writeStartObject();
          if (snapshot != null) {
            gen.writeStringField("_table", name);
            gen.writeNumberField("_snapshot", snapshot);
          }
          for (Types.NestedField f : fields) {
            Object v = r.getField(f.name());
            if (v == null) {
              gen.writeNullField(f.name());
            } else if (v instanceof Integer || v instanceof Long) {
              gen.writeNumberField(f.name(), ((Number) v).longValue());
            } else if (v instanceof Float || v instanceof Double) {
              gen.writeNumberField(f.name(), ((Number) v).doubleValue());
            } else if (v instanceof Boolean) {
              gen.writeBooleanField(f.name(), (Boolean) v);
            } else {
              gen.writeStringField(f.name(), v.toString());
            }
          }
          gen.writeEndObject();
        }, false);
        out.append(json).append('\n');
      }
    }
  }

  static DataFile dataFile(Table t, String arg) throws IOException {
    String[] parts = arg.split(":");
    return DataFiles.builder(t.spec())
        .withPath("file://" + parts[0])
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(Files.size(java.nio.file.Paths.get(parts[0])))
        .withRecordCount(Long.parseLong(parts[1]))
        .withPartitionPath(parts[2])
        .build();
  }

  static void appendOrReplace(JdbcCatalog cat, String[] args) throws IOException {
    Table t = cat.loadTable(TableIdentifier.parse(args[3]));
    if (args[0].equals("append")) {
      AppendFiles append = t.newAppend();
      for (int i = 4; i < args.length; i++) {
        append.appendFile(dataFile(t, args[i]));
      }
      append.commit();
      System.out.println(t.currentSnapshot().snapshotId());
      return;
    }
    org.apache.iceberg.ReplacePartitions rp = t.newReplacePartitions()
        .validateFromSnapshot(Long.parseLong(args[4])).validateNoConflictingData();
    for (int i = 5; i < args.length; i++) {
      rp.addFile(dataFile(t, args[i]));
    }
    try {
      rp.commit();
      System.out.println("ok " + t.currentSnapshot().snapshotId());
    } catch (org.apache.iceberg.exceptions.ValidationException e) {
      System.out.println("conflict: " + e.getMessage());
    }
  }

  static void write(JdbcCatalog cat, String[] args) throws IOException {
    TableIdentifier id = TableIdentifier.parse(args[3]);
    if (!cat.namespaceExists(id.namespace())) {
      cat.createNamespace(id.namespace());
    }
    Schema schema = new Schema(
        Types.NestedField.optional(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "kind", Types.StringType.get()));
    PartitionSpec spec = PartitionSpec.builderFor(schema).identity("kind").build();
    Map<String, String> props = new HashMap<>();
    props.put("schema.name-mapping.default",
        "[{\"field-id\":1,\"names\":[\"id\"]},{\"field-id\":2,\"names\":[\"kind\"]}]");
    Table t = cat.createTable(id, schema, spec, props);
    AppendFiles append = t.newAppend();
    for (int i = 4; i < args.length; i++) {
      String[] parts = args[i].split(":");
      String path = parts[0];
      append.appendFile(DataFiles.builder(t.spec())
          .withPath("file://" + path)
          .withFormat(FileFormat.PARQUET)
          .withFileSizeInBytes(Files.size(java.nio.file.Paths.get(path)))
          .withRecordCount(Long.parseLong(parts[1]))
          .withPartitionPath("kind=" + parts[2])
          .build());
    }
    append.commit();
    System.out.println(t.currentSnapshot().snapshotId());
  }
}
