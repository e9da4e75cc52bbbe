/*
 * error.c — floe_error: caller-owned error records with context prefixes.
 *
 * The contract (include/floe/common.h): a function's status is its return
 * value; the record only explains it. floe_error_prefix takes the status and
 * returns it, so context can be added without any path losing the code, and
 * whether an error may be retried is said by the code that raised it, never
 * derived from the code number.
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
	case FLOE_ECOMMITUNKNOWN: return "ECOMMITUNKNOWN";
	default: return "EUNKNOWN";
	}
}

/* What a record says when the code that failed gave no message. */
static const char *default_message(int code)
{
	switch (code) {
	case FLOE_ENOMEM: return "out of memory";
	case FLOE_ECORRUPT: return "corrupt input";
	case FLOE_ECOMMITUNKNOWN: return "commit state unknown";
	default: return floe_strerror(code);
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
	err->retryable = false;
	if (fmt)
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	else
		snprintf(err->msg, sizeof(err->msg), "%s", default_message(code));
	if (!err->msg[0])
		snprintf(err->msg, sizeof(err->msg), "%s", default_message(code));
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

int floe_error_set_retryable(floe_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	floe_error_setv(err, code, fmt, ap);
	va_end(ap);
	if (err)
		err->retryable = true;
	return code;
}

int floe_error__at(floe_error *err, int code, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	floe_error_setv(err, code, fmt, ap);
	va_end(ap);
#ifdef FLOE_ERROR_SOURCE
	if (err) {
		size_t n = strlen(err->msg);
		if (n < sizeof(err->msg) - 1)
			snprintf(err->msg + n, sizeof(err->msg) - n, " [%s:%d]", file, line);
	}
#else
	(void)file;
	(void)line;
#endif
	return code;
}

int floe_error_prefix(floe_error *err, int rc, const char *fmt, ...)
{
	char head[FLOE_ERROR_MSG_MAX];
	char tail[FLOE_ERROR_MSG_MAX];
	va_list ap;

	if (rc == 0 || !err)
		return rc;
	if (err->code == 0) {
		/* a callee failed without saying why (it was given no record, or
		 * forgot): the record still states the code */
		err->retryable = false;
		snprintf(err->msg, sizeof(err->msg), "%s", default_message(rc));
	}
	err->code = rc;
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
	return rc;
}
