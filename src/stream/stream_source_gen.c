/*
 * stream_source_gen.c — the generator source, after Flink's datagen
 * connector: rows of a schema at a rate, random or sequence fields.
 *
 * DESIGN: row i is a pure function of (seed, i, base time): every random
 * value comes from a splitmix64 hash of (seed, field, row, draw), and the
 * base time that random timestamps count back from is part of the
 * source's position. So a restart from a committed position regenerates
 * exactly the rows that come next, and the generator is as exactly-once as
 * a file. Rows are emitted as JSON lines and decoded like any other input,
 * so a generated table can feed several tables with filters and
 * coercions.
 *
 * Splits: "rows" (the next row number) and the parameter "@base-time-ms".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/value.h"
#include "json/json.h"
#include "stream/stream_source.h"
#include "util/rand.h"
#include "util/thread.h"
#include "util/timeutil.h"

enum { GEN_RANDOM = 0, GEN_SEQUENCE = 1 };

typedef struct gfield {
	const floe_field *f;
	int kind;
	bool has_min, has_max;
	double min, max;   /* numbers */
	int64_t start, end; /* sequence */
	bool has_end;
	int64_t max_past_ms;
	int64_t length;
	double null_rate;
	char **values;
	size_t n_values;
} gfield;

typedef struct gen_source {
	stream_source base;
	stream_gen_opts o;
	gfield *fields;
	size_t n_fields;
	int64_t row;
	int64_t base_ms;
	int64_t rate_row0; /* row at which the rate clock started */
	int64_t rate_t0_ns;
	int64_t limit; /* rows in total, -1 unbounded */
	floe_buf out;
} gen_source;

static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9E3779B97F4A7C15);
	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

static uint64_t draw(const gen_source *s, uint64_t field, int64_t row, uint64_t n)
{
	return mix(s->o.seed ^ mix(field * UINT64_C(0x100000001B3) ^ mix((uint64_t)row) ^ (n << 48)));
}

