/*
 * test_obs.c — the metrics registry's Prometheus text (HELP/TYPE once per
 * name, label escaping, cumulative histogram buckets, scrape-time gauges)
 * and the HTTP endpoint (a real GET on an ephemeral port); the console's JSON
 * of the same registry.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "obs/obs_metrics.h"

static int64_t forty_two(void *payload)
{
	(void)payload;
	return 42;
}

static void test_render(void)
{
	floe_metrics *r = NULL;
	floe_metric *a = NULL, *b = NULL, *h = NULL, *g = NULL, *again = NULL;
	floe_buf out;
	const char *la[] = {"table", "db.a"};
	const char *lb[] = {"table", "we\"ird\\name\n"};
	const int64_t buckets[] = {10, 100};
	T_EQ_INT(floe_metrics_new(&r), 0);
	T_EQ_INT(floe_metrics_add(&a, r, FLOE_METRIC_COUNTER, "floe_files", "files committed", la, 1,
				  NULL, 0),
		 0);
	T_EQ_INT(floe_metrics_add(&h, r, FLOE_METRIC_HISTOGRAM, "floe_sizes", "sizes", NULL, 0,
				  buckets, 2),
		 0);
	T_EQ_INT(floe_metrics_add(&b, r, FLOE_METRIC_COUNTER, "floe_files", "files committed", lb, 1,
				  NULL, 0),
		 0);
	T_EQ_INT(floe_metrics_add_fn(&g, r, "floe_answer", "a gauge", NULL, 0, forty_two, NULL), 0);
	T_EQ_INT(floe_metrics_add(&again, r, FLOE_METRIC_COUNTER, "floe_files", "x", la, 1, NULL, 0), 0);
	T_CHECK(again == a);
	T_EQ_INT(floe_metrics_add(&again, r, FLOE_METRIC_GAUGE, "floe_files", "x", la, 1, NULL, 0),
		 FLOE_EINVAL);
	T_EQ_INT(floe_metrics_add(&again, r, FLOE_METRIC_GAUGE, "bad name", "x", NULL, 0, NULL, 0),
		 FLOE_EINVAL);
	floe_metric_add(a, 3);
	floe_metric_add(b, 1);
	floe_metric_observe(h, 5);
	floe_metric_observe(h, 50);
	floe_metric_observe(h, 5000);
	floe_metric_add(NULL, 1); /* NULL series are ignored */
	T_EQ_INT(floe_metric_value(a), 3);
	T_EQ_INT(floe_metric_value(h), 3);
	T_EQ_INT(floe_metric_value(g), 42);
	floe_buf_init(&out, 0);
	T_EQ_INT(floe_metrics_render(r, &out), 0);
	T_EQ_STR(floe_buf_cstr(&out),
		 "# HELP floe_files files committed\n"
		 "# TYPE floe_files counter\n"
		 "floe_files{table=\"db.a\"} 3\n"
		 "floe_files{table=\"we\\\"ird\\\\name\\n\"} 1\n"
		 "# HELP floe_sizes sizes\n"
		 "# TYPE floe_sizes histogram\n"
		 "floe_sizes_bucket{le=\"10\"} 1\n"
		 "floe_sizes_bucket{le=\"100\"} 2\n"
		 "floe_sizes_bucket{le=\"+Inf\"} 3\n"
		 "floe_sizes_sum 5055\n"
		 "floe_sizes_count 3\n"
		 "# HELP floe_answer a gauge\n"
		 "# TYPE floe_answer gauge\n"
		 "floe_answer 42\n");
	/* the console's JSON is the same rendering, label escapes undone */
	floe_buf_clear(&out);
	floe_metrics_note(r, "dead-letter:db.a", "first");
	floe_metrics_note(r, "dead-letter:db.a", "bad \"x\""); /* the latest wins */
	floe_metrics_note(NULL, "k", "v");                      /* ignored */
	T_EQ_INT(floe_obs_metrics_json(r, &out), 0);
	T_EQ_STR(floe_buf_cstr(&out),
		 "{\"metrics\":[{\"name\":\"floe_files\",\"type\":\"counter\",\"help\":\"files "
		 "committed\",\"samples\":[{\"name\":\"floe_files\",\"labels\":{\"table\":\"db.a\"},"
		 "\"value\":3},{\"name\":\"floe_files\",\"labels\":{\"table\":\"we\\\"ird\\\\name\\n\"},"
		 "\"value\":1}]},{\"name\":\"floe_sizes\",\"type\":\"histogram\",\"help\":\"sizes\","
		 "\"samples\":[{\"name\":\"floe_sizes_bucket\",\"labels\":{\"le\":\"10\"},\"value\":1},"
		 "{\"name\":\"floe_sizes_bucket\",\"labels\":{\"le\":\"100\"},\"value\":2},"
		 "{\"name\":\"floe_sizes_bucket\",\"labels\":{\"le\":\"+Inf\"},\"value\":3},"
		 "{\"name\":\"floe_sizes_sum\",\"labels\":{},\"value\":5055},"
		 "{\"name\":\"floe_sizes_count\",\"labels\":{},\"value\":3}]},"
		 "{\"name\":\"floe_answer\",\"type\":\"gauge\",\"help\":\"a gauge\",\"samples\":"
		 "[{\"name\":\"floe_answer\",\"labels\":{},\"value\":42}]}],"
		 "\"notes\":{\"dead-letter:db.a\":\"bad \\\"x\\\"\"}}\n");
	floe_buf_reset(&out);
	floe_metrics_free(r);
}

static void test_http(void)
{
	floe_metrics *r = NULL;
	floe_metrics_http *h = NULL;
	floe_metric *m = NULL;
	floe_error err = {0};
	int port = 0;
	char resp[4096];
	size_t got = 0;
	ssize_t n;
	T_EQ_INT(floe_metrics_new(&r), 0);
	T_EQ_INT(floe_metrics_add(&m, r, FLOE_METRIC_GAUGE, "floe_up", "up", NULL, 0, NULL, 0), 0);
	floe_metric_set(m, 1);
	T_OK(floe_metrics_http_start(&h, r, "127.0.0.1", 0, &port, &err), &err);
	T_CHECK(port > 0);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_EQ_INT(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	T_CHECK(write(fd, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1));
	while (got < sizeof(resp) - 1 && (n = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += (size_t)n;
	resp[got] = 0;
	close(fd);
	T_CHECK(strstr(resp, "200 OK") != NULL);
	T_CHECK(strstr(resp, "text/plain; version=0.0.4") != NULL);
	T_CHECK(strstr(resp, "\nfloe_up 1\n") != NULL);
	/* a second endpoint on the same port fails with EIO */
	floe_metrics_http *h2 = NULL;
	T_EQ_INT(floe_metrics_http_start(&h2, r, "127.0.0.1", port, NULL, &err), FLOE_EIO);
	T_EQ_INT(floe_metrics_http_start(&h2, r, "not-an-ip", 0, NULL, &err), FLOE_EINVAL);
	floe_metrics_http_stop(h);
	floe_metrics_free(r);
}

int main(void)
{
	T_RUN(test_render);
	T_RUN(test_http);
	return t_finish();
}
