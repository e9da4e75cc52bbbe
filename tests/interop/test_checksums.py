"""Page checksums: a flipped byte can never silently change data.

floe writes the CRC-32 of every Parquet page (parquet-format PageHeader.crc,
as parquet-java does by default); pyarrow with page_checksum_verification
and DuckDB read floe's files. A byte flipped inside the PLAIN values of an
uncompressed data page (the issue: row 8412 changed, and compaction made the
change permanent) is caught: `floe maintain --steps compact` verifies the
pages it rewrites and stops, naming the file, column, row group and page,
with the table unchanged; `floe scan --verify-checksums` fails the same way;
`floe scan` without the flag does not check (as Spark and PyIceberg read) and
returns the damaged value — the documented default. floe also verifies the
CRCs pyarrow writes (write_page_checksum=True), and `floe parquet rewrite`
refuses a damaged input.
"""
import json
import re
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import duckdb_connection

ROWS_PER_FILE = 1000
PAGE_ROWS = 100


def local(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def ingest_table(floe, tmp_path, name, n_files=5, props=()):
    """n_files data files of ROWS_PER_FILE rows: id, v = id * 1000003, s."""
    for k in range(n_files):
        src = tmp_path / f"{name}-{k}.jsonl"
        with open(src, "w") as f:
            for i in range(k * ROWS_PER_FILE, (k + 1) * ROWS_PER_FILE):
                f.write(json.dumps({"id": i, "v": i * 1000003, "s": f"x{i % 7}"}) + "\n")
        args = ["ingest", f"db.{name}", src, "--create-schema", "id long not null, v long, s string",
                "--parallelism", 1, "--quiet",
                "--property", "write.parquet.compression-codec=uncompressed",
                # floe honours Iceberg's dict-size-bytes = 0: no dictionary, PLAIN pages
                "--property", "write.parquet.dict-size-bytes=0",
                "--property", f"write.parquet.page-row-limit={PAGE_ROWS}"]
        for p in props:
            args += ["--property", p]
        floe.run(*args)


def data_files(floe, name):
    return sorted(local(r["file_path"]) for r in floe.json_rows("files", f"db.{name}")
                  if r["content"] == "DATA")


def snapshot_id(floe, name):
    return floe.pyiceberg_catalog().load_table(f"db.{name}").current_snapshot().snapshot_id


def chunk_end(c):
    """End of a column chunk (it starts at its dictionary page when it has one)."""
    start = c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset
    return start + c.total_compressed_size


def flip_value_byte(path, column="v"):
    """Flip one byte inside the last value of the column's last data page
    (PLAIN, uncompressed: the chunk ends with that page's values). Returns
    the offset flipped and the column chunk's range."""
    md = pq.ParquetFile(path).metadata
    names = [md.row_group(0).column(i).path_in_schema for i in range(md.num_columns)]
    c = md.row_group(0).column(names.index(column))
    assert not c.has_dictionary_page and "PLAIN" in c.encodings and c.compression == "UNCOMPRESSED"
    start, end = c.data_page_offset, c.data_page_offset + c.total_compressed_size
    at = end - 3
    b = bytearray(Path(path).read_bytes())
    b[at] ^= 0x10
    Path(path).write_bytes(bytes(b))
    return at, start, end


PAGE_ERR = re.compile(r"column 'v' row group 0 page (\d+) at offset (\d+): checksum 0x[0-9a-f]{8} != "
                      r"0x[0-9a-f]{8} in its header \(the page is damaged")


def check_page_error(stderr, path, at, start):
    assert path in stderr, stderr
    m = PAGE_ERR.search(stderr)
    assert m, stderr
    page, offset = int(m.group(1)), int(m.group(2))
    assert page == ROWS_PER_FILE // PAGE_ROWS  # the last page (pages count from 1)
    assert start <= offset < at


def test_compaction_refuses_a_damaged_page(floe, tmp_path):
    ingest_table(floe, tmp_path, "cmp")
    files = data_files(floe, "cmp")
    assert len(files) == 5
    before_snap = snapshot_id(floe, "cmp")
    data_dir = Path(files[0]).parent
    on_disk = sorted(str(p) for p in data_dir.iterdir())
    damaged = files[2]
    at, start, _ = flip_value_byte(damaged)

    p = floe.run("maintain", "db.cmp", "--steps", "compact", "--target-file-size", "1MB",
                 "--min-input-files", 2, check=False)
    assert p.returncode != 0
    check_page_error(p.stderr, damaged, at, start)
    # the table is unchanged: same snapshot, the damaged file still referenced,
    # nothing deleted and nothing left behind
    assert snapshot_id(floe, "cmp") == before_snap
    assert data_files(floe, "cmp") == files
    assert sorted(str(p) for p in data_dir.iterdir()) == on_disk

    # undamaged, the same compaction goes through (the sizes make it a candidate)
    b = bytearray(Path(damaged).read_bytes())
    b[at] ^= 0x10
    Path(damaged).write_bytes(bytes(b))
    r = json.loads(floe.run("maintain", "db.cmp", "--steps", "compact", "--target-file-size", "1MB",
                            "--min-input-files", 2, "--format", "json").stdout)
    assert r["compact"]["data_files_rewritten"] == 5
    assert len(data_files(floe, "cmp")) == 1


def test_scan_verify_checksums(floe, tmp_path):
    ingest_table(floe, tmp_path, "scn", n_files=2)
    files = data_files(floe, "scn")
    damaged = files[0]
    first_id = pq.read_table(damaged).column("id")[0].as_py()
    at, start, _ = flip_value_byte(damaged)

    p = floe.run("scan", "db.scn", "--verify-checksums", "--format", "json", check=False)
    assert p.returncode != 0
    check_page_error(p.stderr, damaged, at, start)
    assert "--verify-checksums" in floe.run("scan", "--help").stdout

    # without the flag the pages are not checked (the default, as Spark and
    # PyIceberg read): the damaged value comes back, every other row intact
    rows = floe.json_rows("scan", "db.scn")
    assert len(rows) == 2 * ROWS_PER_FILE
    wrong = [r for r in rows if r["v"] != r["id"] * 1000003]
    assert len(wrong) == 1
    assert wrong[0]["id"] == first_id + ROWS_PER_FILE - 1  # the file's last row
    # pyarrow with verification agrees that the page is damaged
    with pytest.raises(OSError, match="CRC checksum verification failed"):
        pq.read_table(damaged, page_checksum_verification=True)


@pytest.mark.parametrize("props", [
    ("write.parquet.page-version=v1",),
    ("write.parquet.page-version=v2",),
    ("write.parquet.page-version=v2", "write.parquet.compression-codec=zstd",
     "write.parquet.dict-size-bytes=2097152"),
    ("write.parquet.compression-codec=snappy", "write.parquet.dict-size-bytes=2097152"),
], ids=["v1-plain", "v2-plain", "v2-zstd-dict", "v1-snappy-dict"])
def test_pyarrow_and_duckdb_read_floe_files(floe, tmp_path, props):
    ingest_table(floe, tmp_path, "rd", n_files=1, props=props)
    (path,) = data_files(floe, "rd")
    t = pq.read_table(path, page_checksum_verification=True)
    assert t.num_rows == ROWS_PER_FILE
    assert t.column("v").to_pylist() == [i * 1000003 for i in range(ROWS_PER_FILE)]
    con = duckdb_connection()
    assert con.execute(f"SELECT count(*), sum(v) FROM read_parquet('{path}')").fetchone() == \
        (ROWS_PER_FILE, sum(i * 1000003 for i in range(ROWS_PER_FILE)))
    meta = floe.pyiceberg_catalog().load_table("db.rd").metadata_location
    assert con.execute(f"SELECT count(*) FROM iceberg_scan('{meta}')").fetchone() == (ROWS_PER_FILE,)
    # floe verifies its own pages
    assert len(floe.json_rows("scan", "db.rd", "--verify-checksums")) == ROWS_PER_FILE
    # the CRCs are really there: a flipped stored byte fails pyarrow's check
    md = pq.ParquetFile(path).metadata
    c = md.row_group(0).column(1)
    b = bytearray(Path(path).read_bytes())
    b[chunk_end(c) - 1] ^= 0x01
    Path(path).write_bytes(bytes(b))
    with pytest.raises(OSError, match="CRC checksum verification failed"):
        pq.read_table(path, page_checksum_verification=True)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [False, True])
