/*
 * obs_build.c — what this build of floe is: version, git commit, and the
 * versions of the libraries it runs with (floe --version, bug reports).
 */
#include <brotli/decode.h>
#include <libdeflate.h>
#include <libpq-fe.h>
#include <lz4.h>
#include <microhttpd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <yaml.h>
#include <zlib.h>
#include <zstd.h>

#include "floe/common.h"
#include "floe_git_commit.h"

int floe_build_info(floe_write_fn fn, void *payload)
{
	char buf[1024];
	unsigned br = BrotliDecoderVersion();
	int pq = PQlibVersion();
	int n = snprintf(buf, sizeof(buf),
			 "floe %s (commit %s)\n"
			 "libraries: zstd %s, zlib %s, libdeflate %s, lz4 %s, brotli %u.%u.%u, "
			 "snappy (no version API), sqlite %s, libpq %d.%d, libyaml %s, "
			 "libmicrohttpd %s\n",
			 FLOE_VERSION, FLOE_GIT_COMMIT, ZSTD_versionString(), zlibVersion(),
			 LIBDEFLATE_VERSION_STRING, LZ4_versionString(), br >> 24, (br >> 12) & 0xfff,
			 br & 0xfff, sqlite3_libversion(), pq / 10000, pq % 10000,
			 yaml_get_version_string(), MHD_get_version());
	if (n < 0)
		return FLOE_EINVAL;
	return fn(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, payload);
}
