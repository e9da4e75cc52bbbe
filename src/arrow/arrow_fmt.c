/*
 * arrow_fmt.c — Arrow format string parsing and printing.
 */
#include "arrow/arrow_fmt.h"

#include <stdio.h>
#include <string.h>

#include "util/str.h"

static int bad(floe_error *err, const char *format, const char *why)
{
	return floe_error_set(err, FLOE_EINVAL, "arrow format '%s': %s", format, why);
}

static int unsupported(floe_error *err, const char *format)
{
	return floe_error_set(err, FLOE_EUNSUPPORTED, "arrow format '%s' is not supported",
			      format);
}

/* Parse a decimal integer that ends at a NUL or at `stop`. */
static bool parse_num(const char *s, char stop, int32_t *v, const char **end)
{
	const char *e = s;
	while (*e && *e != stop)
		e++;
	if (!floe_parse_i32(s, (size_t)(e - s), v))
		return false;
	*end = e;
	return true;
}

static bool parse_unit(char c, floe_arrow_unit *u)
{
	switch (c) {
	case 's': *u = FLOE_ARROW_SECOND; return true;
	case 'm': *u = FLOE_ARROW_MILLI; return true;
	case 'u': *u = FLOE_ARROW_MICRO; return true;
	case 'n': *u = FLOE_ARROW_NANO; return true;
	default: return false;
	}
}

