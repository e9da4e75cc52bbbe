/*
 * test_stream_range.c — RANGE distribution's statistics and assignment
 * (src/stream/stream_range.c): count maps merge, a heavy key is split over
 * tasks by weight, small keys are packed on one task in key order, a sample
 * past the cardinality cap gives range bounds, keys order as their values.
 */
#include "harness.h"
#include "stream/stream_range.h"

static stream_range_key ikey(int32_t v)
{
	stream_range_key k;
	floe_value x = {.type = FLOE_T_INT};
	x.v.i32 = v;
	stream_range_key_clear(&k);
	stream_range_key_append(&k, &x, false);
	return k;
}

static void test_key_order(void)
{
	stream_range_key a = ikey(-5), b = ikey(3), c = ikey(1000);
	T_CHECK(stream_range_key_cmp(&a, &b) < 0);
	T_CHECK(stream_range_key_cmp(&b, &c) < 0);
	floe_value n = floe_value_null(FLOE_T_INT);
	stream_range_key kn;
	stream_range_key_clear(&kn);
	stream_range_key_append(&kn, &n, false);
	T_CHECK(stream_range_key_cmp(&kn, &a) < 0); /* nulls first */
	floe_value s1 = {.type = FLOE_T_STRING}, s2 = {.type = FLOE_T_STRING};
	s1.v.bin.p = (const uint8_t *)"ab";
	s1.v.bin.n = 2;
	s2.v.bin.p = (const uint8_t *)"abc";
	s2.v.bin.n = 3;
	stream_range_key k1, k2;
	stream_range_key_clear(&k1);
	stream_range_key_clear(&k2);
	stream_range_key_append(&k1, &s1, false);
	stream_range_key_append(&k2, &s2, false);
	T_CHECK(stream_range_key_cmp(&k1, &k2) < 0);
	floe_value d1 = {.type = FLOE_T_DOUBLE}, d2 = {.type = FLOE_T_DOUBLE};
	d1.v.f64 = -2.5;
	d2.v.f64 = 0.5;
	stream_range_key_clear(&k1);
	stream_range_key_clear(&k2);
	stream_range_key_append(&k1, &d1, false);
	stream_range_key_append(&k2, &d2, false);
	T_CHECK(stream_range_key_cmp(&k1, &k2) < 0);
	stream_range_key_clear(&k1);
	stream_range_key_clear(&k2);
	stream_range_key_append(&k1, &d1, true);
	stream_range_key_append(&k2, &d2, true);
	T_CHECK(stream_range_key_cmp(&k1, &k2) > 0); /* descending */
}

/* one key of 80 rows and 20 of 1, two tasks' maps merged, 4 tasks */
static void test_map_merge_split_pack(void)
{
	stream_range_stats a, b;
	stream_range_stats_init(&a);
	stream_range_stats_init(&b);
	stream_range_key hot = ikey(0);
	T_EQ_INT(stream_range_stats_add(&a, &hot, 50), 0);
	T_EQ_INT(stream_range_stats_add(&b, &hot, 30), 0);
	for (int i = 1; i <= 20; i++) {
		stream_range_key k = ikey(i);
		T_EQ_INT(stream_range_stats_add(i % 2 ? &a : &b, &k, 1), 0);
	}
	T_EQ_INT(stream_range_stats_merge(&a, &b), 0);
	T_CHECK(!a.sampled);
	T_EQ_INT(a.total, 100);
	T_EQ_INT((int64_t)a.n, 21);
	stream_range_assign *as;
	T_EQ_INT(stream_range_assign_new(&as, &a, 4), 0);
	T_CHECK(as != NULL);
	/* target 25 each: the hot key fills tasks 0..2 and 5 rows of task 3 */
	for (int t = 0; t < 4; t++)
		T_EQ_INT(as->weight[t], 25);
	T_EQ_INT(as->e[0].n_tasks, 4);
	/* its rows go round by weight: 25:25:25:5 of 80 */
	int64_t got[4] = {0};
	uint64_t seq = 0;
	for (int r = 0; r < 8000; r++)
		got[stream_range_route(as, &hot, &seq)]++;
	T_CHECK(got[0] > 2300 && got[0] < 2700);
	T_CHECK(got[2] > 2300 && got[2] < 2700);
	T_CHECK(got[3] > 300 && got[3] < 700);
	/* the 20 small keys share the last task, in order */
	for (int i = 1; i <= 20; i++) {
		stream_range_key k = ikey(i);
		T_EQ_INT(stream_range_route(as, &k, &seq), 3);
	}
	/* an unseen key goes by its place in key order */
	stream_range_key past = ikey(99), before = ikey(-99);
	T_EQ_INT(stream_range_route(as, &past, &seq), 3);
	T_EQ_INT(stream_range_route(as, &before, &seq), 0);
	stream_range_assign_free(as);
	stream_range_stats_free(&a);
	stream_range_stats_free(&b);
}

