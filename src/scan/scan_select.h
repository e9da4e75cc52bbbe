/*
 * scan_select.h — reading a planned scan group by group: the plan's data
 * files (each with the delete files that apply to it) and narrowing the
 * scan to a subset before reading it. Loaded deletes are cached across
 * subsets, so a delete file shared by several groups is read once.
 *
 * Thread-safety: as the scan.
 */
#ifndef FLOE_SCAN_SELECT_H
#define FLOE_SCAN_SELECT_H

#include "scan/scan_impl.h"

/* The planned data files (valid while the scan lives; not after select). */
void floe_scan__plan_files(floe_scan *s, scan_file *const **files, size_t *n);
/* Read only files[0..n) (taken from the plan) from the start, in that
 * order; the previous selection's reading state is dropped. */
int floe_scan__select(floe_scan *s, scan_file *const *files, size_t n, floe_error *err) FLOE_WUR;

#endif
