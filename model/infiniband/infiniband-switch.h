/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_SWITCH_H
#define AI_FABRIC_INFINIBAND_SWITCH_H

#include "ns3/credit-link-watchdog.h"
#include "ns3/credit-switch.h"
#include "ns3/data-rate.h"
#include "ns3/infiniband-sharp-tag.h"
#include "ns3/nstime.h"
#include "ns3/switch-reduction-engine.h"

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * InfiniBand switch core on CreditSwitch: forwards by LRH.DLID through the
 * linear forwarding table programmed from the subnet manager (or, with
 * AdaptiveRouting, over the SM's AR group: least bytes waiting), maps
 * SL -> output VL per (input port, output port), and, with CcEnabled, marks
 * BTH.FECN on packets whose output port has more than CcThresholdBytes waiting
 * (IBA Annex A10).  When it changes LRH.VL or BTH.FECN it recomputes the VCRC;
 * the ICRC does not cover those fields.
 *
 * Forwarding is virtual cut-through by default, routed once the 8-byte LRH (DLID,
 * SL) is in: IBA switches may start a packet on its output before its tail has
 * arrived, and credits cover whole packets, so a packet never stalls half-sent
 * (virtual cut-through, not wormhole).  The port-to-port latencies quoted for
 * switches (vendor figures: ~130-150 ns for NDR) are first bit in to first bit
 * out: a 4 KiB packet alone takes 164 ns to arrive at HDR's 200 Gb/s.
 *
 * Ports are numbered as in IBA from 1; CreditSwitch port index = IB port - 1
 * when ports are added in port order (InfinibandHelper does so).
 *
 * SHARP (SharpEnabled; NVIDIA Quantum-2 class, SHARPv3): the switch is an aggregation
 * node for the groups registered on it (RegisterSharpGroup, member HCA LIDs).  A packet
 * addressed to the switch's own LID with an InfinibandSharpTag is a member's contribution
 * to (group, chunk): held out of the forwarding path, still in its input buffer, until
 * every member's came, then each becomes the reduced chunk for the member it came from
 * (LRH DLID = member, SLID = switch, BTH DestQP = the tag's result QP) and leaves through
 * the switch's engine (SwitchReductionEngine, shared with NvSwitch's NVLS): at most
 * SharpEngineRatePerPort towards each member, SharpEngineLatency after the chunk is in.
 * In a two-level tree (a group registered with a parent) a leaf's complete chunk goes up
 * as one aggregate to the parent's LID (the children's contributions are absorbed), and
 * the parent's result, coming down to the leaf's LID, is multicast to its children.
 */
class InfinibandSwitch : public CreditSwitch
{
  public:
    static TypeId GetTypeId();
    InfinibandSwitch();

    void SetLid(uint16_t lid);
    uint16_t GetLid() const;

    /// Adds \p device as IB port \p ibPort; without this, CreditSwitch index = IB port - 1.
    uint32_t AddIbPort(Ptr<CreditLinkNetDevice> device, uint32_t ibPort);
    /// CreditSwitch port index of IB port \p ibPort.
    uint32_t IndexOfIbPort(uint32_t ibPort) const;

    /// Programs the LFT: \p lft[dlid] = IB port (0 = self, 255 = none), \p ar optional groups.
    void SetForwardingTable(const std::vector<uint8_t>& lft,
                            const std::vector<std::vector<uint8_t>>& arGroups = {});
    /// IB output port for \p dlid from the LFT (255 when none).
    uint8_t GetLftEntry(uint16_t dlid) const;

    /// SL->VL table for packets from \p inIbPort to \p outIbPort (IB port numbers).
    void SetSlToVl(uint32_t inIbPort, uint32_t outIbPort, const std::vector<uint8_t>& table);
    /// Empty if every table maps only to VLs the output port has, else the problem.
    std::string Validate() const;

    uint64_t GetFecnMarked() const;

    bool SupportsSharp() const;
    /// Empty, or why (group, member LIDs) cannot be an aggregation group of this switch.
    std::string CheckSharpGroup(uint32_t groupId, const std::vector<uint32_t>& memberLids) const;
    /// Aborts with CheckSharpGroup's message.  Members: HCA LIDs or child switches' LIDs;
    /// \p parentLid: the switch this one's aggregates go up to (0: this is the root).
    void RegisterSharpGroup(uint32_t groupId,
                            const std::vector<uint32_t>& memberLids,
                            uint16_t parentLid = 0);
    uint64_t GetSharpReducedChunks() const;

    void ReceiveFromPort(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail) override;
    /// SHARP contributions held until their chunk is complete or in the engine's latency.
    uint64_t GetHeldPackets() const override;
    int64_t GetNetAbsorbedPackets() const override;

  protected:
    void DoDispose() override;
    void NotifyConstructionCompleted() override;
    uint32_t ExtractDestination(Ptr<const Packet> packet) const override;
    bool DefaultCutThrough() const override;
    uint32_t DefaultCutThroughBytes() const override;
    uint32_t SelectOutputVc(Ptr<const Packet> packet,
                            uint32_t inPort,
                            uint32_t inVc,
                            uint32_t outPort) override;

  private:
    void SetPortToPortLatency(Time latency);
    Time GetPortToPortLatency() const;
    void SetDefaultSlToVl(std::string text);
    std::string GetDefaultSlToVl() const;
    void OnForward(Ptr<const Packet> packet, uint32_t inPort, uint32_t outPort) override;
    void RewriteVcrc(Ptr<Packet> packet);
    /// A contribution (addressed to this switch, tagged): held, or the chunk reduced.
    void ReceiveSharp(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail);
    /// The parent's result of a chunk, down to every child.
    void ReceiveSharpResult(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail);
    /// \p packet readdressed (LRH DLID, SLID = this switch, BTH DestQP, the tag), CRCs
    /// recomputed when its input port computes them.
    void Readdress(Ptr<Packet> packet,
                   uint32_t inPort,
                   uint16_t dlid,
                   const InfinibandSharpTag& tag) const;
    /// Payload bytes of a SHARP packet of \p size wire bytes.
    static uint32_t SharpPayload(uint32_t size);
    void EmitSharp(std::vector<SwitchReductionEngine::Result>&& results);

    uint16_t m_lid;
    bool m_adaptive;
    Time m_latency;
    bool m_constructed;
    std::string m_defaultSlToVl;
    std::vector<uint8_t> m_defaultTable;
    bool m_ccEnabled;
    uint64_t m_ccThresholdBytes;
    uint32_t m_ccMarkingRate;

    std::vector<uint8_t> m_lft;
    std::vector<uint32_t> m_indexOfIbPort;                          //!< empty: index = IB port - 1
    std::unordered_map<uint64_t, std::array<uint8_t, 16>> m_slToVl; //!< (in << 32 | out)
    std::vector<uint64_t> m_waitingBytes; //!< per CreditSwitch port, bytes routed not yet sent
    std::vector<uint32_t> m_overThresholdCount;
    uint64_t m_fecnMarked;
    std::vector<uint8_t> m_scratch;
    bool m_sharp;
    DataRate m_sharpEngineRatePerPort; //!< 0 = unlimited
    Time m_sharpEngineLatency;
    SwitchReductionEngine m_sharpEngine;
    std::unordered_map<uint32_t, uint16_t> m_sharpParent; //!< group -> parent LID (0: root)
    int64_t m_sharpAbsorbed;
};

} // namespace ns3

#endif
