/*
 * stream_decode_avro.c — the avro-confluent value format's decoder
 * (stream_decode_avro.h): Confluent's framing, the schema registry client
 * and its cache, and the Avro datum written as JSON for the table's JSON
 * decoder.
 *
 * The JSON is directed by the table's column types (avro_json below), so
 * that no value changes on the way: bytes and fixed as base64 (a binary or
 * fixed column decodes it back; a string column takes UTF-8 bytes as text),
 * fixed(16) into a uuid column as its canonical text, decimals (bytes or
 * fixed) as exact decimal text from the unscaled two's-complement integer,
 * date / time-millis / time-micros / timestamp-millis / -micros / -nanos
 * and local-timestamp-* as ISO-8601 text into date, time and timestamp
 * columns (numbers would be read in the source's epoch-unit), their numbers
 * into any other column.
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

#include "stream/stream_decode.h"
#include "stream/stream_decode_avro.h"

#define AVRO_SCHEMAS_MAX 4096                 /* ids one decoder remembers */
#define AVRO_SCHEMA_MAX_BYTES ((size_t)1 << 20) /* one registry answer */

typedef struct avro_schema_entry {
	uint32_t id;
	floe_arena arena;         /* the schema, its JSON, bad */
	floe_avro_schema *schema; /* NULL: records of id are dead letters (bad says why) */
	floe_avro_decoder *dec;
	const char *bad;
} avro_schema_entry;

struct stream_avro_dec {
	stream_avro_opts o;
	const floe_type *root; /* the table's row type: directs the JSON (avro_json) */
	stream_json_dec json;
	avro_schema_entry **ents;
	size_t n_ents, cap_ents, last;
	floe_arena datum; /* one record's values */
	floe_buf text;
	CURL *curl;
	struct curl_slist *headers;
	int64_t fetches;
};

static pthread_once_t avro_curl_once = PTHREAD_ONCE_INIT;
static void avro_curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int stream_avro_dec_new(stream_avro_dec **out, const stream_avro_opts *o, const floe_type *root,
			const stream_coerce_opts *co, floe_error *err)
{
	*out = NULL;
	stream_avro_dec *d = floe_calloc(1, sizeof(*d));
	if (!d)
		return floe_error_oom(err);
	if (o)
		d->o = *o;
	if (d->o.attempts <= 0)
		d->o.attempts = 5;
	if (d->o.backoff_ms <= 0)
		d->o.backoff_ms = 500;
	d->root = root;
	stream_json_dec_init(&d->json, co);
	floe_arena_init(&d->datum, 65536);
	floe_buf_init(&d->text, 0);
	*out = d;
	return FLOE_OK;
}

void stream_avro_dec_free(stream_avro_dec *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_ents; i++) {
		floe_avro_decoder_free(d->ents[i]->dec);
		floe_arena_reset(&d->ents[i]->arena);
		floe_free(d->ents[i]);
	}
	floe_free(d->ents);
	if (d->curl)
		curl_easy_cleanup(d->curl);
	curl_slist_free_all(d->headers);
	stream_json_dec_reset(&d->json);
	floe_arena_reset(&d->datum);
	floe_buf_reset(&d->text);
	floe_free(d);
}

int64_t stream_avro_dec_fetches(const stream_avro_dec *d)
{
	return d ? d->fetches : 0;
}

/* A new entry for id, in the table (its schema not yet set). NULL: out of
 * memory. */
static avro_schema_entry *entry_add(stream_avro_dec *d, uint32_t id)
{
	if (d->n_ents == d->cap_ents) {
		size_t cap = d->cap_ents ? d->cap_ents * 2 : 8;
		avro_schema_entry **e = floe_realloc(d->ents, cap * sizeof(*e));
		if (!e)
			return NULL;
		d->ents = e;
		d->cap_ents = cap;
	}
	avro_schema_entry *e = floe_calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->id = id;
	floe_arena_init(&e->arena, 4096);
	d->ents[d->n_ents++] = e;
	return e;
}

