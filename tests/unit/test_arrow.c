/*
 * test_arrow.c — Arrow C Data Interface helpers: format strings, owned
 * schemas/arrays and their release callbacks, import checks; and the
 * bit-packing helpers they and the Parquet codec share.
 */
#include <stdlib.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "arrow/arrow_fmt.h"
#include "harness.h"
#include "util/alloc.h"
#include "util/bitpack.h"

static void test_fmt_parse(void)
{
	floe_arrow_fmt f;
	floe_error err = {0};
	char buf[64];
	T_OK(floe_arrow_fmt_parse(&f, "d:38,10", &err), &err);
	T_EQ_INT(f.type, FLOE_ARROW_DECIMAL128);
	T_EQ_INT(f.precision, 38);
	T_EQ_INT(f.scale, 10);
	T_OK(floe_arrow_fmt_parse(&f, "tsu:UTC", &err), &err);
	T_EQ_INT(f.type, FLOE_ARROW_TIMESTAMP);
	T_EQ_INT(f.unit, FLOE_ARROW_MICRO);
	T_EQ_STR(f.tz, "UTC");
	floe_arrow_fmt_print(buf, sizeof(buf), &f);
	T_EQ_STR(buf, "tsu:UTC");
	T_OK(floe_arrow_fmt_parse(&f, "tsn:", &err), &err);
	T_EQ_STR(f.tz, "");
	T_OK(floe_arrow_fmt_parse(&f, "w:16", &err), &err);
	T_EQ_INT(f.width, 16);
	T_OK(floe_arrow_fmt_parse(&f, "+m", &err), &err);
	T_EQ_INT(f.type, FLOE_ARROW_MAP);
	T_OK(floe_arrow_fmt_parse(&f, "ttu", &err), &err);
	T_EQ_INT(f.type, FLOE_ARROW_TIME64);
	T_ERR(floe_arrow_fmt_parse(&f, "d:5", &err), FLOE_EINVAL);
	T_ERR(floe_arrow_fmt_parse(&f, "w:x", &err), FLOE_EINVAL);
	T_ERR(floe_arrow_fmt_parse(&f, "+ud:1,2", &err), FLOE_EUNSUPPORTED);
	T_ERR(floe_arrow_fmt_parse(&f, "", &err), FLOE_EINVAL);
}

/* A nullable int32 list built with the owned builders, checked, released. */
static void test_build_and_check(void)
{
	struct ArrowSchema s;
	struct ArrowArray a;
	floe_error err = {0};
	long live = floe_alloc__live();
	const char *k[] = {"PARQUET:field_id"}, *v[] = {"7"};
	size_t len;

	T_OK(floe_arrow_schema_init(&s, "+l", "xs", ARROW_FLAG_NULLABLE, 1), &err);
	T_OK(floe_arrow_schema_init(s.children[0], "i", "element", ARROW_FLAG_NULLABLE, 0), &err);
	T_OK(floe_arrow_schema_set_metadata(&s, k, v, 1), &err);
	const char *got = floe_arrow_metadata_get(s.metadata, "PARQUET:field_id", &len);
	T_CHECK(got && len == 1 && got[0] == '7');

	T_OK(floe_arrow_array_init(&a, 2, 1), &err);
	a.length = 3;
	a.null_count = 1;
	uint8_t *valid = floe_calloc(1, 1);
	int32_t *off = floe_malloc(4 * sizeof(int32_t));
	valid[0] = 0x5; /* [ [1,2], null, [3] ] */
	off[0] = 0, off[1] = 2, off[2] = 2, off[3] = 3;
	floe_arrow_array_set_buffer(&a, 0, valid);
	floe_arrow_array_set_buffer(&a, 1, off);
	struct ArrowArray *c = a.children[0];
	T_OK(floe_arrow_array_init(c, 2, 0), &err);
	c->length = 3;
	int32_t *vals = floe_malloc(3 * sizeof(int32_t));
	vals[0] = 1, vals[1] = 2, vals[2] = 3;
	floe_arrow_array_set_buffer(c, 1, vals);
	T_OK(floe_arrow_check(&s, &a, &err), &err);

	off[3] = 4; /* past the child */
	T_ERR(floe_arrow_check(&s, &a, &err), FLOE_EINVAL);
	off[3] = 3;
	off[1] = 3, off[2] = 2; /* decreasing */
	T_ERR(floe_arrow_check(&s, &a, &err), FLOE_EINVAL);

	struct ArrowSchema copy;
	T_OK(floe_arrow_schema_copy(&copy, &s), &err);
	T_EQ_STR(copy.children[0]->name, "element");
	T_CHECK(floe_arrow_metadata_get(copy.metadata, "PARQUET:field_id", &len) != NULL);
	floe_arrow_schema_release(&copy);

	/* a child moved out and released first, then the parent */
	struct ArrowArray moved;
	floe_arrow_array_move(&moved, a.children[0]);
	floe_arrow_array_release(&moved);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_arrow_array_release(&a); /* released twice: no-op */
	T_EQ_INT(floe_alloc__live(), live);
}

static void test_bitpack(void)
{
	uint32_t in[300], out[300];
	uint64_t in64[300], out64[300];
	uint8_t packed[300 * 8 + 8];
	uint64_t seed = 12345;
	for (unsigned w = 0; w <= 64; w++) {
		for (size_t n = 0; n < 300; n += (n < 20 ? 1 : 37)) {
			for (size_t i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				uint64_t m = w == 64 ? ~0ULL : w ? ((1ULL << w) - 1) : 0;
				in64[i] = (seed >> 3 ^ seed << 17) & m;
				in[i] = (uint32_t)in64[i];
			}
			size_t nb = floe_bitpack_bytes(n, w);
			memset(packed, 0xee, sizeof(packed));
			floe_bitpack64(packed, in64, n, w);
			T_CHECK(packed[nb] == 0xee);
			floe_bitunpack64(out64, packed, n, w);
			T_CHECK(n == 0 || memcmp(in64, out64, n * 8) == 0);
			if (w <= 32) {
				uint8_t packed2[300 * 4 + 8];
				memset(packed2, 0xee, sizeof(packed2));
				floe_bitpack32(packed2, in, n, w);
				T_CHECK(memcmp(packed, packed2, nb) == 0);
				T_CHECK(packed2[nb] == 0xee);
				floe_bitunpack32(out, packed, n, w);
				T_CHECK(n == 0 || memcmp(in, out, n * 4) == 0);
			}
		}
	}
	uint8_t bits[9] = {0xff, 0x01, 0, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff};
	T_EQ_INT(floe_bit_count(bits, 0, 72), 8 + 1 + 1 + 40);
	T_EQ_INT(floe_bit_count(bits, 3, 6), 5 + 1);
	T_EQ_INT(floe_bit_width(0), 0);
	T_EQ_INT(floe_bit_width(1), 1);
	T_EQ_INT(floe_bit_width(255), 8);
	T_EQ_INT(floe_bit_width(~0ULL), 64);
}

int main(void)
{
	T_RUN(test_fmt_parse);
	T_RUN(test_build_and_check);
	T_RUN(test_bitpack);
	return t_finish();
}
