/*
 * bitpack.h — packing and unpacking of unsigned integers at a fixed bit
 * width, least-significant bit first (the order Parquet's RLE/bit-packed
 * hybrid and DELTA_BINARY_PACKED encodings use), and small bitmap helpers.
 *
 * DESIGN: the unpackers are specialised per width through a switch over a
 * static inline kernel, so the compiler sees a constant width and turns the
 * shifts and masks into immediates. The kernel reads 8 bytes at a time where
 * the input is long enough and falls back to a byte loop for the tail, so
 * callers need no padding.
 */
#ifndef FLOE_UTIL_BITPACK_H
#define FLOE_UTIL_BITPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes needed for n values of width w. */
static inline size_t floe_bitpack_bytes(size_t n, unsigned w)
{
	return (n / 8) * w + ((n % 8) * w + 7) / 8;
}

/*
 * Unpack n values of width w (0..32) from in, which holds at least
 * floe_bitpack_bytes(n, w) bytes. Width 0 yields zeros.
 */
void floe_bitunpack32(uint32_t *out, const uint8_t *in, size_t n, unsigned w);
/* Same for widths 0..64. */
void floe_bitunpack64(uint64_t *out, const uint8_t *in, size_t n, unsigned w);

/*
 * Pack n values of width w (0..32 / 0..64) into out, which has room for
 * floe_bitpack_bytes(n, w) bytes. Bits of a value above w are ignored.
 */
void floe_bitpack32(uint8_t *out, const uint32_t *in, size_t n, unsigned w);
void floe_bitpack64(uint8_t *out, const uint64_t *in, size_t n, unsigned w);

/* Smallest width that holds v (0 for v == 0). */
static inline unsigned floe_bit_width(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/* Validity-style bitmaps (LSB first, as Arrow's). */
static inline bool floe_bit_get(const uint8_t *bits, size_t i)
{
	return (bits[i >> 3] >> (i & 7)) & 1;
}
static inline void floe_bit_set(uint8_t *bits, size_t i)
{
	bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}
static inline void floe_bit_clear(uint8_t *bits, size_t i)
{
	bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
}
static inline void floe_bit_put(uint8_t *bits, size_t i, bool v)
{
	if (v)
		floe_bit_set(bits, i);
	else
		floe_bit_clear(bits, i);
}
/* Number of set bits in [off, off + n). */
size_t floe_bit_count(const uint8_t *bits, size_t off, size_t n);

#endif
