/*
 * error.c — floe_error: caller-owned error records with context prefixes.
 */
#include "floe/common.h"

#include <stdio.h>
#include <string.h>

const char *floe_strerror(int code)
{
	switch (code) {
	case FLOE_OK: return "OK";
	case FLOE_ENOMEM: return "ENOMEM";
	case FLOE_EINVAL: return "EINVAL";
	case FLOE_ECORRUPT: return "ECORRUPT";
	case FLOE_EUNSUPPORTED: return "EUNSUPPORTED";
	case FLOE_ENOTFOUND: return "ENOTFOUND";
	case FLOE_EEXISTS: return "EEXISTS";
	case FLOE_ECONFLICT: return "ECONFLICT";
	case FLOE_EIO: return "EIO";
	case FLOE_ETIMEDOUT: return "ETIMEDOUT";
	case FLOE_ECANCELED: return "ECANCELED";
	default: return "EUNKNOWN";
	}
}

void floe_error_clear(floe_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->retryable = false;
	err->msg[0] = '\0';
}

int floe_error_setv(floe_error *err, int code, const char *fmt, va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	err->retryable = code == FLOE_ECONFLICT || code == FLOE_ETIMEDOUT || code == FLOE_EIO;
	if (fmt)
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	else
		snprintf(err->msg, sizeof(err->msg), "%s", floe_strerror(code));
	return code;
}

int floe_error_set(floe_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	floe_error_setv(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int floe_error_prefix(floe_error *err, const char *fmt, ...)
{
	char head[FLOE_ERROR_MSG_MAX];
	char tail[FLOE_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return 0;
	if (err->code == 0)
		return 0;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(tail, err->msg, sizeof(tail));
	tail[sizeof(tail) - 1] = '\0';
	size_t hl = strlen(head), tl = strlen(tail);
	if (hl >= sizeof(err->msg))
		hl = sizeof(err->msg) - 1;
	if (tl > sizeof(err->msg) - 1 - hl)
		tl = sizeof(err->msg) - 1 - hl;
	memcpy(err->msg, head, hl);
	memcpy(err->msg + hl, tail, tl);
	err->msg[hl + tl] = '\0';
	return err->code;
}
