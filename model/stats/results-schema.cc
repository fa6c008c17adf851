/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "results-schema.h"

#include "ns3/abort.h"

#include <sstream>

namespace ns3
{

namespace
{

constexpr Unit kUnits[] =
    {Unit::NS, Unit::BYTES, Unit::SECONDS, Unit::BIT_PER_S, Unit::GBYTE_PER_S, Unit::PER_S};

bool
EndsWith(const std::string& s, const std::string& end)
{
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

} // namespace

const char*
SqlTypeName(SqlType type)
{
    switch (type)
    {
    case SqlType::INTEGER:
        return "INTEGER";
    case SqlType::REAL:
        return "REAL";
    case SqlType::TEXT:
        return "TEXT";
    }
    return "";
}

const char*
UnitSymbol(Unit unit)
{
    switch (unit)
    {
    case Unit::NONE:
        return "";
    case Unit::NS:
        return "ns";
    case Unit::BYTES:
        return "bytes";
    case Unit::SECONDS:
        return "s";
    case Unit::BIT_PER_S:
        return "bit/s";
    case Unit::GBYTE_PER_S:
        return "GB/s (1e9 bytes/s)";
    case Unit::PER_S:
        return "1/s";
    }
    return "";
}

const char*
UnitSuffix(Unit unit)
{
    switch (unit)
    {
    case Unit::NONE:
        return "";
    case Unit::NS:
        return "_ns";
    case Unit::BYTES:
        return "_bytes";
    case Unit::SECONDS:
        return "_seconds";
    case Unit::BIT_PER_S:
        return "_bit_per_s";
    case Unit::GBYTE_PER_S:
        return "_gbyte_per_s";
    case Unit::PER_S:
        return "_per_s";
    }
    return "";
}

bool
ColumnNameShowsUnit(const std::string& name, Unit unit)
{
    if (unit == Unit::NONE)
    {
        // A unit-less column must not look like it has one.
        for (Unit u : kUnits)
        {
            const std::string suffix = UnitSuffix(u);
            if (EndsWith(name, suffix) || name == suffix.substr(1))
            {
                return false;
            }
        }
        return true;
    }
    const std::string suffix = UnitSuffix(unit);
    return EndsWith(name, suffix) || name == suffix.substr(1);
}

void
CheckColumnUnit(const std::string& table, const ColumnDef& column)
{
    NS_ABORT_MSG_UNLESS(ColumnNameShowsUnit(column.name, column.unit),
                        "results schema: " << table << "." << column.name
                                           << " does not end with its unit's suffix '"
                                           << UnitSuffix(column.unit) << "'");
}

std::string
TableDef::CreateSql() const
{
    std::ostringstream sql;
    sql << "CREATE TABLE " << name << "(run_id INTEGER "
        << (key == RunKey::PRIMARY ? "PRIMARY KEY AUTOINCREMENT" : "NOT NULL");
    for (std::size_t i = 1; i < columns.size(); ++i)
    {
        sql << ", " << columns[i].name << " " << SqlTypeName(columns[i].type);
    }
    sql << ")";
    return sql.str();
}

std::string
TableDef::IndexSql() const
{
    if (indexColumns.empty())
    {
        return "";
    }
    std::ostringstream sql;
    sql << "CREATE INDEX IF NOT EXISTS " << name << "_run ON " << name << "(run_id";
    for (const auto& c : indexColumns)
    {
        sql << ", " << c;
    }
    sql << ")";
    return sql.str();
}

std::string
TableDef::InsertSql() const
{
    std::ostringstream names;
    std::ostringstream values;
    for (const auto& c : columns)
    {
        if (c.written)
        {
            names << (names.tellp() > 0 ? "," : "") << c.name;
            values << (values.tellp() > 0 ? ",?" : "?");
        }
    }
    return "INSERT INTO " + name + "(" + names.str() + ") VALUES (" + values.str() + ")";
}

std::string
TableDef::AddColumnSql(const ColumnDef& column) const
{
    return "ALTER TABLE " + name + " ADD COLUMN " + column.name + " " + SqlTypeName(column.type);
}

// The schema.  Column order is the file's order: append new columns at the end of a table; a
// renamed column keeps its place and lists its old name in FormerlyNamed (bump the version).

template <>
const RecordTable<RunRecord>&
TableOf<RunRecord>()
{
    using R = RunRecord;
    static const auto table = RecordTable<R>("runs", RunKey::PRIMARY)
                                  .Column("label", &R::label)
                                  .Column("scenario", &R::scenario)
                                  .Column("status", &R::status)
                                  .Column("started_at", &R::startedAt)
                                  .Unbound("wall_seconds", SqlType::REAL, Unit::SECONDS)
                                  .Unbound("sim_end_ns", SqlType::INTEGER, Unit::NS)
                                  .Column("seed", &R::seed)
                                  .Column("ns3_version", &R::ns3Version)
                                  .Column("module_version", &R::moduleVersion)
                                  .Column("params", &R::params)
                                  .Unbound("ended_at", SqlType::TEXT)
                                  .Column("host", &R::host)
                                  .Column("pid", &R::pid);
    return table;
}

template <>
const RecordTable<NodeRecord>&
TableOf<NodeRecord>()
{
    using R = NodeRecord;
    constexpr auto nullable = RecordTable<R>::Nulls::NEGATIVE_OR_NAN;
    static const auto table = RecordTable<R>("nodes", RunKey::REFERENCE, {"node_id"})
                                  .Column("node_id", &R::nodeId)
                                  .Column("name", &R::name)
                                  .Column("kind", &R::kind)
                                  .Column("server", &R::server, Unit::NONE, nullable)
                                  .Column("rank", &R::rank, Unit::NONE, nullable);
    return table;
}

template <>
const RecordTable<LinkRecord>&
TableOf<LinkRecord>()
{
    using R = LinkRecord;
    constexpr auto nullable = RecordTable<R>::Nulls::NEGATIVE_OR_NAN;
    static const auto table =
        RecordTable<R>("links", RunKey::REFERENCE, {"link_id"})
            .Column("link_id", &R::linkId)
            .Column("plane", &R::plane)
            .Column("src_node", &R::srcNode)
            .Column("dst_node", &R::dstNode)
            .Column("rate_bit_per_s", &R::rateBitPerS, Unit::BIT_PER_S)
            .FormerlyNamed("rate_bps")
            .Column("tx_bytes", &R::txBytes, Unit::BYTES)
            .Column("tx_packets", &R::txPackets)
            .Column("busy_ns", &R::busyNs, Unit::NS)
            .Column("credit_stall_ns", &R::creditStallNs, Unit::NS)
            .Column("peak_queue_bytes", &R::peakQueueBytes, Unit::BYTES)
            .Column("drops", &R::drops)
            // Version 5; NULL in rows written before.
            .Column("pfc_pause_ns", &R::pfcPauseNs, Unit::NS, nullable)
            .Column("pfc_pause_frames", &R::pfcPauseFrames, Unit::NONE, nullable)
            .Column("ecn_marked_packets", &R::ecnMarkedPackets, Unit::NONE, nullable);
    return table;
}

template <>
const RecordTable<LinkSampleRecord>&
TableOf<LinkSampleRecord>()
{
    using R = LinkSampleRecord;
    static const auto table = RecordTable<R>("link_samples", RunKey::REFERENCE, {"link_id", "t_ns"})
                                  .Column("link_id", &R::linkId)
                                  .Column("t_ns", &R::tNs, Unit::NS)
                                  .Column("tx_bytes", &R::txBytes, Unit::BYTES);
    return table;
}

template <>
const RecordTable<FlowRecord>&
TableOf<FlowRecord>()
{
    using R = FlowRecord;
    constexpr auto nullable = RecordTable<R>::Nulls::NEGATIVE_OR_NAN;
    static const auto table = RecordTable<R>("flows", RunKey::REFERENCE, {"flow_id"})
                                  .Column("flow_id", &R::flowId)
                                  .Column("plane", &R::plane)
                                  .Column("src_node", &R::srcNode, Unit::NONE, nullable)
                                  .Column("dst_node", &R::dstNode, Unit::NONE, nullable)
                                  .Column("src_rank", &R::srcRank, Unit::NONE, nullable)
                                  .Column("dst_rank", &R::dstRank, Unit::NONE, nullable)
                                  .Column("bytes", &R::bytes, Unit::BYTES)
                                  .Column("packets", &R::packets)
                                  .Column("start_ns", &R::startNs, Unit::NS)
                                  .Column("end_ns", &R::endNs, Unit::NS, nullable)
                                  .Column("op_id", &R::opId, Unit::NONE, nullable)
                                  .Column("rx_bytes", &R::rxBytes, Unit::BYTES, nullable)
                                  .Column("lost_packets", &R::lostPackets, Unit::NONE, nullable)
                                  .Column("fidelity", &R::fidelity);
    return table;
}

template <>
const RecordTable<CollectiveRow>&
TableOf<CollectiveRow>()
{
    using R = CollectiveRow;
    static const auto table =
        RecordTable<R>("collectives", RunKey::REFERENCE, {"kind", "bytes"})
            .Column("coll_id", &R::collId)
            .Column("kind", &R::kind)
            .Column("algorithm", &R::algorithm)
            .Column("group_name", &R::groupName)
            .Column("num_ranks", &R::numRanks)
            .Column("bytes", &R::bytes, Unit::BYTES)
            .Column("start_ns", &R::startNs, Unit::NS)
            .Column("end_ns", &R::endNs, Unit::NS)
            .Column("algbw_gbyte_per_s", &R::algbw_gbyte_per_s, Unit::GBYTE_PER_S)
            .FormerlyNamed("algbw_gbps")
            .Column("busbw_gbyte_per_s", &R::busbw_gbyte_per_s, Unit::GBYTE_PER_S)
            .FormerlyNamed("busbw_gbps")
            // Version 4; NULL in rows written before.
            .Column("in_place", &R::inPlace)
            // Version 5; NULL in rows written before.
            .Column("loop_time_ns",
                    &R::loopTimeNs,
                    Unit::NS,
                    RecordTable<R>::Nulls::NEGATIVE_OR_NAN);
    return table;
}

template <>
const RecordTable<OpRecord>&
TableOf<OpRecord>()
{
    using R = OpRecord;
    static const auto table = RecordTable<R>("ops", RunKey::REFERENCE, {"rank", "start_ns"})
                                  .Column("rank", &R::rank)
                                  .Column("op_id", &R::opId)
                                  .Column("label", &R::label)
                                  .Column("kind", &R::kind)
                                  .Column("start_ns", &R::startNs, Unit::NS)
                                  .Column("end_ns", &R::endNs, Unit::NS);
    return table;
}

// Version 2: scripts/bench rows (runs.scenario = 'bench').
template <>
const RecordTable<BenchRecord>&
TableOf<BenchRecord>()
{
    using R = BenchRecord;
    constexpr auto nullable = RecordTable<R>::Nulls::NEGATIVE_OR_NAN;
    static const auto table =
        RecordTable<R>("bench_results", RunKey::REFERENCE, {"benchmark"})
            .Column("benchmark", &R::benchmark)
            .Column("figure", &R::figure)
            .Column("target", &R::target)
            .Column("ratio_to_baseline", &R::ratioToBaseline, Unit::NONE, nullable)
            .Column("pass", &R::pass, Unit::NONE, nullable)
            .Column("wall_seconds", &R::wallSeconds, Unit::SECONDS, nullable)
            .Column("cpu_seconds", &R::cpuSeconds, Unit::SECONDS, nullable)
            .Column("events", &R::events, Unit::NONE, nullable)
            .Column("packet_hops", &R::packetHops, Unit::NONE, nullable)
            .Column("events_per_hop", &R::eventsPerHop, Unit::NONE, nullable)
            .Column("packet_hops_per_s", &R::packetHopsPerS, Unit::PER_S, nullable)
            .Column("peak_rss_bytes", &R::peakRssBytes, Unit::BYTES, nullable)
            .Column("sim_ns", &R::simNs, Unit::NS, nullable);
    return table;
}

const std::vector<const TableDef*>&
ResultsSchema()
{
    static const std::vector<const TableDef*> tables = {&TableOf<RunRecord>().Def(),
                                                        &TableOf<NodeRecord>().Def(),
                                                        &TableOf<LinkRecord>().Def(),
                                                        &TableOf<LinkSampleRecord>().Def(),
                                                        &TableOf<FlowRecord>().Def(),
                                                        &TableOf<CollectiveRow>().Def(),
                                                        &TableOf<OpRecord>().Def(),
                                                        &TableOf<BenchRecord>().Def()};
    return tables;
}

} // namespace ns3
