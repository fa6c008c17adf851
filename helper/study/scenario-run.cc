/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/scenario-run.h"

#include "ns3/cluster-helper.h"
#include "ns3/distributed-run.h"
#include "ns3/global-value.h"
#include "ns3/map-scheduler.h"
#include "ns3/priority-queue-scheduler.h"
#include "ns3/simulator.h"

#include <cstdlib>

namespace ns3
{

namespace
{

// Events of the simulations destroyed so far (AI_FABRIC_REPORT_EVENTS set).
uint64_t s_events = 0;

bool
ReportEvents()
{
    return std::getenv("AI_FABRIC_REPORT_EVENTS") != nullptr;
}

} // namespace

ScenarioRun::ScenarioRun(const std::string& scenario, std::ostream& err)
    : m_scenario(scenario),
      m_err(err),
      m_label(scenario)
{
}

ScenarioRun::~ScenarioRun()
{
    if (m_db)
    {
        try
        {
            m_db->Close();
        }
        catch (const ResultsDatabaseError& e)
        {
            m_err << m_scenario << ": " << e.what() << "\n";
        }
    }
}

void
ScenarioRun::SetDatabase(const std::string& path)
{
    // A distributed run writes one file per process (scripts/merge-db folds them).
    m_path = DistributedRun::GetDatabasePath(path);
}

Ptr<ResultsDatabase>
ScenarioRun::GetDatabase()
{
    if (!m_db && !m_path.empty())
    {
        Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
        db->Open(m_path);
        m_db = db;
    }
    return m_db;
}

void
ScenarioRun::SetRun(const std::string& label, uint64_t seed, const RunParameters& params)
{
    m_label = label;
    m_seed = seed;
    m_params = params;
}

int64_t
ScenarioRun::BeginRun()
{
    Ptr<ResultsDatabase> db = GetDatabase();
    return db ? db->BeginRun(m_label, m_scenario, static_cast<int64_t>(m_seed), m_params.ToJson())
              : -1;
}

void
ScenarioRun::EndRun(bool complete, Time simEnd)
{
    if (m_db && m_db->GetRunId() >= 0)
    {
        m_db->EndRun(complete ? "complete" : "failed", simEnd);
    }
}

int
ScenarioRun::Fail(const InputError& error)
{
    m_err << m_scenario << ": " << error.what() << "\n";
    try
    {
        Ptr<ResultsDatabase> db = GetDatabase();
        if (db)
        {
            RunParameters params = m_params;
            params.Set("error", std::string(error.what()));
            params.Set("error_file", error.GetFile());
            params.Set("error_line", error.GetLine());
            params.Set("error_field", error.GetField());
            if (db->GetRunId() < 0)
            {
                db->BeginRun(m_label, m_scenario, static_cast<int64_t>(m_seed), params.ToJson());
            }
            db->RejectRun(params.ToJson());
        }
    }
    catch (const ResultsDatabaseError& e)
    {
        m_err << m_scenario << ": " << e.what() << "\n";
    }
    return 1;
}

int
ScenarioRun::Main(const std::function<int()>& body)
{
    int status = 1;
    try
    {
        status = body();
    }
    catch (const InputError& e)
    {
        status = Fail(e);
    }
    catch (const ResultsDatabaseError& e)
    {
        m_err << m_scenario << ": " << e.what() << "\n";
        status = 1;
    }
    try
    {
        if (m_db)
        {
            m_db->Close();
        }
    }
    catch (const ResultsDatabaseError& e)
    {
        m_err << m_scenario << ": " << e.what() << "\n";
        status = status ? status : 1;
    }
    Simulator::Destroy();
    if (ReportEvents())
    {
        // scripts/validate-flow's cost figure: events of every simulation the run set up.
        m_err << m_scenario << ": events " << s_events << "\n";
    }
    return status;
}

void
ScenarioRun::SetUpSimulation(ClusterHelper& cluster)
{
    // ns-3's default MapScheduler allocates and rebalances a tree node per event; the
    // binary heap of PriorityQueueScheduler orders events by the same (time, uid) key, so
    // runs are identical, with 8 % fewer instructions on a ring allreduce.  A scheduler
    // chosen through the SchedulerType global (--SchedulerType=...) is kept.  Events the
    // build scheduled move over in order (Simulator::SetScheduler).
    TypeIdValue chosen;
    GlobalValue::GetValueByName("SchedulerType", chosen);
    if (chosen.Get() == MapScheduler::GetTypeId())
    {
        ObjectFactory factory;
        factory.SetTypeId(PriorityQueueScheduler::GetTypeId());
        Simulator::SetScheduler(factory);
    }
    cluster.AssignStreams(0);
    if (ReportEvents())
    {
        // A study destroys its simulator between cases: count each before it goes.
        Simulator::ScheduleDestroy([]() { s_events += Simulator::GetEventCount(); });
    }
}

} // namespace ns3
