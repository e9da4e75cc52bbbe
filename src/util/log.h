/*
 * log.h — internal logging through the callback set by floe_set_logger.
 */
#ifndef FLOE_UTIL_LOG_H
#define FLOE_UTIL_LOG_H

#include "floe/common.h"

void floe_log(floe_log_level level, const char *fmt, ...) FLOE_PRINTF(2, 3);
bool floe_log_enabled(floe_log_level level);

#define FLOE_DEBUG(...) floe_log(FLOE_LOG_DEBUG, __VA_ARGS__)
#define FLOE_INFO(...) floe_log(FLOE_LOG_INFO, __VA_ARGS__)
#define FLOE_WARN(...) floe_log(FLOE_LOG_WARN, __VA_ARGS__)

#endif
