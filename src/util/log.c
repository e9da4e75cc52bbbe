/*
 * log.c — the log callback.
 */
#include "util/log.h"

#include <stdio.h>

static floe_log_fn g_fn;
static void *g_payload;
static floe_log_level g_min = FLOE_LOG_INFO;

void floe_set_logger(floe_log_fn fn, void *payload, floe_log_level min_level)
{
	g_fn = fn;
	g_payload = payload;
	g_min = min_level;
}

bool floe_log_enabled(floe_log_level level)
{
	return g_fn && level >= g_min;
}

void floe_log(floe_log_level level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	if (!floe_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	g_fn(level, msg, g_payload);
}