static double unit(uint64_t r)
{
	return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

static const char *opt(const gen_source *s, const char *name, const char *what)
{
	char key[512];
	snprintf(key, sizeof(key), "fields.%s.%s", name, what);
	return s->o.fields ? floe_strmap_get(s->o.fields, key) : NULL;
}

static int setup_field(gen_source *s, gfield *g, const floe_field *f, floe_error *err)
{
	const char *v;
	memset(g, 0, sizeof(*g));
	g->f = f;
	g->length = 100;
	if ((v = opt(s, f->name, "kind"))) {
		if (!strcmp(v, "sequence"))
			g->kind = GEN_SEQUENCE;
		else if (strcmp(v, "random"))
			return floe_error_set(err, FLOE_EINVAL,
					      "fields.%s.kind: '%s' is not random or sequence", f->name,
					      v);
	}
	if ((v = opt(s, f->name, "min"))) {
		if (!floe_parse_double(v, strlen(v), &g->min))
			return floe_error_set(err, FLOE_EINVAL, "fields.%s.min: '%s' is not a number",
					      f->name, v);
		g->has_min = true;
	}
	if ((v = opt(s, f->name, "max"))) {
		if (!floe_parse_double(v, strlen(v), &g->max))
			return floe_error_set(err, FLOE_EINVAL, "fields.%s.max: '%s' is not a number",
					      f->name, v);
		g->has_max = true;
	}
	if ((v = opt(s, f->name, "start")) && !floe_parse_i64(v, strlen(v), &g->start))
		return floe_error_set(err, FLOE_EINVAL, "fields.%s.start: '%s' is not an integer",
				      f->name, v);
	if ((v = opt(s, f->name, "end"))) {
		if (!floe_parse_i64(v, strlen(v), &g->end))
			return floe_error_set(err, FLOE_EINVAL, "fields.%s.end: '%s' is not an integer",
					      f->name, v);
		g->has_end = true;
	}
	if (g->has_min && g->has_max && g->min > g->max)
		return floe_error_set(err, FLOE_EINVAL,
				      "fields.%s.min (%s) is greater than fields.%s.max (%s): the "
				      "range is empty",
				      f->name, opt(s, f->name, "min"), f->name, opt(s, f->name, "max"));
	if (g->has_end && g->start > g->end)
		return floe_error_set(err, FLOE_EINVAL,
				      "fields.%s.start (%lld) is greater than fields.%s.end (%lld): "
				      "the sequence is empty",
				      f->name, (long long)g->start, f->name, (long long)g->end);
	if ((v = opt(s, f->name, "max-past")) && !floe_parse_duration_ms(v, &g->max_past_ms))
		return floe_error_set(err, FLOE_EINVAL, "fields.%s.max-past: '%s' is not a duration",
				      f->name, v);
	if ((v = opt(s, f->name, "length")) &&
	    (!floe_parse_i64(v, strlen(v), &g->length) || g->length < 0 || g->length > 1 << 20))
		return floe_error_set(err, FLOE_EINVAL, "fields.%s.length: '%s' is not a length",
				      f->name, v);
	if ((v = opt(s, f->name, "null-rate")) &&
	    (!floe_parse_double(v, strlen(v), &g->null_rate) || g->null_rate < 0 ||
	     g->null_rate > 1))
		return floe_error_set(err, FLOE_EINVAL, "fields.%s.null-rate: '%s' is not in [0, 1]",
				      f->name, v);
	if ((v = opt(s, f->name, "values"))) {
		const char *p = v;
		size_t cap = 0;
		for (;;) {
			const char *e = strchr(p, ',');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			while (n && *p == ' ') {
				p++;
				n--;
			}
			while (n && p[n - 1] == ' ')
				n--;
			if (FLOE_ARRAY_RESERVE(g->values, cap, g->n_values + 1) ||
			    !(g->values[g->n_values] = floe_strndup(p, n)))
				return floe_error_oom(err);
			g->n_values++;
			if (!e)
				break;
			p = e + 1;
		}
	}
	if (g->kind == GEN_SEQUENCE) {
		switch (f->type->id) {
		case FLOE_T_INT:
		case FLOE_T_LONG:
		case FLOE_T_STRING:
		case FLOE_T_DECIMAL:
		case FLOE_T_DATE:
		case FLOE_T_TIMESTAMP:
		case FLOE_T_TIMESTAMPTZ:
			break;
		default:
			return floe_error_set(err, FLOE_EINVAL,
					      "fields.%s.kind: a sequence needs a number, string, date "
					      "or timestamp field",
					      f->name);
		}
		if (g->has_end && g->end < g->start)
			return floe_error_set(err, FLOE_EINVAL, "fields.%s: end is before start",
					      f->name);
	}
	return FLOE_OK;
}

static const char ALNUM[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

static int put_value(gen_source *s, const gfield *g, const floe_type *t, uint64_t fid, int64_t row,
		     int depth);

static int put_random_string(gen_source *s, uint64_t fid, int64_t row, int64_t len)
{
	uint8_t *p;
	if (floe_buf_putc(&s->out, '"') || !(p = floe_buf_extend(&s->out, (size_t)len)))
		return FLOE_ENOMEM;
	for (int64_t i = 0; i < len; i += 8) {
		uint64_t r = draw(s, fid, row, 100 + (uint64_t)i);
		for (int k = 0; k < 8 && i + k < len; k++) {
			p[i + k] = (uint8_t)ALNUM[(r & 0xFF) % 62];
			r >>= 8;
		}
	}
	return floe_buf_putc(&s->out, '"');
}

static int64_t rand_range_i64(uint64_t r, double lo, double hi)
{
	if (hi <= lo)
		return (int64_t)lo;
	double span = hi - lo + 1;
	return (int64_t)floor(lo + unit(r) * span);
}

static int put_value(gen_source *s, const gfield *g, const floe_type *t, uint64_t fid, int64_t row,
		     int depth)
{
	char tmp[128];
	floe_buf *o = &s->out;
	uint64_t r = draw(s, fid, row, 1);
	bool seq = g && g->kind == GEN_SEQUENCE;
	int64_t sv = g ? g->start + row : row;
	if (g && g->n_values) {
		const char *v = g->values[r % g->n_values];
		if (t->id == FLOE_T_STRING || t->id == FLOE_T_UUID || t->id == FLOE_T_DATE ||
		    t->id == FLOE_T_TIMESTAMP || t->id == FLOE_T_TIMESTAMPTZ || t->id == FLOE_T_TIME ||
		    t->id == FLOE_T_DECIMAL || t->id == FLOE_T_BINARY || t->id == FLOE_T_FIXED)
			return floe_json_escape(o, v, strlen(v));
		return floe_buf_puts(o, v);
	}
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		return floe_buf_puts(o, (r & 1) ? "true" : "false");
	case FLOE_T_INT:
	case FLOE_T_LONG: {
		int64_t v;
		if (seq) {
			v = sv;
		} else {
			double lo = g && g->has_min ? g->min : (t->id == FLOE_T_INT ? INT32_MIN : -9.2e18);
			double hi = g && g->has_max ? g->max : (t->id == FLOE_T_INT ? INT32_MAX : 9.2e18);
			v = rand_range_i64(r, lo, hi);
		}
		return floe_buf_printf(o, "%lld", (long long)v);
	}
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE: {
		double lo = g && g->has_min ? g->min : 0, hi = g && g->has_max ? g->max : 1000;
		double v = lo + unit(r) * (hi - lo);
		if (t->id == FLOE_T_FLOAT)
			v = (double)(float)v;
		floe_json_format_double(tmp, sizeof(tmp), v);
		return floe_buf_puts(o, tmp);
	}
	case FLOE_T_DECIMAL: {
		floe_i128 u;
		if (seq) {
			u = (floe_i128)sv;
			for (int i = 0; i < t->scale; i++)
				u *= 10;
		} else {
			double lo = g && g->has_min ? g->min : 0;
			double hi = g && g->has_max ? g->max : pow(10, t->precision - t->scale < 15 ? t->precision - t->scale : 15) - 1;
			double v = lo + unit(r) * (hi - lo);
			u = (floe_i128)llround(v * pow(10, t->scale < 15 ? t->scale : 15));
		}
		floe_decimal_format(tmp, sizeof(tmp), u, t->scale);
		return floe_json_escape(o, tmp, strlen(tmp));
	}
	case FLOE_T_DATE: {
		int64_t base = floe_floordiv(s->base_ms, 86400000);
		int64_t days = seq ? sv : base - (int64_t)(unit(r) * (double)((g ? g->max_past_ms : 0) / 86400000 + 1));
		floe_format_date(tmp, sizeof(tmp), days);
		return floe_json_escape(o, tmp, strlen(tmp));
	}
	case FLOE_T_TIME: {
		int64_t us = (int64_t)(unit(r) * 86400e6);
		floe_format_time_us(tmp, sizeof(tmp), us, 6);
		return floe_json_escape(o, tmp, strlen(tmp));
	}
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		int64_t past = g ? g->max_past_ms : 0;
		int64_t ms = seq ? sv : s->base_ms - (int64_t)(unit(r) * (double)past);
		bool ns = t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS;
		size_t k = ns ? floe_format_timestamp_ns(tmp, sizeof(tmp) - 2, ms * 1000000, 9)
			      : floe_format_timestamp_us(tmp, sizeof(tmp) - 2, ms * 1000, 6);
		if (t->id == FLOE_T_TIMESTAMPTZ || t->id == FLOE_T_TIMESTAMPTZ_NS)
			tmp[k++] = 'Z';
		return floe_json_escape(o, tmp, k);
	}
	case FLOE_T_STRING:
		if (seq)
			return floe_buf_printf(o, "\"%lld\"", (long long)sv);
		return put_random_string(s, fid, row, g ? g->length : 16);
	case FLOE_T_UUID: {
		uint8_t u[16];
		uint64_t a = draw(s, fid, row, 2), b = draw(s, fid, row, 3);
		memcpy(u, &a, 8);
		memcpy(u + 8, &b, 8);
		u[6] = (uint8_t)((u[6] & 0x0F) | 0x40);
		u[8] = (uint8_t)((u[8] & 0x3F) | 0x80);
		floe_uuid_format(u, tmp);
		return floe_json_escape(o, tmp, 36);
	}
	case FLOE_T_BINARY:
	case FLOE_T_FIXED: {
		uint8_t bytes[64];
		size_t n = t->id == FLOE_T_FIXED ? (size_t)t->length : 8;
		floe_buf b64;
		int rc;
		if (n > sizeof(bytes))
			n = sizeof(bytes);
		for (size_t i = 0; i < n; i++)
			bytes[i] = (uint8_t)(draw(s, fid, row, 10 + i) & 0xFF);
		floe_buf_init(&b64, 0);
		rc = floe_base64_encode(&b64, bytes, n);
		rc = rc ? rc : floe_json_escape(o, floe_buf_cstr(&b64), b64.len);
		floe_buf_reset(&b64);
		return rc;
	}
	case FLOE_T_STRUCT: {
		int rc = floe_buf_putc(o, '{');
		for (size_t i = 0; i < t->n_fields && !rc; i++) {
			rc = (i ? floe_buf_putc(o, ',') : 0) ||
			     floe_json_escape(o, t->fields[i].name, strlen(t->fields[i].name)) ||
			     floe_buf_putc(o, ':');
			rc = rc ? rc : put_value(s, NULL, t->fields[i].type, fid * 31 + i + 1, row, depth + 1);
		}
		return rc ? rc : floe_buf_putc(o, '}');
	}
	case FLOE_T_LIST: {
		int n = depth > 4 ? 0 : (int)(r % 4), rc = floe_buf_putc(o, '[');
		for (int i = 0; i < n && !rc; i++) {
			rc = i ? floe_buf_putc(o, ',') : 0;
			rc = rc ? rc : put_value(s, NULL, t->element, fid * 31 + 7, row * 8 + i, depth + 1);
		}
		return rc ? rc : floe_buf_putc(o, ']');
	}
	case FLOE_T_MAP: {
		int n = depth > 4 ? 0 : (int)(r % 4), rc = floe_buf_putc(o, '[');
		for (int i = 0; i < n && !rc; i++) {
			rc = (i ? floe_buf_putc(o, ',') : 0) || floe_buf_putc(o, '[');
			if (t->key->id == FLOE_T_STRING)
				rc = rc ? rc : floe_buf_printf(o, "\"k%d\"", i);
			else
				rc = rc ? rc : put_value(s, NULL, t->key, fid * 31 + 8, row * 8 + i, depth + 1);
			rc = rc ? rc : floe_buf_putc(o, ',');
			rc = rc ? rc : put_value(s, NULL, t->value, fid * 31 + 9, row * 8 + i, depth + 1);
			rc = rc ? rc : floe_buf_putc(o, ']');
		}
		return rc ? rc : floe_buf_putc(o, ']');
	}
	default:
		return floe_buf_puts(o, "null");
	}
}

