/*
 * hash.c — murmur3_x86_32, CRC-32C, CRC-32 and a table hash.
 */
#include "util/hash.h"

#include "floe/common.h"

#include <string.h>
#include <zlib.h>

static inline uint32_t rotl32(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

uint32_t floe_murmur3_32(const void *data, size_t len, uint32_t seed)
{
	const uint8_t *p = data;
	const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
	uint32_t h = seed, k;
	size_t nblocks = len / 4, i;

	for (i = 0; i < nblocks; i++) {
		k = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
		    (uint32_t)p[4 * i + 3] << 24;
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
		h = rotl32(h, 13);
		h = h * 5 + 0xe6546b64u;
	}
	const uint8_t *tail = p + nblocks * 4;
	k = 0;
	switch (len & 3) {
	case 3:
		k ^= (uint32_t)tail[2] << 16;
		FLOE_FALLTHROUGH;
	case 2:
		k ^= (uint32_t)tail[1] << 8;
		FLOE_FALLTHROUGH;
	case 1:
		k ^= tail[0];
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
		break;
	default:
		break;
	}
	h ^= (uint32_t)len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* CRC-32C, slicing-by-8 table built on first use. */
static uint32_t crc32c_table[8][256];
static int crc32c_ready;

static void crc32c_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc32c_table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = crc32c_table[0][n];
		for (int k = 1; k < 8; k++) {
			c = crc32c_table[0][c & 0xff] ^ (c >> 8);
			crc32c_table[k][n] = c;
		}
	}
	__atomic_store_n(&crc32c_ready, 1, __ATOMIC_RELEASE);
}

uint32_t floe_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	if (!__atomic_load_n(&crc32c_ready, __ATOMIC_ACQUIRE))
		crc32c_init();
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		crc = crc32c_table[7][lo & 0xff] ^ crc32c_table[6][(lo >> 8) & 0xff] ^
		      crc32c_table[5][(lo >> 16) & 0xff] ^ crc32c_table[4][lo >> 24] ^
		      crc32c_table[3][p[4]] ^ crc32c_table[2][p[5]] ^ crc32c_table[1][p[6]] ^
		      crc32c_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc32c_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

uint32_t floe_crc32(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	/* zlib takes uInt lengths */
	while (len > 0) {
		uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;
		crc = (uint32_t)crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return crc;
}

uint64_t floe_hash64(const void *data, size_t len)
{
	/* FNV-1a over 8-byte words, finished with a strong mixer. */
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	while (len--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return floe_hash_u64(h);
}
