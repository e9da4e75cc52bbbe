/*
 * floe/floe.h — everything public: a program that includes this header and
 * links libfloe (pkg-config floe) uses floe's whole API.
 */
#ifndef FLOE_FLOE_H
#define FLOE_FLOE_H

#include "floe/arrow.h"
#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/doctor.h"
#include "floe/dml.h"
#include "floe/files.h"
#include "floe/maintain.h"
#include "floe/parquet.h"
#include "floe/pipeline.h"
#include "floe/plan.h"
#include "floe/scan.h"
#include "floe/sql.h"
#include "floe/table.h"

#endif