static int gen_row(gen_source *s, int64_t row)
{
	int rc = floe_buf_putc(&s->out, '{');
	for (size_t i = 0; i < s->n_fields && !rc; i++) {
		const gfield *g = &s->fields[i];
		rc = (i ? floe_buf_putc(&s->out, ',') : 0) ||
		     floe_json_escape(&s->out, g->f->name, strlen(g->f->name)) ||
		     floe_buf_putc(&s->out, ':');
		if (rc)
			break;
		if (g->null_rate > 0 && unit(draw(s, i + 1, row, 99)) < g->null_rate && !g->f->required)
			rc = floe_buf_puts(&s->out, "null");
		else
			rc = put_value(s, g, g->f->type, i + 1, row, 0);
	}
	return rc ? rc : floe_buf_puts(&s->out, "}\n");
}

static int gen_next(stream_source *base, stream_block *b, bool *got, bool *eof, floe_error *err)
{
	gen_source *s = (gen_source *)base;
	int64_t n = (int64_t)s->o.block_rows;
	*got = false;
	*eof = false;
	if (s->limit >= 0 && s->row >= s->limit) {
		*eof = true;
		return FLOE_OK;
	}
	if (s->limit >= 0 && s->row + n > s->limit)
		n = s->limit - s->row;
	if (s->o.rows_per_second > 0) {
		int64_t now = floe_monotonic_ns();
		if (s->rate_t0_ns == 0) {
			s->rate_t0_ns = now;
			s->rate_row0 = s->row;
		}
		double allowed = (double)(now - s->rate_t0_ns) / 1e9 * (double)s->o.rows_per_second -
				 (double)(s->row - s->rate_row0);
		/* a block of at least 1/20 s worth of rows keeps blocks reasonably sized */
		int64_t min_block = s->o.rows_per_second / 20 > 0 ? s->o.rows_per_second / 20 : 1;
		if (allowed < (double)(min_block < n ? min_block : n))
			return FLOE_OK;
		if ((double)n > allowed)
			n = (int64_t)allowed;
	}
	floe_buf_clear(&s->out);
	for (int64_t i = 0; i < n; i++)
		if (gen_row(s, s->row + i))
			return floe_error_oomf(err, "generator: out of memory");
	memset(b, 0, sizeof(*b));
	b->data = floe_memdup(s->out.data, s->out.len);
	if (!b->data)
		return floe_error_oom(err);
	b->len = s->out.len;
	b->split_name = "rows";
	b->start = s->row;
	b->end = s->row + n;
	s->row += n;
	*got = true;
	return FLOE_OK;
}

