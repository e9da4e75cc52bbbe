/*
 * stream_value_formats.c — the value formats of message sources, by name
 * (stream_value_format.h): json, csv, raw, avro-confluent. A new format is
 * one more line in `formats` below.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "avro/avro_datum.h"
#include "avro/avro_schema.h"
#include "iceberg/value.h"
#include "json/json.h"
#include "util/cursor.h"
#include "util/str.h"
#include "util/thread.h"
#include "util/timeutil.h"

#include "stream/stream_config.h"
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

/*
 * A value is 0x00, the schema id (4 bytes, big-endian), then one Avro
 * datum. The writer schema comes from GET <avro-confluent.url>/schemas/ids/
 * <id> once per task and id; the datum is decoded with it (floe's resolving
 * decoder) and written as JSON (no union wrappers), which the table's JSON
 * decoder takes: fields by name, the JSON coercions. The writing is
 * directed by the table's column types (avro_json below), so that no value
 * changes on the way: bytes and fixed as base64 (a binary or fixed column
 * decodes it back; a string column takes UTF-8 bytes as text), fixed(16)
 * into a uuid column as its canonical text, decimals (bytes or fixed) as
 * exact decimal text from the unscaled two's-complement integer, date /
 * time-millis / time-micros / timestamp-millis / -micros / -nanos and
 * local-timestamp-* as ISO-8601 text into date, time and timestamp
 * columns (numbers would be read in the source's epoch-unit), their
 * numbers into any other column.
 */
#define AVRO_SCHEMAS_MAX 64
#define AVRO_SCHEMA_MAX_BYTES ((size_t)1 << 20)

typedef struct avro_schema_entry {
	uint32_t id;
	floe_arena arena; /* the schema and its JSON */
	floe_avro_schema *schema;
	floe_avro_decoder *dec;
} avro_schema_entry;

typedef struct avro_dec {
	const char *url;
	const floe_type *root; /* the table's row type: directs the JSON (avro_json) */
	stream_json_dec json;
	avro_schema_entry ents[AVRO_SCHEMAS_MAX];
	size_t n_ents;
	floe_arena datum; /* one record's values */
	floe_buf text;
	CURL *curl;
} avro_dec;

static pthread_once_t avro_curl_once = PTHREAD_ONCE_INIT;
static void avro_curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t avro_on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	floe_buf *b = ud;
	size_t n = size * nmemb;
	if (b->len + n > AVRO_SCHEMA_MAX_BYTES || floe_buf_append(b, p, n))
		return 0;
	return n;
}

static int avro_open(void **state, const stream_value_ctx *ctx, floe_error *err)
{
	avro_dec *d = floe_calloc(1, sizeof(*d));
	if (!d)
		return floe_error_oom(err);
	pthread_once(&avro_curl_once, avro_curl_init);
	d->url = ctx->src->registry_url;
	d->root = ctx->root;
	stream_json_dec_init(&d->json, &ctx->coerce);
	floe_arena_init(&d->datum, 65536);
	floe_buf_init(&d->text, 0);
	*state = d;
	return FLOE_OK;
}

