/*
 * test_arrow_concat.c — concatenating batches of every Iceberg type
 * (nested included, with nulls, sliced inputs) equals building one batch
 * of all rows; checked through floe_arrow_take's identity and row values.
 */
#include "arrow/arrow_build.h"
#include "arrow/arrow_concat.h"
#include "arrow/arrow_take.h"
#include "harness.h"
#include "iceberg/types.h"
#include "json_batch.h"
#include "scan/scan_arrow.h"

static const char *rows[] = {
	"{\"id\": 1, \"s\": \"a\", \"d\": 1.5, \"b\": true, \"dec\": \"1.20\", \"u\": "
	"\"f79c3e09-677c-4bbd-a479-3f349cb785e7\", \"st\": {\"x\": 1, \"y\": \"p\"}, \"ls\": [\"q\", "
	"\"r\"], \"m\": {\"k\": 1}}",
	"{\"id\": 2, \"s\": null, \"d\": null, \"b\": false, \"st\": null, \"ls\": [], \"m\": {}}",
	"{\"id\": 3, \"s\": \"ccc\", \"d\": -2.25, \"b\": null, \"dec\": \"-3.00\", \"st\": {\"x\": "
	"null, \"y\": \"zz\"}, \"ls\": null, \"m\": null}",
	"{\"id\": 4, \"s\": \"dddd\", \"d\": 4, \"b\": true, \"ls\": [null, \"e\"], \"m\": {\"a\": "
	"null, \"b\": 2}}",
	"{\"id\": 5, \"s\": \"\", \"d\": 0, \"b\": false, \"st\": {\"x\": 5, \"y\": null}, \"ls\": "
	"[\"only\"]}",
};

static void build(floe_schema *schema, int from, int to, struct ArrowArray *out,
		  struct ArrowSchema *sc)
{
	json_batch *b;
	floe_error err = {0};
	T_OK(json_batch_new(&b, schema, &err), &err);
	for (int i = from; i < to; i++)
		T_OK(json_batch_append_text(b, rows[i], strlen(rows[i]), &err), &err);
	T_OK(json_batch_finish(b, out, sc, &err), &err);
	json_batch_free(b);
}

/* Compare every primitive leaf value of row r of a and b (types from t). */
static bool same_value(const struct ArrowArray *a, int64_t ra, const struct ArrowArray *b,
		       int64_t rb, const floe_type *t)
{
	bool va = floe_sa_valid(a, ra), vb = floe_sa_valid(b, rb);
	if (va != vb)
		return false;
	if (!va)
		return true;
	if (t->id == FLOE_T_STRUCT) {
		for (size_t i = 0; i < t->n_fields; i++)
			if (!same_value(a->children[i], ra + a->offset, b->children[i], rb + b->offset,
					t->fields[i].type))
				return false;
		return true;
	}
	if (t->id == FLOE_T_LIST || t->id == FLOE_T_MAP) {
		const int32_t *oa = (const int32_t *)a->buffers[1] + a->offset;
		const int32_t *ob = (const int32_t *)b->buffers[1] + b->offset;
		int64_t na = oa[ra + 1] - oa[ra], nb = ob[rb + 1] - ob[rb];
		if (na != nb)
			return false;
		for (int64_t k = 0; k < na; k++) {
			if (t->id == FLOE_T_LIST) {
				if (!same_value(a->children[0], oa[ra] + k, b->children[0], ob[rb] + k,
						t->element))
					return false;
			} else {
				const struct ArrowArray *ea = a->children[0], *eb = b->children[0];
				if (!same_value(ea->children[0], oa[ra] + k, eb->children[0], ob[rb] + k,
						t->key) ||
				    !same_value(ea->children[1], oa[ra] + k, eb->children[1], ob[rb] + k,
						t->value))
					return false;
			}
		}
		return true;
	}
	floe_value x, y;
	floe_sa_value(&x, a, t, ra);
	floe_sa_value(&y, b, t, rb);
	return floe_value_equal(&x, &y);
}

static void test_concat_equals_one_batch(void)
{
	floe_arena ar;
	floe_schema *schema;
	floe_error err = {0};
	floe_arena_init(&ar, 4096);
	T_OK(floe_schema_parse_compact(&schema, &ar,
				       "id long, s string, d double, b boolean, dec decimal(9, 2), "
				       "u uuid, st struct<x: int, y: string>, ls list<string>, "
				       "m map<string, int>",
				       &err),
	     &err);
	struct ArrowArray whole, p1, p2, p3, cat;
	struct ArrowSchema sc, sc1, sc2, sc3;
	build(schema, 0, 5, &whole, &sc);
	build(schema, 0, 2, &p1, &sc1);
	build(schema, 0, 4, &p2, &sc2); /* rows 2..3 used through a slice */
	build(schema, 4, 5, &p3, &sc3);
	struct ArrowArray slice;
	floe_arrow_slice_view(&slice, &p2, 2, 2);
	const struct ArrowArray *parts[] = {&p1, &slice, &p3};
	T_OK(floe_arrow_concat(&cat, &sc, parts, 3, &err), &err);
	T_EQ_INT(cat.length, 5);
	T_EQ_INT(cat.n_children, (int64_t)schema->root->n_fields);
	for (size_t c = 0; c < schema->root->n_fields; c++) {
		const floe_type *t = schema->root->fields[c].type;
		for (int64_t r = 0; r < 5; r++)
			T_CHECK(same_value(cat.children[c], r, whole.children[c], r, t));
		T_EQ_INT(cat.children[c]->null_count, whole.children[c]->null_count);
	}
	/* and take over the result works (well-formed output) */
	int64_t idx[] = {4, 0, 2};
	struct ArrowArray taken;
	T_OK(floe_arrow_take(&taken, &sc, &cat, idx, 3, &err), &err);
	for (size_t c = 0; c < schema->root->n_fields; c++)
		for (int64_t r = 0; r < 3; r++)
			T_CHECK(same_value(taken.children[c], r, whole.children[c], idx[r],
					   schema->root->fields[c].type));
	floe_arrow_array_release(&taken);
	floe_arrow_array_release(&cat);
	floe_arrow_array_release(&slice);
	floe_arrow_array_release(&whole);
	floe_arrow_array_release(&p1);
	floe_arrow_array_release(&p2);
	floe_arrow_array_release(&p3);
	floe_arrow_schema_release(&sc);
	floe_arrow_schema_release(&sc1);
	floe_arrow_schema_release(&sc2);
	floe_arrow_schema_release(&sc3);
	floe_arena_reset(&ar);
}

int main(void)
{
	T_RUN(test_concat_equals_one_batch);
	return t_finish();
}