static int gen_seek(stream_source *base, const stream_offsets *pos, floe_error *err)
{
	gen_source *s = (gen_source *)base;
	(void)err;
	s->row = pos ? stream_offsets_get(pos, "rows", 0) : 0;
	/* the base time a committed checkpoint recorded (seek_sources strips the
	 * parameter's '@'), else now */
	s->base_ms = floe_now_ms();
	if (pos && stream_offsets_has(pos, "base-time-ms"))
		s->base_ms = stream_offsets_get(pos, "base-time-ms", s->base_ms);
	else if (pos && stream_offsets_has(pos, "@base-time-ms"))
		s->base_ms = stream_offsets_get(pos, "@base-time-ms", s->base_ms);
	s->rate_t0_ns = 0;
	return FLOE_OK;
}

static int gen_position(stream_source *base, stream_offsets *out, floe_error *err)
{
	gen_source *s = (gen_source *)base;
	if (stream_offsets_set(out, "rows", s->row) ||
	    stream_offsets_set(out, "@base-time-ms", s->base_ms))
		return floe_error_oom(err);
	return FLOE_OK;
}

static void gen_wait(stream_source *base, int64_t ms)
{
	gen_source *s = (gen_source *)base;
	int64_t step = s->o.rows_per_second > 0 ? 50 : 1;
	floe_sleep_ms(ms < step ? ms : step);
}

