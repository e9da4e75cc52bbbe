/*
 * obs_http.c — the Prometheus scrape endpoint on libmicrohttpd.
 *
 * One internal polling thread answers GET /metrics with the registry
 * rendered at request time; anything else gets a short index (/) or 404.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "obs/obs_metrics.h"
#include "util/alloc.h"

struct floe_metrics_http {
	struct MHD_Daemon *d;
	floe_metrics *r;
};

static void free_body(void *p)
{
	floe_free(p);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	floe_metrics_http *h = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned int status = MHD_HTTP_OK;
	const char *type = "text/plain; version=0.0.4; charset=utf-8";
	floe_buf b;
	char *body;
	size_t len = 0;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return MHD_NO;
	int rc = 0;
	floe_buf_init(&b, (size_t)64 << 20);
	if (!strcmp(url, "/metrics")) {
		if (floe_metrics_render(h->r, &b)) {
			floe_buf_clear(&b);
			status = MHD_HTTP_INTERNAL_SERVER_ERROR;
			rc = floe_buf_puts(&b, "out of memory\n");
		}
	} else if (floe_obs_console_route(h->r, url, &b, &type, &status, &rc)) {
		/* the console page and its JSON (obs_console.c) */
	} else if (!strcmp(url, "/")) {
		type = "text/plain; charset=utf-8";
		rc = floe_buf_puts(&b, "floe metrics: GET /metrics (Prometheus text format), "
				       "/console (web console), /api/metrics (JSON)\n");
	} else {
		status = MHD_HTTP_NOT_FOUND;
		type = "text/plain; charset=utf-8";
		rc = floe_buf_puts(&b, "not found\n");
	}
	if (rc) {
		floe_buf_reset(&b);
		return MHD_NO;
	}
	body = floe_buf_detach(&b, &len);
	if (!body)
		return MHD_NO;
	resp = MHD_create_response_from_buffer_with_free_callback(len, body, free_body);
	if (!resp) {
		floe_free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

int floe_metrics_http_start(floe_metrics_http **out, floe_metrics *r, const char *bind, int port,
			    int *port_out, floe_error *err)
{
	floe_metrics_http *h;
	struct sockaddr_in addr;
	*out = NULL;
	if (port < 0 || port > 65535)
		return floe_error_set(err, FLOE_EINVAL, "metrics port %d is out of range", port);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind && *bind && inet_pton(AF_INET, bind, &addr.sin_addr) != 1)
		return floe_error_set(err, FLOE_EINVAL, "metrics bind address '%s' is not an IPv4 address",
				      bind);
	h = floe_calloc(1, sizeof(*h));
	if (!h)
		return floe_error_oom(err);
	h->r = r;
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL, NULL, answer,
				h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_END);
	if (!h->d) {
		floe_free(h);
		return floe_error_set(err, FLOE_EIO, "metrics endpoint: cannot listen on %s:%d",
				      bind && *bind ? bind : "0.0.0.0", port);
	}
	if (port_out) {
		const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
		*port_out = info ? (int)info->port : port;
	}
	*out = h;
	return FLOE_OK;
}

void floe_metrics_http_stop(floe_metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	floe_free(h);
}
