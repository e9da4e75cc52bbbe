/*
 * fuzz_pipeline_config.c — the pipeline configuration on arbitrary bytes:
 * YAML (libyaml) walked against the key tables, values converted, the
 * whole config validated; for configs that parse, each table's filter is
 * compiled against a fixed schema (both passes: unknown fields, then the
 * extended schema) and evaluated on an empty row set.
 */
#include <stdlib.h>
#include <string.h>

#include "stream/stream_config.h"
#include "stream/stream_decode.h"
#include "stream/stream_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	stream_config *c = NULL;
	floe_error err;
	if (size > (1 << 20))
		return 0;
	floe_error_clear(&err);
	int rc = stream_config_parse_yaml(&c, (const char *)data, size, "/tmp", &err);
	if (rc == FLOE_OK) {
		floe_arena a;
		floe_schema *s = NULL;
		floe_arena_init(&a, 0);
		if (floe_schema_parse_compact(&s, &a, "id long, kind string, ts timestamptz, "
						      "amt decimal(9, 2), n struct<x: int>",
					      NULL))
			abort();
		for (size_t i = 0; i < c->n_tables; i++) {
			char **names = NULL;
			size_t n = 0;
			stream_filter *f = NULL;
			if (!c->tables[i].filter)
				continue;
			if (stream_filter_unknown_fields(&names, &n, c->tables[i].filter, s->root, NULL) ==
			    FLOE_OK) {
				for (size_t k = 0; k < n; k++)
					floe_free(names[k]);
				floe_free(names);
			}
			if (stream_filter_compile(&f, c->tables[i].filter, s->root, NULL) == FLOE_OK) {
				static const char rec[] =
					"{\"id\": 7, \"kind\": \"click\", \"ts\": \"2026-01-01T00:00:00Z\", "
					"\"amt\": \"12.5\", \"n\": {\"x\": 3}}";
				stream_col root;
				stream_json_dec d;
				if (stream_col_init(&root, s->root, NULL, 0, false, NULL))
					abort();
				stream_json_dec_init(&d, NULL);
				if (stream_json_decode(&d, &root, rec, sizeof(rec) - 1))
					abort();
				(void)stream_filter_match(f, &root, 0);
				stream_json_dec_reset(&d);
				stream_col_reset(&root);
				stream_filter_free(f);
			}
		}
		floe_arena_reset(&a);
	} else if (!err.msg[0]) {
		abort(); /* every rejection says why */
	}
	stream_config_free(c);
	return 0;
}
