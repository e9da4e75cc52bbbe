/*
 * fuzz_expr.c — the filter expression parser and binder on arbitrary text:
 * parse, push NOT down, bind against a schema with every primitive type,
 * project onto a spec with every transform, print; the printed form of a
 * bound expression must compile again. Nothing may crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "scan/scan_expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *spec_json =
		"{\"spec-id\":1,\"fields\":["
		"{\"name\":\"a\",\"transform\":\"bucket[8]\",\"source-id\":2,\"field-id\":1000},"
		"{\"name\":\"b\",\"transform\":\"truncate[3]\",\"source-id\":3,\"field-id\":1001},"
		"{\"name\":\"c\",\"transform\":\"day\",\"source-id\":6,\"field-id\":1002},"
		"{\"name\":\"e\",\"transform\":\"hour\",\"source-id\":7,\"field-id\":1003},"
		"{\"name\":\"f\",\"transform\":\"month\",\"source-id\":5,\"field-id\":1004},"
		"{\"name\":\"g\",\"transform\":\"year\",\"source-id\":5,\"field-id\":1005},"
		"{\"name\":\"h\",\"transform\":\"identity\",\"source-id\":4,\"field-id\":1006},"
		"{\"name\":\"k\",\"transform\":\"truncate[10]\",\"source-id\":1,\"field-id\":1007}]}";
	floe_arena a;
	floe_schema *s;
	floe_expr *u, *b, *p;
	floe_json *j;
	floe_partition_spec *spec;
	if (size > 4096)
		return 0;
	floe_arena_init(&a, 0);
	if (floe_schema_parse_compact(&s, &a,
				      "id long not null, i int, s string, d decimal(9, 2), dt date, "
				      "ts timestamp, tz timestamptz, f float, g double, u uuid, "
				      "b boolean, bin binary, fx fixed[4], st struct<x: int, y: string>",
				      NULL) ||
	    floe_json_parse(&j, &a, spec_json, strlen(spec_json), NULL, NULL) ||
	    floe_spec_from_json(&spec, &a, j, 1, NULL))
		abort();
	if (floe_expr_parse(&u, &a, (const char *)data, size, NULL) == 0) {
		floe_expr *nn = floe_expr_rewrite_not(&a, u);
		if (!nn)
			abort();
		for (int ci = 0; ci < 2; ci++) {
			if (floe_expr_bind(&b, &a, nn, s, ci == 0, NULL) != 0)
				continue;
			floe_buf out;
			floe_buf_init(&out, 0);
			if (floe_expr_format(&out, b, s) == 0) {
				floe_expr *again;
				if (floe_expr_parse(&again, &a, (const char *)out.data, out.len, NULL) != 0)
					abort(); /* the printed form must parse */
			}
			floe_buf_reset(&out);
			if (floe_expr_project(&p, &a, b, spec, s, NULL) == 0) {
				floe_value vals[8];
				for (int k = 0; k < 8; k++)
					vals[k] = floe_value_null(FLOE_T_INT);
				floe_partition part = {vals, 8};
				(void)floe_eval_partition(p, &part);
			}
		}
	}
	floe_arena_reset(&a);
	return 0;
}
