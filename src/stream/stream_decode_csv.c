/*
 * stream_decode_csv.c — CSV records into the column builders.
 *
 * spec: RFC 4180, with the usual liberties: any one-byte delimiter, an
 * optional quote character (0 = none), CRLF or LF line ends, a quote inside
 * an unquoted field taken literally. An empty unquoted field is null; an
 * empty quoted field is an empty string (null for other types).
 */
#include <stdio.h>

#include "stream/stream_decode.h"

void stream_csv_dec_init(stream_csv_dec *d, const stream_csv_opts *o, const stream_coerce_opts *co)
{
	memset(d, 0, sizeof(*d));
	if (o) {
		d->o = *o;
	} else {
		d->o.delimiter = ',';
		d->o.quote = '"';
		d->o.header = true;
	}
	if (!d->o.delimiter)
		d->o.delimiter = ',';
	if (co)
		d->copts = *co;
	floe_buf_init(&d->cell, (size_t)64 << 20);
	stream_json_dec_init(&d->json, co);
}

void stream_csv_dec_reset(stream_csv_dec *d)
{
	floe_free(d->map);
	d->map = NULL;
	d->n_map = 0;
	floe_buf_reset(&d->cell);
	stream_json_dec_reset(&d->json);
}

size_t stream_csv_record_len(const char *p, size_t n, char quote, bool *complete)
{
	size_t i = 0;
	bool inq = false;
	while (i < n) {
		if (!inq) {
			const char *nl = memchr(p + i, '\n', n - i);
			size_t lim = nl ? (size_t)(nl - p) : n;
			const char *q = quote ? memchr(p + i, quote, lim - i) : NULL;
			if (!q) {
				if (nl) {
					*complete = true;
					return lim + 1;
				}
				break;
			}
			i = (size_t)(q - p) + 1;
			inq = true;
		} else {
			const char *q = memchr(p + i, quote, n - i);
			if (!q)
				break;
			i = (size_t)(q - p) + 1;
			inq = false;
		}
	}
	*complete = false;
	return n;
}

/* One field at p[*pos..n): its text (unquoted into d->cell when quoted
 * with doubled quotes) and whether it was quoted. *pos moves past the
 * delimiter; *last tells whether this was the last field. */
static int next_field(stream_csv_dec *d, const char *p, size_t n, size_t *pos, const char **s,
		      size_t *sn, bool *quoted, bool *last)
{
	size_t i = *pos;
	char q = d->o.quote, delim = d->o.delimiter;
	*quoted = false;
	if (q && i < n && p[i] == q) {
		size_t start = ++i;
		bool copy = false;
		floe_buf_clear(&d->cell);
		for (;;) {
			const char *e = memchr(p + i, q, n - i);
			if (!e) {
				stream_reason_set(&d->why, "unterminated quoted field at byte %zu",
						  start - 1);
				return FLOE_EINVAL;
			}
			size_t k = (size_t)(e - p);
			if (k + 1 < n && p[k + 1] == q) {
				/* doubled quote: keep one */
				if (floe_buf_append(&d->cell, p + i, k + 1 - i))
					return FLOE_ENOMEM;
				copy = true;
				i = k + 2;
				continue;
			}
			if (copy) {
				if (floe_buf_append(&d->cell, p + i, k - i))
					return FLOE_ENOMEM;
				*s = (const char *)d->cell.data;
				*sn = d->cell.len;
			} else {
				*s = p + start;
				*sn = k - start;
			}
			i = k + 1;
			break;
		}
		*quoted = true;
		if (i >= n) {
			*last = true;
			*pos = n;
			return FLOE_OK;
		}
		if (p[i] != delim) {
			stream_reason_set(&d->why, "unexpected character after a closing quote at byte %zu",
					  i);
			return FLOE_EINVAL;
		}
		*last = false;
		*pos = i + 1;
		return FLOE_OK;
	}
	const char *e = memchr(p + i, delim, n - i);
	if (!e) {
		*s = p + i;
		*sn = n - i;
		*last = true;
		*pos = n;
	} else {
		*s = p + i;
		*sn = (size_t)(e - p) - i;
		*last = false;
		*pos = (size_t)(e - p) + 1;
	}
	return FLOE_OK;
}

static size_t strip_eol(const char *p, size_t n)
{
	if (n && p[n - 1] == '\n')
		n--;
	if (n && p[n - 1] == '\r')
		n--;
	return n;
}