@pytest.mark.parametrize("codec", ["none", "snappy"])
def test_floe_verifies_pyarrow_checksums(floe, tmp_path, version, dictionary, codec):
    n = 5000
    t = pa.table({"id": pa.array(range(n), pa.int64()),
                  "v": pa.array([None if i % 9 == 4 else f"s{i % 50}" for i in range(n)])})
    path = tmp_path / "pa.parquet"
    pq.write_table(t, path, write_page_checksum=True, data_page_version=version,
                   use_dictionary=dictionary, compression=codec, data_page_size=4096)
    p = floe.run("parquet", "cat", "--verify-crc", path)
    assert len(p.stdout.splitlines()) == n
    # one byte flipped at the end of column v's chunk (its last data page)
    c = pq.ParquetFile(path).metadata.row_group(0).column(1)
    b = bytearray(path.read_bytes())
    b[chunk_end(c) - 2] ^= 0x08
    path.write_bytes(bytes(b))
    p = floe.run("parquet", "cat", "--verify-crc", path, check=False)
    assert p.returncode != 0
    assert str(path) in p.stderr and "column 'v' row group 0 page " in p.stderr, p.stderr
    assert "the page is damaged" in p.stderr, p.stderr
    # floe parquet rewrite always verifies: damage is not given fresh checksums
    out = tmp_path / "re.parquet"
    p = floe.run("parquet", "rewrite", path, out, check=False)
    assert p.returncode != 0 and "the page is damaged" in p.stderr, p.stderr
    # pyarrow agrees
    with pytest.raises(OSError, match="CRC checksum verification failed"):
        pq.read_table(path, page_checksum_verification=True)
