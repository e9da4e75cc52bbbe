/*
 * scan_out.c — rendering scan batches: CSV, JSON lines, an aligned table,
 * and Parquet files.
 *
 * Values follow the Iceberg type of each column (not the Arrow format), so
 * a timestamptz prints with "+00:00", a uuid canonically, a decimal with its
 * scale. Text goes to the caller's write callback in chunks of about 64 KiB.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "iceberg/arrow_schema.h"
#include "io/fileio.h"
#include "json/json.h"
#include "parquet/writer.h"
#include "scan/scan_impl.h"
#include "util/str.h"
#include "util/timeutil.h"

#define FLUSH_AT (64 * 1024)

typedef struct out {
	floe_buf b;
	floe_write_fn fn;
	void *payload;
	int rc;
} out;

static void flush(out *o, bool force)
{
	if (o->rc || (!force && o->b.len < FLUSH_AT))
		return;
	if (o->b.len)
		o->rc = o->fn((const char *)o->b.data, o->b.len, o->payload);
	floe_buf_clear(&o->b);
}

static void put(out *o, const char *s, size_t n)
{
	if (!o->rc && floe_buf_append(&o->b, s, n))
		o->rc = FLOE_ENOMEM;
}

/* ---- one value as text ----------------------------------------------------------------------- */

static int fmt_uuid(floe_buf *b, const uint8_t *p)
{
	static const char hx[] = "0123456789abcdef";
	char s[37];
	size_t k = 0;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			s[k++] = '-';
		s[k++] = hx[p[i] >> 4];
		s[k++] = hx[p[i] & 15];
	}
	return floe_buf_append(b, s, 36);
}

/* the text of a primitive value (no quotes); *is_num: a bare JSON number/bool */
static int prim_text(floe_buf *b, const floe_value *v, const floe_type *t, bool meta, bool *is_num,
		     bool json)
{
	char tmp[64];
	size_t n;
	*is_num = false;
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		*is_num = true;
		return floe_buf_puts(b, v->v.b ? "true" : "false");
	case FLOE_T_INT:
		*is_num = true;
		return floe_buf_put_i64(b, v->v.i32);
	case FLOE_T_LONG:
		*is_num = true;
		return floe_buf_put_i64(b, v->v.i64);
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE: {
		double d = t->id == FLOE_T_FLOAT ? (double)v->v.f32 : v->v.f64;
		if (isnan(d))
			return floe_buf_puts(b, "NaN");
		if (isinf(d))
			return floe_buf_puts(b, d > 0 ? "Infinity" : "-Infinity");
		*is_num = true;
		n = floe_json_format_double(tmp, sizeof(tmp), d);
		return floe_buf_append(b, tmp, n);
	}
	case FLOE_T_DECIMAL:
		n = floe_decimal_format(tmp, sizeof(tmp), v->v.dec, t->scale);
		return floe_buf_append(b, tmp, n);
	case FLOE_T_DATE:
		n = floe_format_date(tmp, sizeof(tmp), v->v.i32);
		return floe_buf_append(b, tmp, n);
	case FLOE_T_TIME:
		n = floe_format_time_us(tmp, sizeof(tmp), v->v.i64, 0);
		return floe_buf_append(b, tmp, n);
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
		n = floe_format_timestamp_us(tmp, sizeof(tmp), v->v.i64, 0);
		if (floe_buf_append(b, tmp, n))
			return FLOE_ENOMEM;
		return t->id == FLOE_T_TIMESTAMPTZ ? floe_buf_puts(b, meta ? "Z" : "+00:00") : FLOE_OK;
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		n = floe_format_timestamp_ns(tmp, sizeof(tmp), v->v.i64, 0);
		if (floe_buf_append(b, tmp, n))
			return FLOE_ENOMEM;
		return t->id == FLOE_T_TIMESTAMPTZ_NS ? floe_buf_puts(b, meta ? "Z" : "+00:00") : FLOE_OK;
	case FLOE_T_STRING:
		if (json)
			return floe_json_escape(b, (const char *)v->v.bin.p, v->v.bin.n);
		return floe_buf_append(b, v->v.bin.p, v->v.bin.n);
	case FLOE_T_UUID: return fmt_uuid(b, v->v.bin.p);
	case FLOE_T_VARIANT:
		/* its JSON text; JSON lines carry it as a string, so a variant null
		 * ("null") stays apart from a SQL NULL (null) */
		return floe_buf_append(b, v->v.bin.p, v->v.bin.n);
	default:
		/* binary, fixed, geometry: base64 */
		return floe_base64_encode(b, v->v.bin.p, v->v.bin.n);
	}
}

