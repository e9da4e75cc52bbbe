/*
 * fuzz_text_values.c — the small text parsers that read values from users
 * and from other engines' metadata: durations and sizes (flags and config),
 * decimals (strings into decimal columns), metrics modes
 * (write.metadata.metrics.*), name mappings (schema.name-mapping.default)
 * and a pipeline's committed source offsets (snapshot summaries written by
 * any floe). The first input byte picks the parser. Offsets that parse must
 * survive their JSON form. Nothing may crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/metrics.h"
#include "iceberg/value.h"
#include "stream/stream_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	uint8_t which = data[0] % 6;
	size_t n = size - 1;
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, data + 1, n);
	s[n] = 0;
	switch (which) {
	case 0: {
		int64_t v;
		(void)floe_parse_duration_ms(s, &v);
		(void)floe_parse_size(s, &v);
		break;
	}
	case 1: {
		floe_i128 d;
		for (int32_t p = 1; p <= 38; p += 9)
			if (floe_decimal_parse(&d, s, n, p, p / 3) == 0 && p < 10 &&
			    (d > 999999999 || d < -999999999))
				abort(); /* the precision bounds the value */
		break;
	}
	case 2: {
		floe_metrics_mode m;
		if (floe_metrics_mode_parse(&m, s, NULL) != 0)
			break;
		break;
	}
	case 3: {
		floe_arena a;
		floe_name_mapping *nm;
		size_t k;
		floe_arena_init(&a, 0);
		if (floe_name_mapping_parse(&nm, &k, &a, s, NULL) == 0 && k && !nm)
			abort();
		floe_arena_reset(&a);
		break;
	}
	default: {
		stream_offsets o, again;
		floe_buf out;
		stream_offsets_init(&o);
		stream_offsets_init(&again);
		floe_buf_init(&out, 0);
		if (stream_offsets_parse_json(&o, s, n, NULL) == 0 &&
		    stream_offsets_write_json(&o, &out) == 0 &&
		    stream_offsets_parse_json(&again, (const char *)out.data, out.len, NULL) != 0)
			abort(); /* what floe writes it must read back */
		floe_buf_reset(&out);
		stream_offsets_reset(&o);
		stream_offsets_reset(&again);
		break;
	}
	}
	free(s);
	return 0;
}
