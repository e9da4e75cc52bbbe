/*
 * test_schema_evolve.c — schema evolution (src/iceberg/schema_evolve.c):
 * the spec's type promotions, added columns (nested, with fresh ids as Java
 * assigns them), widening, optional columns, and the merge of a record's
 * inferred struct; what is refused, naming the field.
 */
#include "harness.h"
#include "iceberg/schema_evolve.h"

static floe_arena A;

static const floe_type *P(floe_type_id id)
{
	return floe_type_primitive(id);
}

static floe_schema *parse(const char *cols)
{
	floe_schema *s = NULL;
	floe_error err;
	T_OK(floe_schema_parse_compact(&s, &A, cols, &err), &err);
	return s;
}

static const floe_type *ptype(const char *t)
{
	const floe_type *out = NULL;
	floe_error err;
	T_OK(floe_type_parse_primitive(&out, &A, t, strlen(t), &err), &err);
	return out;
}

static void test_promotions(void)
{
	T_CHECK(floe_type_promotable(P(FLOE_T_INT), P(FLOE_T_LONG), 2));
	T_CHECK(floe_type_promotable(P(FLOE_T_FLOAT), P(FLOE_T_DOUBLE), 2));
	T_CHECK(floe_type_promotable(ptype("decimal(9,2)"), ptype("decimal(18,2)"), 2));
	T_CHECK(!floe_type_promotable(ptype("decimal(9,2)"), ptype("decimal(18,3)"), 2));
	T_CHECK(!floe_type_promotable(ptype("decimal(18,2)"), ptype("decimal(9,2)"), 2));
	T_CHECK(!floe_type_promotable(P(FLOE_T_LONG), P(FLOE_T_INT), 2));
	T_CHECK(!floe_type_promotable(P(FLOE_T_INT), P(FLOE_T_DOUBLE), 2));
	T_CHECK(!floe_type_promotable(P(FLOE_T_INT), P(FLOE_T_STRING), 2));
	T_CHECK(!floe_type_promotable(P(FLOE_T_DOUBLE), P(FLOE_T_FLOAT), 2));
	/* spec: date -> timestamp / timestamp_ns from v3 only */
	T_CHECK(!floe_type_promotable(P(FLOE_T_DATE), P(FLOE_T_TIMESTAMP), 2));
	T_CHECK(floe_type_promotable(P(FLOE_T_DATE), P(FLOE_T_TIMESTAMP), 3));
	T_CHECK(floe_type_promotable(P(FLOE_T_DATE), P(FLOE_T_TIMESTAMP_NS), 3));
	T_CHECK(!floe_type_promotable(P(FLOE_T_DATE), P(FLOE_T_TIMESTAMPTZ), 3));
	T_CHECK(floe_type_promotable(P(FLOE_T_STRING), P(FLOE_T_STRING), 1));
}

