/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_SWITCH_H
#define AI_FABRIC_ROCE_SWITCH_H

#include "ns3/credit-switch.h"
#include "ns3/random-variable-stream.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Ethernet switch core for RoCEv2 on CreditSwitch (input-buffered, the same queues, pull
 * and cut-through): routes by the IPv4 destination over the candidate ports SetRoute gave
 * it (an ECMP group), choosing per packet by EcmpMode:
 *  - Hash: the five-tuple hash (RoCEv2's UDP source port carries the QP's entropy), so
 *    a flow keeps one path and two flows may collide on one uplink;
 *  - Spray: the next candidate in turn for every packet (per-packet spraying; the
 *    receiver takes packets in any order);
 *  - Adaptive: the candidate with the fewest bytes waiting (CreditSwitch's policy,
 *    Spectrum-X style adaptive routing).
 * ECN (RED on the egress queue, as DCQCN's switches mark): a packet whose output has q
 * bytes waiting is marked CE with probability 0 below EcnKminBytes, Pmax (q - Kmin) /
 * (Kmax - Kmin) up to EcnKmaxBytes and 1 above.  Flow control (PFC or lossy) is the
 * ports' LinkFlowControl; traffic classes are the ports' arbiters (StrictPriorityArbiter,
 * WeightedTableArbiter) over priorities = VCs.
 */
class RoceSwitch : public CreditSwitch
{
  public:
    enum EcmpMode
    {
        ECMP_HASH,
        ECMP_SPRAY,
        ECMP_ADAPTIVE,
    };

    static TypeId GetTypeId();
    RoceSwitch();

    uint64_t GetEcnMarked() const;
    /// CE marks on packets leaving by \p port.
    uint64_t GetEcnMarked(uint32_t port) const;
    /// Bytes waiting for \p port now (its egress queue).
    uint64_t GetWaitingBytes(uint32_t port) const;
    /// Uses \p stream for the marking decisions; returns the streams used (1).
    int64_t AssignStreams(int64_t stream);
    /// Checks the attributes; "" or what is wrong, naming the attribute.
    std::string Validate() const;

  protected:
    void DoDispose() override;
    uint32_t ExtractDestination(Ptr<const Packet> packet) const override;
    uint32_t Route(Ptr<const Packet> packet, uint32_t inPort, uint32_t vc) override;
    uint32_t SelectOutputVc(Ptr<const Packet> packet,
                            uint32_t inPort,
                            uint32_t inVc,
                            uint32_t outPort) override;
    bool DefaultCutThrough() const override;
    uint32_t DefaultCutThroughBytes() const override;

  private:
    void OnForward(Ptr<const Packet> packet, uint32_t inPort, uint32_t outPort) override;

    EcmpMode m_ecmp;
    uint32_t m_hashSeed;
    bool m_ecn;
    uint32_t m_kminBytes;
    uint32_t m_kmaxBytes;
    double m_pmax;
    Ptr<UniformRandomVariable> m_random;
    std::vector<uint64_t> m_waitingBytes; //!< per port: routed there, not yet sent
    std::vector<uint64_t> m_marked;       //!< per output port
    std::vector<uint32_t> m_sprayTurn;    //!< per destination
    uint64_t m_markedTotal{0};
};

} // namespace ns3

#endif
