/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RESULTS_SCHEMA_H
#define AI_FABRIC_RESULTS_SCHEMA_H

#include "results-records.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

// The results database's schema as data (doc/results-database.md).  Each table's columns are
// declared once, in results-schema.cc; CREATE TABLE, the (run_id, ...) index, the INSERT
// statement, the order in which a record's fields are bound and the migration of older files
// are all derived from that declaration.

namespace ns3
{

/// Version written to PRAGMA user_version.  1: first; 2: bench_results; 3: unit-explicit
/// bandwidth and rate columns (ColumnDef::formerNames); 4: collectives.in_place; 5:
/// collectives.loop_time_ns and flows.fidelity.
constexpr int RESULTS_SCHEMA_VERSION = 5;

enum class SqlType
{
    INTEGER,
    REAL,
    TEXT
};

const char* SqlTypeName(SqlType type);

/// Unit of a column.  A column with a unit must end its name with UnitSuffix(unit), so a
/// unit is never told apart by letter case alone (SQLite names are case-insensitive).
enum class Unit
{
    NONE,        //!< ids, names, counts, ratios
    NS,          //!< nanoseconds of simulated time
    BYTES,       //!< bytes
    SECONDS,     //!< wall-clock or CPU seconds
    BIT_PER_S,   //!< bits per second
    GBYTE_PER_S, //!< 1e9 bytes per second (nccl-tests' GB/s)
    PER_S        //!< events per wall-clock second
};

/// How the unit is written in doc/results-database.md, e.g. "GB/s (1e9 bytes/s)".
const char* UnitSymbol(Unit unit);
/// The ending of every column name in \p unit, e.g. "_gbyte_per_s"; "" for NONE.
const char* UnitSuffix(Unit unit);
/// Whether \p column's name carries its unit (a name equal to the suffix without its '_',
/// such as `bytes`, counts).
bool ColumnNameShowsUnit(const std::string& name, Unit unit);

struct ColumnDef
{
    std::string name;
    SqlType type{SqlType::INTEGER};
    Unit unit{Unit::NONE};
    bool written{true};                   //!< bound by the table's INSERT
    std::vector<std::string> formerNames; //!< older versions' names: migration renames them
};

/// How a table's first column, run_id, is defined.
enum class RunKey
{
    PRIMARY,  //!< `runs`: INTEGER PRIMARY KEY AUTOINCREMENT, never reused, not bound
    REFERENCE //!< every other table: the current run, bound first
};

struct TableDef
{
    std::string name;
    RunKey key{RunKey::REFERENCE};
    std::vector<ColumnDef> columns;        //!< run_id first, in file order
    std::vector<std::string> indexColumns; //!< index (run_id, these...); empty: none

    std::string CreateSql() const;
    /// "" when the table has no index.
    std::string IndexSql() const;
    /// INSERT of the written columns, one '?' each, in column order.
    std::string InsertSql() const;
    /// ALTER TABLE ADD COLUMN of \p column (migration of older files).
    std::string AddColumnSql(const ColumnDef& column) const;
};

/**
 * One table: its TableDef and, for each written column, the field of \p Row bound to it.
 * Integer fields are int64_t, reals double, text std::string.  A nullable column stores a
 * negative integer or a NaN real as NULL.
 */
template <typename Row>
class RecordTable
{
  public:
    enum class Nulls
    {
        NEVER,
        NEGATIVE_OR_NAN
    };

    RecordTable(const char* name, RunKey key, std::vector<std::string> indexColumns = {})
    {
        m_def.name = name;
        m_def.key = key;
        m_def.indexColumns = std::move(indexColumns);
        ColumnDef runId;
        runId.name = "run_id";
        runId.written = key == RunKey::REFERENCE;
        m_def.columns.push_back(runId);
    }

    /// A column bound from \p field (of Row or of a base class of Row).
    template <typename T, typename Owner>
    RecordTable& Column(const char* name,
                        T Owner::*field,
                        Unit unit = Unit::NONE,
                        Nulls nulls = Nulls::NEVER)
    {
        static_assert(std::is_base_of_v<Owner, Row>, "field of another record");
        static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
                          std::is_same_v<T, std::string>,
                      "columns bind int64_t, double or std::string");
        T Row::*member = field;
        m_fields.push_back({member, nulls == Nulls::NEGATIVE_OR_NAN});
        constexpr SqlType type = std::is_same_v<T, int64_t>  ? SqlType::INTEGER
                                 : std::is_same_v<T, double> ? SqlType::REAL
                                                             : SqlType::TEXT;
        return Add(name, type, unit, true);
    }

