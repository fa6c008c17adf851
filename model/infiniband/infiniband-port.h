/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_PORT_H
#define AI_FABRIC_INFINIBAND_PORT_H

#include "ns3/credit-link-net-device.h"
#include "ns3/infiniband-headers.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * The link level of an InfiniBand port, HCA or switch, on the credit link layer.
 *
 * VC = data VL (LRH.VL); credits of 64 bytes; VL arbitration by a
 * WeightedTableArbiter built from the IBA VLArbitration tables; the link speed
 * from an IBA preset.  Packets carry LRH, BTH (and DETH for UD), payload, pad,
 * ICRC and VCRC, so Packet::GetSize() is the wire packet; BuildPacket frames a
 * payload so.  The address is "LID as MAC" (00:00:00:00:LIDhi:LIDlo).
 *
 * Bursts (MaxBurstPackets > 1): one simulated packet stands for
 * k = ceil(payload / IbMtu) back-to-back RC SEND ONLY packets to the same
 * destination, PSNs psn .. psn + k - 1.  It carries one LRH/BTH/ICRC/VCRC (LRH
 * PktLen of the first real packet); the wire is charged the other k - 1 packets'
 * headers and every packet's OverheadBytes, and SplitBurst gives the k real
 * packets (pcap).  Credits and the link counters see one packet of the simulated size.
 *
 * A switch port needs nothing more: InfinibandSwitch forwards between such
 * ports.  The HCA (per-packet RC SEND, IPoIB, receive, CNPs, congestion
 * control) is InfinibandNetDevice, derived from this class.
 */
class InfinibandPort : public CreditLinkNetDevice
{
  public:
    static constexpr uint32_t NUM_SLS = 16;

    static TypeId GetTypeId();
    InfinibandPort();

    void SetLid(uint16_t lid);
    uint32_t GetDataVls() const;

    // Inline: the HCA reads these for every packet.
    uint16_t GetLid() const
    {
        return m_lid;
    }

    uint32_t GetIbMtu() const
    {
        return m_ibMtu;
    }

    uint32_t GetMaxBurstPackets() const
    {
        return m_maxBurstPackets;
    }

    /// Real packets an RC payload of \p payloadBytes is sent as: ceil(payload / IbMtu), >= 1.
    uint32_t RealPackets(uint32_t payloadBytes) const;
    /// Real packets a packet on the wire (LRH .. VCRC) stands for: 1 unless it is a burst.
    uint32_t RealPacketsOf(uint32_t packetBytes) const;
    /// The real packets of \p packet (LRH .. VCRC): a copy of it, or for a burst its k
    /// SEND ONLY packets with their own PktLen, PSN, pad and CRCs.
    std::vector<Ptr<Packet>> SplitBurst(Ptr<const Packet> packet) const;
    /// This port's SL->VL table (HCA side; switch ports are mapped by the switch).
    void SetSlToVl(const std::vector<uint8_t>& table);
    const std::vector<uint8_t>& GetSlToVl() const;
    /// Empty when the configuration is valid, otherwise what is wrong.
    std::string Validate() const;

    static Mac48Address LidToAddress(uint16_t lid);
    static uint16_t AddressToLid(const Address& address);

    /// Builds LRH|BTH|[payload]|pad|ICRC|VCRC around \p payload (SLID = this port).
    Ptr<Packet> BuildPacket(Ptr<Packet> payload,
                            uint16_t dlid,
                            uint8_t sl,
                            uint8_t opcode,
                            uint32_t destQp,
                            uint32_t psn,
                            bool becn = false) const;

    // NetDevice
    Address GetAddress() const override;
    void SetAddress(Address address) override;

  protected:
    void DoInitialize() override;
    void NotifyConstructionCompleted() override;
    uint32_t ClassifyVc(Ptr<const Packet> packet) const override;
    BurstShape GetBurstShape(Ptr<const Packet> packet) const override;
    uint32_t GetMaxPacketBytes() const override;

    /// The data VL of service level \p sl at this port.
    uint8_t VlForSl(uint8_t sl) const;
    /// MTU as the IPoIB side sets it (NetDevice::SetMtu); true when it is an IBA MTU.
    bool SetIbMtu(uint32_t ibMtu);
    /// True once the attributes are in: setters then apply at once.
    bool IsConstructed() const;

  private:
    void ApplyDataVls();
    void ApplyPreset();
    void ApplyArbitration();
    void SetDataVlsAttr(uint32_t n);
    void SetPresetAttr(std::string preset);
    void SetSlToVlString(std::string text);
    std::string GetSlToVlString() const;

    // attributes
    uint16_t m_lid;
    uint32_t m_dataVls;
    uint32_t m_ibMtu;
    uint32_t m_maxBurstPackets;
    std::string m_preset;
    std::string m_slToVlText;
    std::string m_vlArbHigh;
    std::string m_vlArbLow;
    uint32_t m_vlArbHighLimit;
    bool m_computeCrcs;

    bool m_constructed;
    std::vector<uint8_t> m_slToVl;
    std::string m_configError;
    mutable std::vector<uint8_t> m_crcScratch;
};

} // namespace ns3

#endif
