/*
 * fuzz_variant.c — variant values (metadata + value bytes from a Parquet
 * file) rendered as JSON. Input: a 2-byte little-endian metadata length,
 * the metadata, then the value. What comes out must be well-formed JSON
 * (floe's own parser takes it back). Nothing may crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/variant.h"
#include "json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > 65536)
		return 0;
	size_t mn = (size_t)data[0] | (size_t)data[1] << 8;
	if (mn > size - 2)
		return 0;
	const uint8_t *m = data + 2, *v = data + 2 + mn;
	size_t vn = size - 2 - mn;
	floe_buf out;
	floe_buf_init(&out, 0);
	if (floe_variant_to_json(&out, m, mn, v, vn, NULL) == 0) {
		floe_arena a;
		floe_json *j;
		floe_arena_init(&a, 0);
		if (floe_json_parse(&j, &a, (const char *)out.data, out.len, NULL, NULL) != 0)
			abort(); /* the rendering must be JSON */
		floe_arena_reset(&a);
	}
	floe_buf_reset(&out);
	return 0;
}