    /// A column no INSERT writes: set later by an UPDATE (e.g. runs.ended_at).
    RecordTable& Unbound(const char* name, SqlType type, Unit unit = Unit::NONE)
    {
        return Add(name, type, unit, false);
    }

    /// The column declared last was called \p oldName in an older schema version.
    RecordTable& FormerlyNamed(const char* oldName)
    {
        m_def.columns.back().formerNames.emplace_back(oldName);
        return *this;
    }

    const TableDef& Def() const
    {
        return m_def;
    }

    /**
     * Binds \p row to \p sink in InsertSql() order: run_id (REFERENCE tables), then each
     * written column.  Sink: Int(int64_t), Real(double), Text(const std::string&), Null().
     */
    template <typename Sink>
    void Bind(const Row& row, int64_t runId, Sink& sink) const
    {
        if (m_def.key == RunKey::REFERENCE)
        {
            sink.Int(runId);
        }
        for (const Field& f : m_fields)
        {
            if (const auto* i = std::get_if<int64_t Row::*>(&f.member))
            {
                const int64_t v = row.**i;
                if (f.nullable && v < 0)
                {
                    sink.Null();
                }
                else
                {
                    sink.Int(v);
                }
            }
            else if (const auto* d = std::get_if<double Row::*>(&f.member))
            {
                const double v = row.**d;
                if (f.nullable && std::isnan(v))
                {
                    sink.Null();
                }
                else
                {
                    sink.Real(v);
                }
            }
            else
            {
                sink.Text(row.*std::get<std::string Row::*>(f.member));
            }
        }
    }

  private:
    struct Field
    {
        std::variant<int64_t Row::*, double Row::*, std::string Row::*> member;
        bool nullable;
    };

    RecordTable& Add(const char* name, SqlType type, Unit unit, bool written);

    TableDef m_def;
    std::vector<Field> m_fields; //!< one per written column after run_id
};

/// Checks the unit in the name (aborts otherwise: a schema bug, found at the first Open).
void CheckColumnUnit(const std::string& table, const ColumnDef& column);

template <typename Row>
RecordTable<Row>&
RecordTable<Row>::Add(const char* name, SqlType type, Unit unit, bool written)
{
    ColumnDef c;
    c.name = name;
    c.type = type;
    c.unit = unit;
    c.written = written;
    CheckColumnUnit(m_def.name, c);
    m_def.columns.push_back(c);
    return *this;
}

/// The `runs` row BeginRun inserts; status, sim_end_ns, wall_seconds, ended_at change at the end.
struct RunRecord
{
    std::string label;
    std::string scenario;
    std::string status;
    std::string startedAt;
    int64_t seed{0};
    std::string ns3Version;
    std::string moduleVersion;
    std::string params;
    std::string host;
    int64_t pid{0};
};

/// A `collectives` row with the bandwidths AddCollective computed.
struct CollectiveRow : CollectiveRecord
{
    double algbw_gbyte_per_s{0};
    double busbw_gbyte_per_s{0};
};

/// The table of each record type (explicit specialisations in results-schema.cc).
template <typename Row>
const RecordTable<Row>& TableOf();
template <>
const RecordTable<RunRecord>& TableOf<RunRecord>();
template <>
const RecordTable<NodeRecord>& TableOf<NodeRecord>();
template <>
const RecordTable<LinkRecord>& TableOf<LinkRecord>();
template <>
const RecordTable<LinkSampleRecord>& TableOf<LinkSampleRecord>();
template <>
const RecordTable<FlowRecord>& TableOf<FlowRecord>();
template <>
const RecordTable<CollectiveRow>& TableOf<CollectiveRow>();
template <>
const RecordTable<OpRecord>& TableOf<OpRecord>();
template <>
const RecordTable<BenchRecord>& TableOf<BenchRecord>();

/// Every table, in creation order.
const std::vector<const TableDef*>& ResultsSchema();

} // namespace ns3

#endif
