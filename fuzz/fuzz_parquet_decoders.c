/*
 * fuzz_parquet_decoders.c — the decoders of each family on raw bytes, away
 * from any page: RLE/bit-packed hybrid (levels, indices, booleans),
 * deprecated BIT_PACKED levels, DELTA_BINARY_PACKED (32 and 64 bit),
 * DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT and PLAIN
 * byte arrays. Byte 0 picks the decoder, byte 1 a bit width / value width,
 * bytes 2-3 the value count.
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
	which = data[0] % 9;
	w = data[1];
	n = (size_t)(data[2] | data[3] << 8);
	data += 4;
	size -= 4;
	out = floe_calloc(n + 1, 32);
	if (!out)
		return 0;
	floe_buf_init(&scratch, 1 << 24);
	floe_buf_init(&store, 1 << 24);
	switch (which) {
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
	case 2: sink |= floe_parquet__bitpacked_be_get16(data, size, w % 17, out, n); break;
	case 3:
		if (floe_parquet__delta_count(data, size, &total) == 0 && total <= n)
			sink |= floe_parquet__delta_get32(data, size, out, total, &used);
		break;
	case 4:
		if (floe_parquet__delta_count(data, size, &total) == 0 && total <= n)
			sink |= floe_parquet__delta_get64(data, size, out, total, &used);
		break;
	case 5: sink |= floe_parquet__delta_length_get(data, size, out, n, &scratch); break;
	case 6: sink |= floe_parquet__delta_bytes_get(data, size, out, n, &store, &scratch); break;
	case 7: sink |= floe_parquet__bss_get(data, size, w % 17 + 1, out, n > 32 ? n / 16 : n); break;
	default: sink |= floe_parquet__plain_get_bytes(data, size, out, n, &used); break;
	}
	floe_buf_reset(&scratch);
	floe_buf_reset(&store);
	floe_free(out);
	return sink & 0;
}