/* a value of any type as JSON into b */
static int json_value(floe_buf *b, const struct ArrowArray *a, const floe_type *t, int64_t i,
		      int depth, bool meta)
{
	int rc;
	if (depth > 64)
		return floe_buf_puts(b, "null");
	if (!floe_sa_valid(a, i))
		return floe_buf_puts(b, "null");
	int64_t j = i + a->offset;
	switch (t->id) {
	case FLOE_T_STRUCT:
		if ((rc = floe_buf_putc(b, '{')))
			return rc;
		for (size_t k = 0; k < t->n_fields; k++) {
			if ((k && (rc = floe_buf_putc(b, ','))) ||
			    (rc = floe_json_escape(b, t->fields[k].name, strlen(t->fields[k].name))) ||
			    (rc = floe_buf_putc(b, ':')) ||
			    (rc = json_value(b, a->children[k], t->fields[k].type, j, depth + 1, meta)))
				return rc;
		}
		return floe_buf_putc(b, '}');
	case FLOE_T_MAP:
		if (meta && t->key->id == FLOE_T_STRING) {
			/* metadata tables: a string map (a snapshot summary) is an object */
			const int32_t *o = a->buffers[1];
			const struct ArrowArray *e = a->children[0];
			if ((rc = floe_buf_putc(b, '{')))
				return rc;
			for (int32_t k = o[j]; k < o[j + 1]; k++) {
				int64_t ek = k + e->offset;
				if ((k > o[j] && (rc = floe_buf_putc(b, ','))) ||
				    (rc = json_value(b, e->children[0], t->key, ek, depth + 1, meta)) ||
				    (rc = floe_buf_putc(b, ':')) ||
				    (rc = json_value(b, e->children[1], t->value, ek, depth + 1, meta)))
					return rc;
			}
			return floe_buf_putc(b, '}');
		}
		FLOE_FALLTHROUGH;
	case FLOE_T_LIST: {
		const int32_t *o = a->buffers[1];
		if ((rc = floe_buf_putc(b, '[')))
			return rc;
		for (int32_t k = o[j]; k < o[j + 1]; k++) {
			if (k > o[j] && (rc = floe_buf_putc(b, ',')))
				return rc;
			if (t->id == FLOE_T_LIST) {
				rc = json_value(b, a->children[0], t->element, k, depth + 1, meta);
			} else {
				const struct ArrowArray *e = a->children[0];
				int64_t ek = k + e->offset;
				rc = floe_buf_putc(b, '[');
				if (!rc)
					rc = json_value(b, e->children[0], t->key, ek, depth + 1, meta);
				if (!rc)
					rc = floe_buf_putc(b, ',');
				if (!rc)
					rc = json_value(b, e->children[1], t->value, ek, depth + 1, meta);
				if (!rc)
					rc = floe_buf_putc(b, ']');
			}
			if (rc)
				return rc;
		}
		return floe_buf_putc(b, ']');
	}
	default: break;
	}
	floe_value v;
	bool num;
	floe_sa_value(&v, a, t, i);
	if (t->id == FLOE_T_UNKNOWN || v.is_null)
		return floe_buf_puts(b, "null");
	if (t->id == FLOE_T_STRING)
		return prim_text(b, &v, t, meta, &num, true);
	size_t at = b->len;
	if ((rc = prim_text(b, &v, t, meta, &num, true)))
		return rc;
	if (num)
		return FLOE_OK;
	/* quote the text just written */
	floe_buf tmp;
	floe_buf_init(&tmp, 0);
	rc = floe_json_escape(&tmp, (const char *)b->data + at, b->len - at);
	b->len = at;
	if (!rc)
		rc = floe_buf_append(b, tmp.data, tmp.len);
	floe_buf_reset(&tmp);
	return rc;
}