static void gen_free(stream_source *base)
{
	gen_source *s = (gen_source *)base;
	if (!s)
		return;
	for (size_t i = 0; i < s->n_fields; i++) {
		for (size_t k = 0; k < s->fields[i].n_values; k++)
			floe_free(s->fields[i].values[k]);
		floe_free(s->fields[i].values);
	}
	floe_free(s->fields);
	floe_buf_reset(&s->out);
	floe_free(s->base.name);
	floe_free(s);
}

static const stream_source_ops gen_ops = {
	gen_seek, gen_next, gen_position, gen_wait, NULL, gen_free,
};

int stream_source_gen_new(stream_source **out, const char *name, const stream_gen_opts *o,
			  floe_error *err)
{
	gen_source *s;
	const floe_type *root = o->schema->root;
	int rc;
	*out = NULL;
	s = floe_calloc(1, sizeof(*s));
	if (!s || !(s->base.name = floe_strdup(name)) ||
	    !(s->fields = floe_calloc(root->n_fields ? root->n_fields : 1, sizeof(gfield)))) {
		gen_free(&s->base);
		return floe_error_oom(err);
	}
	s->base.ops = &gen_ops;
	s->base.format = STREAM_FMT_JSONL;
	s->base.replayable = true;
	s->o = *o;
	if (!s->o.block_rows)
		s->o.block_rows = 4096;
	floe_buf_init(&s->out, (size_t)256 << 20);
	s->limit = o->number_of_rows;
	s->base_ms = floe_now_ms();
	for (size_t i = 0; i < root->n_fields; i++) {
		if ((rc = setup_field(s, &s->fields[i], &root->fields[i], err))) {
			s->n_fields = i + 1;
			gen_free(&s->base);
			return floe_error_prefix(err, rc, "generator '%s': ", name);
		}
		s->n_fields = i + 1;
		const gfield *g = &s->fields[i];
		if (g->kind == GEN_SEQUENCE && g->has_end) {
			int64_t rows = g->end - g->start + 1;
			if (s->limit < 0 || rows < s->limit)
				s->limit = rows;
		}
	}
	/* options naming no field are mistakes */
	for (size_t i = 0; o->fields && i < o->fields->len; i++) {
		const char *k = o->fields->items[i].key;
		const char *dot = strrchr(k, '.');
		if (!floe_str_startswith(k, "fields.") || !dot || dot < k + 7) {
			gen_free(&s->base);
			return floe_error_set(err, FLOE_EINVAL, "generator '%s': unknown option '%s'",
					      name, k);
		}
		char fname[256];
		size_t fl = (size_t)(dot - (k + 7));
		snprintf(fname, sizeof(fname), "%.*s", (int)(fl < 255 ? fl : 255), k + 7);
		if (!floe_schema_field(o->schema, fname)) {
			gen_free(&s->base);
			return floe_error_set(err, FLOE_EINVAL,
					      "generator '%s': option '%s' names no field of the schema",
					      name, k);
		}
		static const char *const known[] = {"kind",	"min",	  "max",       "max-past",
						    "length", "start", "end",       "null-rate",
						    "values"};
		bool ok = false;
		for (size_t q = 0; q < sizeof(known) / sizeof(known[0]); q++)
			ok = ok || !strcmp(dot + 1, known[q]);
		if (!ok) {
			const char *best = known[0];
			for (size_t q = 1; q < sizeof(known) / sizeof(known[0]); q++)
				if (floe_levenshtein(dot + 1, known[q]) < floe_levenshtein(dot + 1, best))
					best = known[q];
			gen_free(&s->base);
			return floe_error_set(err, FLOE_EINVAL,
					      "generator '%s': unknown option '%s' (did you mean "
					      "'fields.%s.%s'?)",
					      name, k, fname, best);
		}
	}
	*out = &s->base;
	return FLOE_OK;
}