/* The writer schema of id: cached, else fetched (why says what failed). */
static avro_schema_entry *avro_schema(avro_dec *d, uint32_t id, stream_reason *why, int *rc)
{
	*rc = FLOE_OK;
	for (size_t i = 0; i < d->n_ents; i++)
		if (d->ents[i].id == id)
			return &d->ents[i];
	if (d->n_ents == AVRO_SCHEMAS_MAX) {
		stream_reason_set(why, "more than %d Avro schemas in one pipeline", AVRO_SCHEMAS_MAX);
		*rc = FLOE_EINVAL;
		return NULL;
	}
	if (!d->curl && !(d->curl = curl_easy_init())) {
		*rc = FLOE_ENOMEM;
		return NULL;
	}
	char url[2048];
	size_t ul = strlen(d->url);
	snprintf(url, sizeof(url), "%.*s/schemas/ids/%u", (int)(ul && d->url[ul - 1] == '/' ? ul - 1 : ul),
		 d->url, id);
	floe_buf body;
	floe_buf_init(&body, 0);
	long st = 0;
	CURLcode cc = CURLE_OK;
	for (int attempt = 0; attempt < 3; attempt++) {
		floe_buf_clear(&body);
		curl_easy_reset(d->curl);
		curl_easy_setopt(d->curl, CURLOPT_URL, url);
		curl_easy_setopt(d->curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(d->curl, CURLOPT_TIMEOUT_MS, 10000L);
		curl_easy_setopt(d->curl, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, avro_on_body);
		curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, &body);
		cc = curl_easy_perform(d->curl);
		if (cc == CURLE_OK) {
			curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &st);
			if (st < 500)
				break;
		}
		floe_sleep_ms(200 << attempt);
	}
	if (cc != CURLE_OK || st != 200) {
		if (cc != CURLE_OK)
			stream_reason_set(why, "schema registry %s: %s", url, curl_easy_strerror(cc));
		else
			stream_reason_set(why, "schema registry %s: HTTP %ld: %.200s", url, st,
					  floe_buf_cstr(&body));
		floe_buf_reset(&body);
		*rc = FLOE_EINVAL;
		return NULL;
	}
	avro_schema_entry *e = &d->ents[d->n_ents];
	memset(e, 0, sizeof(*e));
	e->id = id;
	floe_arena_init(&e->arena, 16384);
	floe_json *j;
	const floe_json *sj;
	floe_error pe = {0};
	int r = floe_json_parse(&j, &e->arena, (const char *)body.data, body.len, NULL, &pe);
	if (!r && (!(sj = floe_json_get(j, "schema")) || sj->type != FLOE_JSON_STRING)) {
		r = FLOE_ECORRUPT;
		floe_error_set(&pe, r, "no \"schema\" string");
	}
	if (!r) {
		const floe_json *ty = floe_json_get(j, "schemaType");
		if (ty && ty->type == FLOE_JSON_STRING && strcmp(ty->s, "AVRO")) {
			r = FLOE_EUNSUPPORTED;
			floe_error_set(&pe, r, "schemaType %s is not AVRO", ty->s);
		}
	}
	r = r ? r : floe_avro_schema_parse(&e->schema, &e->arena, sj->s, sj->len, NULL, &pe);
	r = r ? r : floe_avro_decoder_new(&e->dec, NULL, e->schema, NULL, &pe);
	floe_buf_reset(&body);
	if (r) {
		floe_avro_decoder_free(e->dec);
		floe_arena_reset(&e->arena);
		if (r == FLOE_ENOMEM) {
			*rc = r;
			return NULL;
		}
		stream_reason_set(why, "schema %u from %s: %s", id, d->url, pe.msg);
		*rc = FLOE_EINVAL;
		return NULL;
	}
	d->n_ents++;
	return e;
}

/* The table's field of a record field (the JSON decoder's rule: exact
 * name, else ASCII case-insensitive); NULL when none. */
static const floe_type *avro_target_field(const floe_type *t, const char *name)
{
	if (!t || t->id != FLOE_T_STRUCT)
		return NULL;
	for (size_t i = 0; i < t->n_fields; i++)
		if (!strcmp(t->fields[i].name, name))
			return t->fields[i].type;
	for (size_t i = 0; i < t->n_fields; i++) {
		const char *a = t->fields[i].name, *b = name;
		while (*a && *b) {
			char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
			char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
			if (x != y)
				break;
			a++, b++;
		}
		if (!*a && !*b)
			return t->fields[i].type;
	}
	return NULL;
}

static bool avro_lt(const floe_avro_schema *s, const char *name)
{
	return s->logical_type && !strcmp(s->logical_type, name);
}

/* The decimal text of an unscaled big-endian two's-complement integer. */
static void avro_decimal(floe_jw *w, const uint8_t *p, size_t n, int32_t scale)
{
	/* longer than 16 bytes: only sign extension may precede the value */
	while (n > 16) {
		uint8_t ext = (p[1] & 0x80) ? 0xff : 0x00;
		if (p[0] != ext) {
			w->rc = FLOE_EINVAL;
			return;
		}
		p++;
		n--;
	}
	if (n == 0) {
		w->rc = FLOE_EINVAL;
		return;
	}
	char txt[64];
	size_t k = floe_decimal_format(txt, sizeof(txt), floe_i128_from_be(p, n),
				       scale == FLOE_AVRO_ID_NONE ? 0 : scale);
	floe_jw_strn(w, txt, k);
}