int floe_arrow_fmt_parse(floe_arrow_fmt *out, const char *format, floe_error *err)
{
	const char *f = format, *end;
	memset(out, 0, sizeof(*out));
	out->tz = "";
	if (!f || !*f)
		return floe_error_set(err, FLOE_EINVAL, "arrow format is empty");
	if (f[1] == '\0') {
		switch (f[0]) {
		case 'n': out->type = FLOE_ARROW_NA; return FLOE_OK;
		case 'b': out->type = FLOE_ARROW_BOOL; return FLOE_OK;
		case 'c': out->type = FLOE_ARROW_INT8; return FLOE_OK;
		case 'C': out->type = FLOE_ARROW_UINT8; return FLOE_OK;
		case 's': out->type = FLOE_ARROW_INT16; return FLOE_OK;
		case 'S': out->type = FLOE_ARROW_UINT16; return FLOE_OK;
		case 'i': out->type = FLOE_ARROW_INT32; return FLOE_OK;
		case 'I': out->type = FLOE_ARROW_UINT32; return FLOE_OK;
		case 'l': out->type = FLOE_ARROW_INT64; return FLOE_OK;
		case 'L': out->type = FLOE_ARROW_UINT64; return FLOE_OK;
		case 'e': out->type = FLOE_ARROW_HALF_FLOAT; return FLOE_OK;
		case 'f': out->type = FLOE_ARROW_FLOAT; return FLOE_OK;
		case 'g': out->type = FLOE_ARROW_DOUBLE; return FLOE_OK;
		case 'u': out->type = FLOE_ARROW_STRING; return FLOE_OK;
		case 'U': out->type = FLOE_ARROW_LARGE_STRING; return FLOE_OK;
		case 'z': out->type = FLOE_ARROW_BINARY; return FLOE_OK;
		case 'Z': out->type = FLOE_ARROW_LARGE_BINARY; return FLOE_OK;
		default: return unsupported(err, format);
		}
	}
	switch (f[0]) {
	case 'w':
		if (f[1] != ':' || !parse_num(f + 2, '\0', &out->width, &end) || out->width <= 0)
			return bad(err, format, "expected w:<bytes>");
		out->type = FLOE_ARROW_FIXED_BINARY;
		return FLOE_OK;
	case 'd':
		if (f[1] != ':' || !parse_num(f + 2, ',', &out->precision, &end) || *end != ',')
			return bad(err, format, "expected d:<precision>,<scale>");
		if (!parse_num(end + 1, ',', &out->scale, &end))
			return bad(err, format, "bad decimal scale");
		out->width = 128;
		if (*end == ',') {
			if (!parse_num(end + 1, '\0', &out->width, &end))
				return bad(err, format, "bad decimal bit width");
		}
		if (out->width == 128) {
			if (out->precision < 1 || out->precision > 38)
				return bad(err, format, "decimal128 precision must be 1..38");
			out->type = FLOE_ARROW_DECIMAL128;
		} else if (out->width == 256) {
			if (out->precision < 1 || out->precision > 76)
				return bad(err, format, "decimal256 precision must be 1..76");
			out->type = FLOE_ARROW_DECIMAL256;
		} else {
			return unsupported(err, format);
		}
		return FLOE_OK;
	case 't':
		switch (f[1]) {
		case 'd':
			if (f[2] == 'D' && !f[3]) {
				out->type = FLOE_ARROW_DATE32;
				return FLOE_OK;
			}
			if (f[2] == 'm' && !f[3]) {
				out->type = FLOE_ARROW_DATE64;
				out->unit = FLOE_ARROW_MILLI;
				return FLOE_OK;
			}
			return unsupported(err, format);
		case 't':
			if (!f[2] || f[3] || !parse_unit(f[2], &out->unit))
				return unsupported(err, format);
			out->type = out->unit <= FLOE_ARROW_MILLI ? FLOE_ARROW_TIME32 : FLOE_ARROW_TIME64;
			return FLOE_OK;
		case 's':
			if (!f[2] || !parse_unit(f[2], &out->unit) || f[3] != ':')
				return bad(err, format, "expected ts<unit>:<zone>");
			out->type = FLOE_ARROW_TIMESTAMP;
			out->tz = f + 4;
			return FLOE_OK;
		case 'D':
			if (!f[2] || f[3] || !parse_unit(f[2], &out->unit))
				return unsupported(err, format);
			out->type = FLOE_ARROW_DURATION;
			return FLOE_OK;
		default: return unsupported(err, format);
		}
	case '+':
		if (f[1] == 's' && !f[2]) {
			out->type = FLOE_ARROW_STRUCT;
			return FLOE_OK;
		}
		if (f[1] == 'l' && !f[2]) {
			out->type = FLOE_ARROW_LIST;
			return FLOE_OK;
		}
		if (f[1] == 'L' && !f[2]) {
			out->type = FLOE_ARROW_LARGE_LIST;
			return FLOE_OK;
		}
		if (f[1] == 'm' && !f[2]) {
			out->type = FLOE_ARROW_MAP;
			return FLOE_OK;
		}
		if (f[1] == 'w' && f[2] == ':') {
			if (!parse_num(f + 3, '\0', &out->width, &end) || out->width < 0)
				return bad(err, format, "expected +w:<size>");
			out->type = FLOE_ARROW_FIXED_LIST;
			return FLOE_OK;
		}
		return unsupported(err, format);
	default: return unsupported(err, format);
	}
}

static char unit_char(floe_arrow_unit u)
{
	static const char c[] = {'s', 'm', 'u', 'n'};
	return c[u & 3];
}

