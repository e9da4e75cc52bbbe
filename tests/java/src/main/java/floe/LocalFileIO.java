package floe;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

/** A FileIO on local files without Hadoop (test peer only). */
public class LocalFileIO implements FileIO {
  static Path path(String location) {
    if (location.startsWith("file:")) {
      return Paths.get(URI.create(location.startsWith("file:///") ? location : "file://" + location.substring(5)));
    }
    return Paths.get(location);
  }

  @Override
  public InputFile newInputFile(String location) {
    return new InputFile() {
      @Override public long getLength() {
        try { return Files.size(path(location)); } catch (IOException e) { throw new UncheckedIOException(e); }
      }
      @Override public SeekableInputStream newStream() {
        try {
          RandomAccessFile f = new RandomAccessFile(path(location).toFile(), "r");
          return new SeekableInputStream() {
            @Override public long getPos() throws IOException { return f.getFilePointer(); }
            @Override public void seek(long pos) throws IOException { f.seek(pos); }
            @Override public int read() throws IOException { return f.read(); }
            @Override public int read(byte[] b, int off, int len) throws IOException { return f.read(b, off, len); }
            @Override public void close() throws IOException { f.close(); }
          };
        } catch (FileNotFoundException e) {
          throw new org.apache.iceberg.exceptions.NotFoundException(e, "not found: %s", location);
        }
      }
      @Override public String location() { return location; }
      @Override public boolean exists() { return Files.exists(path(location)); }
    };
  }

  @Override
  public OutputFile newOutputFile(String location) {
    return new OutputFile() {
      PositionOutputStream open(boolean overwrite) {
        try {
          Path p = path(location);
          Files.createDirectories(p.getParent());
          OutputStream os = overwrite
              ? Files.newOutputStream(p)
              : Files.newOutputStream(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
          return new PositionOutputStream() {
            long pos = 0;
            @Override public long getPos() { return pos; }
            @Override public void write(int b) throws IOException { os.write(b); pos++; }
            @Override public void write(byte[] b, int off, int len) throws IOException { os.write(b, off, len); pos += len; }
            @Override public void flush() throws IOException { os.flush(); }
            @Override public void close() throws IOException { os.close(); }
          };
        } catch (FileAlreadyExistsException e) {
          throw new org.apache.iceberg.exceptions.AlreadyExistsException("exists: %s", location);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      @Override public PositionOutputStream create() { return open(false); }
      @Override public PositionOutputStream createOrOverwrite() { return open(true); }
      @Override public String location() { return location; }
      @Override public InputFile toInputFile() { return newInputFile(location); }
    };
  }

  @Override
  public void deleteFile(String location) {
    try { Files.deleteIfExists(path(location)); } catch (IOException e) { throw new UncheckedIOException(e); }
  }
}
