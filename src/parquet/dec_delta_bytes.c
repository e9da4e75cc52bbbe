/*
 * dec_delta_bytes.c — DELTA_BYTE_ARRAY decoding (incremental / front
 * compression): prefix lengths as DELTA_BINARY_PACKED, then the suffixes as
 * DELTA_LENGTH_BYTE_ARRAY; value i = first prefix[i] bytes of value i-1 +
 * suffix i.
 *
 * spec: Encodings.md "Delta Strings (DELTA_BYTE_ARRAY = 7)". Output can be
 * much larger than the input (prefixes repeat), so its size is computed and
 * checked against the store's cap before anything is copied.
 */
#include <string.h>

#include "parquet/encoding.h"
#include "util/alloc.h"

int floe_parquet__delta_bytes_get(const uint8_t *p, size_t len, floe_parquet_view *out, size_t n,
				  floe_buf *store, floe_buf *scratch)
{
	size_t total, used = 0, used2 = 0, need = 0, prev_len = 0, at;
	int64_t *prefix;
	floe_buf pbuf;
	int rc = FLOE_ECORRUPT;

	if (floe_parquet__delta_count(p, len, &total) || total != n)
		return FLOE_ECORRUPT;
	floe_buf_init(&pbuf, 0);
	if (floe_buf_reserve(&pbuf, n * sizeof(int64_t) + 8)) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	prefix = (int64_t *)(void *)pbuf.data;
	if (floe_parquet__delta_get64(p, len, prefix, n, &used))
		goto done;
	/* suffix views (into p) first */
	if ((rc = floe_parquet__delta_length_views(p + used, len - used, out, n, scratch, &used2)))
		goto done;
	rc = FLOE_ECORRUPT;
	for (size_t i = 0; i < n; i++) {
		size_t l;
		if (prefix[i] < 0 || (uint64_t)prefix[i] > prev_len)
			goto done;
		if (!floe_size_add(&l, (size_t)prefix[i], out[i].n) || !floe_size_add(&need, need, l))
			goto done;
		prev_len = l;
	}
	floe_buf_clear(store);
	if (floe_buf_reserve(store, need)) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	at = 0;
	for (size_t i = 0; i < n; i++) {
		size_t pl = (size_t)prefix[i];
		uint8_t *dst = store->data + at;
		if (pl)
			memcpy(dst, out[i - 1].p, pl); /* i > 0: prefix[0] <= 0 */
		if (out[i].n)
			memcpy(dst + pl, out[i].p, out[i].n);
		out[i].p = dst;
		out[i].n = pl + out[i].n;
		at += out[i].n;
	}
	store->len = at;
	rc = FLOE_OK;
done:
	floe_buf_reset(&pbuf);
	return rc;
}
