package floe;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * Java's AppendFiles on the table bench/commit made (bench, not a test):
 *   BenchAppend <catalog.db> <warehouse> <ns.table> <commits>
 * Each commit appends one one-row data file entry (as floe's bench does).
 * CPU of the committing thread per commit (after warm-up commits, so the
 * JIT has compiled the path), on a table loaded once and loaded per commit.
 */
public class BenchAppend {
  static double commit(Table t, int k) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    DataFile f = DataFiles.builder(t.spec())
        .withPath(t.location() + "/data/java-" + k + ".parquet")
        .withFileSizeInBytes(420).withRecordCount(1).withFormat("PARQUET").build();
    long c0 = mx.getCurrentThreadCpuTime();
    t.newAppend().appendFile(f).commit();
    return (mx.getCurrentThreadCpuTime() - c0) / 1e6;
  }

  public static void main(String[] args) {
    JdbcCatalog cat = Peer.open(args[0], args[1]);
    TableIdentifier id = TableIdentifier.parse(args[2]);
    int k = Integer.parseInt(args[3]);
    Table t = cat.loadTable(id);
    int n = t.snapshots() instanceof java.util.Collection ? ((java.util.Collection<?>) t.snapshots()).size() : -1;
    for (int i = 0; i < 5; i++) commit(t, 9000000 + i); // warm up
    double[] held = new double[k], fresh = new double[k];
    for (int i = 0; i < k; i++) held[i] = commit(t, 7000000 + i);
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    for (int i = 0; i < k; i++) {
      long c0 = mx.getCurrentThreadCpuTime();
      Table t2 = cat.loadTable(id);
      double c = commit(t2, 8000000 + i);
      fresh[i] = (mx.getCurrentThreadCpuTime() - c0) / 1e6;
    }
    Arrays.sort(held);
    Arrays.sort(fresh);
    System.out.printf("{\"impl\": \"java\", \"snapshots\": %d, \"commits\": %d, \"held_cpu_ms_median\": %.2f, "
        + "\"held_cpu_ms_best\": %.2f, \"load_and_commit_cpu_ms_median\": %.2f, \"load_and_commit_cpu_ms_best\": %.2f}%n",
        n, k, held[k / 2], held[0], fresh[k / 2], fresh[0]);
  }
}
