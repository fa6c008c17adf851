/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "distributed-run.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <cstdlib>
#include <cstring>

#ifdef NS3_MPI
#include "ns3/credit-link-remote-channel.h"
#include "ns3/mpi-interface.h"
#endif

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DistributedRun");

#ifdef NS3_MPI
namespace
{

/// Open MPI, MPICH / Hydra and PMIx launchers export one of these to their processes.
bool
StartedByMpirun()
{
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    {
        if (std::getenv(var))
        {
            return true;
        }
    }
    return false;
}

} // namespace
#endif

void
DistributedRun::Enable(int* argc, char*** argv)
{
#ifdef NS3_MPI
    if (!StartedByMpirun() || MpiInterface::IsEnabled())
    {
        return;
    }
    const char* sync = std::getenv("AI_FABRIC_MPI_SYNC");
    const bool nullMessage = sync && std::strcmp(sync, "null-message") == 0;
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue(nullMessage ? "ns3::NullMessageSimulatorImpl"
                                              : "ns3::DistributedSimulatorImpl"));
    MpiInterface::Enable(argc, argv);
    // Same results for any number of processes, also 1: same-time events from other
    // processes run in another order (doc/cluster.md, "Same rows").
    Config::SetDefault("ns3::CreditLinkNetDevice::InstantEndDecisions", BooleanValue(true));
    Config::SetDefault("ns3::GpuTransport::InstantEndInjection", BooleanValue(true));
    // Scenarios return from main() on many paths: finalise MPI at exit unless Disable ran.
    std::atexit(&DistributedRun::Disable);
    NS_LOG_INFO("MPI rank " << MpiInterface::GetSystemId() << " of " << MpiInterface::GetSize());
#else
    (void)argc;
    (void)argv;
#endif
}

void
DistributedRun::Disable()
{
#ifdef NS3_MPI
    if (MpiInterface::IsEnabled())
    {
        MpiInterface::Disable();
    }
#endif
}

bool
DistributedRun::IsEnabled()
{
#ifdef NS3_MPI
    return MpiInterface::IsEnabled();
#else
    return false;
#endif
}

uint32_t
DistributedRun::GetRank()
{
#ifdef NS3_MPI
    if (MpiInterface::IsEnabled())
    {
        return MpiInterface::GetSystemId();
    }
#endif
    return 0;
}

uint32_t
DistributedRun::GetSize()
{
#ifdef NS3_MPI
    if (MpiInterface::IsEnabled())
    {
        return MpiInterface::GetSize();
    }
#endif
    return 1;
}

bool
DistributedRun::IsLocal(Ptr<const Node> node)
{
    return node->GetSystemId() == GetRank();
}

void
DistributedRun::SendNotification(uint32_t systemId, Time delay, Ptr<Packet> packet)
{
#ifdef NS3_MPI
    NS_ABORT_MSG_UNLESS(
        CreditLinkRemoteChannel::SendControl(systemId, Simulator::Now() + delay, packet),
        "DistributedRun: no cut InfiniBand link ends in process " << systemId
                                                                  << " to carry notifications");
#else
    NS_ABORT_MSG("DistributedRun: notification for process " << systemId
                                                             << " without ns-3's mpi module");
#endif
}

void
DistributedRun::SetNotificationReceiver(Callback<void, Ptr<Packet>> receiver)
{
#ifdef NS3_MPI
    CreditLinkRemoteChannel::SetControlReceiver(receiver);
#endif
}

std::string
DistributedRun::GetDatabasePath(const std::string& path)
{
    if (path.empty() || GetSize() <= 1)
    {
        return path;
    }
    return path + ".rank" + std::to_string(GetRank());
}

} // namespace ns3