size_t floe_arrow_fmt_print(char *buf, size_t cap, const floe_arrow_fmt *f)
{
	static const char *simple[] = {
		[FLOE_ARROW_NA] = "n",		  [FLOE_ARROW_BOOL] = "b",
		[FLOE_ARROW_INT8] = "c",	  [FLOE_ARROW_UINT8] = "C",
		[FLOE_ARROW_INT16] = "s",	  [FLOE_ARROW_UINT16] = "S",
		[FLOE_ARROW_INT32] = "i",	  [FLOE_ARROW_UINT32] = "I",
		[FLOE_ARROW_INT64] = "l",	  [FLOE_ARROW_UINT64] = "L",
		[FLOE_ARROW_HALF_FLOAT] = "e",	  [FLOE_ARROW_FLOAT] = "f",
		[FLOE_ARROW_DOUBLE] = "g",	  [FLOE_ARROW_STRING] = "u",
		[FLOE_ARROW_LARGE_STRING] = "U", [FLOE_ARROW_BINARY] = "z",
		[FLOE_ARROW_LARGE_BINARY] = "Z", [FLOE_ARROW_DATE32] = "tdD",
		[FLOE_ARROW_DATE64] = "tdm",	  [FLOE_ARROW_STRUCT] = "+s",
		[FLOE_ARROW_LIST] = "+l",	  [FLOE_ARROW_LARGE_LIST] = "+L",
		[FLOE_ARROW_MAP] = "+m",
	};
	int n;
	switch (f->type) {
	case FLOE_ARROW_FIXED_BINARY: n = snprintf(buf, cap, "w:%d", (int)f->width); break;
	case FLOE_ARROW_DECIMAL128:
		n = snprintf(buf, cap, "d:%d,%d", (int)f->precision, (int)f->scale);
		break;
	case FLOE_ARROW_DECIMAL256:
		n = snprintf(buf, cap, "d:%d,%d,256", (int)f->precision, (int)f->scale);
		break;
	case FLOE_ARROW_TIME32:
	case FLOE_ARROW_TIME64: n = snprintf(buf, cap, "tt%c", unit_char(f->unit)); break;
	case FLOE_ARROW_TIMESTAMP:
		n = snprintf(buf, cap, "ts%c:%s", unit_char(f->unit), f->tz ? f->tz : "");
		break;
	case FLOE_ARROW_DURATION: n = snprintf(buf, cap, "tD%c", unit_char(f->unit)); break;
	case FLOE_ARROW_FIXED_LIST: n = snprintf(buf, cap, "+w:%d", (int)f->width); break;
	default:
		n = snprintf(buf, cap, "%s",
			     (size_t)f->type < sizeof(simple) / sizeof(simple[0]) && simple[f->type]
				     ? simple[f->type]
				     : "n");
		break;
	}
	return n < 0 ? 0 : (size_t)n;
}

int floe_arrow_fmt_n_buffers(floe_arrow_type t)
{
	switch (t) {
	case FLOE_ARROW_NA: return 0;
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_LARGE_STRING:
	case FLOE_ARROW_BINARY:
	case FLOE_ARROW_LARGE_BINARY: return 3;
	case FLOE_ARROW_STRUCT:
	case FLOE_ARROW_FIXED_LIST: return 1;
	default: return 2;
	}
}

int floe_arrow_fmt_byte_width(const floe_arrow_fmt *f)
{
	switch (f->type) {
	case FLOE_ARROW_INT8:
	case FLOE_ARROW_UINT8: return 1;
	case FLOE_ARROW_INT16:
	case FLOE_ARROW_UINT16:
	case FLOE_ARROW_HALF_FLOAT: return 2;
	case FLOE_ARROW_INT32:
	case FLOE_ARROW_UINT32:
	case FLOE_ARROW_FLOAT:
	case FLOE_ARROW_DATE32:
	case FLOE_ARROW_TIME32: return 4;
	case FLOE_ARROW_INT64:
	case FLOE_ARROW_UINT64:
	case FLOE_ARROW_DOUBLE:
	case FLOE_ARROW_DATE64:
	case FLOE_ARROW_TIME64:
	case FLOE_ARROW_TIMESTAMP:
	case FLOE_ARROW_DURATION: return 8;
	case FLOE_ARROW_DECIMAL128: return 16;
	case FLOE_ARROW_DECIMAL256: return 32;
	case FLOE_ARROW_FIXED_BINARY: return f->width;
	default: return 0;
	}
}

const char *floe_arrow_type_name(floe_arrow_type t)
{
	static const char *names[] = {
		"null",	      "bool",	       "int8",		"uint8",      "int16",
		"uint16",     "int32",	       "uint32",	"int64",      "uint64",
		"halffloat",  "float",	       "double",	"string",     "large_string",
		"binary",     "large_binary",  "fixed_size_binary", "decimal128", "decimal256",
		"date32",     "date64",	       "time32",	"time64",     "timestamp",
		"duration",   "struct",	       "list",		"large_list", "fixed_size_list",
		"map",
	};
	if ((size_t)t < sizeof(names) / sizeof(names[0]))
		return names[t];
	return "unknown";
}
