/*
 * fuzz_stream_json.c — the schema-directed JSON-lines decoder on arbitrary
 * bytes. The first byte picks one of a few schemas (every type, nesting);
 * the rest are records, one per line. After every record the columns must
 * be consistent (a rejected record leaves them as they were), and every
 * batch — a view of the builders or a finished array — must be a
 * well-formed Arrow array. At every byte, the decoder's one-pass number
 * path must agree with the general one wherever it answers.
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "iceberg/arrow_schema.h"
#include "json/json.h"
#include "stream/stream_decode.h"

static const char *const SCHEMAS[] = {
	"id long not null, s string, d double, ok boolean, ts timestamptz, day date, "
	"amt decimal(10, 2), u uuid, b binary, fx fixed[3], t time, i int, f float, "
	"nts timestamp_ns",
	"id int, tags list<string>, attrs map<string, long>, pt struct<x: double, y: double not null>, "
	"deep list<struct<a: map<int, list<string>>, b: string>>",
	"s string not null",
};

/* Every column of a struct has the struct's length; lists' children end at
 * their last offset. */
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

/* stream_json__fast_number against floe_json_number_len + stream_parse_*. */
static void check_numbers(const char *p, const char *end)
{
	for (const char *q = p; q < end; q++) {
		bool is_int = false, d_ok = false;
		int64_t i = 0, gi;
		double d = 0, gd;
		size_t n = stream_json__fast_number(q, end, &is_int, &i, &d_ok, &d);
		if (!n)
			continue;
		if (n > (size_t)(end - q) || floe_json_number_len(q, n) != n)
			abort();
		if (is_int && (!stream_parse_i64(q, n, &gi) || gi != i))
			abort();
		if (d_ok && (!stream_parse_f64(q, n, &gd) || memcmp(&gd, &d, sizeof(d))))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a;
	floe_schema *s = NULL;
	stream_col root;
	stream_json_dec d;
	struct ArrowSchema as;
	if (size < 1 || size > (1 << 20))
		return 0;
	floe_arena_init(&a, 0);
	if (floe_schema_parse_compact(&s, &a, SCHEMAS[data[0] % 3], NULL) ||
	    stream_col_init(&root, s->root, NULL, 0, false, NULL) ||
	    floe_iceberg_arrow_schema(&as, s, NULL))
		abort();
	stream_coerce_opts o = {(stream_epoch_unit)(data[0] / 3 % 4)};
	stream_json_dec_init(&d, &o);
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	check_numbers(p, end);
	int records = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		int64_t before = root.len;
		int rc = stream_json_decode(&d, &root, p, n);
		if (rc == FLOE_OK ? root.len != before + 1 : root.len != before)
			abort();
		if (rc != FLOE_OK && rc != FLOE_EINVAL && rc != FLOE_ENOMEM)
			abort();
		if (rc == FLOE_EINVAL && !d.why.msg[0])
			abort();
		check_col(&root, root.len);
		p += n;
		if (++records % 7 == 0) {
			/* alternately a view of the builders (reused) and a finished batch */
			struct ArrowArray out;
			bool view = records % 14 == 0;
			if (view ? stream_col_view(&root, &out) : stream_col_finish(&root, &out))
				abort();
			if (floe_arrow_check(&as, &out, NULL))
				abort();
			out.release(&out);
			if (view)
				stream_col_truncate(&root, 0);
		}
	}
	struct ArrowArray out;
	if (stream_col_finish(&root, &out) || floe_arrow_check(&as, &out, NULL))
		abort();
	out.release(&out);
	floe_arrow_schema_release(&as);
	stream_col_reset(&root);
	stream_json_dec_reset(&d);
	floe_arena_reset(&a);
	return 0;
}
