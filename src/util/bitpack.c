/*
 * bitpack.c — fixed-width bit packing, LSB first.
 */
#include "util/bitpack.h"

#include <string.h>

/* Generic bit reader for the tail of an input (no over-read). */
static uint64_t read_bits_slow(const uint8_t *in, size_t nbytes, size_t bit, unsigned w)
{
	uint64_t v = 0;
	unsigned got = 0;
	size_t byte = bit >> 3;
	unsigned shift = (unsigned)(bit & 7);
	while (got < w && byte < nbytes) {
		uint64_t b = in[byte] >> shift;
		unsigned take = 8 - shift;
		v |= b << got;
		got += take;
		shift = 0;
		byte++;
	}
	if (w < 64)
		v &= ((uint64_t)1 << w) - 1;
	return v;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

/* Kernel: w is a compile-time constant at each call site. */
static inline void unpack32_k(uint32_t *out, const uint8_t *in, size_t n, unsigned w)
{
	const uint64_t mask = w >= 32 ? 0xffffffffu : (((uint64_t)1 << w) - 1);
	const size_t nbytes = floe_bitpack_bytes(n, w);
	size_t i = 0;
	const uint8_t *p = in;
	/* Whole groups of 8 values (w bytes) while 8-byte loads stay in bounds. */
	while (n - i >= 8 && (size_t)(p - in) + w + 8 <= nbytes) {
		for (unsigned j = 0; j < 8; j++) {
			unsigned bit = j * w;
			out[i + j] = (uint32_t)((load64(p + (bit >> 3)) >> (bit & 7)) & mask);
		}
		p += w;
		i += 8;
	}
	for (; i < n; i++)
		out[i] = (uint32_t)read_bits_slow(in, nbytes, i * (size_t)w, w);
}

void floe_bitunpack32(uint32_t *out, const uint8_t *in, size_t n, unsigned w)
{
	switch (w) {
	case 0: memset(out, 0, n * sizeof(*out)); return;
#define K(W)                                                                                  \
	case W: unpack32_k(out, in, n, W); return;
		K(1) K(2) K(3) K(4) K(5) K(6) K(7) K(8) K(9) K(10) K(11) K(12) K(13) K(14) K(15)
		K(16) K(17) K(18) K(19) K(20) K(21) K(22) K(23) K(24) K(25) K(26) K(27) K(28)
		K(29) K(30) K(31) K(32)
#undef K
	default: memset(out, 0, n * sizeof(*out)); return;
	}
}

static inline void unpack64_k(uint64_t *out, const uint8_t *in, size_t n, unsigned w)
{
	const uint64_t mask = w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
	const size_t nbytes = floe_bitpack_bytes(n, w);
	size_t i = 0;
	const uint8_t *p = in;
	while (n - i >= 8 && (size_t)(p - in) + w + 9 <= nbytes) {
		for (unsigned j = 0; j < 8; j++) {
			unsigned bit = j * w, sh = bit & 7;
			const uint8_t *q = p + (bit >> 3);
			uint64_t v = load64(q) >> sh;
			if (sh + w > 64)
				v |= (uint64_t)q[8] << (64 - sh);
			out[i + j] = v & mask;
		}
		p += w;
		i += 8;
	}
	for (; i < n; i++)
		out[i] = read_bits_slow(in, nbytes, i * (size_t)w, w);
}

void floe_bitunpack64(uint64_t *out, const uint8_t *in, size_t n, unsigned w)
{
	if (w == 0 || w > 64) {
		memset(out, 0, n * sizeof(*out));
		return;
	}
	if (w <= 32) {
		/* Reuse the narrow kernels through a small staging buffer. */
		uint32_t tmp[256];
		size_t done = 0;
		while (done < n) {
			size_t k = n - done < 256 ? n - done : 256;
			/* k is a multiple of 8 except at the end, so offsets stay byte aligned */
			floe_bitunpack32(tmp, in + (done / 8) * w, k, w);
			for (size_t j = 0; j < k; j++)
				out[done + j] = tmp[j];
			done += k;
		}
		return;
	}
	switch (w) {
#define K(W)                                                                                  \
	case W: unpack64_k(out, in, n, W); return;
		K(33) K(34) K(35) K(36) K(37) K(38) K(39) K(40) K(41) K(42) K(43) K(44) K(45) K(46)
		K(47) K(48) K(49) K(50) K(51) K(52) K(53) K(54) K(55) K(56) K(57) K(58) K(59)
		K(60) K(61) K(62) K(63) K(64)
#undef K
	default: return;
	}
}

/* Bit writer: at most 7 pending bits between calls. */
typedef struct bitw {
	uint8_t *out;
	uint64_t acc;
	unsigned nbits;
} bitw;

static inline void bitw_put(bitw *b, uint64_t v, unsigned w)
{
	/* w <= 32 here */
	if (w < 64)
		v &= ((uint64_t)1 << w) - 1;
	b->acc |= v << b->nbits;
	b->nbits += w;
	while (b->nbits >= 8) {
		*b->out++ = (uint8_t)b->acc;
		b->acc >>= 8;
		b->nbits -= 8;
	}
}

static inline void bitw_flush(bitw *b)
{
	if (b->nbits)
		*b->out++ = (uint8_t)b->acc;
	b->acc = 0;
	b->nbits = 0;
}

static inline void pack32_k(uint8_t *out, const uint32_t *in, size_t n, unsigned w)
{
	const uint64_t mask = w >= 32 ? 0xffffffffu : (((uint64_t)1 << w) - 1);
	size_t i = 0;
	/* Whole groups of 8 values make exactly w bytes. */
	for (; n - i >= 8; i += 8) {
		uint64_t acc = 0;
		unsigned nb = 0;
		uint8_t *o = out;
		for (unsigned j = 0; j < 8; j++) {
			acc |= ((uint64_t)in[i + j] & mask) << nb;
			nb += w;
			while (nb >= 8) {
				*o++ = (uint8_t)acc;
				acc >>= 8;
				nb -= 8;
			}
		}
		out += w;
	}
	if (i < n) {
		bitw b = {out, 0, 0};
		for (; i < n; i++)
			bitw_put(&b, in[i], w);
		bitw_flush(&b);
	}
}

void floe_bitpack32(uint8_t *out, const uint32_t *in, size_t n, unsigned w)
{
	switch (w) {
	case 0: return;
#define K(W)                                                                                  \
	case W: pack32_k(out, in, n, W); return;
		K(1) K(2) K(3) K(4) K(5) K(6) K(7) K(8) K(9) K(10) K(11) K(12) K(13) K(14) K(15)
		K(16) K(17) K(18) K(19) K(20) K(21) K(22) K(23) K(24) K(25) K(26) K(27) K(28)
		K(29) K(30) K(31) K(32)
#undef K
	default: return;
	}
}

void floe_bitpack64(uint8_t *out, const uint64_t *in, size_t n, unsigned w)
{
	bitw b = {out, 0, 0};
	if (w == 0 || w > 64)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = in[i];
		if (w > 32) {
			bitw_put(&b, v & 0xffffffffu, 32);
			bitw_put(&b, v >> 32, w - 32);
		} else {
			bitw_put(&b, v, w);
		}
	}
	bitw_flush(&b);
}

size_t floe_bit_count(const uint8_t *bits, size_t off, size_t n)
{
	size_t c = 0, i = off, end = off + n;
	while (i < end && (i & 7))
		c += floe_bit_get(bits, i++);
	while (end - i >= 64) {
		c += (size_t)__builtin_popcountll(load64(bits + (i >> 3)));
		i += 64;
	}
	while (end - i >= 8) {
		c += (size_t)__builtin_popcount(bits[i >> 3]);
		i += 8;
	}
	while (i < end)
		c += floe_bit_get(bits, i++);
	return c;
}
