/*
 * floe/floe.h — everything public.
 */
#ifndef FLOE_FLOE_H
#define FLOE_FLOE_H

#include "floe/arrow.h"
#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/pipeline.h"
#include "floe/maintain.h"
#include "floe/table.h"

#endif
