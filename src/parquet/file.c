/*
 * file.c — the public tool API (include/floe/parquet.h): local files through
 * POSIX open/pread/write, footer and schema descriptions, JSON-lines dumps
 * and rewriting through floe's own reader and writer.
 */
#include "floe/parquet.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow/arrow_build.h"
#include "parquet/pjson.h"
#include "parquet/reader.h"
#include "parquet/schema.h"
#include "parquet/writer.h"
#include "util/opts.h"
#include "util/alloc.h"
#include "util/str.h"

/* ---- local files ---------------------------------------------------------- */

typedef struct local_input {
	floe_input base;
	int fd;
	char *path;
} local_input;

static int local_read_at(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got,
			 floe_error *err)
{
	local_input *l = (local_input *)in;
	ssize_t r;
	do {
		r = pread(l->fd, buf, n, (off_t)off);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return floe_error_set(err, FLOE_EIO, "%s: read: %s", l->path, strerror(errno));
	*got = (size_t)r;
	return FLOE_OK;
}

static void local_close(floe_input *in)
{
	local_input *l = (local_input *)in;
	close(l->fd);
	floe_free(l->path);
	floe_free(l);
}

static const floe_input_ops local_input_ops = {local_read_at, local_close, NULL};

static int open_local(floe_input **out, const char *path, floe_error *err)
{
	struct stat st;
	local_input *l;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return floe_error_set(err, errno == ENOENT ? FLOE_ENOTFOUND : FLOE_EIO, "%s: %s", path,
				      strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return floe_error_set(err, FLOE_EIO, "%s: not a regular file", path);
	}
	l = floe_calloc(1, sizeof(*l));
	if (!l || !(l->path = floe_strdup(path))) {
		floe_free(l);
		close(fd);
		return floe_error_oom(err);
	}
	l->fd = fd;
	l->base.ops = &local_input_ops;
	l->base.size = (uint64_t)st.st_size;
	l->base.name = l->path;
	*out = &l->base;
	return FLOE_OK;
}

typedef struct local_output {
	floe_output base;
	int fd;
	char *path;
} local_output;

static int local_write(floe_output *out, const void *p, size_t n, floe_error *err)
{
	local_output *l = (local_output *)out;
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(l->fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return floe_error_set(err, FLOE_EIO, "%s: write: %s", l->path, strerror(errno));
		c += w;
		n -= (size_t)w;
	}
	return FLOE_OK;
}

static void local_abort(floe_output *out)
{
	local_output *l = (local_output *)out;
	close(l->fd);
	unlink(l->path);
	floe_free(l->path);
	floe_free(l);
}

static int local_oclose(floe_output *out, floe_error *err)
{
	local_output *l = (local_output *)out;
	int rc = FLOE_OK;
	if (close(l->fd) != 0) {
		rc = floe_error_set(err, FLOE_EIO, "%s: close: %s", l->path, strerror(errno));
		unlink(l->path);
	}
	floe_free(l->path);
	floe_free(l);
	return rc;
}

static const floe_output_ops local_output_ops = {local_write, local_oclose, local_abort};

static int create_local(floe_output **out, const char *path, floe_error *err)
{
	local_output *l;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return floe_error_set(err, FLOE_EIO, "%s: %s", path, strerror(errno));
	l = floe_calloc(1, sizeof(*l));
	if (!l || !(l->path = floe_strdup(path))) {
		floe_free(l);
		close(fd);
		unlink(path);
		return floe_error_oom(err);
	}
	l->fd = fd;
	l->base.ops = &local_output_ops;
	l->base.name = l->path;
	*out = &l->base;
	return FLOE_OK;
}

/* ---- files ----------------------------------------------------------------- */

struct floe_parquet_file {
	floe_input *in;
	floe_parquet_reader *r;
	floe_parquet_reader_opts ropts;
};

int floe_parquet_file_open(floe_parquet_file **out, const char *path, floe_error *err)
{
	floe_parquet_file *f = floe_calloc(1, sizeof(*f));
	int rc;
	if (!f)
		return floe_error_oom(err);
	f->ropts = (floe_parquet_reader_opts)FLOE_PARQUET_READER_OPTS_INIT;
	if ((rc = open_local(&f->in, path, err)) ||
	    (rc = floe_parquet_reader_open(&f->r, f->in, &f->ropts, err))) {
		floe_parquet_file_close(f);
		return rc;
	}
	*out = f;
	return FLOE_OK;
}

void floe_parquet_file_close(floe_parquet_file *f)
{
	if (!f)
		return;
	floe_parquet_reader_free(f->r);
	floe_input_close(f->in);
	floe_free(f);
}

int64_t floe_parquet_file_num_rows(const floe_parquet_file *f)
{
	return floe_parquet_reader_meta(f->r)->num_rows;
}

static int emit(floe_buf *b, floe_parquet_out_fn fn, void *payload, floe_error *err)
{
	int rc = b->len ? fn((const char *)b->data, b->len, payload) : 0;
	floe_buf_clear(b);
	if (rc)
		return floe_error_set(err, FLOE_EIO, "output stopped");
	return FLOE_OK;
}

/* ---- meta --------------------------------------------------------------------- */

static int jstr(floe_buf *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	if (floe_buf_putc(o, '"'))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int rc;
		if (c == '"' || c == '\\')
			rc = floe_buf_putc(o, '\\') || floe_buf_putc(o, (char)c);
		else if (c < 0x20) {
			char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
			rc = floe_buf_puts(o, e);
		} else
			rc = floe_buf_putc(o, (char)c);
		if (rc)
			return FLOE_ENOMEM;
	}
	return floe_buf_putc(o, '"');
}

