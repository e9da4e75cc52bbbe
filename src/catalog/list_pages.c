/*
 * list_pages.c — the loop of a paginated listing, shared by the catalogs
 * whose servers answer a list in pages: Glue (GetDatabases, GetTables:
 * "NextToken") and the Iceberg REST catalog (namespaces, tables:
 * "next-page-token"). The catalog fetches and parses one page and hands
 * its items on; this file keeps the token, the arena of each page, and the
 * rule that a page without a token (absent, not a string, or empty) is the
 * last one.
 */
#include "catalog/catalog_impl.h"
#include "json/json.h"
#include "util/alloc.h"

#define PAGE_ARENA (1u << 16)
#define TOKEN_MAX (1u << 16)

int floe_catalog__list_pages(const char *token_field, floe_list_page_fn page,
			     floe_list_items_fn items, void *payload, floe_error *err)
{
	floe_buf token;
	int rc = FLOE_OK;
	floe_buf_init(&token, TOKEN_MAX);
	for (;;) {
		floe_arena a;
		const floe_json *doc = NULL;
		floe_arena_init(&a, PAGE_ARENA);
		rc = page(payload, token.len ? floe_buf_cstr(&token) : NULL, &a, &doc, err);
		if (!rc)
			rc = items(payload, doc, &a, err);
		const floe_json *next = rc ? NULL : floe_json_get(doc, token_field);
		floe_buf_clear(&token);
		if (next && next->type == FLOE_JSON_STRING && next->len &&
		    floe_buf_append(&token, next->s, next->len))
			rc = floe_error_oom(err);
		floe_arena_reset(&a);
		if (rc || !token.len)
			break;
	}
	floe_buf_reset(&token);
	return rc;
}
