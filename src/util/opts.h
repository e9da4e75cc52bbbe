/*
 * opts.h — checking a public options struct at its entry point.
 *
 * Every public `struct floe_<thing>_opts` starts with `int version` that
 * FLOE_<THING>_OPTS_INIT sets to 1. A caller that forgot the initialiser
 * (or was compiled against another layout) gets EINVAL naming the struct,
 * never a read of fields it did not set.
 */
#ifndef FLOE_UTIL_OPTS_H
#define FLOE_UTIL_OPTS_H

#include "floe/common.h"

#define FLOE_OPTS_VERSION 1

#define FLOE_CHECK_OPTS(opts, type_name, init_name, err)                                     \
	do {                                                                                  \
		if ((opts) && (opts)->version != FLOE_OPTS_VERSION)                           \
			return floe_error_set((err), FLOE_EINVAL,                             \
					      "%s.version is %d: this floe reads version %d "  \
					      "(initialise it with %s)",                       \
					      type_name, (opts)->version, FLOE_OPTS_VERSION,   \
					      init_name);                                      \
	} while (0)

#endif