int floe_scan__row_json(floe_buf *b, const floe_scan *s, const struct ArrowArray *batch, int64_t r,
			const size_t *cols, size_t n)
{
	int rc = floe_buf_putc(b, '[');
	for (size_t k = 0; k < n && !rc; k++) {
		size_t c = cols[k];
		if (k)
			rc = floe_buf_putc(b, ',');
		if (!rc)
			rc = json_value(b, batch->children[c], s->cols[c].type, r, 0, false);
	}
	return rc ? rc : floe_buf_putc(b, ']');
}

/* a cell's text for CSV/table (NULL: *null set) */
static int cell_text(floe_buf *b, const struct ArrowArray *a, const floe_type *t, int64_t i,
		     bool meta, bool *null)
{
	bool num;
	*null = !floe_sa_valid(a, i) || t->id == FLOE_T_UNKNOWN;
	if (*null)
		return FLOE_OK;
	if (floe_type_is_nested(t))
		return json_value(b, a, t, i, 0, meta);
	floe_value v;
	floe_sa_value(&v, a, t, i);
	return prim_text(b, &v, t, meta, &num, false);
}

static void csv_put(out *o, const char *s, size_t n)
{
	bool quote = false;
	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (!quote) {
		put(o, s, n);
		return;
	}
	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			put(o, "\"", 1);
		put(o, s + i, 1);
	}
	put(o, "\"", 1);
}

/* ---- formats ---------------------------------------------------------------------------------- */

typedef struct table_cells {
	char **cells; /* n_rows * n_cols, NULL = null */
	size_t n_rows, cap;
} table_cells;

/* a narrow table's cell: at most TABLE_CELL_MAX bytes, cut at a character */
#define TABLE_CELL_MAX 60
static void narrow_cell(char *x)
{
	size_t n = strlen(x), cut = TABLE_CELL_MAX - 3;
	if (n <= TABLE_CELL_MAX)
		return;
	while (cut > 0 && ((unsigned char)x[cut] & 0xC0) == 0x80)
		cut--;
	memcpy(x + cut, "...", 4);
}

