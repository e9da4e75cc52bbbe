/*
 * puffin_dv.c — deletion-vector-v1 blobs and 64-bit portable Roaring bitmaps.
 *
 * DESIGN: the bitmap is decoded straight into a sorted position array in one
 * pass over the containers; the descriptive header gives each container's
 * cardinality, so the output size is known (and capped) before any value is
 * written. The optional offset header is skipped (containers are read in
 * order), but its presence follows the format rules exactly.
 */
#include "puffin/puffin_dv.h"

#include <string.h>

#include "util/alloc.h"
#include "util/cursor.h"
#include "util/hash.h"

#define COOKIE_NO_RUN 12346u
#define COOKIE_RUN 12347u
#define NO_OFFSET_THRESHOLD 4
#define ARRAY_MAX 4096
#define BITSET_BYTES 8192

typedef struct pos_out {
	uint64_t *v;
	size_t n, cap, max;
} pos_out;

static int out_reserve(pos_out *o, size_t more, floe_error *err)
{
	size_t need;
	if (!floe_size_add(&need, o->n, more) || need > o->max)
		return floe_error_corrupt(err, "deletion vector holds more than %zu positions", o->max);
	if (need <= o->cap)
		return FLOE_OK;
	size_t ncap = o->cap ? o->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	size_t bytes;
	if (!floe_size_mul(&bytes, ncap, sizeof(uint64_t)))
		return floe_error_oom(err);
	uint64_t *nv = floe_realloc(o->v, bytes);
	if (!nv)
		return floe_error_oom(err);
	o->v = nv;
	o->cap = ncap;
	return FLOE_OK;
}

static inline uint16_t ld16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* One 32-bit portable Roaring bitmap at c; positions get `high` << 32. */
static int decode32(floe_cursor *c, uint64_t high, pos_out *o, floe_error *err)
{
	size_t start = c->off;
	uint32_t cookie;
	size_t nc;
	const uint8_t *runflags = NULL, *desc;
	bool has_offsets;
	if (!floe_cursor_u32le(c, &cookie))
		return floe_error_corrupt(err, "at offset %zu: truncated Roaring cookie",
				      start);
	if ((cookie & 0xFFFFu) == COOKIE_RUN) {
		nc = (cookie >> 16) + 1;
		if (!floe_cursor_bytes(c, (nc + 7) / 8, &runflags))
			return floe_error_corrupt(err, "at offset %zu: truncated run-container flags", start);
		has_offsets = nc >= NO_OFFSET_THRESHOLD;
	} else if (cookie == COOKIE_NO_RUN) {
		uint32_t x;
		if (!floe_cursor_u32le(c, &x))
			return floe_error_corrupt(err, "at offset %zu: truncated container count", start);
		nc = x;
		has_offsets = true;
	} else {
		return floe_error_corrupt(err, "at offset %zu: bad Roaring cookie %u (expected 12346 or 12347)",
				      start, cookie);
	}
	if (nc > 65536)
		return floe_error_corrupt(err, "at offset %zu: %zu containers (max 65536)",
				      start, nc);
	/* descriptive header: key, cardinality - 1 */
	if (!floe_cursor_bytes(c, nc * 4, &desc))
		return floe_error_corrupt(err, "at offset %zu: truncated descriptive header (%zu containers)",
				      start, nc);
	if (has_offsets && !floe_cursor_skip(c, nc * 4))
		return floe_error_corrupt(err, "at offset %zu: truncated offset header",
				      start);
	int32_t prev_key = -1;
	for (size_t i = 0; i < nc; i++) {
		uint32_t key = ld16(desc + i * 4);
		size_t card = (size_t)ld16(desc + i * 4 + 2) + 1;
		size_t coff = c->off;
		uint64_t base = high << 32 | (uint64_t)key << 16;
		size_t got = 0;
		if ((int32_t)key <= prev_key)
			return floe_error_corrupt(err, "at offset %zu: container keys not ascending (%u after %d)",
					      coff, key, prev_key);
		prev_key = (int32_t)key;
		/* reserve per container: a run container expands far beyond its bytes,
		 * so only the cap (not the input size) bounds the total */
		int rc = out_reserve(o, card, err);
		if (rc)
			return rc;
		if (runflags && (runflags[i / 8] >> (i % 8) & 1)) {
			uint16_t nruns;
			const uint8_t *runs;
			if (!floe_cursor_bytes(c, 2, &runs))
				return floe_error_corrupt(err, "at offset %zu: truncated run container", coff);
			nruns = ld16(runs);
			if (!floe_cursor_bytes(c, (size_t)nruns * 4, &runs))
				return floe_error_corrupt(err, "at offset %zu: truncated run container (%u runs)",
						      coff, nruns);
			int32_t last = -1;
			for (size_t r = 0; r < nruns; r++) {
				uint32_t s = ld16(runs + r * 4), len = (uint32_t)ld16(runs + r * 4 + 2) + 1;
				if ((int32_t)s <= last || s + len > 65536)
					return floe_error_corrupt(err, "at offset %zu: run %zu [%u, +%u) overlaps "
							      "or leaves the container",
							      coff, r, s, len);
				if (got + len > card)
					return floe_error_corrupt(err, "at offset %zu: runs hold more than the "
							      "cardinality %zu",
							      coff, card);
				for (uint32_t k = 0; k < len; k++)
					o->v[o->n + got++] = base | (s + k);
				last = (int32_t)(s + len - 1);
			}
		} else if (card <= ARRAY_MAX) {
			const uint8_t *vals;
			if (!floe_cursor_bytes(c, card * 2, &vals))
				return floe_error_corrupt(err, "at offset %zu: truncated array container", coff);
			int32_t last = -1;
			for (size_t k = 0; k < card; k++) {
				uint16_t x = ld16(vals + k * 2);
				if ((int32_t)x <= last)
					return floe_error_corrupt(err, "at offset %zu: array container values not "
							      "ascending",
							      coff);
				last = x;
				o->v[o->n + got++] = base | x;
			}
		} else {
			const uint8_t *bits;
			if (!floe_cursor_bytes(c, BITSET_BYTES, &bits))
				return floe_error_corrupt(err, "at offset %zu: truncated bitset container", coff);
			for (size_t w = 0; w < BITSET_BYTES / 8; w++) {
				uint64_t word = floe_load_u64le(bits + w * 8);
				while (word) {
					if (got >= card)
						return floe_error_corrupt(err, "at offset %zu: bitset holds more "
								      "than the cardinality %zu",
								      coff, card);
					int b = __builtin_ctzll(word);
					o->v[o->n + got++] = base | (uint64_t)(w * 64 + (size_t)b);
					word &= word - 1;
				}
			}
		}
		if (got != card)
			return floe_error_corrupt(err, "at offset %zu: container %zu holds %zu values, its header "
					      "says %zu",
					      coff, i, got, card);
		o->n += got;
	}
	return FLOE_OK;
}

