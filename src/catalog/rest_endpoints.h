/*
 * rest_endpoints.h — which REST catalog endpoints a server offers
 * (rest_endpoints.c): the config answer's endpoints list, each
 * "<verb> <path>" as the REST spec names the path, or without the field the
 * spec's default set. The REST client calls nothing a server leaves out.
 *
 * Thread-safety: pure functions.
 */
#ifndef FLOE_CATALOG_REST_ENDPOINTS_H
#define FLOE_CATALOG_REST_ENDPOINTS_H

#include <stdint.h>

#include "floe/common.h"
#include "json/json.h"

/* The endpoints floe knows (bits of a uint32_t with FLOE_REST_EP()). */
enum {
	FLOE_REST_EP_LIST_NS,
	FLOE_REST_EP_CREATE_NS,
	FLOE_REST_EP_LOAD_NS,
	FLOE_REST_EP_NS_EXISTS,
	FLOE_REST_EP_DROP_NS,
	FLOE_REST_EP_UPDATE_NS,
	FLOE_REST_EP_LIST_TABLES,
	FLOE_REST_EP_LOAD_TABLE,
	FLOE_REST_EP_UPDATE_TABLE,
	FLOE_REST_EP_DROP_TABLE,
	FLOE_REST_EP_RENAME_TABLE,
	FLOE_REST_EP_COMMIT_TXN,
	FLOE_REST_EP_LOAD_CREDENTIALS,
	FLOE_REST_EP_LIST_VIEWS,
	FLOE_REST_EP_N
};
#define FLOE_REST_EP(x) (1u << (x))
/* spec: "If a server does not send the endpoints field, a default set of
 * endpoints is assumed" (no HEAD, no credentials, no views) */
#define FLOE_REST_EP_DEFAULT                                                                    \
	(FLOE_REST_EP(FLOE_REST_EP_LIST_NS) | FLOE_REST_EP(FLOE_REST_EP_CREATE_NS) |             \
	 FLOE_REST_EP(FLOE_REST_EP_LOAD_NS) | FLOE_REST_EP(FLOE_REST_EP_DROP_NS) |               \
	 FLOE_REST_EP(FLOE_REST_EP_UPDATE_NS) | FLOE_REST_EP(FLOE_REST_EP_LIST_TABLES) |         \
	 FLOE_REST_EP(FLOE_REST_EP_LOAD_TABLE) | FLOE_REST_EP(FLOE_REST_EP_UPDATE_TABLE) |       \
	 FLOE_REST_EP(FLOE_REST_EP_DROP_TABLE) | FLOE_REST_EP(FLOE_REST_EP_RENAME_TABLE) |       \
	 FLOE_REST_EP(FLOE_REST_EP_COMMIT_TXN))

/*
 * The FLOE_REST_EP bits of a CatalogConfig's endpoints (absent or null: the
 * default set). Verbs match without regard to case, paths exactly;
 * endpoints floe does not call are skipped. FLOE_ECORRUPT for a list that is
 * not one of strings "<verb> <path>".
 */
int floe_rest__parse_endpoints(const floe_json *cfg, uint32_t *out, floe_error *err) FLOE_WUR;

/* FLOE_OK when eps has ep, else FLOE_EUNSUPPORTED saying which endpoint the
 * server's list lacks. */
int floe_rest__need(uint32_t eps, int ep, floe_error *err) FLOE_WUR;

#endif
