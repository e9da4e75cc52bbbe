/*
 * fuzz_cdc.c — the change-record decoders on arbitrary bytes: Debezium JSON
 * (upsert and CDC plans, with and without the schema envelope required, a
 * source.ts_ms column) and plain JSON records with a row-kind column. The
 * first byte picks the mode (bit 32: the records are Kafka keys, decoded
 * as an upsert tombstone's key); the rest are records, one per line. After
 * every record the columns must be consistent (a rejected record leaves
 * them as they were; an accepted one adds 0, 1 or 2 rows), every reported
 * kind is a floe_row_kind, every accepted row holds its key, and the batch
 * is a well-formed Arrow array.
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "iceberg/arrow_schema.h"
#include "stream/stream_decode_cdc.h"
#include "write/write.h"

static void check_col(const stream_col *c, int64_t len)
{
	if (c->len != len)
		abort();
	if (c->kind == SB_STRUCT)
		for (size_t i = 0; i < c->n_kids; i++)
			check_col(&c->kids[i], len);
	if ((c->kind == SB_LIST || c->kind == SB_MAP) && len > 0)
		for (size_t i = 0; i < c->n_kids; i++)
			check_col(&c->kids[i], c->offs[len]);
	if (c->kind == SB_BIN && len > 0 && (size_t)c->offs[len] != c->data_len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* every top-level column optional, as a delta table decodes them */
	static const char *schema = "id long, region string, name string, v long, ts timestamptz, "
				    "tags list<string>, op string";
	floe_arena a;
	floe_schema *s = NULL;
	stream_col root;
	stream_json_dec jd;
	struct ArrowSchema as;
	if (size < 1 || size > (1 << 20))
		return 0;
	int mode = data[0] % 4; /* 0,1 Debezium upsert/CDC; 2 Debezium envelope required; 3 rowkind */
	floe_arena_init(&a, 0);
	if (floe_schema_parse_compact(&s, &a, schema, NULL) ||
	    stream_col_init(&root, s->root, NULL, 0, false, NULL) ||
	    floe_iceberg_arrow_schema(&as, s, NULL))
		abort();
	stream_json_dec_init(&jd, NULL);
	static const int32_t keys[] = {0, 1}, required[] = {0, 1, 3};
	stream_cdc_plan pl = {mode != 1, mode == 2, keys, 2, required, data[0] & 8 ? 3 : 0,
			      data[0] & 16 ? 4 : -1, mode == 3 ? 6 : -1};
	stream_cdc_dec d = {&pl, &jd, {{0}}};
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		int64_t before = root.len;
		uint8_t kinds[2] = {9, 9};
		int rows = 0, rc;
		if (mode == 3) {
			rc = stream_json_decode(&jd, &root, p, n);
			if (rc == FLOE_OK) {
				rows = 1;
				rc = stream_cdc_row_kind(&d, &root, before, &kinds[0]);
				if (rc == FLOE_EINVAL) {
					stream_col_truncate(&root, before);
					rows = 0;
				}
			}
		} else if (data[0] & 32) {
			/* a tombstone's key (an upsert delete by key) */
			rc = stream_cdc_decode_key(&d, &root, p, n);
			if (rc == FLOE_OK) {
				rows = 1;
				kinds[0] = FLOE_ROW_DELETE;
				rc = stream_cdc_check_row(&d, &root, before, kinds[0]);
				if (rc == FLOE_EINVAL) {
					stream_col_truncate(&root, before);
					rows = 0;
				}
			}
		} else {
			rc = stream_cdc_decode_debezium(&d, &root, p, n, kinds, &rows);
		}
		if (rc != FLOE_OK && rc != FLOE_EINVAL && rc != FLOE_ENOMEM)
			abort();
		if (rc == FLOE_OK ? root.len != before + rows : root.len != before)
			abort();
		if (rows < 0 || rows > 2 || (rc == FLOE_EINVAL && !d.why.msg[0] && !jd.why.msg[0]))
			abort();
		for (int k = 0; rc == FLOE_OK && k < rows; k++) {
			if (kinds[k] > FLOE_ROW_DELETE)
				abort();
			if (stream_col_is_null(&root.kids[0], before + k) ||
			    stream_col_is_null(&root.kids[1], before + k))
				abort(); /* accepted without its key */
		}
		check_col(&root, root.len);
		p += n;
	}
	struct ArrowArray out;
	if (stream_col_finish(&root, &out) || floe_arrow_check(&as, &out, NULL))
		abort();
	out.release(&out);
	/* the kind words */
	uint8_t k;
	(void)stream_cdc_parse_kind((const char *)data, size < 32 ? size : 32, &k);
	floe_arrow_schema_release(&as);
	stream_col_reset(&root);
	stream_json_dec_reset(&jd);
	floe_arena_reset(&a);
	return 0;
}
