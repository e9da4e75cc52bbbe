/*
 * fuzz_ddl.c — the user-facing DDL parsers on arbitrary text: the compact
 * column list (floe table create --schema, ingest --create-schema), the
 * partition expression (--partition) and the sort expression (--sort).
 * Input: up to three lines, columns / partition / sort; when the columns do
 * not parse, a schema with every type is used for the other two. A parsed
 * schema must survive its JSON form; a parsed spec must validate against
 * the schema it was parsed with. Nothing may crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/spec.h"
#include "iceberg/types.h"
#include "json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *line(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
	const uint8_t *e = nl ? nl : end;
	size_t n = (size_t)(e - *p);
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, *p, n);
	s[n] = 0;
	*p = nl ? nl + 1 : end;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a;
	floe_schema *s = NULL, *again = NULL;
	floe_partition_spec *spec;
	floe_sort_order *order;
	const uint8_t *p = data, *end = data + size;
	if (size > 8192)
		return 0;
	char *cols = line(&p, end), *part = line(&p, end), *sort = line(&p, end);
	floe_arena_init(&a, 0);
	if (floe_schema_parse_compact(&s, &a, cols, NULL) == 0) {
		floe_buf out;
		floe_json *j;
		floe_jw w;
		floe_buf_init(&out, 0);
		floe_jw_init(&w, &out, 0);
		floe_schema_write_json(&w, s);
		if (w.rc == 0) {
			if (floe_json_parse(&j, &a, (const char *)out.data, out.len, NULL, NULL) != 0 ||
			    floe_schema_from_json(&again, &a, j, NULL) != 0 ||
			    !floe_schema_same_structure(s, again))
				abort(); /* what floe writes it must read back the same */
		}
		floe_buf_reset(&out);
	} else if (floe_schema_parse_compact(
			   &s, &a,
			   "id long not null, i int, s string, d decimal(9, 2), dt date, ts timestamp, "
			   "tz timestamptz, f float, g double, u uuid, b boolean, bin binary, "
			   "fx fixed[4], st struct<x: int, y: string>, l list<int>, m map<string, long>",
			   NULL)) {
		abort();
	}
	int32_t last = 999;
	if (floe_spec_parse_expr(&spec, &a, part, s, 0, &last, NULL) == 0 &&
	    floe_spec_validate(spec, s, NULL) != 0)
		abort(); /* a parsed spec is valid for its schema */
	if (floe_sort_order_parse_expr(&order, &a, sort, s, 1, NULL) == 0)
		(void)order;
	floe_arena_reset(&a);
	free(cols);
	free(part);
	free(sort);
	return 0;
}