int stream_csv_set_header(stream_csv_dec *d, const stream_col *root, const char *p, size_t n)
{
	size_t pos = 0, cols = 0;
	bool last = false, any = false;
	int32_t *map = NULL;
	size_t cap = 0;
	int rc = FLOE_OK;
	stream_col *r = (stream_col *)root;
	n = strip_eol(p, n);
	/* a UTF-8 byte order mark is not part of the first name */
	if (n >= 3 && (uint8_t)p[0] == 0xEF && (uint8_t)p[1] == 0xBB && (uint8_t)p[2] == 0xBF)
		pos = 3;
	while (!last) {
		const char *s;
		size_t sn;
		bool quoted;
		if ((rc = next_field(d, p, n, &pos, &s, &sn, &quoted, &last)))
			goto fail;
		if (cols >= 65536) {
			stream_reason_set(&d->why, "header has more than 65536 columns");
			rc = FLOE_EINVAL;
			goto fail;
		}
		if (FLOE_ARRAY_RESERVE(map, cap, cols + 1)) {
			rc = FLOE_ENOMEM;
			goto fail;
		}
		while (sn && (s[0] == ' ' || s[0] == '\t')) {
			s++;
			sn--;
		}
		while (sn && (s[sn - 1] == ' ' || s[sn - 1] == '\t'))
			sn--;
		int idx = stream_col_field(r, s, sn);
		for (size_t k = 0; k < cols && idx >= 0; k++) {
			if (map[k] == idx) {
				stream_reason_set(&d->why, "header names column '%.*s' twice",
						  (int)(sn > 64 ? 64 : sn), s);
				rc = FLOE_EINVAL;
				goto fail;
			}
		}
		map[cols++] = idx;
		any = any || idx >= 0;
	}
	if (!any) {
		stream_reason_set(&d->why, "the header names no column of the table");
		rc = FLOE_EINVAL;
		goto fail;
	}
	floe_free(d->map);
	d->map = map;
	d->n_map = cols;
	d->have_map = true;
	return FLOE_OK;
fail:
	floe_free(map);
	return rc;
}

int stream_csv_set_positional(stream_csv_dec *d, const stream_col *root)
{
	int32_t *map = floe_calloc(root->n_kids ? root->n_kids : 1, sizeof(int32_t));
	if (!map)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < root->n_kids; i++)
		map[i] = (int32_t)i;
	floe_free(d->map);
	d->map = map;
	d->n_map = root->n_kids;
	d->have_map = true;
	return FLOE_OK;
}

static bool is_null_text(const stream_csv_dec *d, const char *s, size_t n)
{
	if (!d->o.null_literal || !d->o.null_literal[0])
		return n == 0;
	size_t k = strlen(d->o.null_literal);
	return n == 0 || (n == k && memcmp(s, d->o.null_literal, k) == 0);
}

static int put_cell(stream_csv_dec *d, stream_col *kid, const char *s, size_t n, bool quoted)
{
	int rc;
	if ((!quoted && is_null_text(d, s, n)) || (quoted && n == 0 && kid->type->id != FLOE_T_STRING)) {
		if (!kid->nullable) {
			stream_reason_set(&d->why, "null in a required field");
			return FLOE_EINVAL;
		}
		return stream_col_put_null(kid);
	}
	if (kid->kind == SB_STRUCT || kid->kind == SB_LIST || kid->kind == SB_MAP) {
		rc = stream_json_decode_value(&d->json, kid, s, n);
		if (rc == FLOE_EINVAL)
			memcpy(d->why.msg, d->json.why.msg, sizeof(d->why.msg));
		return rc;
	}
	if (kid->type->id != FLOE_T_STRING) {
		while (n && (s[0] == ' ' || s[0] == '\t')) {
			s++;
			n--;
		}
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
	}
	return stream_coerce_text(kid, s, n, &d->copts, &d->why);
}

int stream_csv_decode(stream_csv_dec *d, stream_col *root, const char *p, size_t n)
{
	size_t pos = 0, col = 0;
	bool last = false;
	int64_t rows = root->len;
	uint64_t gen = ++d->json.gen;
	int rc;
	d->why.msg[0] = 0;
	if (!d->have_map && (rc = stream_csv_set_positional(d, root)))
		return rc;
	n = strip_eol(p, n);
	if ((rc = stream_col_struct_begin(root)))
		goto fail;
	while (!last) {
		const char *s;
		size_t sn;
		bool quoted;
		if ((rc = next_field(d, p, n, &pos, &s, &sn, &quoted, &last)))
			goto fail;
		if (col >= d->n_map) {
			stream_reason_set(&d->why, "record has more than the %zu fields of the %s",
					  d->n_map, d->o.header ? "header" : "schema");
			rc = FLOE_EINVAL;
			goto fail;
		}
		int32_t idx = d->map[col++];
		if (idx < 0)
			continue;
		stream_col *kid = &root->kids[idx];
		kid->seen = gen;
		if ((rc = put_cell(d, kid, s, sn, quoted))) {
			if (rc == FLOE_EINVAL)
				stream_reason_prefix(&d->why, kid->name, kid->name_len, ": ");
			goto fail;
		}
	}
	for (size_t i = 0; i < root->n_kids; i++) {
		stream_col *kid = &root->kids[i];
		if (kid->seen == gen)
			continue;
		if (!kid->nullable) {
			stream_reason_set(&d->why, "missing required field '%.*s'",
					  (int)(kid->name_len > 64 ? 64 : kid->name_len), kid->name);
			rc = FLOE_EINVAL;
			goto fail;
		}
		if ((rc = stream_col_put_null(kid)))
			goto fail;
	}
	return FLOE_OK;
fail:
	stream_col_truncate(root, rows);
	if (rc == FLOE_ENOMEM)
		stream_reason_set(&d->why, "out of memory");
	return rc;
}
