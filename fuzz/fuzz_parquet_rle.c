/*
 * fuzz_parquet_rle.c — the RLE/bit-packed hybrid decoder (levels, dictionary
 * indices, RLE booleans) and the deprecated BIT_PACKED level encoding on raw
 * bytes. Byte 0 picks the reader (32-bit values, 16-bit levels in two calls,
 * BIT_PACKED), byte 1 the bit width, bytes 2-3 the value count.
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
	switch (which % 3) {
	case 0: {
		floe_parquet_rle r;
		floe_parquet__rle_init(&r, data, size, w % 33);
		sink |= floe_parquet__rle_get32(&r, out, n);
		break;
	}
	case 1: {
		floe_parquet_rle r;
		floe_parquet__rle_init(&r, data, size, w % 17);
		sink |= floe_parquet__rle_get16(&r, out, n);
		sink |= floe_parquet__rle_get16(&r, out, n / 2);
		break;
	}
	default: sink |= floe_parquet__bitpacked_be_get16(data, size, w % 17, out, n); break;
	}
	floe_buf_reset(&scratch);
	floe_buf_reset(&store);
	floe_free(out);
	return sink & 0;
}