static void test_alter_ops(void)
{
	floe_error err;
	floe_schema_evo e;
	floe_schema *s = parse("id long not null, kind string not null, geo struct<lat: double>, "
			       "n int, d decimal(9,2)");
	floe_schema *out = NULL;
	int32_t last = 0;
	T_EQ_INT(s->highest_field_id, 6);
	T_OK(floe_evo_begin(&e, &A, s, 6, 2, &err), &err);
	T_OK(floe_evo_add_column(&e, "geo.lon", P(FLOE_T_DOUBLE), "longitude", &err), &err);
	T_OK(floe_evo_add_column(&e, "tags", P(FLOE_T_STRING), NULL, &err),
	     &err);
	T_OK(floe_evo_update_type(&e, "n", P(FLOE_T_LONG), &err), &err);
	T_OK(floe_evo_update_type(&e, "d", ptype("decimal(12,2)"), &err), &err);
	T_OK(floe_evo_make_optional(&e, "kind", &err), &err);
	/* refused, each naming the field */
	T_ERR(floe_evo_update_type(&e, "id", P(FLOE_T_INT), &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "column 'id': long cannot become int") != NULL);
	T_ERR(floe_evo_update_type(&e, "d", ptype("decimal(12,3)"), &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "column 'd'") != NULL);
	T_ERR(floe_evo_add_column(&e, "geo.lat", P(FLOE_T_DOUBLE), NULL, &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg, "column 'geo.lat' exists already");
	T_ERR(floe_evo_add_column(&e, "nope.x", P(FLOE_T_DOUBLE), NULL, &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg, "column 'nope': no such field");
	T_ERR(floe_evo_add_column(&e, "id.x", P(FLOE_T_DOUBLE), NULL, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "column 'id.x'") != NULL);
	T_ERR(floe_evo_make_optional(&e, "geo.alt", &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg, "column 'geo.alt': no such field in its struct");
	T_OK(floe_evo_finish(&out, &last, &e, &err), &err);
	T_CHECK(out != NULL);
	T_EQ_INT(last, 8);
	const floe_schema_entry *lon = floe_schema_find_name(out, "geo.lon", false);
	T_CHECK(lon && lon->id == 7 && !lon->required);
	T_EQ_STR(lon->field->doc, "longitude");
	const floe_schema_entry *tags = floe_schema_find_name(out, "tags", false);
	T_CHECK(tags && tags->id == 8);
	T_EQ_INT(floe_schema_find_name(out, "n", false)->type->id, FLOE_T_LONG);
	T_EQ_INT(floe_schema_find_name(out, "d", false)->type->precision, 12);
	T_CHECK(!floe_schema_find_name(out, "kind", false)->required);
	T_CHECK(floe_schema_find_name(out, "id", false)->required);
	T_CHECK(strstr(floe_evo_describe(&e), "widen n int -> long") != NULL);
	/* the base is untouched */
	T_EQ_INT(floe_schema_find_name(s, "n", false)->type->id, FLOE_T_INT);
	T_CHECK(!floe_schema_find_name(s, "geo.lon", false));
	floe_evo_reset(&e);
	/* no change, no schema */
	T_OK(floe_evo_begin(&e, &A, s, 6, 2, &err), &err);
	T_OK(floe_evo_update_type(&e, "n", P(FLOE_T_INT), &err), &err);
	T_OK(floe_evo_finish(&out, &last, &e, &err), &err);
	T_CHECK(out == NULL);
	floe_evo_reset(&e);
}

static void test_nested_ids(void)
{
	/* a new struct column: its id first, then its fields' (Java's order),
	 * after last-column-id (which may be past the schema's highest id) */
	floe_error err;
	floe_schema_evo e;
	floe_schema *s = parse("id long");
	floe_schema *w = parse("id long, p struct<a: int, b: list<struct<x: string>>>");
	floe_schema *out = NULL;
	int32_t last = 0;
	T_OK(floe_evo_begin(&e, &A, s, 10, 2, &err), &err);
	T_OK(floe_evo_merge(&e, w->root, false, &err), &err);
	T_OK(floe_evo_finish(&out, &last, &e, &err), &err);
	T_CHECK(out != NULL);
	T_EQ_INT(floe_schema_find_name(out, "p", false)->id, 11);
	T_EQ_INT(floe_schema_find_name(out, "p.a", false)->id, 12);
	T_EQ_INT(floe_schema_find_name(out, "p.b", false)->id, 13);
	T_EQ_INT(floe_schema_find_name(out, "p.b.element", false)->id, 14);
	T_EQ_INT(floe_schema_find_name(out, "p.b.element.x", false)->id, 15);
	T_EQ_INT(last, 15);
	floe_evo_reset(&e);
}

static void test_merge(void)
{
	floe_error err;
	floe_schema_evo e;
	floe_schema *s = parse("id long not null, kind string not null, n int, f float, "
			       "amt decimal(5,2), ev struct<a: int not null, b: string>, "
			       "xs list<struct<k: int>>");
	/* a record: id, no kind, a wide n, a huge f, a big amount, a new nested
	 * member, a new member of the list's struct, a new top-level field */
	floe_schema *w = parse("id int not null, n long, f double, amt decimal(9,3), "
			       "ev struct<b: string, c: boolean>, xs list<struct<k: int, v: long>>, "
			       "extra string");
	floe_schema *out = NULL;
	int32_t last = 0;
	T_OK(floe_evo_begin(&e, &A, s, s->highest_field_id, 2, &err), &err);
	T_OK(floe_evo_merge(&e, w->root, true, &err), &err);
	T_OK(floe_evo_finish(&out, &last, &e, &err), &err);
	T_CHECK(out != NULL);
	T_EQ_INT(floe_schema_find_name(out, "id", false)->type->id, FLOE_T_LONG); /* int fits */
	T_CHECK(floe_schema_find_name(out, "id", false)->required);
	T_CHECK(!floe_schema_find_name(out, "kind", false)->required); /* absent */
	T_EQ_INT(floe_schema_find_name(out, "n", false)->type->id, FLOE_T_LONG);
	T_EQ_INT(floe_schema_find_name(out, "f", false)->type->id, FLOE_T_DOUBLE);
	/* 6 integer digits at the column's scale 2 */
	T_EQ_INT(floe_schema_find_name(out, "amt", false)->type->precision, 8);
	T_EQ_INT(floe_schema_find_name(out, "amt", false)->type->scale, 2);
	T_CHECK(!floe_schema_find_name(out, "ev.a", false)->required);
	T_CHECK(floe_schema_find_name(out, "ev.c", false) != NULL);
	T_CHECK(floe_schema_find_name(out, "xs.element.v", false) != NULL);
	T_CHECK(floe_schema_find_name(out, "extra", false) != NULL);
	T_CHECK(!floe_schema_find_name(out, "extra", false)->required);
	floe_evo_reset(&e);

	/* a present but optional (null) member makes its column optional */
	floe_schema *nul = parse("id long");
	T_OK(floe_evo_begin(&e, &A, s, s->highest_field_id, 2, &err), &err);
	T_OK(floe_evo_merge(&e, nul->root, false, &err), &err);
	T_EQ_INT((long long)e.n_changes, 0);
	T_OK(floe_evo_merge(&e, nul->root, true, &err), &err);
	T_OK(floe_evo_finish(&out, &last, &e, &err), &err);
	T_CHECK(out && !floe_schema_find_name(out, "id", false)->required);
	floe_evo_reset(&e);

	/* a string into a long: refused, nothing changed */
	floe_schema *bad = parse("n long, extra string, id string");
	T_OK(floe_evo_begin(&e, &A, s, s->highest_field_id, 2, &err), &err);
	T_ERR(floe_evo_merge(&e, bad->root, true, &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg, "column 'id' is long: a string value cannot evolve it");
	T_OK(floe_evo_finish(&out, &last, &e, &err), &err);
	T_CHECK(out == NULL);
	T_EQ_STR(floe_evo_describe(&e), "");
	floe_evo_reset(&e);

	/* an identifier field stays required */
	floe_schema *k = parse("id long, v string, PRIMARY KEY (id) NOT ENFORCED");
	floe_schema *nok = parse("v string");
	T_OK(floe_evo_begin(&e, &A, k, k->highest_field_id, 2, &err), &err);
	T_ERR(floe_evo_merge(&e, nok->root, true, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "column 'id' is an identifier field") != NULL);
	floe_evo_reset(&e);

	/* beyond decimal(38) */
	floe_schema *d = parse("amt decimal(38,10)");
	floe_schema *wd = parse("amt decimal(38,0)");
	T_OK(floe_evo_begin(&e, &A, d, d->highest_field_id, 2, &err), &err);
	T_ERR(floe_evo_merge(&e, wd->root, false, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "column 'amt'") != NULL);
	floe_evo_reset(&e);
}

int main(void)
{
	floe_arena_init(&A, 1 << 16);
	T_RUN(test_promotions);
	T_RUN(test_alter_ops);
	T_RUN(test_nested_ids);
	T_RUN(test_merge);
	floe_arena_reset(&A);
	return t_finish();
}
