/*
 * reader.h — reading Parquet files into Arrow batches.
 *
 * Open a floe_input (the footer is read and checked), look at the schema tree
 * and the row groups' metadata and statistics, select columns by schema node
 * index (a group selects every leaf below it; the caller resolves Iceberg
 * field ids or name mappings against floe_parquet_reader_schema), optionally
 * a subset of row groups, then pull batches: a struct ArrowArray of the
 * selected top-level fields, with nested structs, lists and maps rebuilt
 * from the levels. Legacy 2-level lists, bare repeated fields and
 * differently named list/map layouts are recognised by structure (spec:
 * LogicalTypes.md "Backward-compatibility rules").
 *
 * Output types: BOOLEAN "b"; INT32 "i" (or by annotation "c","s","C","S","I",
 * "tdD","ttm"); INT64 "l" ("L","ttu","ttn","ts?:[UTC]"); INT96 "tsn:" (or
 * "tsu:"); FLOAT "f"; DOUBLE "g"; BYTE_ARRAY "z" (STRING/ENUM/JSON "u");
 * FIXED_LEN_BYTE_ARRAY "w:N" (FLOAT16 "e"); DECIMAL in any physical type
 * "d:P,S" (decimal128); the UNKNOWN (null) annotation "n". Field ids are
 * exported as "PARQUET:field_id" field metadata.
 *
 * Untrusted input: every offset, length and count from the file is checked
 * before use; a corrupt file gives FLOE_ECORRUPT naming the file, column,
 * row group and page; encrypted files and external column chunks give
 * FLOE_EUNSUPPORTED.
 *
 * Checksums (verify_checksums): a page whose header has a crc is checked
 * against the CRC-32 of its bytes as stored, before anything is decoded;
 * a mismatch is FLOE_ECORRUPT "'f' column 'a.b' row group 0 page 3 at
 * offset 12345: checksum 0x… != 0x… in its header (the page is damaged)"
 * (pages count from 1, a dictionary page included). Pages without a crc
 * are read as they are. Off by default, as in parquet-java and pyarrow:
 * a byte flipped inside PLAIN values decodes to a different, valid value,
 * which only the checksum can reveal — so code that rewrites data turns it
 * on.
 *
 * Ownership: the reader borrows the input (the caller closes it after
 * floe_parquet_reader_free). Returned batches are owned by the caller
 * (release them). Metadata pointers stay valid until the reader is freed.
 * Thread-safety: one thread at a time per reader.
 */
#ifndef FLOE_PARQUET_READER_H
#define FLOE_PARQUET_READER_H

#include "floe/arrow.h"
#include "floe/common.h"
#include "parquet/meta.h"
#include "parquet/schema.h"
#include "util/stream.h"

typedef struct floe_parquet_reader floe_parquet_reader;

typedef struct floe_parquet_reader_opts {
	int version;             /* of this struct: 1 */
	int64_t batch_rows;      /* rows per batch at most (65536) */
	bool int96_as_micros;    /* INT96 as timestamp[us] instead of [ns] */
	bool verify_checksums;   /* check page CRCs when present (false) */
	size_t max_page_bytes;   /* cap on one page, compressed or not (1 GiB) */
	size_t max_footer_bytes; /* cap on the footer (256 MiB) */
	size_t max_page_values;  /* cap on one page's level count (2^28) */
} floe_parquet_reader_opts;

#define FLOE_PARQUET_READER_OPTS_INIT                                                         \
	{1, 65536, false, false, (size_t)1 << 30, (size_t)256 << 20, (size_t)1 << 28}

int floe_parquet_reader_open(floe_parquet_reader **out, floe_input *in,
			     const floe_parquet_reader_opts *opts, floe_error *err) FLOE_WUR;
void floe_parquet_reader_free(floe_parquet_reader *r);

const floe_parquet_file_meta *floe_parquet_reader_meta(const floe_parquet_reader *r);
const floe_parquet_schema *floe_parquet_reader_schema(const floe_parquet_reader *r);

/*
 * Select the columns to read by schema node index (floe_parquet_node.index;
 * 0, the root, means everything). The batch holds the top-level fields that
 * contain a selected node, in schema order, with structs pruned to what is
 * selected (a map is always read whole). The default is everything.
 * FLOE_EINVAL for an index out of range; resets the read position.
 */
int floe_parquet_reader_select(floe_parquet_reader *r, const int *nodes, size_t n,
			       floe_error *err) FLOE_WUR;

/* Read only these row groups (in this order); NULL/0 = all. Resets. */
int floe_parquet_reader_select_row_groups(floe_parquet_reader *r, const int *row_groups,
					  size_t n, floe_error *err) FLOE_WUR;

/* The Arrow schema of the batches for the current selection (caller releases). */
int floe_parquet_reader_arrow_schema(floe_parquet_reader *r, struct ArrowSchema *out,
				     floe_error *err) FLOE_WUR;

/*
 * The next batch (at most batch_rows rows, never spanning row groups) into
 * *out, which the caller releases. At the end *eof is set and *out is left
 * released (out->release == NULL).
 */
int floe_parquet_reader_next(floe_parquet_reader *r, struct ArrowArray *out, bool *eof,
			     floe_error *err) FLOE_WUR;

#endif