/* Forget the last entry (its schema could not be kept: out of memory). */
static void entry_drop_last(stream_avro_dec *d)
{
	avro_schema_entry *e = d->ents[--d->n_ents];
	floe_avro_decoder_free(e->dec);
	floe_arena_reset(&e->arena);
	floe_free(e);
}

/* Remember that id's records are dead letters because of why. */
static int entry_bad(stream_avro_dec *d, avro_schema_entry *e, const stream_reason *why)
{
	floe_avro_decoder_free(e->dec);
	e->dec = NULL;
	e->schema = NULL;
	floe_arena_reset(&e->arena);
	if (!(e->bad = floe_arena_strdup(&e->arena, why->msg))) {
		entry_drop_last(d);
		return FLOE_ENOMEM;
	}
	return FLOE_EINVAL;
}

/* Parse a registry's answer into e (0; FLOE_EINVAL with why; FLOE_ENOMEM). */
static int entry_parse(avro_schema_entry *e, const char *body, size_t n, stream_reason *why)
{
	floe_json *j;
	const floe_json *sj = NULL;
	floe_error pe = {0};
	int r = floe_json_parse(&j, &e->arena, body, n, NULL, &pe);
	if (!r && (!(sj = floe_json_get(j, "schema")) || sj->type != FLOE_JSON_STRING)) {
		r = FLOE_ECORRUPT;
		floe_error_set(&pe, r, "no \"schema\" string in the registry's answer");
	}
	if (!r) {
		const floe_json *ty = floe_json_get(j, "schemaType");
		if (ty && ty->type == FLOE_JSON_STRING && strcmp(ty->s, "AVRO")) {
			r = FLOE_EUNSUPPORTED;
			floe_error_set(&pe, r, "schemaType %.40s is not AVRO", ty->s);
		}
	}
	if (!r) {
		const floe_json *refs = floe_json_get(j, "references");
		if (refs && refs->type == FLOE_JSON_ARRAY && refs->len > 0) {
			r = FLOE_EUNSUPPORTED;
			floe_error_set(&pe, r,
				       "the schema has references to other subjects, which floe "
				       "does not follow yet");
		}
	}
	r = r ? r : floe_avro_schema_parse(&e->schema, &e->arena, sj->s, sj->len, NULL, &pe);
	r = r ? r : floe_avro_decoder_new(&e->dec, NULL, e->schema, NULL, &pe);
	if (r == FLOE_ENOMEM)
		return r;
	if (r) {
		stream_reason_set(why, "schema %u: %s", e->id, pe.msg);
		return FLOE_EINVAL;
	}
	return FLOE_OK;
}

int stream_avro_dec_put(stream_avro_dec *d, uint32_t id, const char *body, size_t n,
			stream_reason *why)
{
	for (size_t i = 0; i < d->n_ents; i++)
		if (d->ents[i]->id == id) {
			stream_reason_set(why, "schema %u is known already", id);
			return FLOE_EINVAL; /* an id's schema never changes */
		}
	if (d->n_ents == AVRO_SCHEMAS_MAX) {
		stream_reason_set(why, "more than %d Avro schema ids in one writer task",
				  AVRO_SCHEMAS_MAX);
		return FLOE_EINVAL;
	}
	avro_schema_entry *e = entry_add(d, id);
	if (!e)
		return FLOE_ENOMEM;
	int rc = entry_parse(e, body, n, why);
	if (rc == FLOE_ENOMEM) {
		entry_drop_last(d);
		return rc;
	}
	if (rc)
		return entry_bad(d, e, why);
	return FLOE_OK;
}

/* ---- the registry ------------------------------------------------------------------ */

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	floe_buf *b = ud;
	size_t n = size * nmemb;
	if (b->len + n > AVRO_SCHEMA_MAX_BYTES || floe_buf_append(b, p, n))
		return 0;
	return n;
}

