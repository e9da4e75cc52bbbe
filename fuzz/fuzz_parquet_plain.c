/*
 * fuzz_parquet_plain.c — PLAIN byte arrays and BYTE_STREAM_SPLIT on raw
 * bytes. Byte 0 picks the decoder, byte 1 the value width (BYTE_STREAM_SPLIT),
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
	switch (which % 2) {
	case 0: sink |= floe_parquet__plain_get_bytes(data, size, out, n, &used); break;
	default: sink |= floe_parquet__bss_get(data, size, w % 17 + 1, out, n > 32 ? n / 16 : n); break;
	}
	floe_buf_reset(&scratch);
	floe_buf_reset(&store);
	floe_free(out);
	return sink & 0;
}
