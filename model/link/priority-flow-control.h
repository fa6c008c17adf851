/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_PRIORITY_FLOW_CONTROL_H
#define AI_FABRIC_PRIORITY_FLOW_CONTROL_H

#include "ns3/event-id.h"
#include "ns3/link-flow-control.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * IEEE 802.1Qbb priority flow control as a LinkFlowControl: a VC is a priority.
 *
 * Receive side, per ingress queue (the device's ReceiveBufferBytes of that VC): when the
 * bytes it holds reach XOFF, the device sends a PFC frame pausing that priority for
 * PauseQuanta x 512 bit times, refreshed every RefreshInterval while the queue stays above
 * XON; when it falls to XON a frame with quanta 0 resumes the sender.  The buffer above XOFF
 * is the headroom for what is already on its way (two cable delays of data, a frame in
 * progress at each end, the PAUSE frame itself); a packet that does not fit is dropped and
 * counted (a lossless queue never should: Validate refuses thresholds leaving too little
 * headroom).  Lossless=false is lossy Ethernet: no PAUSE, a packet that does not fit the
 * buffer is dropped.  Transmit side: a paused priority starts no packet until its timer
 * runs out or a quanta-0 frame arrives; a packet already on the wire finishes.
 *
 * Defaults follow Linux mlx5 (drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c,
 * update_xoff_threshold): XOFF = buffer - headroom, XON = XOFF - one maximum frame.
 */
class PriorityFlowControl : public LinkFlowControl
{
  public:
    struct Counters
    {
        uint64_t pauseFramesSent{0};     //!< priorities paused (XOFF and refreshes) by us
        uint64_t resumeFramesSent{0};    //!< priorities resumed (quanta 0) by us
        uint64_t pauseFramesReceived{0}; //!< PFC entries with quanta > 0 from the peer
        uint64_t droppedPackets{0};
        uint64_t droppedBytes{0};
        uint64_t peakOccupancyBytes{0}; //!< of any one ingress queue
    };

    /// PauseSent, PauseReceived: (priority, quanta; 0 = resume).
    typedef void (*PauseTracedCallback)(uint32_t vc, uint32_t quanta);
    /// Drop: (priority, packet bytes).
    typedef void (*DropTracedCallback)(uint32_t vc, uint32_t bytes);

    static TypeId GetTypeId();
    PriorityFlowControl();

    std::string Setup(CreditLinkNetDevice* device) override;
    std::string Validate(const CreditLinkNetDevice* device) const override;
    bool MaySend(uint32_t vc, Time now) const override;
    Time GetResumeTime(uint32_t vc) const override;
    void ReceiveFrame(uint32_t vc, uint32_t value) override;
    bool Admit(uint32_t vc, uint32_t bytes) override;
    void Release(uint32_t vc, uint32_t bytes) override;
    uint32_t TakeFrameValue(uint32_t vc) override;
    uint32_t GetFrameBytes() const override;
    uint64_t GetDroppedPackets() const override;
    uint64_t GetDroppedBytes() const override;
    bool IsLossless() const override;
    uint64_t GetOccupancyBytes(uint32_t vc) const override;
    void DescribeBlocked(std::ostream& os, uint32_t vc) const override;

    const Counters& GetCounters() const;
    /// Time the peer kept this end's priorities paused, summed over priorities.
    Time GetPausedTime() const;
    /// Thresholds in force for \p vc (after Setup).
    uint64_t GetXoffBytes(uint32_t vc) const;
    uint64_t GetXonBytes(uint32_t vc) const;
    /// Headroom Validate requires above XOFF on \p device's ingress queues.
    uint64_t RequiredHeadroomBytes(const CreditLinkNetDevice* device) const;
    /// Duration of \p quanta on \p device's wire (512 bit times each).
    static Time QuantaTime(const CreditLinkNetDevice* device, uint32_t quanta);

  protected:
    void DoDispose() override;
    /// Bytes an ingress queue may hold; default its receive buffer.  A shared-buffer
    /// switch overrides these three (dynamic thresholds).
    virtual uint64_t GetLimitBytes(uint32_t vc) const;
    /// XOFF and XON in force now; default the static ones Setup computed.
    virtual uint64_t GetXoffNow(uint32_t vc) const;
    virtual uint64_t GetXonNow(uint32_t vc) const;
    /// An ingress queue of this port took (\p delta > 0) or freed buffer.
    virtual void NotifyOccupancy(int64_t delta);
    /// While \p vc's queue is paused: its bytes when XOFF fired; else 0.
    uint64_t GetPausedAtBytes(uint32_t vc) const;
    CreditLinkNetDevice* GetDevice() const;

  private:
    struct Ingress
    {
        uint64_t occupied{0};
        uint64_t xoff{0};
        uint64_t xon{0};
        bool paused{false}; //!< we asked the peer to stop
        uint64_t pausedAt{0};
        EventId refresh;
    };

    struct Egress
    {
        Time pausedUntil;
        Time pauseStart;
        bool open{false}; //!< a pause interval not yet added to m_pausedTime
    };

    void Refresh(uint32_t vc);
    void CloseExpired(Egress& e, Time now) const;

    bool m_lossless;
    uint32_t m_quanta;
    Time m_refreshInterval;
    uint32_t m_headroomBytes;
    uint32_t m_xoffBytes;
    uint32_t m_xonOffsetBytes;
    uint32_t m_frameBytes;

    CreditLinkNetDevice* m_device{nullptr};
    Time m_pauseTime;
    std::vector<Ingress> m_in;
    mutable std::vector<Egress> m_out;
    mutable Time m_pausedTime;
    Counters m_counters;

    TracedCallback<uint32_t, uint32_t> m_pauseSentTrace;
    TracedCallback<uint32_t, uint32_t> m_pauseReceivedTrace;
    TracedCallback<uint32_t, uint32_t> m_dropTrace;
};

} // namespace ns3

#endif
