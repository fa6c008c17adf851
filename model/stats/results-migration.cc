/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "results-migration.h"

#include "results-schema.h"

#include "ns3/log.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sqlite3.h>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ResultsMigration");

namespace
{

// SQLite compares identifiers case-insensitively; so does the migration.
std::string
Lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::set<std::string>
ExistingColumns(SqliteFile& db, const std::string& table)
{
    std::set<std::string> existing;
    sqlite3_stmt* stmt = db.Prepare("PRAGMA table_info(" + table + ")");
    while (sqlite3_step(stmt) == SQLITE_ROW)
    {
        existing.insert(Lower(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1))));
    }
    sqlite3_finalize(stmt);
    return existing;
}

void
MigrateTable(SqliteFile& db, const TableDef& table)
{
    std::set<std::string> existing = ExistingColumns(db, table.name);
    if (existing.empty())
    {
        db.Exec(table.CreateSql());
        return;
    }
    for (const ColumnDef& column : table.columns)
    {
        if (existing.count(Lower(column.name)))
        {
            continue;
        }
        auto former = std::find_if(
            column.formerNames.begin(),
            column.formerNames.end(),
            [&existing](const std::string& old) { return existing.count(Lower(old)) > 0; });
        if (former != column.formerNames.end())
        {
            // RENAME keeps the column's place and its values, and rewrites indexes, views
            // and triggers that name it.
            NS_LOG_INFO("migrating " << db.GetPath() << ": renaming " << table.name << "."
                                     << *former << " to " << column.name);
            db.Exec("ALTER TABLE " + table.name + " RENAME COLUMN " + *former + " TO " +
                    column.name);
            existing.erase(Lower(*former));
        }
        else
        {
            NS_LOG_INFO("migrating " << db.GetPath() << ": adding " << table.name << "."
                                     << column.name);
            db.Exec(table.AddColumnSql(column));
        }
        existing.insert(Lower(column.name));
    }
}

} // namespace

void
CreateOrMigrateResultsSchema(SqliteFile& db, const std::string& moduleVersion)
{
    NS_LOG_FUNCTION(db.GetPath() << moduleVersion);
    // One write transaction: two processes opening a new file at once cannot
    // both create tables, and an interrupted migration leaves the old schema.
    db.Transaction([&db, &moduleVersion] {
        const int version = db.GetUserVersion();
        if (version > RESULTS_SCHEMA_VERSION)
        {
            std::ostringstream msg;
            msg << "results database '" << db.GetPath() << "' has schema version " << version
                << ", newer than this ai-fabric (" << moduleVersion << ") supports ("
                << RESULTS_SCHEMA_VERSION << "); use a newer ai-fabric or another file";
            throw ResultsDatabaseError(msg.str());
        }
        for (const TableDef* table : ResultsSchema())
        {
            MigrateTable(db, *table);
        }
        for (const TableDef* table : ResultsSchema())
        {
            const std::string index = table->IndexSql();
            if (!index.empty())
            {
                db.Exec(index);
            }
        }
        if (version != RESULTS_SCHEMA_VERSION)
        {
            db.Exec("PRAGMA user_version=" + std::to_string(RESULTS_SCHEMA_VERSION));
        }
    });
}

} // namespace ns3
