/*
 * output.c — result sets printed as aligned tables, JSON lines or CSV.
 */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

struct cli_rows {
	char **cols;
	size_t n_cols;
	bool *numeric;
	bool *raw;
	char **cells; /* n_rows * n_cols */
	size_t n_rows, cap_rows;
};

cli_rows *cli_rows_new(const char *const *columns, size_t n_columns)
{
	cli_rows *r = floe_calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cols = floe_calloc(n_columns, sizeof(char *));
	r->numeric = floe_calloc(n_columns, sizeof(bool));
	r->raw = floe_calloc(n_columns, sizeof(bool));
	r->n_cols = n_columns;
	for (size_t i = 0; i < n_columns; i++)
		r->cols[i] = floe_strdup(columns[i]);
	return r;
}

void cli_rows_numeric(cli_rows *r, size_t column)
{
	if (column < r->n_cols)
		r->numeric[column] = true;
}

void cli_rows_raw_json(cli_rows *r, size_t column)
{
	if (column < r->n_cols)
		r->raw[column] = true;
}

/* the table's shortened cell: 57 bytes (at a character) and "..." */
static const char *narrow(const char *v, char *buf, size_t cap)
{
	size_t n = v ? strlen(v) : 0, cut = 57;
	if (!v || n <= 60 || g_cli.wide || cap < 61)
		return v;
	while (cut > 0 && ((unsigned char)v[cut] & 0xC0) == 0x80)
		cut--;
	memcpy(buf, v, cut);
	memcpy(buf + cut, "...", 4);
	return buf;
}

void cli_rows_add(cli_rows *r, const char *const *cells)
{
	if (r->n_rows == r->cap_rows) {
		size_t nc = r->cap_rows ? r->cap_rows * 2 : 64;
		char **n = floe_realloc(r->cells, nc * r->n_cols * sizeof(char *));
		if (!n)
			return;
		r->cells = n;
		r->cap_rows = nc;
	}
	for (size_t i = 0; i < r->n_cols; i++)
		r->cells[r->n_rows * r->n_cols + i] = cells[i] ? floe_strdup(cells[i]) : NULL;
	r->n_rows++;
}

void cli_json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void csv_cell(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

void cli_rows_print(cli_rows *r, cli_format fmt, FILE *out)
{
	if (!r)
		return;
	if (fmt == OUT_JSON) {
		for (size_t row = 0; row < r->n_rows; row++) {
			fputc('{', out);
			for (size_t c = 0; c < r->n_cols; c++) {
				const char *v = r->cells[row * r->n_cols + c];
				if (c)
					fputc(',', out);
				cli_json_str(out, r->cols[c]);
				fputc(':', out);
				if (!v)
					fputs("null", out);
				else if ((r->numeric[c] || r->raw[c]) && *v)
					fputs(v, out);
				else
					cli_json_str(out, v);
			}
			fputs("}\n", out);
		}
		return;
	}
	if (fmt == OUT_CSV) {
		for (size_t c = 0; c < r->n_cols; c++) {
			if (c)
				fputc(',', out);
			csv_cell(out, r->cols[c]);
		}
		fputc('\n', out);
		for (size_t row = 0; row < r->n_rows; row++) {
			for (size_t c = 0; c < r->n_cols; c++) {
				if (c)
					fputc(',', out);
				csv_cell(out, r->cells[row * r->n_cols + c]);
			}
			fputc('\n', out);
		}
		return;
	}
	size_t *w = floe_calloc(r->n_cols, sizeof(size_t));
	if (!w)
		return;
	char nb[64];
	for (size_t c = 0; c < r->n_cols; c++)
		w[c] = strlen(r->cols[c]);
	for (size_t row = 0; row < r->n_rows; row++)
		for (size_t c = 0; c < r->n_cols; c++) {
			const char *v = narrow(r->cells[row * r->n_cols + c], nb, sizeof(nb));
			size_t l = v ? strlen(v) : 0;
			if (l > w[c])
				w[c] = l;
		}
	for (size_t c = 0; c < r->n_cols; c++)
		fprintf(out, "%s%-*s", c ? "  " : "", c + 1 < r->n_cols ? (int)w[c] : 0, r->cols[c]);
	fputc('\n', out);
	for (size_t c = 0; c < r->n_cols; c++) {
		fprintf(out, "%s", c ? "  " : "");
		for (size_t k = 0; k < w[c]; k++)
			fputc('-', out);
	}
	fputc('\n', out);
	for (size_t row = 0; row < r->n_rows; row++) {
		for (size_t c = 0; c < r->n_cols; c++) {
			const char *v = narrow(r->cells[row * r->n_cols + c], nb, sizeof(nb));
			if (r->numeric[c])
				fprintf(out, "%s%*s", c ? "  " : "", (int)w[c], v ? v : "");
			else
				fprintf(out, "%s%-*s", c ? "  " : "", c + 1 < r->n_cols ? (int)w[c] : 0,
					v ? v : "");
		}
		fputc('\n', out);
	}
	floe_free(w);
}

void cli_rows_free(cli_rows *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_rows * r->n_cols; i++)
		floe_free(r->cells[i]);
	for (size_t i = 0; i < r->n_cols; i++)
		floe_free(r->cols[i]);
	floe_free(r->cells);
	floe_free(r->cols);
	floe_free(r->numeric);
	floe_free(r->raw);
	floe_free(r);
}

bool cli_parse_format(const char *s, cli_format *out)
{
	if (!strcmp(s, "table"))
		*out = OUT_TABLE;
	else if (!strcmp(s, "json"))
		*out = OUT_JSON;
	else if (!strcmp(s, "csv"))
		*out = OUT_CSV;
	else
		return false;
	return true;
}

int cli_stdout_write(const char *data, size_t n, void *payload)
{
	(void)payload;
	return fwrite(data, 1, n, stdout) == n ? 0 : FLOE_EIO;
}
