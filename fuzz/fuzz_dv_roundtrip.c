/*
 * fuzz_dv_roundtrip.c — positions -> deletion-vector encoder -> decoder ->
 * the same positions.
 *
 * The input is a program of steps, two bytes each: the first picks how far
 * the next position jumps (1, a small gap, a container, a 32-bit bucket, or
 * an exact delta from the second byte), the second how many positions the
 * step adds in a row (a run). So inputs reach every container form (array,
 * bitset, run), offset headers with and without runs, many buckets, and
 * positions up to the largest a DV holds. The blob must decode (length,
 * magic, CRC, cardinality) to exactly the positions given; a blob with one
 * byte changed must fail or decode to something else — never crash. Any
 * difference traps.
 */
#include <stdlib.h>
#include <string.h>

#include "puffin/puffin_write.h"
#include "util/alloc.h"

#define MAX_POSITIONS ((size_t)1 << 18)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t *pos = NULL, *got = NULL, x = 0;
	size_t n = 0, count = 0;
	floe_buf b;
	bool first = true;
	if (size > 4096)
		return 0;
	pos = floe_malloc(MAX_POSITIONS * sizeof(uint64_t));
	if (!pos)
		return 0;
	for (size_t i = 0; i + 1 < size && n < MAX_POSITIONS; i += 2) {
		uint8_t op = data[i], arg = data[i + 1];
		uint64_t jump;
		switch (op % 6) {
		case 0: jump = 1; break;
		case 1: jump = 2 + arg % 16; break;
		case 2: jump = (uint64_t)(1 + arg) << 8; break;             /* within a container */
		case 3: jump = (uint64_t)(1 + arg % 4) << 16; break;        /* the next containers */
		case 4: jump = (uint64_t)(1 + arg % 8) << 32; break;        /* the next buckets */
		default: jump = (uint64_t)arg * 0x0101010101ULL + 1; break; /* anywhere */
		}
		if (op >= 0xF0)
			jump = FLOE_DV_MAX_POSITION - x; /* straight to the largest */
		size_t run = 1 + (op & 0x20 ? (size_t)arg * 64 : (size_t)arg % 8);
		uint64_t next = first ? jump - 1 : x + jump;
		if (!first && (next <= x || next > FLOE_DV_MAX_POSITION))
			break;
		if (next > FLOE_DV_MAX_POSITION)
			break;
		for (size_t r = 0; r < run && n < MAX_POSITIONS && next <= FLOE_DV_MAX_POSITION; r++) {
			pos[n++] = next;
			x = next;
			first = false;
			if (next == FLOE_DV_MAX_POSITION)
				break;
			next++;
		}
		if (x == FLOE_DV_MAX_POSITION)
			break;
	}
	floe_buf_init(&b, 0);
	if (floe_dv_encode(&b, pos, n, NULL) != 0)
		abort();
	if (floe_dv_decode(&got, &count, b.data, b.len, (int64_t)n, n, NULL) != 0)
		abort();
	if (count != n || (n && memcmp(got, pos, n * sizeof(uint64_t)) != 0))
		abort();
	floe_free(got);
	got = NULL;
	/* one byte changed: the CRC (or the framing) must catch it */
	if (b.len && size) {
		size_t at = data[0] % b.len;
		b.data[at] ^= (uint8_t)(1u << (data[size - 1] % 8));
		if (floe_dv_decode(&got, &count, b.data, b.len, -1, MAX_POSITIONS, NULL) == 0) {
			/* CRC-32 detects every single-bit error */
			abort();
		}
	}
	floe_free(got);
	floe_buf_reset(&b);
	floe_free(pos);
	return 0;
}