/* small keys only: packed in key order, each key on one task */
static void test_pack(void)
{
	stream_range_stats s;
	stream_range_stats_init(&s);
	for (int i = 0; i < 8; i++) {
		stream_range_key k = ikey(i * 10);
		T_EQ_INT(stream_range_stats_add(&s, &k, 10), 0);
	}
	stream_range_assign *as;
	T_EQ_INT(stream_range_assign_new(&as, &s, 4), 0);
	uint64_t seq = 0;
	for (int i = 0; i < 8; i++) {
		stream_range_key k = ikey(i * 10);
		T_EQ_INT(stream_range_route(as, &k, &seq), i / 2);
		T_EQ_INT(as->e[i].n_tasks, 1);
	}
	stream_range_key mid = ikey(25); /* between 20 (task 1) and 30 (task 1) */
	T_EQ_INT(stream_range_route(as, &mid, &seq), 1);
	stream_range_assign_free(as);
	stream_range_stats_free(&s);
	/* empty statistics: no assignment (HASH stays) */
	stream_range_stats_init(&s);
	T_EQ_INT(stream_range_assign_new(&as, &s, 4), 0);
	T_CHECK(as == NULL);
}

/* past the cap: a reservoir sample; its assignment gives range bounds that
 * cut 100000 distinct uniform keys into four near-equal ranges */
static void test_sample_bounds(void)
{
	stream_range_stats a, b;
	stream_range_stats_init(&a);
	stream_range_stats_init(&b);
	for (int i = 0; i < 100000; i++) {
		stream_range_key k = ikey(i);
		T_EQ_INT(stream_range_stats_add(i < 60000 ? &a : &b, &k, 1), 0);
	}
	T_CHECK(a.sampled && b.sampled);
	T_EQ_INT((int64_t)a.n, STREAM_RANGE_SAMPLE);
	T_EQ_INT(stream_range_stats_merge(&a, &b), 0);
	T_EQ_INT(a.total, 100000);
	stream_range_assign *as;
	T_EQ_INT(stream_range_assign_new(&as, &a, 4), 0);
	T_CHECK(as->from_sample);
	int64_t got[4] = {0};
	uint64_t seq = 0;
	int prev = 0;
	for (int i = 0; i < 100000; i++) {
		stream_range_key k = ikey(i);
		int t = stream_range_route(as, &k, &seq);
		T_CHECK(t >= prev); /* ranges: monotone in the key */
		prev = t;
		got[t]++;
	}
	for (int t = 0; t < 4; t++)
		T_CHECK(got[t] > 18000 && got[t] < 32000);
	stream_range_assign_free(as);
	stream_range_stats_free(&a);
	stream_range_stats_free(&b);
}

int main(void)
{
	T_RUN(test_key_order);
	T_RUN(test_map_merge_split_pack);
	T_RUN(test_pack);
	T_RUN(test_sample_bounds);
	return t_finish();
}
