/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Writes the table scripts/bench printed into a results database: one `runs` row (scenario
 * "bench", params = the machine and options) and one `bench_results` row per benchmark, in
 * one transaction (a complete run or none).  Input, from scripts/bench:
 *   {"label": "...", "params": {...}, "rows": [{"benchmark": "...", "figure": "...",
 *    "target": "...", "ratio_to_baseline": 9.1, "pass": true, "wall_seconds": 1.2, ...}]}
 * Exit 1 with the file and the field named on bad input, before the database is touched.
 */
#include "ns3/command-line.h"
#include "ns3/results-database.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

using namespace ns3;
using nlohmann::json;

namespace
{

// An optional number: absent or null keeps the default (NULL in the table).
template <typename T>
void
Number(const json& row, const char* field, T& out)
{
    auto it = row.find(field);
    if (it == row.end() || it->is_null())
    {
        return;
    }
    if (!it->is_number())
    {
        throw std::runtime_error(std::string("field '") + field + "' is not a number");
    }
    out = it->get<T>();
}

BenchRecord
ParseRow(const json& row)
{
    BenchRecord b;
    if (!row.is_object() || !row.contains("benchmark") || !row["benchmark"].is_string())
    {
        throw std::runtime_error("a row without a 'benchmark' string");
    }
    b.benchmark = row["benchmark"].get<std::string>();
    b.figure = row.value("figure", "");
    b.target = row.value("target", "");
    if (row.contains("pass") && row["pass"].is_boolean())
    {
        b.pass = row["pass"].get<bool>() ? 1 : 0;
    }
    Number(row, "ratio_to_baseline", b.ratioToBaseline);
    Number(row, "wall_seconds", b.wallSeconds);
    Number(row, "cpu_seconds", b.cpuSeconds);
    Number(row, "events", b.events);
    Number(row, "packet_hops", b.packetHops);
    Number(row, "events_per_hop", b.eventsPerHop);
    Number(row, "packet_hops_per_s", b.packetHopsPerS);
    Number(row, "peak_rss_bytes", b.peakRssBytes);
    Number(row, "sim_ns", b.simNs);
    return b;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string dbPath;
    std::string tablePath;
    CommandLine cmd(__FILE__);
    cmd.AddValue("db", "results database to append to", dbPath);
    cmd.AddValue("table", "JSON table written by scripts/bench", tablePath);
    cmd.Parse(argc, argv);
    if (dbPath.empty() || tablePath.empty())
    {
        std::cerr << "bench-to-db: --db=PATH and --table=FILE are required\n";
        return 1;
    }
    std::string label;
    std::string params;
    double wallSeconds = 0;
    std::vector<BenchRecord> rows;
    try
    {
        std::ifstream in(tablePath);
        if (!in)
        {
            throw std::runtime_error("cannot read the file");
        }
        const json table = json::parse(in);
        label = table.value("label", "bench");
        params = table.value("params", json::object()).dump();
        Number(table, "wall_seconds", wallSeconds);
        const json& list = table.at("rows");
        for (std::size_t i = 0; i < list.size(); ++i)
        {
            try
            {
                rows.push_back(ParseRow(list[i]));
            }
            catch (const std::exception& e)
            {
                throw std::runtime_error("rows[" + std::to_string(i) + "]: " + e.what());
            }
        }
    }
    catch (const std::exception& e)
    {
        std::cerr << "bench-to-db: " << tablePath << ": " << e.what() << "\n";
        return 1;
    }
    try
    {
        Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
        db->Open(dbPath);
        const int64_t run = db->BeginRun(label, "bench", 0, params);
        for (const auto& r : rows)
        {
            db->AddBenchResult(r);
        }
        db->EndRun("complete", Seconds(0), wallSeconds);
        db->Close();
        std::cout << "bench-to-db: run " << run << ", " << rows.size() << " rows in " << dbPath
                  << "\n";
    }
    catch (const ResultsDatabaseError& e)
    {
        std::cerr << "bench-to-db: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