int floe_scan__batch_json(floe_buf *dst, const floe_scan *s, const struct ArrowArray *b)
{
	for (int64_t r = 0; r < b->length; r++) {
		if (floe_buf_append(dst, "{", 1))
			return FLOE_ENOMEM;
		for (size_t c = 0; c < s->n_cols; c++) {
			const scan_col *col = &s->cols[c];
			if ((c && floe_buf_append(dst, ",", 1)) ||
			    floe_json_escape(dst, col->name, strlen(col->name)) ||
			    floe_buf_append(dst, ":", 1) ||
			    json_value(dst, b->children[c], col->type, r, 0, s->meta_style))
				return FLOE_ENOMEM;
		}
		if (floe_buf_append(dst, "}\n", 2))
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

int floe_scan__render(floe_scan *s, floe_output_format fmt, int64_t limit, floe_write_fn fn,
		      void *payload, floe_error *err)
{
	bool narrow = fmt == FLOE_OUTPUT_TABLE;
	if (fmt == FLOE_OUTPUT_TABLE_WIDE)
		fmt = FLOE_OUTPUT_TABLE;
	out o = {{0}, fn, payload, 0};
	floe_buf cell;
	table_cells tc = {0};
	int rc = FLOE_OK;
	int64_t rows = 0;
	floe_buf_init(&o.b, 0);
	floe_buf_init(&cell, 0);
	if (fmt == FLOE_OUTPUT_CSV) {
		for (size_t c = 0; c < s->n_cols; c++) {
			if (c)
				put(&o, ",", 1);
			csv_put(&o, s->cols[c].name, strlen(s->cols[c].name));
		}
		put(&o, "\n", 1);
	}
	for (;;) {
		struct ArrowArray b;
		bool eof;
		if (limit >= 0 && rows >= limit)
			break;
		if ((rc = floe_scan_next(s, &b, &eof, err)))
			goto done;
		if (eof)
			break;
		for (int64_t r = 0; r < b.length && !o.rc && (limit < 0 || rows < limit); r++, rows++) {
			if (fmt == FLOE_OUTPUT_JSON)
				put(&o, "{", 1);
			for (size_t c = 0; c < s->n_cols && !o.rc; c++) {
				const scan_col *col = &s->cols[c];
				const struct ArrowArray *a = b.children[c];
				bool null;
				floe_buf_clear(&cell);
				if (fmt == FLOE_OUTPUT_JSON) {
					if (c)
						put(&o, ",", 1);
					if (floe_json_escape(&o.b, col->name, strlen(col->name)))
						o.rc = FLOE_ENOMEM;
					put(&o, ":", 1);
					if (json_value(&o.b, a, col->type, r, 0, s->meta_style))
						o.rc = FLOE_ENOMEM;
					continue;
				}
				if (cell_text(&cell, a, col->type, r, s->meta_style, &null)) {
					o.rc = FLOE_ENOMEM;
					break;
				}
				if (fmt == FLOE_OUTPUT_CSV) {
					if (c)
						put(&o, ",", 1);
					if (!null)
						csv_put(&o, floe_buf_cstr(&cell), cell.len);
					continue;
				}
				/* table: keep the cells */
				if (floe_array_grow((void **)&tc.cells, &tc.cap, sizeof(char *),
						    (tc.n_rows + 1) * s->n_cols)) {
					o.rc = FLOE_ENOMEM;
					break;
				}
				char *txt = NULL;
				if (!null && !(txt = floe_strndup(floe_buf_cstr(&cell), cell.len))) {
					o.rc = FLOE_ENOMEM;
					break;
				}
				if (txt && narrow)
					narrow_cell(txt);
				tc.cells[tc.n_rows * s->n_cols + c] = txt;
			}
			if (fmt == FLOE_OUTPUT_TABLE)
				tc.n_rows++;
			else
				put(&o, fmt == FLOE_OUTPUT_JSON ? "}\n" : "\n", fmt == FLOE_OUTPUT_JSON ? 2 : 1);
			flush(&o, false);
		}
		floe_arrow_array_release(&b);
		if (o.rc)
			break;
	}
	if (fmt == FLOE_OUTPUT_TABLE && !o.rc) {
		size_t *w = floe_calloc(s->n_cols ? s->n_cols : 1, sizeof(size_t));
		if (!w) {
			o.rc = FLOE_ENOMEM;
		} else {
			for (size_t c = 0; c < s->n_cols; c++)
				w[c] = strlen(s->cols[c].name);
			for (size_t r = 0; r < tc.n_rows; r++)
				for (size_t c = 0; c < s->n_cols; c++) {
					const char *x = tc.cells[r * s->n_cols + c];
					size_t l = x ? strlen(x) : 4;
					if (l > w[c])
						w[c] = l;
				}
			for (size_t c = 0; c < s->n_cols; c++) {
				floe_buf_clear(&cell);
				if (floe_buf_printf(&cell, "%s%-*s", c ? "  " : "",
						    c + 1 < s->n_cols ? (int)w[c] : 0, s->cols[c].name))
					o.rc = FLOE_ENOMEM;
				put(&o, floe_buf_cstr(&cell), cell.len);
			}
			put(&o, "\n", 1);
			for (size_t c = 0; c < s->n_cols; c++) {
				if (c)
					put(&o, "  ", 2);
				for (size_t k = 0; k < w[c]; k++)
					put(&o, "-", 1);
			}
			put(&o, "\n", 1);
			for (size_t r = 0; r < tc.n_rows && !o.rc; r++) {
				for (size_t c = 0; c < s->n_cols; c++) {
					const char *x = tc.cells[r * s->n_cols + c];
					floe_buf_clear(&cell);
					if (floe_buf_printf(&cell, "%s%-*s", c ? "  " : "",
							    c + 1 < s->n_cols ? (int)w[c] : 0,
							    x ? x : "NULL"))
						o.rc = FLOE_ENOMEM;
					put(&o, floe_buf_cstr(&cell), cell.len);
				}
				put(&o, "\n", 1);
				flush(&o, false);
			}
			floe_free(w);
		}
	}
	flush(&o, true);
	if (o.rc && !rc)
		rc = o.rc == FLOE_ENOMEM ? floe_error_oom(err) : o.rc;
done:
	for (size_t i = 0; i < tc.n_rows * s->n_cols; i++)
		floe_free(tc.cells[i]);
	floe_free(tc.cells);
	floe_buf_reset(&o.b);
	floe_buf_reset(&cell);
	return rc;
}

/* ---- Parquet ---------------------------------------------------------------------------------- */

int floe_scan__write_parquet(floe_scan *s, const char *path, floe_error *err)
{
	floe_arena a;
	floe_schema *schema = NULL;
	floe_parquet_schema *ps = NULL;
	floe_parquet_writer *w = NULL;
	floe_output *o = NULL;
	int rc;
	floe_arena_init(&a, 4096);
	/* the output columns as a schema (nested selections become top-level columns) */
	floe_type *root = floe_arena_calloc(&a, 1, sizeof(*root));
	floe_field *fs = floe_arena_calloc(&a, s->n_cols ? s->n_cols : 1, sizeof(*fs));
	if (!root || !fs) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < s->n_cols; i++) {
		fs[i].id = s->cols[i].id;
		fs[i].name = s->cols[i].name;
		fs[i].required = s->cols[i].required;
		fs[i].type = s->cols[i].type;
	}
	root->id = FLOE_T_STRUCT;
	root->fields = fs;
	root->n_fields = s->n_cols;
	if ((rc = floe_schema_make(&schema, &a, 0, root, NULL, 0, err)) ||
	    (rc = floe_iceberg_parquet_schema(&ps, schema, err)))
		goto done;
	if ((rc = floe_io_create(floe_table_io(s->t), path, true, &o, err)))
		goto done;
	floe_parquet_writer_opts wo = FLOE_PARQUET_WRITER_OPTS_INIT;
	if ((rc = floe_parquet_writer_new(&w, o, ps, &wo, err)))
		goto done;
	const char *sj = floe_schema_to_json_str(&a, schema);
	if (sj && (rc = floe_parquet_writer_set_kv(w, "iceberg.schema", sj, err)))
		goto done;
	for (;;) {
		struct ArrowArray b;
		bool eof;
		if ((rc = floe_scan_next(s, &b, &eof, err)) || eof)
			break;
		rc = floe_parquet_writer_write(w, &b, &s->out_schema, err);
		floe_arrow_array_release(&b);
		if (rc)
			break;
	}
	if (!rc)
		rc = floe_parquet_writer_close(w, NULL, err);
	if (!rc) {
		rc = floe_output_close(o, err);
		o = NULL;
	}
done:
	floe_parquet_writer_free(w);
	floe_output_abort(o);
	floe_parquet_schema_free(ps);
	floe_arena_reset(&a);
	if (rc)
		floe_error_prefix(err, rc, "writing '%s': ", path);
	return rc;
}

/* A cell's text as the CSV output writes it (for floe sql's executor). */
int floe_scan__cell_text(floe_buf *b, const struct ArrowArray *a, const floe_type *t, int64_t i,
			 bool meta, bool *null)
{
	return cell_text(b, a, t, i, meta, null);
}