static void avro_bytes(floe_jw *w, const floe_type *t, const uint8_t *p, size_t n)
{
	if (t && t->id == FLOE_T_UUID && n == 16) {
		static const char hx[] = "0123456789abcdef";
		char u[37];
		size_t k = 0;
		for (size_t i = 0; i < 16; i++) {
			if (i == 4 || i == 6 || i == 8 || i == 10)
				u[k++] = '-';
			u[k++] = hx[p[i] >> 4];
			u[k++] = hx[p[i] & 15];
		}
		floe_jw_strn(w, u, k);
		return;
	}
	if (t && t->id == FLOE_T_STRING && stream_utf8_valid(p, n)) {
		floe_jw_strn(w, (const char *)p, n);
		return;
	}
	floe_buf b;
	floe_buf_init(&b, 0);
	if (floe_base64_encode(&b, p, n))
		w->rc = FLOE_ENOMEM;
	else
		floe_jw_strn(w, floe_buf_cstr(&b), b.len);
	floe_buf_reset(&b);
}

static bool avro_is_ts(const floe_type *t)
{
	return t && (t->id == FLOE_T_TIMESTAMP || t->id == FLOE_T_TIMESTAMPTZ ||
		     t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS);
}

/* An int or long with a temporal logical type, as ISO text when the column
 * is temporal (else the number). */
static void avro_temporal(floe_jw *w, const floe_avro_schema *s, const floe_type *t, int64_t v)
{
	char txt[64];
	size_t k;
	bool local = s->logical_type && !strncmp(s->logical_type, "local-", 6);
	const char *lt = s->logical_type ? s->logical_type + (local ? 6 : 0) : "";
	if (t && t->id == FLOE_T_DATE && !strcmp(lt, "date")) {
		k = floe_format_date(txt, sizeof(txt), v);
	} else if (t && t->id == FLOE_T_TIME && !strcmp(lt, "time-millis")) {
		k = floe_format_time_us(txt, sizeof(txt), v * 1000, 6);
	} else if (t && t->id == FLOE_T_TIME && !strcmp(lt, "time-micros")) {
		k = floe_format_time_us(txt, sizeof(txt), v, 6);
	} else if (avro_is_ts(t) && (!strcmp(lt, "timestamp-millis") ||
				     !strcmp(lt, "timestamp-micros"))) {
		int64_t us = v;
		if (!strcmp(lt, "timestamp-millis")) {
			if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000) {
				w->rc = FLOE_EINVAL;
				return;
			}
			us = v * 1000;
		}
		k = floe_format_timestamp_us(txt, sizeof(txt) - 1, us, 6);
		if (!local)
			txt[k++] = 'Z';
	} else if (avro_is_ts(t) && !strcmp(lt, "timestamp-nanos")) {
		k = floe_format_timestamp_ns(txt, sizeof(txt) - 1, v, 9);
		if (!local)
			txt[k++] = 'Z';
	} else {
		floe_jw_i64(w, v);
		return;
	}
	floe_jw_strn(w, txt, k);
}