/* A Confluent registry's error_code in body (0: none). */
static long error_code(const floe_buf *body)
{
	floe_arena a;
	floe_json *j;
	long code = 0;
	floe_arena_init(&a, 1024);
	if (!floe_json_parse(&j, &a, (const char *)body->data, body->len, NULL, NULL)) {
		const floe_json *c = floe_json_get(j, "error_code");
		if (c && c->type == FLOE_JSON_NUMBER && c->is_int)
			code = (long)c->i;
	}
	floe_arena_reset(&a);
	return code;
}

/*
 * GET <url>/schemas/ids/<id> into body. 0 with *status 200 (the schema) or
 * 404 (Confluent's 40403: no such id); FLOE_EIO when the registry could not
 * be asked or answered anything else, after the retries where retrying
 * helps (why says what it answered); FLOE_ENOMEM.
 */
static int fetch(stream_avro_dec *d, uint32_t id, floe_buf *body, long *status,
		 stream_reason *why)
{
	*status = 0;
	if (!d->o.url) {
		stream_reason_set(why, "no schema registry (avro-confluent.url) for schema id %u",
				  id);
		return FLOE_EIO;
	}
	pthread_once(&avro_curl_once, avro_curl_init);
	if (!d->curl && !(d->curl = curl_easy_init()))
		return FLOE_ENOMEM;
	if (!d->headers) {
		d->headers = curl_slist_append(NULL, "Accept: application/vnd.schemaregistry.v1+json, "
						     "application/vnd.schemaregistry+json; qs=0.9, "
						     "application/json; qs=0.5");
		if (!d->headers)
			return FLOE_ENOMEM;
	}
	char url[2048];
	size_t ul = strlen(d->o.url);
	while (ul && d->o.url[ul - 1] == '/')
		ul--;
	snprintf(url, sizeof(url), "%.*s/schemas/ids/%u", (int)(ul < 2000 ? ul : 2000), d->o.url, id);
	long st = 0;
	CURLcode cc = CURLE_OK;
	for (int attempt = 0; attempt < d->o.attempts; attempt++) {
		if (attempt)
			floe_sleep_ms((int64_t)d->o.backoff_ms << (attempt - 1 < 6 ? attempt - 1 : 6));
		floe_buf_clear(body);
		curl_easy_reset(d->curl);
		curl_easy_setopt(d->curl, CURLOPT_URL, url);
		curl_easy_setopt(d->curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(d->curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
		curl_easy_setopt(d->curl, CURLOPT_TIMEOUT_MS, 10000L);
		curl_easy_setopt(d->curl, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, d->headers);
		curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, body);
		if (d->o.user_info) {
			curl_easy_setopt(d->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
			curl_easy_setopt(d->curl, CURLOPT_USERPWD, d->o.user_info);
		} else if (d->o.bearer_token) {
			curl_easy_setopt(d->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
			curl_easy_setopt(d->curl, CURLOPT_XOAUTH2_BEARER, d->o.bearer_token);
		}
		d->fetches++;
		cc = curl_easy_perform(d->curl);
		st = 0;
		if (cc == CURLE_WRITE_ERROR && body->len + CURL_MAX_WRITE_SIZE > AVRO_SCHEMA_MAX_BYTES) {
			stream_reason_set(why, "schema registry %s: the answer is longer than %zu bytes",
					  url, AVRO_SCHEMA_MAX_BYTES);
			return FLOE_EIO;
		}
		if (cc != CURLE_OK)
			continue; /* unreachable, timed out, reset: ask again */
		curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &st);
		if (st >= 500 || st == 429 || st == 408)
			continue;
		break;
	}
	if (cc != CURLE_OK) {
		stream_reason_set(why, "schema registry %s: %s (%d tries)", url, curl_easy_strerror(cc),
				  d->o.attempts);
		return FLOE_EIO;
	}
	if (st == 200) {
		*status = st;
		return FLOE_OK;
	}
	if (st == 404 && error_code(body) == 40403) {
		*status = st;
		return FLOE_OK;
	}
	if (st == 401 || st == 403)
		stream_reason_set(why,
				  "schema registry %s: HTTP %ld: the registry refused the credentials "
				  "(avro-confluent.basic-auth.user-info, avro-confluent.bearer-auth.token)",
				  url, st);
	else if (st == 404)
		stream_reason_set(why,
				  "schema registry %s: HTTP 404 without a Confluent error_code 40403 "
				  "(is avro-confluent.url the registry's address?): %.80s",
				  url, floe_buf_cstr(body));
	else
		stream_reason_set(why, "schema registry %s: HTTP %ld%s: %.80s", url, st,
				  st >= 500 || st == 429 || st == 408 ? " (every try)" : "",
				  floe_buf_cstr(body));
	return FLOE_EIO;
}

/* The writer schema of id: cached, else fetched. NULL with *rc: FLOE_EINVAL
 * (why: the record is a dead letter), FLOE_EIO (why), FLOE_ENOMEM. */
static avro_schema_entry *schema_of(stream_avro_dec *d, uint32_t id, stream_reason *why, int *rc)
{
	*rc = FLOE_OK;
	avro_schema_entry *e = NULL;
	if (d->last < d->n_ents && d->ents[d->last]->id == id)
		e = d->ents[d->last];
	for (size_t i = 0; !e && i < d->n_ents; i++)
		if (d->ents[i]->id == id) {
			e = d->ents[i];
			d->last = i;
		}
	if (e && !e->schema) {
		stream_reason_set(why, "%s", e->bad);
		*rc = FLOE_EINVAL;
		return NULL;
	}
	if (e)
		return e;
	if (d->n_ents == AVRO_SCHEMAS_MAX) {
		stream_reason_set(why, "more than %d Avro schema ids in one writer task",
				  AVRO_SCHEMAS_MAX);
		*rc = FLOE_EINVAL;
		return NULL;
	}
	floe_buf body;
	long st;
	floe_buf_init(&body, 0);
	if ((*rc = fetch(d, id, &body, &st, why))) {
		floe_buf_reset(&body);
		return NULL;
	}
	if (st == 404) {
		floe_buf_reset(&body);
		if (!(e = entry_add(d, id))) {
			*rc = FLOE_ENOMEM;
			return NULL;
		}
		stream_reason_set(why, "schema id %u is not in the schema registry (%s: HTTP 404, "
				       "error_code 40403)",
				  id, d->o.url);
		*rc = entry_bad(d, e, why);
		return NULL;
	}
	*rc = stream_avro_dec_put(d, id, (const char *)body.data, body.len, why);
	floe_buf_reset(&body);
	if (*rc)
		return NULL;
	d->last = d->n_ents - 1;
	return d->ents[d->last];
}

/* ---- the datum as JSON for the table's JSON decoder --------------------------------- */

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

int stream_avro_decode(stream_avro_dec *d, stream_col *root, const uint8_t *p, size_t n,
		       stream_reason *why)
{
	int rc;
	if (n < 5 || p[0] != 0) {
		if (n && p[0] != 0)
			stream_reason_set(why,
					  "not Confluent's wire format: the first byte is 0x%02x, not "
					  "the magic byte 0",
					  p[0]);
		else
			stream_reason_set(why,
					  "not Confluent's wire format: %zu bytes, shorter than the "
					  "magic byte and the 4-byte schema id",
					  n);
		return FLOE_EINVAL;
	}
	uint32_t id = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	avro_schema_entry *e = schema_of(d, id, why, &rc);
	if (!e)
		return rc;
	floe_cursor c;
	floe_cursor_init(&c, p + 5, n - 5);
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
