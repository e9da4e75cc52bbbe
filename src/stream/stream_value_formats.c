/*
 * stream_value_formats.c — the value formats of message sources, by name
 * (stream_value_format.h): json, csv, raw, avro-confluent. A new format is
 * one more line in `formats` below.
 */
#include <stdio.h>
#include <string.h>

#include "util/str.h"

#include "stream/stream_config.h"
#include "stream/stream_decode_avro.h"
#include "stream/stream_value_format.h"

/* ---- json: one JSON object per record ------------------------------------------------ */

static int json_open(void **state, const stream_value_ctx *ctx, floe_error *err)
{
	stream_json_dec *d = floe_calloc(1, sizeof(*d));
	if (!d)
		return floe_error_oom(err);
	stream_json_dec_init(d, &ctx->coerce);
	*state = d;
	return FLOE_OK;
}

static int json_decode(void *state, stream_col *root, const stream_msg_view *m, stream_reason *why)
{
	stream_json_dec *d = state;
	int rc = stream_json_decode(d, root, (const char *)m->value, m->value_len);
	if (rc == FLOE_EINVAL)
		*why = d->why;
	return rc;
}

static void json_close(void *state)
{
	stream_json_dec *d = state;
	if (!d)
		return;
	stream_json_dec_reset(d);
	floe_free(d);
}

/* ---- csv: one CSV record per record, columns in schema order ------------------------- */

static int csv_open(void **state, const stream_value_ctx *ctx, floe_error *err)
{
	const struct stream_source_cfg *sc = ctx->src;
	stream_csv_dec *d = floe_calloc(1, sizeof(*d));
	if (!d)
		return floe_error_oom(err);
	stream_csv_opts co = {sc->csv_delimiter, sc->csv_quote, false, sc->csv_null_literal, false};
	stream_csv_dec_init(d, &co, &ctx->coerce);
	*state = d;
	return FLOE_OK;
}

