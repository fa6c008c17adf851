/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVSWITCH_CORE_H
#define AI_FABRIC_NVSWITCH_CORE_H

// Complete type for the base class's implicit destructor (its Ptr member).
#include "ns3/credit-link-watchdog.h"
#include "ns3/credit-switch.h"
#include "ns3/data-rate.h"
#include "ns3/switch-reduction-engine.h"
#include "ns3/traced-callback.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * NVSwitch on the credit switch core: routes NvLinkHeader packets by destination
 * GPU (the helper programs SetRoute(gpu, {port})), traversal latency is the core's
 * TraversalLatency.  Cut-through by default, routed once the 16-byte NvLinkHeader
 * is in: NVSwitch forwards packets as they stream in, and a simulated packet
 * standing for many real ones must not add their store-and-forward time.
 *
 * NVLS (gen3+, SHARP engines): RegisterNvlsGroup(group, members).  An
 * NVLS_REDUCE packet for (group, chunk) is held out of the forwarding path, still
 * occupying its input buffer (so its upstream credits), until every member's
 * contribution of that chunk has arrived; then each contribution becomes the
 * reduced NVLS_MULTICAST chunk for the member it came from and is forwarded to
 * it.  Its input buffer is released when it leaves, as for any packet, so one
 * chunk costs each member link about its size once in each direction.  The
 * reduced chunk is complete when the last contribution's tail is in.
 *
 * A contribution whose header names one member (multimem.ld_reduce) is reduced for that
 * member only: its own contribution's buffer carries the result back, the others' are
 * released at once.  An NVLS_STORE (multimem.st) is replicated to every member; the
 * copies hold no input buffer, the one back to its sender holds the original's.  Where
 * every member is at the end of its own port's link (a one-tier NVLink domain) the
 * copies are one packet, queued at each member's port, with ALL_MEMBERS as destination
 * (the multicast address): the GPUs only read it.  A member behind another switch gets a
 * copy of its own that names it.
 *
 * Reduction-and-multicast engine: each output towards a member delivers NVLS results
 * (reduced chunks and multicast copies) at most at NvlsEngineRatePerLink times the
 * port's links, and NvlsEngineLatency after their data is in.  Charged per chunk: the
 * rate stretches the chunk's tail (no event), the latency is one event per chunk.
 * Defaults (unlimited, 0) leave the links the only limit.
 */
class NvSwitch : public CreditSwitch
{
  public:
    /// NvlsReduce trace: (group, chunk, payload bytes).
    typedef void (*NvlsReduceTracedCallback)(uint32_t group, uint32_t chunk, uint32_t bytes);

    static TypeId GetTypeId();
    NvSwitch();

    uint32_t GetGeneration() const;
    bool SupportsNvls() const;
    /// NvlsEngineRatePerLink: the engine's payload rate per NVLink link of a member's port.
    DataRate GetNvlsEngineRatePerLink() const;
    Time GetNvlsEngineLatency() const;
    /// Empty, or why (group, members) cannot be registered on this switch.
    std::string CheckNvlsGroup(uint32_t groupId, const std::vector<uint32_t>& members) const;
    /// Aborts with CheckNvlsGroup's message (e.g. NVLS on a gen2 switch).
    void RegisterNvlsGroup(uint32_t groupId, const std::vector<uint32_t>& members);
    uint64_t GetNvlsReducedChunks() const;
    /// Chunks with some but not all contributions held.
    uint32_t GetNvlsPendingChunks() const;

    void ReceiveFromPort(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail) override;
    /// NVLS contributions held until their chunk is complete or in the engine's latency.
    uint64_t GetHeldPackets() const override;
    int64_t GetNetAbsorbedPackets() const override;

  protected:
    void DoDispose() override;
    uint32_t ExtractDestination(Ptr<const Packet> packet) const override;
    bool DefaultCutThrough() const override;
    uint32_t DefaultCutThroughBytes() const override;

  private:
    using Result = SwitchReductionEngine::Result;

    void ReceiveNvls(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail);
    void ReceiveStore(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail);
    /// When the engine towards \p gpu has delivered \p payloadBytes whose data is in at
    /// \p dataTail (dataTail itself when the rate is unlimited).
    Time EngineTail(uint32_t gpu, uint32_t payloadBytes, Time dataTail);
    /// Forwards \p results now, or after NvlsEngineLatency in one event.
    void Emit(std::vector<Result>&& results);
    void EmitNow(std::vector<Result>& results);
    uint32_t NodeIdOf(uint32_t inPort) const;
    /// Whether every port routed to \p gpu is its own link (no switch in between).
    bool ReachesDirectly(uint32_t gpu);

    uint32_t m_generation;
    DataRate m_engineRatePerLink; //!< 0 = unlimited
    Time m_engineLatency;
    std::vector<uint32_t> m_gpuLinks; //!< by GPU id: links of its ports, 0 = not known yet
    std::vector<int8_t> m_gpuDirect;  //!< by GPU id: ReachesDirectly, -1 = not known yet
    int64_t m_absorbed;
    SwitchReductionEngine m_engine;

    TracedCallback<uint32_t, uint32_t, uint32_t> m_nvlsReduceTrace;
};

} // namespace ns3

#endif