static int jbytes(floe_buf *o, const floe_parquet_bytes *b)
{
	return floe_buf_putc(o, '"') || floe_hex_encode(o, b->p, b->n) || floe_buf_putc(o, '"')
		       ? FLOE_ENOMEM
		       : FLOE_OK;
}

static int put_stats(floe_buf *o, const floe_parquet_stats *s)
{
	int rc = floe_buf_putc(o, '{');
	bool first = true;
#define SEP() (first ? (first = false, 0) : floe_buf_putc(o, ','))
	if (!rc && s->has_null_count)
		rc = SEP() || floe_buf_printf(o, "\"null_count\":%lld", (long long)s->null_count);
	if (!rc && s->has_distinct_count)
		rc = SEP() || floe_buf_printf(o, "\"distinct_count\":%lld", (long long)s->distinct_count);
	if (!rc && s->has_nan_count)
		rc = SEP() || floe_buf_printf(o, "\"nan_count\":%lld", (long long)s->nan_count);
	if (!rc && s->has_min_value)
		rc = SEP() || floe_buf_puts(o, "\"min_value\":") || jbytes(o, &s->min_value);
	if (!rc && s->has_max_value)
		rc = SEP() || floe_buf_puts(o, "\"max_value\":") || jbytes(o, &s->max_value);
	if (!rc && s->has_min)
		rc = SEP() || floe_buf_puts(o, "\"min\":") || jbytes(o, &s->min);
	if (!rc && s->has_max)
		rc = SEP() || floe_buf_puts(o, "\"max\":") || jbytes(o, &s->max);
	if (!rc && s->has_is_min_value_exact)
		rc = SEP() || floe_buf_printf(o, "\"is_min_value_exact\":%s",
					      s->is_min_value_exact ? "true" : "false");
	if (!rc && s->has_is_max_value_exact)
		rc = SEP() || floe_buf_printf(o, "\"is_max_value_exact\":%s",
					      s->is_max_value_exact ? "true" : "false");
#undef SEP
	return rc || floe_buf_putc(o, '}') ? FLOE_ENOMEM : FLOE_OK;
}

