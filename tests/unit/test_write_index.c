/*
 * test_write_index.c — the upsert key index (src/write/write_index.c): random
 * puts, deletes and lookups against a model, in memory and spilled (a tiny
 * budget), exact (one long) and general (string) keys; memory per key.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/alloc.h"
#include "write/write_index.h"

static uint64_t xs = 88172645463325252ULL;
static uint64_t next_rand(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

/* encodings as write_delta.c makes them */
static size_t enc_long(uint8_t *b, int64_t v)
{
	b[0] = 1;
	memcpy(b + 1, &v, 8);
	return 9;
}

static size_t enc_str(uint8_t *b, int64_t v)
{
	char s[32];
	int n = snprintf(s, sizeof(s), "key-%lld", (long long)v);
	uint32_t l = (uint32_t)n;
	b[0] = 1;
	memcpy(b + 1, &l, 4);
	memcpy(b + 5, s, (size_t)n);
	return 5 + (size_t)n;
}

/* hint: floe_key_index_reserve for every key first and a prefetch before each
 * operation, which must change nothing */
static void run_model_ex(bool exact, size_t budget, size_t nkeys, size_t ops, bool hint)
{
	floe_key_index *ix = NULL;
	floe_error err;
	T_EQ_INT(floe_key_index_new(&ix, exact, budget, t_tmpdir(), &err), 0);
	if (hint)
		floe_key_index_reserve(ix, nkeys);
	int64_t *model = calloc(nkeys, sizeof(int64_t)); /* -1 none, else file << 20 | pos */
	for (size_t i = 0; i < nkeys; i++)
		model[i] = -1;
	uint8_t kb[64];
	int bad = 0;
	for (size_t i = 0; i < ops && !bad; i++) {
		int64_t key = (int64_t)(next_rand() % nkeys);
		size_t kl = exact ? enc_long(kb, key * 7919 - 1000) : enc_str(kb, key);
		if (hint)
			floe_key_index_prefetch(ix, kb, kl);
		uint64_t r = next_rand() % 10;
		if (r < 6) {
			uint32_t f = (uint32_t)(next_rand() % 1000);
			uint64_t p = next_rand() % 1000000;
			T_EQ_INT(floe_key_index_put(ix, kb, kl, f, p, &err), 0);
			model[key] = (int64_t)f << 20 | (int64_t)p;
		} else if (r < 8) {
			T_EQ_INT(floe_key_index_del(ix, kb, kl, &err), 0);
			model[key] = -1;
		} else {
			bool found;
			uint32_t f = 0;
			uint64_t p = 0;
			T_EQ_INT(floe_key_index_get(ix, kb, kl, &found, &f, &p, &err), 0);
			if (found != (model[key] >= 0) ||
			    (found && ((int64_t)f << 20 | (int64_t)p) != model[key]))
				bad++;
		}
	}
	/* every key at the end */
	for (size_t key = 0; key < nkeys; key++) {
		size_t kl = exact ? enc_long(kb, (int64_t)key * 7919 - 1000) : enc_str(kb, (int64_t)key);
		bool found;
		uint32_t f = 0;
		uint64_t p = 0;
		T_EQ_INT(floe_key_index_get(ix, kb, kl, &found, &f, &p, &err), 0);
		if (found != (model[key] >= 0) ||
		    (found && ((int64_t)f << 20 | (int64_t)p) != model[key]))
			bad++;
	}
	T_EQ_INT(bad, 0);
	floe_key_index_stats st;
	floe_key_index_get_stats(ix, &st);
	if (budget) {
		T_CHECK(st.spills > 0);
		T_CHECK(st.memory <= budget + st.spilled * 2 + 16384); /* filters stay in memory */
	} else {
		T_EQ_INT(st.spills, 0);
	}
	free(model);
	floe_key_index_free(ix);
}

static void run_model(bool exact, size_t budget, size_t nkeys, size_t ops)
{
	run_model_ex(exact, budget, nkeys, ops, false);
}

static void test_index_memory(void)
{
	run_model(true, 0, 5000, 60000);
	run_model(false, 0, 5000, 60000);
	run_model_ex(true, 0, 5000, 60000, true);
	run_model_ex(false, 0, 5000, 60000, true);
}

static void test_index_spill(void)
{
	run_model(true, 16384, 20000, 120000);
	run_model(false, 32768, 8000, 60000);
	run_model_ex(true, 16384, 20000, 120000, true); /* reserve beyond the budget: refused */
}

/* The null key and 4-byte keys in exact mode. */
static void test_index_null_and_int(void)
{
	floe_key_index *ix = NULL;
	floe_error err;
	T_EQ_INT(floe_key_index_new(&ix, true, 0, NULL, &err), 0);
	uint8_t nul[1] = {0}, i4[5] = {1, 7, 0, 0, 0};
	bool found;
	uint32_t f;
	uint64_t p;
	T_EQ_INT(floe_key_index_put(ix, nul, 1, 3, 4, &err), 0);
	T_EQ_INT(floe_key_index_put(ix, i4, 5, 5, 6, &err), 0);
	T_EQ_INT(floe_key_index_get(ix, nul, 1, &found, &f, &p, &err), 0);
	T_CHECK(found && f == 3 && p == 4);
	T_EQ_INT(floe_key_index_get(ix, i4, 5, &found, &f, &p, &err), 0);
	T_CHECK(found && f == 5 && p == 6);
	T_EQ_INT(floe_key_index_del(ix, nul, 1, &err), 0);
	T_EQ_INT(floe_key_index_get(ix, nul, 1, &found, &f, &p, &err), 0);
	T_CHECK(!found);
	uint8_t odd[3] = {1, 2, 3};
	T_EQ_INT(floe_key_index_put(ix, odd, 3, 1, 1, &err), FLOE_EINVAL);
	floe_key_index_free(ix);
}

/* What an 8-byte key costs: at most 24 bytes on average at rest. */
static void test_index_bytes_per_key(void)
{
	floe_key_index *ix = NULL;
	floe_error err;
	T_EQ_INT(floe_key_index_new(&ix, true, 0, NULL, &err), 0);
	uint8_t kb[16];
	size_t n = 700000; /* 0.67 of 2^20 slots */
	for (size_t i = 0; i < n; i++) {
		size_t kl = enc_long(kb, (int64_t)i);
		T_EQ_INT(floe_key_index_put(ix, kb, kl, 1, i, &err), 0);
	}
	floe_key_index_stats st;
	floe_key_index_get_stats(ix, &st);
	T_CHECK(st.memory / n <= 24);
	floe_key_index_free(ix);
}

int main(void)
{
	T_RUN(test_index_memory);
	T_RUN(test_index_spill);
	T_RUN(test_index_null_and_int);
	T_RUN(test_index_bytes_per_key);
	return t_finish();
}