int floe_roaring64_decode(uint64_t **out, size_t *count, const uint8_t *p, size_t n,
			  size_t max_positions, floe_error *err)
{
	floe_cursor c;
	uint64_t nb;
	pos_out o = {NULL, 0, 0, max_positions};
	int rc = FLOE_OK;
	*out = NULL;
	*count = 0;
	floe_cursor_init(&c, p, n);
	if (!floe_cursor_u64le(&c, &nb))
		return floe_error_corrupt(err, "64-bit Roaring bitmap: truncated count");
	/* each bucket needs at least a key and an 8-byte empty bitmap */
	if (nb > floe_cursor_left(&c) / 12)
		return floe_error_corrupt(err, "64-bit Roaring bitmap: %llu buckets do not fit in %zu bytes",
				      (unsigned long long)nb, floe_cursor_left(&c));
	int64_t prev = -1;
	for (uint64_t i = 0; i < nb; i++) {
		uint32_t key;
		size_t at = c.off;
		if (!floe_cursor_u32le(&c, &key)) {
			rc = floe_error_corrupt(err, "at offset %zu: truncated bucket key", at);
			goto fail;
		}
		if ((int64_t)key <= prev) {
			rc = floe_error_corrupt(err, "at offset %zu: bucket keys not ascending (%u after %lld)", at,
					    key, (long long)prev);
			goto fail;
		}
		if (key > FLOE_DV_MAX_KEY) {
			rc = floe_error_corrupt(err, "at offset %zu: bucket key %u exceeds %u (positions must stay "
					    "below 2^63)",
					    at, key, FLOE_DV_MAX_KEY);
			goto fail;
		}
		prev = key;
		if ((rc = decode32(&c, key, &o, err)))
			goto fail;
	}
	if (floe_cursor_left(&c) != 0) {
		rc = floe_error_corrupt(err, "64-bit Roaring bitmap: %zu trailing bytes",
				    floe_cursor_left(&c));
		goto fail;
	}
	*out = o.v;
	*count = o.n;
	return FLOE_OK;
fail:
	floe_free(o.v);
	return floe_error_prefix(err, rc, "64-bit Roaring bitmap: ");
}

int floe_dv_decode(uint64_t **out, size_t *count, const uint8_t *blob, size_t n,
		   int64_t expected_cardinality, size_t max_positions, floe_error *err)
{
	static const uint8_t magic[4] = {FLOE_DV_MAGIC_0, FLOE_DV_MAGIC_1, FLOE_DV_MAGIC_2,
					 FLOE_DV_MAGIC_3};
	*out = NULL;
	*count = 0;
	if (n < 12)
		return floe_error_corrupt(err, "deletion vector: %zu bytes is too short (at least 12)", n);
	uint32_t len = floe_load_u32be(blob);
	if (len < 4 || (uint64_t)len + 8 != n)
		return floe_error_corrupt(err, "deletion vector: length prefix %u does not match the blob size "
				      "%zu (expected %zu)",
				      len, n, n - 8);
	if (memcmp(blob + 4, magic, 4) != 0)
		return floe_error_corrupt(err, "deletion vector: bad magic %02x %02x %02x %02x (expected d1 d3 "
				      "39 64)",
				      blob[4], blob[5], blob[6], blob[7]);
	uint32_t want = floe_load_u32be(blob + 4 + len);
	uint32_t got = floe_crc32(0, blob + 4, len);
	if (want != got)
		return floe_error_corrupt(err, "deletion vector: CRC-32 mismatch (stored %08x, computed %08x)",
				      want, got);
	int rc = floe_roaring64_decode(out, count, blob + 8, len - 4, max_positions, err);
	if (rc)
		return floe_error_prefix(err, rc, "deletion vector: ");
	if (expected_cardinality >= 0 && (uint64_t)expected_cardinality != *count) {
		floe_free(*out);
		*out = NULL;
		size_t c = *count;
		*count = 0;
		return floe_error_corrupt(err, "deletion vector: holds %zu positions, the manifest says %lld", c,
				      (long long)expected_cardinality);
	}
	return FLOE_OK;
}
