/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_CONGESTION_CONTROL_H
#define AI_FABRIC_ROCE_CONGESTION_CONTROL_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Congestion control of a RoCE NIC, a strategy as TCP's congestion ops: one object per NIC
 * keeping per-QP state, asked for each QP's sending rate.  The NIC paces a QP's packets
 * to that rate.  Feedback arrives through the Notify hooks: CNPs (DCQCN) here; a
 * window- or delay-based algorithm (HPCC's in-band telemetry, Swift's RTT) would add its
 * own hooks beside them.
 */
class RoceCongestionControl : public Object
{
  public:
    static TypeId GetTypeId();

    /// Line rate of the NIC's port, bits per second (the rate of an unthrottled QP).
    virtual void SetLineRate(uint64_t lineRate_bps);
    /// A new QP; its index is the number of QPs before it.
    virtual void AddQp();
    /// Rate \p qp may send at now, bits per second.
    virtual uint64_t GetRate_bps(uint32_t qp) = 0;
    /// \p qp put \p bytes on the wire.
    virtual void NotifySent(uint32_t qp, uint32_t bytes);
    /// A CNP for \p qp arrived.
    virtual void NotifyCnp(uint32_t qp);
    /// "" or what is wrong with the parameters, naming the attribute.
    virtual std::string Validate() const;

  protected:
    uint64_t m_lineRate_bps{0};
    uint32_t m_qps{0};
};

/// No congestion control: every QP at line rate.
class RoceNoCongestionControl : public RoceCongestionControl
{
  public:
    static TypeId GetTypeId();
    uint64_t GetRate_bps(uint32_t qp) override;
};

/**
 * \ingroup ai-fabric
 * DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015, Fig. 7).  A QP starts at line rate.  On a CNP: target = current, current
 * *= (1 - alpha / 2) (no lower than MinDecreaseFactor x current, nor MinRate), alpha =
 * (1 - g) alpha + g, and the increase counters restart.  Without CNP, alpha = (1 - g)
 * alpha every AlphaUpdatePeriod.  A rate-increase event comes every RateIncreasePeriod
 * (timer T) and every ByteCounterBytes sent (byte counter BC); with both counts below
 * FastRecoverySteps F it is fast recovery (current = (target + current) / 2), with both
 * at least F hyper increase (target += HyperIncrease), otherwise additive increase
 * (target += AdditiveIncrease), then current = (target + current) / 2.  A QP back at line
 * rate is released (no timers).  Timers are evaluated when the NIC asks for a rate, not by
 * events: the result is what periodic timers give at the times the rate matters.
 */
class RoceDcqcn : public RoceCongestionControl
{
  public:
    /// Rate trace: (qp, current rate bits/s).
    typedef void (*RateTracedCallback)(uint32_t qp, uint64_t rate_bps);

    static TypeId GetTypeId();
    RoceDcqcn();

    void AddQp() override;
    uint64_t GetRate_bps(uint32_t qp) override;
    void NotifySent(uint32_t qp, uint32_t bytes) override;
    void NotifyCnp(uint32_t qp) override;
    std::string Validate() const override;

    double GetAlpha(uint32_t qp) const;
    uint64_t GetCnpsReceived() const;

  private:
    struct Qp
    {
        bool limited{false};
        double current_bps{0};
        double target_bps{0};
        double alpha{1.0};
        Time alphaTick;
        Time rateTick;
        uint32_t timerEvents{0};
        uint32_t byteEvents{0};
        uint64_t bytes{0};
    };

    void Advance(Qp& q, Time now);
    void Increase(Qp& q);

    double m_g;
    Time m_alphaPeriod;
    Time m_ratePeriod;
    uint64_t m_byteCounterBytes;
    uint32_t m_fastRecoverySteps;
    DataRate m_additive;
    DataRate m_hyper;
    DataRate m_minRate;
    double m_initialAlpha;
    double m_minDecrease;
    std::vector<Qp> m_state;
    uint64_t m_cnps{0};
    TracedCallback<uint32_t, uint64_t> m_rateTrace;
};

} // namespace ns3

#endif
