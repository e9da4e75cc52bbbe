/*
 * stream_filter.h — routing filters: which decoded rows go to a table, like
 * the WHERE clause of one INSERT in a Flink statement set.
 *
 * Grammar (keywords case-insensitive):
 *   expr := term ('or' term)* ; term := factor ('and' factor)*
 *   factor := 'not' factor | '(' expr ')' | field op literal
 *           | field ['not'] 'in' '(' literal, ... ')' | field 'is' ['not'] 'null'
 *   op := = == != <> < <= > >= ; field := name('.'name)* or "quoted name"
 *   literal := 'text' | number | true | false
 * Literals are converted to the field's type when the filter is compiled
 * (so "ts >= '2024-01-01T00:00:00Z'" compares instants); an unquoted number
 * against a string field compares numerically (rows whose text is not a
 * number do not match). A comparison with
 * a null value is false (SQL's unknown), so "not" of it is true only for
 * 'is null'-style tests.
 *
 * Thread-safety: a compiled filter is read-only; evaluate from any thread.
 */
#ifndef FLOE_STREAM_FILTER_H
#define FLOE_STREAM_FILTER_H

#include "stream/stream_builder.h"

typedef struct stream_filter stream_filter;

/* Compile text against a struct type (the table schema's root). */
int stream_filter_compile(stream_filter **out, const char *text, const floe_type *root,
			  floe_error *err) FLOE_WUR;
void stream_filter_free(stream_filter *f);
/*
 * Names of top-level fields the filter uses that root lacks (a filter may
 * test source fields the table does not keep: the runtime decodes them as
 * extra string columns). *names is an array of heap strings (free each and
 * the array with floe_free).
 */
int stream_filter_unknown_fields(char ***names, size_t *n, const char *text, const floe_type *root,
				 floe_error *err) FLOE_WUR;
/* Mark used[i] for each top-level field i of the compiled-for type the
 * filter reads (used has n_root entries, cleared by the caller). */
void stream_filter_fields_used(const stream_filter *f, bool *used, size_t n_root);
/* Does row r of root (built for the same type) match? */
bool stream_filter_match(const stream_filter *f, const stream_col *root, int64_t r);

#endif
