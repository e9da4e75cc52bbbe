/*
 * fuzz_dml_set.c — floe update's --set parser and evaluator on arbitrary
 * text: "<column>\n<expr>" is parsed, type-checked against a schema with
 * every primitive type and applied to rows with extremes and nulls (integer
 * overflow must be an error, never undefined behaviour). Nothing may crash
 * or leak; a refusal is FLOE_EINVAL or FLOE_EUNSUPPORTED.
 */
#include <stdlib.h>
#include <string.h>

#include "dml/dml_int.h"
#include "stream/stream_builder.h"
#include "stream/stream_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *rows[] = {
		"{\"id\": 1, \"i\": 2147483647, \"l\": 9223372036854775807, \"f\": 1.5, \"g\": -2.5, "
		"\"s\": \"x\", \"d\": \"1.25\", \"dt\": \"2024-01-01\", \"ts\": \"2024-01-01T00:00:00\", "
		"\"b\": true, \"u\": \"f79c3e09-677c-4bbd-a479-3f349cb785e7\", \"st\": {\"x\": 1}}",
		"{\"id\": -9223372036854775808, \"i\": -2147483648, \"l\": -1}",
		"{\"id\": 0}",
	};
	floe_arena a;
	floe_schema *s;
	stream_col root;
	stream_coerce_opts co = {STREAM_EPOCH_MS};
	stream_json_dec jd;
	struct ArrowArray batch;
	if (size > 4096)
		return 0;
	floe_arena_init(&a, 0);
	if (floe_schema_parse_compact(&s, &a,
				      "id long not null, i int, l long, f float, g double, s string, "
				      "d decimal(9, 2), dt date, ts timestamp, b boolean, u uuid, "
				      "bin binary, st struct<x: int>",
				      NULL) ||
	    stream_col_init(&root, s->root, NULL, 0, false, NULL))
		abort();
	stream_json_dec_init(&jd, &co);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (stream_json_decode(&jd, &root, rows[i], strlen(rows[i])))
			abort();
	if (stream_col_finish(&root, &batch))
		abort();
	char *text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	char *nl = strchr(text, '\n');
	floe_dml_set set = {text, nl ? nl + 1 : ""};
	if (nl)
		*nl = 0;
	floe_error err = {0};
	int rc = floe_dml__try_set(s, &set, &batch, &err);
	if (rc && rc != FLOE_EINVAL && rc != FLOE_EUNSUPPORTED && rc != FLOE_ENOMEM)
		abort();
	free(text);
	batch.release(&batch);
	stream_json_dec_reset(&jd);
	stream_col_reset(&root);
	floe_arena_reset(&a);
	return 0;
}
