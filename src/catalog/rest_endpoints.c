/*
 * rest_endpoints.c — the endpoints a REST catalog server offers
 * (rest_endpoints.h; REST spec: CatalogConfig.endpoints).
 */
#include "catalog/rest_endpoints.h"

#include <stdbool.h>
#include <string.h>

/* what each endpoint is, for the message when a server lacks it */
static const struct {
	const char *verb, *path, *what;
} ep_spec[FLOE_REST_EP_N] = {
	[FLOE_REST_EP_LIST_NS] = {"GET", "/v1/{prefix}/namespaces", "listing namespaces"},
	[FLOE_REST_EP_CREATE_NS] = {"POST", "/v1/{prefix}/namespaces", "creating namespaces"},
	[FLOE_REST_EP_LOAD_NS] = {"GET", "/v1/{prefix}/namespaces/{namespace}",
				  "loading namespaces"},
	[FLOE_REST_EP_NS_EXISTS] = {"HEAD", "/v1/{prefix}/namespaces/{namespace}",
				    "checking namespaces"},
	[FLOE_REST_EP_DROP_NS] = {"DELETE", "/v1/{prefix}/namespaces/{namespace}",
				  "dropping namespaces"},
	[FLOE_REST_EP_UPDATE_NS] = {"POST", "/v1/{prefix}/namespaces/{namespace}/properties",
				    "updating namespace properties"},
	[FLOE_REST_EP_LIST_TABLES] = {"GET", "/v1/{prefix}/namespaces/{namespace}/tables",
				      "listing tables"},
	[FLOE_REST_EP_LOAD_TABLE] = {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
				     "loading tables"},
	[FLOE_REST_EP_UPDATE_TABLE] = {"POST",
				       "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
				       "committing to tables"},
	[FLOE_REST_EP_DROP_TABLE] = {"DELETE",
				     "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
				     "dropping tables"},
	[FLOE_REST_EP_RENAME_TABLE] = {"POST", "/v1/{prefix}/tables/rename", "renaming tables"},
	[FLOE_REST_EP_COMMIT_TXN] = {"POST", "/v1/{prefix}/transactions/commit",
				     "multi-table transactions"},
	[FLOE_REST_EP_LOAD_CREDENTIALS] =
		{"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
		 "loading vended credentials"},
	[FLOE_REST_EP_LIST_VIEWS] = {"GET", "/v1/{prefix}/namespaces/{namespace}/views",
				     "listing views"},
};
/* an HTTP verb, without regard to ASCII case */
static bool verb_eq(const char *p, size_t n, const char *verb)
{
	if (strlen(verb) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i] >= 'a' && p[i] <= 'z' ? (char)(p[i] - 'a' + 'A') : p[i];
		if (ch != verb[i])
			return false;
	}
	return true;
}

int floe_rest__parse_endpoints(const floe_json *cfg, uint32_t *out, floe_error *err)
{
	const floe_json *l = floe_json_get(cfg, "endpoints");
	*out = FLOE_REST_EP_DEFAULT;
	if (!l || l->type == FLOE_JSON_NULL)
		return FLOE_OK;
	if (l->type != FLOE_JSON_ARRAY)
		return floe_error_corrupt(err, "REST config: endpoints is not a list");
	*out = 0;
	for (const floe_json *e = l->child; e; e = e->next) {
		const char *sp = e->type == FLOE_JSON_STRING ? memchr(e->s, ' ', e->len) : NULL;
		if (!sp)
			return floe_error_corrupt(err, "REST config: an endpoint that is not "
						       "\"<verb> <path>\"");
		size_t vl = (size_t)(sp - e->s), pl = e->len - vl - 1;
		for (int i = 0; i < FLOE_REST_EP_N; i++)
			if (verb_eq(e->s, vl, ep_spec[i].verb) && strlen(ep_spec[i].path) == pl &&
			    !memcmp(sp + 1, ep_spec[i].path, pl))
				*out |= FLOE_REST_EP(i);
	}
	return FLOE_OK;
}

int floe_rest__need(uint32_t eps, int ep, floe_error *err)
{
	if (ep >= 0 && ep < FLOE_REST_EP_N && (eps & FLOE_REST_EP(ep)))
		return FLOE_OK;
	if (ep < 0 || ep >= FLOE_REST_EP_N)
		return floe_error_set(err, FLOE_EINVAL, "unknown REST endpoint %d", ep);
	return floe_error_set(err, FLOE_EUNSUPPORTED,
			      "REST catalog: the server does not offer %s (its config's "
			      "endpoints do not list '%s %s')",
			      ep_spec[ep].what, ep_spec[ep].verb, ep_spec[ep].path);
}
