/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RESULTS_MIGRATION_H
#define AI_FABRIC_RESULTS_MIGRATION_H

#include "results-sqlite.h"

namespace ns3
{

/**
 * Brings \p db to RESULTS_SCHEMA_VERSION in one write transaction: a new file gets every
 * table; an older one gets its renamed columns renamed in place (ColumnDef::formerNames, so
 * old rows read under the new names and column order is kept), then the missing tables,
 * columns (NULL for old rows) and indexes.  A file of a newer version is refused untouched.
 * \p moduleVersion names this build in that refusal.
 */
void CreateOrMigrateResultsSchema(SqliteFile& db, const std::string& moduleVersion);

} // namespace ns3

#endif
