/*
 * fuzz_stream_csv.c — the CSV decoder and the record splitter on arbitrary
 * bytes. The first byte picks the delimiter, quoting and header mode; the
 * first record (when a header is on) names the columns, the rest are
 * records split as the file source splits them. Rejected records must
 * leave the columns as they were; batches must finish into well-formed
 * Arrow arrays.
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "iceberg/arrow_schema.h"
#include "stream/stream_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char delims[] = {',', ';', '\t', '|'};
	floe_arena a;
	floe_schema *s = NULL;
	stream_col root;
	stream_csv_dec d;
	struct ArrowSchema as;
	if (size < 1 || size > (1 << 20))
		return 0;
	uint8_t mode = data[0];
	stream_csv_opts o = {delims[mode & 3], (mode & 4) ? 0 : '"', (mode & 8) != 0,
			     (mode & 16) ? "NULL" : NULL, (mode & 32) != 0};
	floe_arena_init(&a, 0);
	if (floe_schema_parse_compact(&s, &a,
				      "id long not null, name string, amt decimal(8, 2), ts timestamptz, "
				      "ok boolean, tags list<string>, pt struct<x: int>, u uuid",
				      NULL) ||
	    stream_col_init(&root, s->root, NULL, 0, false, NULL) ||
	    floe_iceberg_arrow_schema(&as, s, NULL))
		abort();
	stream_csv_dec_init(&d, &o, NULL);
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	bool header = o.header;
	int records = 0;
	while (p < end) {
		bool complete;
		size_t n = stream_csv_record_len(p, (size_t)(end - p), o.quote, &complete);
		if (n == 0 || n > (size_t)(end - p) || (complete && p[n - 1] != '\n'))
			abort();
		if (header) {
			if (stream_csv_set_header(&d, &root, p, n) == FLOE_ENOMEM)
				abort();
			header = false;
		} else {
			int64_t before = root.len;
			int rc = stream_csv_decode(&d, &root, p, n);
			if (rc == FLOE_OK ? root.len != before + 1 : root.len != before)
				abort();
			if (rc == FLOE_EINVAL && !d.why.msg[0])
				abort();
			if (++records % 5 == 0) {
				struct ArrowArray out;
				if (stream_col_finish(&root, &out) || floe_arrow_check(&as, &out, NULL))
					abort();
				out.release(&out);
			}
		}
		p += n;
	}
	struct ArrowArray out;
	if (stream_col_finish(&root, &out) || floe_arrow_check(&as, &out, NULL))
		abort();
	out.release(&out);
	floe_arrow_schema_release(&as);
	stream_col_reset(&root);
	stream_csv_dec_reset(&d);
	floe_arena_reset(&a);
	return 0;
}
