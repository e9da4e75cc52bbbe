/*
 * file.h — plain local files as floe_input / floe_output, for the file tools
 * that run below the io layer (the io layer's FileIO adds publish-on-close
 * and no-replace semantics on top of the same system calls).
 */
#ifndef FLOE_UTIL_FILE_H
#define FLOE_UTIL_FILE_H

#include "util/stream.h"

/* Open a local file for reading (FLOE_ENOTFOUND, FLOE_EIO). */
int floe_input_file_open(floe_input **out, const char *path, floe_error *err) FLOE_WUR;
/* Create or truncate a local file; abort removes it. */
int floe_output_file_create(floe_output **out, const char *path, floe_error *err) FLOE_WUR;

#endif
