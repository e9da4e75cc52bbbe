/*
 * fuzz_dv.c — the deletion-vector-v1 blob and 64-bit portable Roaring
 * decoders on arbitrary bytes: a decoded vector is strictly ascending and
 * within the cap; the bytes are tried both as a DV blob and as a bare bitmap.
 */
#include <stdlib.h>

#include "puffin/puffin_dv.h"
#include "util/alloc.h"

const char *const *floe_fuzz_seeds(void);
const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {
		"apache-iceberg/core/src/test/resources/org/apache/iceberg/deletes",
		NULL,
	};
	return seeds;
}

static void check(const uint64_t *pos, size_t n, size_t cap)
{
	if (n > cap)
		abort();
	for (size_t i = 1; i < n; i++)
		if (pos[i] <= pos[i - 1])
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t *pos = NULL;
	size_t n = 0, cap = (size_t)1 << 18;
	if (size > (1 << 20))
		return 0;
	if (floe_dv_decode(&pos, &n, data, size, -1, cap, NULL) == 0) {
		check(pos, n, cap);
		floe_free(pos);
	}
	pos = NULL;
	if (floe_roaring64_decode(&pos, &n, data, size, cap, NULL) == 0) {
		check(pos, n, cap);
		floe_free(pos);
	}
	return 0;
}
