/*
 * maintain.h — table maintenance (the public floe/maintain.h) inside the
 * library: the steps see the table's internals (commit.h).
 *
 * Layering: maintenance sits above the write and scan layers (compaction
 * reads and writes data files) and below the streaming runtime, which runs
 * it embedded after commits.
 */
#ifndef FLOE_MAINTAIN_MAINTAIN_H
#define FLOE_MAINTAIN_MAINTAIN_H

#include "floe/maintain.h"
#include "table/commit.h"

#endif