static void avro_json(floe_jw *w, const floe_avro_schema *s, const floe_avro_value *v,
		      const floe_type *t, int depth)
{
	if (w->rc)
		return;
	if (!s || !v || depth > 200) {
		w->rc = FLOE_EINVAL;
		return;
	}
	if (s->type == FLOE_AVRO_UNION) {
		const floe_avro_schema *b = NULL;
		if (v->branch >= 0 && (size_t)v->branch < s->n_branches)
			b = s->branches[v->branch];
		for (size_t i = 0; !b && i < s->n_branches; i++)
			if (s->branches[i]->type == v->type)
				b = s->branches[i];
		avro_json(w, b, v, t, depth + 1);
		return;
	}
	if (s->type != v->type) {
		w->rc = FLOE_EINVAL;
		return;
	}
	switch (v->type) {
	case FLOE_AVRO_INT:
		avro_temporal(w, s, t, v->u.i);
		return;
	case FLOE_AVRO_LONG:
		avro_temporal(w, s, t, v->u.l);
		return;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_FIXED:
		if (avro_lt(s, "decimal"))
			avro_decimal(w, v->u.bytes.p, v->u.bytes.len, s->scale);
		else
			avro_bytes(w, t, v->u.bytes.p, v->u.bytes.len);
		return;
	case FLOE_AVRO_ARRAY:
		floe_jw_arr_begin(w);
		for (size_t i = 0; i < v->u.list.n; i++)
			avro_json(w, s->items, &v->u.list.items[i],
				  t && t->id == FLOE_T_LIST ? t->element : NULL, depth + 1);
		floe_jw_arr_end(w);
		return;
	case FLOE_AVRO_MAP:
		floe_jw_obj_begin(w);
		for (size_t i = 0; i < v->u.map.n && !w->rc; i++) {
			const floe_avro_map_entry *e = &v->u.map.entries[i];
			char *k = floe_strndup((const char *)e->key, e->key_len);
			if (!k) {
				w->rc = FLOE_ENOMEM;
				return;
			}
			floe_jw_key(w, k);
			floe_free(k);
			avro_json(w, s->items, &e->value, t && t->id == FLOE_T_MAP ? t->value : NULL,
				  depth + 1);
		}
		floe_jw_obj_end(w);
		return;
	case FLOE_AVRO_RECORD:
		if (v->u.list.n != s->n_fields) {
			w->rc = FLOE_EINVAL;
			return;
		}
		floe_jw_obj_begin(w);
		for (size_t i = 0; i < s->n_fields; i++) {
			floe_jw_key(w, s->fields[i].name);
			avro_json(w, s->fields[i].type, &v->u.list.items[i],
				  avro_target_field(t, s->fields[i].name), depth + 1);
		}
		floe_jw_obj_end(w);
		return;
	default:
		/* null, boolean, float, double, string, enum: as the generic writer */
		floe_avro_value_write_json(w, s, v);
		return;
	}
}

static int avro_decode(void *state, stream_col *root, const stream_msg_view *m, stream_reason *why)
{
	avro_dec *d = state;
	int rc;
	if (m->null_value) {
		stream_reason_set(why, "a tombstone (null value): avro-confluent has no row for it");
		return FLOE_EINVAL;
	}
	if (m->value_len < 5 || m->value[0] != 0) {
		stream_reason_set(why, "not Confluent's wire format (a 0 byte and a 4-byte schema id)");
		return FLOE_EINVAL;
	}
	uint32_t id = (uint32_t)m->value[1] << 24 | (uint32_t)m->value[2] << 16 |
		      (uint32_t)m->value[3] << 8 | m->value[4];
	avro_schema_entry *e = avro_schema(d, id, why, &rc);
	if (!e)
		return rc;
	floe_cursor c;
	floe_cursor_init(&c, m->value + 5, m->value_len - 5);
	floe_avro_value v;
	floe_error de = {0};
	floe_arena_reset(&d->datum);
	floe_arena_init(&d->datum, 65536);
	if ((rc = floe_avro_decode(&v, e->dec, &c, &d->datum, &de))) {
		if (rc == FLOE_ENOMEM)
			return rc;
		stream_reason_set(why, "Avro datum (schema %u): %s", id, de.msg);
		return FLOE_EINVAL;
	}
	if (floe_cursor_left(&c)) {
		stream_reason_set(why, "Avro datum (schema %u): %zu bytes after the record", id,
				  floe_cursor_left(&c));
		return FLOE_EINVAL;
	}
	floe_jw w;
	floe_buf_clear(&d->text);
	floe_jw_init(&w, &d->text, 0);
	avro_json(&w, e->schema, &v, d->root, 0);
	if ((rc = floe_jw_finish(&w))) {
		if (rc == FLOE_ENOMEM)
			return rc;
		stream_reason_set(why, "Avro datum (schema %u) does not match its schema", id);
		return FLOE_EINVAL;
	}
	rc = stream_json_decode(&d->json, root, (const char *)d->text.data, d->text.len);
	if (rc == FLOE_EINVAL)
		*why = d->json.why;
	return rc;
}

static void avro_close(void *state)
{
	avro_dec *d = state;
	if (!d)
		return;
	for (size_t i = 0; i < d->n_ents; i++) {
		floe_avro_decoder_free(d->ents[i].dec);
		floe_arena_reset(&d->ents[i].arena);
	}
	if (d->curl)
		curl_easy_cleanup(d->curl);
	stream_json_dec_reset(&d->json);
	floe_arena_reset(&d->datum);
	floe_buf_reset(&d->text);
	floe_free(d);
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