static int csv_decode(void *state, stream_col *root, const stream_msg_view *m, stream_reason *why)
{
	stream_csv_dec *d = state;
	int rc;
	if (!d->have_map && (rc = stream_csv_set_positional(d, root)))
		return rc;
	size_t n = m->value_len;
	const char *p = (const char *)m->value;
	while (n && (p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	rc = stream_csv_decode(d, root, p, n);
	if (rc == FLOE_EINVAL)
		*why = d->why;
	return rc;
}

static void csv_close(void *state)
{
	stream_csv_dec *d = state;
	if (!d)
		return;
	stream_csv_dec_reset(d);
	floe_free(d);
}

/* ---- raw: the value is the table's one string or binary column ----------------------- */

typedef struct raw_dec {
	int col; /* the value's top-level field */
} raw_dec;

static int raw_open(void **state, const stream_value_ctx *ctx, floe_error *err)
{
	const floe_type *t = ctx->root;
	int col = -1;
	for (size_t i = 0; i < t->n_fields; i++) {
		if (ctx->meta_cols && ctx->meta_cols[i])
			continue;
		if (col >= 0)
			return floe_error_set(err, FLOE_EINVAL,
					      "format raw: the table has more than one column besides "
					      "the metadata columns ('%s' and '%s'); raw fills exactly one",
					      t->fields[col].name, t->fields[i].name);
		col = (int)i;
	}
	if (col < 0)
		return floe_error_set(err, FLOE_EINVAL,
				      "format raw: the table has no column for the value");
	int id = t->fields[col].type->id;
	if (id != FLOE_T_STRING && id != FLOE_T_BINARY)
		return floe_error_set(err, FLOE_EINVAL,
				      "format raw: column '%s' must be string or binary",
				      t->fields[col].name);
	raw_dec *d = floe_calloc(1, sizeof(*d));
	if (!d)
		return floe_error_oom(err);
	d->col = col;
	*state = d;
	return FLOE_OK;
}

static int raw_decode(void *state, stream_col *root, const stream_msg_view *m, stream_reason *why)
{
	raw_dec *d = state;
	int64_t n0 = root->len;
	int rc;
	if ((rc = stream_col_struct_begin(root)))
		return rc;
	for (size_t i = 0; i < root->n_kids; i++) {
		stream_col *k = &root->kids[i];
		if ((int)i != d->col) {
			rc = stream_col_put_null(k);
		} else if (m->null_value) {
			if (!k->nullable) {
				stream_col_truncate(root, n0);
				stream_reason_set(why, "a tombstone (null value) for the required "
						       "column '%s'",
						  k->name);
				return FLOE_EINVAL;
			}
			rc = stream_col_put_null(k);
		} else {
			if (k->type->id == FLOE_T_STRING &&
			    !stream_utf8_valid(m->value, m->value_len)) {
				stream_col_truncate(root, n0);
				stream_reason_set(why, "the value is not UTF-8 (column '%s' is a "
						       "string; make it binary)",
						  k->name);
				return FLOE_EINVAL;
			}
			rc = stream_col_put_bin(k, m->value, m->value_len);
		}
		if (rc) {
			stream_col_truncate(root, n0);
			return rc;
		}
	}
	return FLOE_OK;
}

static void raw_close(void *state)
{
	floe_free(state);
}


/* ---- avro-confluent: Confluent's wire format, the writer schema from a registry --------- */

/* stream_decode_avro.h does the work: the framing, the registry and its
 * cache, the datum into the table's row. */
static int avro_open(void **state, const stream_value_ctx *ctx, floe_error *err)
{
	const struct stream_source_cfg *sc = ctx->src;
	stream_avro_opts o = {sc->registry_url, sc->registry_user_info, sc->registry_bearer_token,
			      0, 0};
	stream_avro_dec *d;
	int rc = stream_avro_dec_new(&d, &o, ctx->root, &ctx->coerce, err);
	if (!rc)
		*state = d;
	return rc;
}

static int avro_decode(void *state, stream_col *root, const stream_msg_view *m, stream_reason *why)
{
	if (m->null_value) {
		stream_reason_set(why, "a tombstone (null value): avro-confluent has no row for it");
		return FLOE_EINVAL;
	}
	return stream_avro_decode(state, root, m->value, m->value_len, why);
}

static void avro_close(void *state)
{
	stream_avro_dec_free(state);
}

/* ---- the registry -------------------------------------------------------------------- */

static const stream_value_format fmt_json = {"json", STREAM_FMT_JSONL, json_open, json_decode,
					     json_close};
static const stream_value_format fmt_csv = {"csv", STREAM_FMT_CSV, csv_open, csv_decode,
					    csv_close};
static const stream_value_format fmt_raw = {"raw", STREAM_FMT_RAW, raw_open, raw_decode,
					    raw_close};

static const stream_value_format fmt_avro = {"avro-confluent", STREAM_FMT_AVRO_CONFLUENT,
					     avro_open, avro_decode, avro_close};

static const stream_value_format *const formats[] = {
	&fmt_json, &fmt_csv, &fmt_raw, &fmt_avro, NULL,
};

const stream_value_format *stream_value_format_find(const char *name)
{
	if (!strcmp(name, "jsonl"))
		name = "json";
	for (size_t i = 0; formats[i]; i++)
		if (!strcmp(formats[i]->name, name))
			return formats[i];
	return NULL;
}

void stream_value_format_names(char *out, size_t cap)
{
	size_t k = 0;
	if (cap)
		out[0] = 0;
	for (size_t i = 0; formats[i]; i++) {
		if (!strcmp(formats[i]->name, "json") || !strcmp(formats[i]->name, "csv"))
			continue;
		int n = snprintf(out + k, cap - k, "%s%s", k ? ", " : "", formats[i]->name);
		if (n < 0 || (size_t)n >= cap - k)
			break;
		k += (size_t)n;
	}
}