static int put_chunk(floe_buf *o, const floe_parquet_column_chunk *cc)
{
	const floe_parquet_column_meta *m = &cc->meta_data;
	int rc;
	if (!cc->has_meta_data)
		return floe_buf_printf(o, "{\"file_offset\":%lld,\"encrypted\":%s}",
				       (long long)cc->file_offset, cc->encrypted ? "true" : "false");
	rc = floe_buf_puts(o, "{\"path\":[");
	for (size_t i = 0; !rc && i < m->path_len; i++)
		rc = (i && floe_buf_putc(o, ',')) || jstr(o, m->path[i], strlen(m->path[i]));
	if (rc ||
	    floe_buf_printf(o, "],\"type\":\"%s\",\"codec\":\"%s\",\"num_values\":%lld,"
			       "\"total_compressed_size\":%lld,\"total_uncompressed_size\":%lld,"
			       "\"data_page_offset\":%lld",
			    floe_parquet_type_name(m->type), floe_parquet_codec_name(m->codec),
			    (long long)m->num_values, (long long)m->total_compressed_size,
			    (long long)m->total_uncompressed_size, (long long)m->data_page_offset))
		return FLOE_ENOMEM;
	if (m->has_dictionary_page_offset &&
	    floe_buf_printf(o, ",\"dictionary_page_offset\":%lld", (long long)m->dictionary_page_offset))
		return FLOE_ENOMEM;
	if (floe_buf_puts(o, ",\"encodings\":["))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < m->n_encodings; i++)
		if ((i && floe_buf_putc(o, ',')) ||
		    floe_buf_printf(o, "\"%s\"", floe_parquet_encoding_name(m->encodings[i])))
			return FLOE_ENOMEM;
	if (floe_buf_putc(o, ']'))
		return FLOE_ENOMEM;
	if (m->has_encoding_stats) {
		if (floe_buf_puts(o, ",\"encoding_stats\":["))
			return FLOE_ENOMEM;
		for (size_t i = 0; i < m->n_encoding_stats; i++)
			if ((i && floe_buf_putc(o, ',')) ||
			    floe_buf_printf(o, "{\"page_type\":\"%s\",\"encoding\":\"%s\",\"count\":%d}",
					    floe_parquet_page_type_name(m->encoding_stats[i].page_type),
					    floe_parquet_encoding_name(m->encoding_stats[i].encoding),
					    (int)m->encoding_stats[i].count))
				return FLOE_ENOMEM;
		if (floe_buf_putc(o, ']'))
			return FLOE_ENOMEM;
	}
	if (m->has_statistics && (floe_buf_puts(o, ",\"statistics\":") || put_stats(o, &m->statistics)))
		return FLOE_ENOMEM;
	return floe_buf_putc(o, '}');
}

int floe_parquet_file_meta_json(floe_parquet_file *f, floe_parquet_out_fn fn, void *payload,
			   floe_error *err)
{
	const floe_parquet_file_meta *m = floe_parquet_reader_meta(f->r);
	floe_buf o;
	int rc = FLOE_OK;
	floe_buf_init(&o, 0);
	if (floe_buf_printf(&o, "{\"version\":%d,\"num_rows\":%lld,\"created_by\":", (int)m->version,
			    (long long)m->num_rows) ||
	    (m->created_by ? jstr(&o, m->created_by, strlen(m->created_by))
			   : floe_buf_puts(&o, "null")) ||
	    floe_buf_puts(&o, ",\"key_value_metadata\":{"))
		goto oom;
	for (size_t i = 0; i < m->n_kv; i++) {
		if ((i && floe_buf_putc(&o, ',')) || jstr(&o, m->kv[i].key, strlen(m->kv[i].key)) ||
		    floe_buf_putc(&o, ':') ||
		    (m->kv[i].value ? jstr(&o, m->kv[i].value, m->kv[i].value_len)
				    : floe_buf_puts(&o, "null")))
			goto oom;
	}
	if (floe_buf_printf(&o, "},\"column_orders\":%zu,\"row_groups\":[", m->n_column_orders))
		goto oom;
	for (size_t g = 0; g < m->n_row_groups; g++) {
		const floe_parquet_row_group *rg = &m->row_groups[g];
		if ((g && floe_buf_putc(&o, ',')) ||
		    floe_buf_printf(&o, "{\"num_rows\":%lld,\"total_byte_size\":%lld", (long long)rg->num_rows,
				    (long long)rg->total_byte_size))
			goto oom;
		if (rg->has_file_offset &&
		    floe_buf_printf(&o, ",\"file_offset\":%lld", (long long)rg->file_offset))
			goto oom;
		if (rg->has_total_compressed_size &&
		    floe_buf_printf(&o, ",\"total_compressed_size\":%lld",
				    (long long)rg->total_compressed_size))
			goto oom;
		if (floe_buf_puts(&o, ",\"columns\":["))
			goto oom;
		for (size_t c = 0; c < rg->n_columns; c++)
			if ((c && floe_buf_putc(&o, ',')) || put_chunk(&o, &rg->columns[c]))
				goto oom;
		if (floe_buf_puts(&o, "]}"))
			goto oom;
		if ((rc = emit(&o, fn, payload, err)))
			goto done;
	}
	if (floe_buf_puts(&o, "]}\n"))
		goto oom;
	rc = emit(&o, fn, payload, err);
	goto done;
oom:
	rc = floe_error_oom(err);
done:
	floe_buf_reset(&o);
	return rc;
}

