#!/usr/bin/env python3
"""Generate iceberg_expected.tsv: for every Avro manifest and manifest list
under $FLOE_TESTDATA (outside arrow-testing), the record count and one
identifying value of the first record as read by DuckDB's avro extension:
manifest lists -> manifest_path and the added files count (field-id 504,
named added_files_count or added_data_files_count by Java version);
manifests -> status and data_file.file_path.

Run: .venv/bin/python tests/data/avro/gen_iceberg_expected.py > tests/data/avro/iceberg_expected.tsv
"""
import glob
import os

import duckdb
from duckdb_extensions import import_extension

ROOT = os.environ.get("FLOE_TESTDATA", "/work/shared/testdata")


def main():
    con = duckdb.connect()
    import_extension("avro", con=con)
    con.execute("LOAD avro")
    paths = sorted(p for p in glob.glob(os.path.join(ROOT, "**/*.avro"), recursive=True)
                   if "/arrow-testing/" not in p)
    print("# path\tcount\tkind\tvalue1\tvalue2")
    for p in paths:
        rel = os.path.relpath(p, ROOT)
        try:
            cur = con.execute("select * from read_avro(?) limit 0", [p])
        except Exception as e:  # not an Avro file (the encrypted list)
            print(f"{rel}\t-1\terror\t-\t-")
            continue
        cols = [d[0] for d in cur.description]
        n = con.execute("select count(*) from read_avro(?)", [p]).fetchone()[0]
        # only the needed columns: timestamptz partition values need pytz
        if "manifest_path" in cols:
            kind = "list"
            cnt = "added_files_count" if "added_files_count" in cols else "added_data_files_count"
            row = con.execute(f"select manifest_path, {cnt} from read_avro(?) limit 1",
                              [p]).fetchone()
            v1, v2 = row if row else ("-", "-")
        elif "data_file" in cols:
            kind = "manifest"
            row = con.execute("select status, data_file.file_path from read_avro(?) limit 1",
                              [p]).fetchone()
            v1, v2 = row if row else ("-", "-")
        else:
            kind = "other"
            v1 = v2 = "-"
        v2 = "null" if v2 is None else v2
        print(f"{rel}\t{n}\t{kind}\t{v1}\t{v2}")


if __name__ == "__main__":
    main()
