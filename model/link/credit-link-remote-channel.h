/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_REMOTE_CHANNEL_H
#define AI_FABRIC_CREDIT_LINK_REMOTE_CHANNEL_H

#include "ns3/credit-link-channel.h"

#include <array>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * A CreditLinkChannel whose two devices belong to different MPI processes
 * (node system ids), for ns-3's distributed simulator, as
 * PointToPointRemoteChannel is for point-to-point links.  Data frames and
 * flow-control frames go to the peer's process through
 * MpiInterface::SendPacket, addressed by node id and interface index, and
 * arrive at the same instant as on a local channel (last bit sent + Delay, or
 * the head's time + Delay at a cut-through switch, the tail time carried in the
 * frame); the channel Delay is therefore the lookahead and must be > 0.
 *
 * Every process builds the whole topology (ns-3's model: nodes of another
 * system id exist without running anything), so static facts of the peer —
 * its receive buffer (the initial credits), link name and address — are read
 * from the local replica of the peer device; only what changes during the run
 * crosses the process boundary.  HasFramesInFlight() does not see frames
 * travelling to the other process.
 *
 * Compiled only when ns-3 has the mpi module (--enable-mpi).
 */
class CreditLinkRemoteChannel : public CreditLinkChannel
{
  public:
    static TypeId GetTypeId();
    CreditLinkRemoteChannel();

    /// Also registers the device as the MPI receiver of its end when its node is local.
    void Attach(Ptr<CreditLinkNetDevice> device) override;
    void TransmitData(const CreditLinkNetDevice* from,
                      Ptr<Packet> packet,
                      uint32_t vc,
                      Time headTime,
                      Time txTime) override;
    void TransmitCredits(const CreditLinkNetDevice* from,
                         uint32_t vc,
                         uint32_t credits,
                         Time txTime) override;

    /**
     * Control frames (the GPU transport's notifications, doc/cluster.md): \p packet
     * reaches process \p systemId at \p rxTime through the MpiReceiver of any cut
     * link's end in that process, and goes to the receiver set there.  False when
     * no cut link ends in that process.
     */
    static bool SendControl(uint32_t systemId, Time rxTime, Ptr<Packet> packet);
    static void SetControlReceiver(Callback<void, Ptr<Packet>> receiver);

  protected:
    void DoDispose() override;

  private:
    /// \p packet arrives (is handed to the peer) after \p headTime + Delay.
    void SendRemote(const CreditLinkNetDevice* from, Ptr<Packet> packet, Time headTime);
    /// A frame from the other process for the device at end \p end.
    void ReceiveRemote(uint32_t end, Ptr<Packet> packet);

    std::array<Ptr<CreditLinkNetDevice>, 2> m_ends;
    uint32_t m_nEnds;
};

} // namespace ns3

#endif