int floe_parquet_file_schema_text(floe_parquet_file *f, floe_parquet_out_fn fn, void *payload,
			     floe_error *err)
{
	floe_buf o;
	int rc;
	floe_buf_init(&o, 0);
	if (floe_parquet_schema_print(floe_parquet_reader_schema(f->r), &o))
		rc = floe_error_oom(err);
	else
		rc = emit(&o, fn, payload, err);
	floe_buf_reset(&o);
	return rc;
}

/* ---- cat ------------------------------------------------------------------------- */

/* Resolve "a.b,c" to node indexes by dotted path. */
static int resolve_columns(floe_parquet_file *f, const char *spec, int **nodes, size_t *n,
			   floe_error *err)
{
	const floe_parquet_schema *s = floe_parquet_reader_schema(f->r);
	size_t cap = 1;
	for (const char *p = spec; *p; p++)
		cap += *p == ',';
	*nodes = floe_calloc(cap, sizeof(int));
	*n = 0;
	if (!*nodes)
		return floe_error_oom(err);
	for (const char *p = spec; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int found = -1;
		for (int i = 1; i < s->n_nodes && found < 0; i++) {
			char path[1024];
			floe_parquet_node_path(s->nodes[i], path, sizeof(path));
			if (strlen(path) == len && memcmp(path, p, len) == 0)
				found = i;
		}
		if (found < 0)
			return floe_error_set(err, FLOE_ENOTFOUND, "no column '%.*s'", (int)len, p);
		(*nodes)[(*n)++] = found;
		p += len + (e ? 1 : 0);
	}
	return FLOE_OK;
}

int floe_parquet_file_cat(floe_parquet_file *f, const floe_parquet_cat_opts *opts,
			  floe_parquet_out_fn fn, void *payload, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_parquet_cat_opts", "FLOE_PARQUET_CAT_OPTS_INIT", err);
	static const floe_parquet_cat_opts dflt = FLOE_PARQUET_CAT_OPTS_INIT;
	floe_parquet_reader_opts ro = FLOE_PARQUET_READER_OPTS_INIT;
	floe_parquet_reader *r = NULL;
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	floe_buf o;
	int *nodes = NULL;
	size_t n_nodes = 0;
	int64_t printed = 0;
	int rc;

	if (!opts)
		opts = &dflt;
	floe_buf_init(&o, 0);
	ro.verify_checksums = opts->verify_crc;
	ro.int96_as_micros = opts->int96_as_micros;
	if (opts->batch_rows > 0)
		ro.batch_rows = opts->batch_rows;
	if ((rc = floe_parquet_reader_open(&r, f->in, &ro, err)))
		goto done;
	if (opts->columns && (rc = resolve_columns(f, opts->columns, &nodes, &n_nodes, err)))
		goto done;
	if ((opts->columns && (rc = floe_parquet_reader_select(r, nodes, n_nodes, err))) ||
	    (opts->row_groups &&
	     (rc = floe_parquet_reader_select_row_groups(r, opts->row_groups, opts->n_row_groups, err))) ||
	    (rc = floe_parquet_reader_arrow_schema(r, &s, err)))
		goto done;
	while (opts->limit < 0 || printed < opts->limit) {
		bool eof;
		int64_t take;
		if ((rc = floe_parquet_reader_next(r, &a, &eof, err)) || eof)
			break;
		take = a.length;
		if (opts->limit >= 0 && take > opts->limit - printed)
			take = opts->limit - printed;
		rc = floe_parquet__json_rows(&o, &s, &a, 0, take, err);
		floe_arrow_array_release(&a);
		if (rc || (rc = emit(&o, fn, payload, err)))
			break;
		printed += take;
	}
done:
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_reader_free(r);
	floe_free(nodes);
	floe_buf_reset(&o);
	return rc;
}

/* ---- rewrite ------------------------------------------------------------------------ */

