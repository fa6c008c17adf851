/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_DISTRIBUTED_RUN_H
#define AI_FABRIC_DISTRIBUTED_RUN_H

#include "ns3/callback.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * MPI set-up for scenario programs, so that one binary runs alone or under
 * `mpirun -np N` (ns-3 built with --enable-mpi; doc/cluster.md, "Distributed
 * runs").  Without ns-3's mpi module, or when not started by mpirun, every
 * call is the single-process answer (rank 0 of 1).
 */
class DistributedRun
{
  public:
    /**
     * First thing in main(): when started by mpirun and ns-3 has MPI, selects
     * ns-3's distributed simulator (granted time window, or the null-message
     * one when AI_FABRIC_MPI_SYNC=null-message) and enables MPI.
     */
    static void Enable(int* argc, char*** argv);
    /// Finalises MPI (after Simulator::Destroy()); also runs at exit when Enable enabled MPI.
    static void Disable();
    static bool IsEnabled();
    /// This process's MPI rank (= the system id of its nodes); 0 without MPI.
    static uint32_t GetRank();
    /// Processes in the run; 1 without MPI.
    static uint32_t GetSize();
    /// True when \p node is simulated by this process.
    static bool IsLocal(Ptr<const Node> node);
    /**
     * The GPU transport's notifications between processes (doc/cluster.md,
     * "Notifications"): \p packet reaches the receiver set in process \p systemId
     * \p delay from now (at least the lookahead), through ns-3's MpiInterface and
     * a cut credit link's MpiReceiver.  Aborts without MPI.
     */
    static void SendNotification(uint32_t systemId, Time delay, Ptr<Packet> packet);
    static void SetNotificationReceiver(Callback<void, Ptr<Packet>> receiver);
    /// "DB.rankK" when the run has several processes (scripts/merge-db folds them), else DB.
    static std::string GetDatabasePath(const std::string& path);
};

} // namespace ns3

#endif
