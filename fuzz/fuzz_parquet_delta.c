/*
 * fuzz_parquet_delta.c — the delta family on raw bytes: DELTA_BINARY_PACKED
 * (32 and 64 bit), DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY (whose output
 * can be far larger than its input: the store's cap must hold). Byte 0 picks
 * the decoder, bytes 2-3 the value count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/encoding.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sink = 0;
	unsigned which, w;
	size_t n, total, used;
	floe_buf scratch, store;
	void *out;
	if (size < 4)
		return 0;
	which = data[0];
	w = data[1];
	n = (size_t)(data[2] | data[3] << 8);
	data += 4;
	size -= 4;
	out = floe_calloc(n + 1, 32);
	if (!out)
		return 0;
	floe_buf_init(&scratch, 1 << 24);
	floe_buf_init(&store, 1 << 24);
	(void)total;
	(void)used;
	(void)w;
	(void)which;
	switch (which % 4) {
	case 0:
		if (floe_parquet__delta_count(data, size, &total) == 0 && total <= n)
			sink |= floe_parquet__delta_get32(data, size, out, total, &used);
		break;
	case 1:
		if (floe_parquet__delta_count(data, size, &total) == 0 && total <= n)
			sink |= floe_parquet__delta_get64(data, size, out, total, &used);
		break;
	case 2: sink |= floe_parquet__delta_length_get(data, size, out, n, &scratch); break;
	default: sink |= floe_parquet__delta_bytes_get(data, size, out, n, &store, &scratch); break;
	}
	floe_buf_reset(&scratch);
	floe_buf_reset(&store);
	floe_free(out);
	return sink & 0;
}