int floe_parquet_codec_from_name(const char *name)
{
	static const struct {
		const char *name;
		int codec;
	} t[] = {{"uncompressed", FLOE_PARQUET_UNCOMPRESSED},
		 {"none", FLOE_PARQUET_UNCOMPRESSED},
		 {"snappy", FLOE_PARQUET_SNAPPY},
		 {"gzip", FLOE_PARQUET_GZIP},
		 {"brotli", FLOE_PARQUET_BROTLI},
		 {"zstd", FLOE_PARQUET_ZSTD},
		 {"lz4_raw", FLOE_PARQUET_LZ4_RAW},
		 {"lz4", FLOE_PARQUET_LZ4}};
	for (size_t i = 0; name && i < sizeof(t) / sizeof(t[0]); i++)
		if (floe_str_ieq(name, t[i].name))
			return t[i].codec;
	return -1;
}

int floe_parquet_file_rewrite(floe_parquet_file *f, const char *out_path,
			      const floe_parquet_rewrite_opts *opts, int64_t *rows_out,
			      floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_parquet_rewrite_opts", "FLOE_PARQUET_REWRITE_OPTS_INIT", err);
	static const floe_parquet_rewrite_opts dflt = FLOE_PARQUET_REWRITE_OPTS_INIT;
	floe_parquet_reader_opts ro = FLOE_PARQUET_READER_OPTS_INIT;
	floe_parquet_writer_opts wo = FLOE_PARQUET_WRITER_OPTS_INIT;
	floe_parquet_reader *r = NULL;
	floe_parquet_writer *w = NULL;
	floe_parquet_schema *ps = NULL;
	floe_output *out = NULL;
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	const floe_parquet_file_meta *m;
	int64_t rows = 0;
	int rc;

	if (!opts)
		opts = &dflt;
	wo.codec = floe_parquet_codec_from_name(opts->codec ? opts->codec : "zstd");
	if (wo.codec < 0)
		return floe_error_set(err, FLOE_EINVAL, "unknown codec '%s'", opts->codec);
	wo.level = opts->level;
	wo.page_version = opts->page_version ? opts->page_version : 1;
	wo.dictionary = opts->dictionary;
	if (opts->row_group_bytes > 0)
		wo.row_group_bytes = opts->row_group_bytes;
	if (opts->row_group_rows > 0)
		wo.row_group_rows = opts->row_group_rows;
	if (opts->page_bytes > 0)
		wo.page_bytes = opts->page_bytes;
	if (opts->page_rows > 0)
		wo.page_rows = opts->page_rows;
	if (opts->dict_bytes > 0)
		wo.dict_bytes = opts->dict_bytes;
	if (opts->batch_rows > 0)
		ro.batch_rows = opts->batch_rows;
	/* a rewrite gives damaged values fresh checksums: check the old ones */
	ro.verify_checksums = true;
	if ((rc = floe_parquet_reader_open(&r, f->in, &ro, err)) ||
	    (rc = floe_parquet_reader_arrow_schema(r, &s, err)) ||
	    (rc = floe_parquet_schema_from_arrow(&ps, &s, err)) ||
	    (rc = create_local(&out, out_path, err)) ||
	    (rc = floe_parquet_writer_new(&w, out, ps, &wo, err)))
		goto done;
	m = floe_parquet_reader_meta(r);
	for (size_t i = 0; i < m->n_kv; i++) {
		/* keep the caller's metadata, not another writer's Arrow schema */
		if (strcmp(m->kv[i].key, "ARROW:schema") == 0 || !m->kv[i].value)
			continue;
		if ((rc = floe_parquet_writer_set_kv(w, m->kv[i].key, m->kv[i].value, err)))
			goto done;
	}
	for (;;) {
		bool eof;
		if ((rc = floe_parquet_reader_next(r, &a, &eof, err)) || eof)
			break;
		rc = floe_parquet_writer_write(w, &a, &s, err);
		rows += a.length;
		floe_arrow_array_release(&a);
		if (rc)
			break;
	}
	if (!rc)
		rc = floe_parquet_writer_close(w, NULL, err);
	if (!rc) {
		rc = floe_output_close(out, err);
		out = NULL;
	}
	if (!rc && rows_out)
		*rows_out = rows;
done:
	if (out)
		floe_output_abort(out);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_writer_free(w);
	floe_parquet_schema_free(ps);
	floe_parquet_reader_free(r);
	return rc;
}
