/*
 * scan_select.c — narrowing a planned scan to some of its data files, for
 * callers that read a plan group by group (compaction).
 */
#include <string.h>

#include "scan/scan_select.h"

void floe_scan__plan_files(floe_scan *s, scan_file *const **files, size_t *n)
{
	*files = s->files;
	*n = s->n_files;
}

int floe_scan__select(floe_scan *s, scan_file *const *files, size_t n, floe_error *err)
{
	scan_file **v = floe_arena_calloc(&s->a, n + 1, sizeof(*v));
	if (!v)
		return floe_error_oom(err);
	if (n)
		memcpy(v, files, n * sizeof(*v));
	floe_scan__reader_free(s); /* closes a file left open; the delete cache stays */
	s->files = v;
	s->n_files = n;
	s->next_file = 0;
	s->emitted = 0;
	s->done = false;
	return FLOE_OK;
}
