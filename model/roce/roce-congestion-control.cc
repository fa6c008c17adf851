/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "roce-congestion-control.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceCongestionControl");

NS_OBJECT_ENSURE_REGISTERED(RoceCongestionControl);
NS_OBJECT_ENSURE_REGISTERED(RoceNoCongestionControl);
NS_OBJECT_ENSURE_REGISTERED(RoceDcqcn);

TypeId
RoceCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceCongestionControl").SetParent<Object>().SetGroupName("AiFabric");
    return tid;
}

void
RoceCongestionControl::SetLineRate(uint64_t lineRate_bps)
{
    m_lineRate_bps = lineRate_bps;
}

void
RoceCongestionControl::AddQp()
{
    ++m_qps;
}

void
RoceCongestionControl::NotifySent(uint32_t, uint32_t)
{
}

void
RoceCongestionControl::NotifyCnp(uint32_t)
{
}

std::string
RoceCongestionControl::Validate() const
{
    return "";
}

TypeId
RoceNoCongestionControl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceNoCongestionControl")
                            .SetParent<RoceCongestionControl>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<RoceNoCongestionControl>();
    return tid;
}

uint64_t
RoceNoCongestionControl::GetRate_bps(uint32_t)
{
    return m_lineRate_bps;
}

TypeId
RoceDcqcn::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceDcqcn")
            .SetParent<RoceCongestionControl>()
            .SetGroupName("AiFabric")
            .AddConstructor<RoceDcqcn>()
            .AddAttribute("AlphaG",
                          "Gain g of the alpha estimate (NVIDIA ConnectX dce_tcp_g 1019 of "
                          "1024: g = 5/1024; the DCQCN paper: 1/256)",
                          DoubleValue(5.0 / 1024),
                          MakeDoubleAccessor(&RoceDcqcn::m_g),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("AlphaUpdatePeriod",
                          "Alpha decays once per period without CNP (NVIDIA ConnectX "
                          "dce_tcp_rtt: 1 us; the DCQCN paper: K = 55 us)",
                          TimeValue(MicroSeconds(1)),
                          MakeTimeAccessor(&RoceDcqcn::m_alphaPeriod),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateIncreasePeriod",
                          "Timer T of the rate-increase events (DCQCN paper's evaluation: 55 us)",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&RoceDcqcn::m_ratePeriod),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("ByteCounterBytes",
                          "Byte counter BC of the rate-increase events (DCQCN paper: 10 MB)",
                          UintegerValue(10 * 1000 * 1000),
                          MakeUintegerAccessor(&RoceDcqcn::m_byteCounterBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("FastRecoverySteps",
                          "F: increase events of fast recovery (DCQCN paper: 5)",
                          UintegerValue(5),
                          MakeUintegerAccessor(&RoceDcqcn::m_fastRecoverySteps),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("AdditiveIncrease",
                          "R_AI, target increase per additive step (DCQCN paper: 40 Mb/s)",
                          DataRateValue(DataRate("40Mbps")),
                          MakeDataRateAccessor(&RoceDcqcn::m_additive),
                          MakeDataRateChecker())
            .AddAttribute("HyperIncrease",
                          "R_HAI, target increase per hyper step (10 R_AI)",
                          DataRateValue(DataRate("400Mbps")),
                          MakeDataRateAccessor(&RoceDcqcn::m_hyper),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "Lowest rate a CNP leaves (NVIDIA rpg_min_rate: 1 Mb/s)",
                          DataRateValue(DataRate("1Mbps")),
                          MakeDataRateAccessor(&RoceDcqcn::m_minRate),
                          MakeDataRateChecker())
            .AddAttribute("InitialAlpha",
                          "Alpha of a QP's first CNP (NVIDIA initial_alpha_value: 1023/1024)",
                          DoubleValue(1023.0 / 1024),
                          MakeDoubleAccessor(&RoceDcqcn::m_initialAlpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("MinDecreaseFactor",
                          "A CNP leaves at least this share of the rate (NVIDIA "
                          "rpg_min_dec_fac: 50 %)",
                          DoubleValue(0.5),
                          MakeDoubleAccessor(&RoceDcqcn::m_minDecrease),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddTraceSource("Rate",
                            "A QP's current rate changed",
                            MakeTraceSourceAccessor(&RoceDcqcn::m_rateTrace),
                            "ns3::RoceDcqcn::RateTracedCallback");
    return tid;
}

RoceDcqcn::RoceDcqcn()
    : m_g(5.0 / 1024),
      m_alphaPeriod(MicroSeconds(1)),
      m_ratePeriod(MicroSeconds(55)),
      m_byteCounterBytes(10 * 1000 * 1000),
      m_fastRecoverySteps(5),
      m_additive(DataRate("40Mbps")),
      m_hyper(DataRate("400Mbps")),
      m_minRate(DataRate("1Mbps")),
      m_initialAlpha(1023.0 / 1024),
      m_minDecrease(0.5)
{
}

std::string
RoceDcqcn::Validate() const
{
    if (m_g <= 0.0)
    {
        return "DCQCN AlphaG must be in (0, 1], got " + std::to_string(m_g);
    }
    if (m_lineRate_bps != 0 && m_minRate.GetBitRate() > m_lineRate_bps)
    {
        return "DCQCN MinRate " + std::to_string(m_minRate.GetBitRate()) +
               " b/s exceeds the line rate";
    }
    return "";
}

void
RoceDcqcn::AddQp()
{
    RoceCongestionControl::AddQp();
    m_state.emplace_back();
}

double
RoceDcqcn::GetAlpha(uint32_t qp) const
{
    return m_state.at(qp).alpha;
}

uint64_t
RoceDcqcn::GetCnpsReceived() const
{
    return m_cnps;
}

void
RoceDcqcn::Increase(Qp& q)
{
    const uint32_t f = m_fastRecoverySteps;
    if (q.timerEvents >= f && q.byteEvents >= f)
    {
        q.target_bps += static_cast<double>(m_hyper.GetBitRate());
    }
    else if (q.timerEvents >= f || q.byteEvents >= f)
    {
        q.target_bps += static_cast<double>(m_additive.GetBitRate());
    }
    const double line = static_cast<double>(m_lineRate_bps);
    q.target_bps = std::min(q.target_bps, line);
    q.current_bps = std::min((q.target_bps + q.current_bps) / 2, line);
}

void
RoceDcqcn::Advance(Qp& q, Time now)
{
    if (!q.limited)
    {
        return;
    }
    if (now >= q.alphaTick + m_alphaPeriod)
    {
        const int64_t periods = (now - q.alphaTick).GetTimeStep() / m_alphaPeriod.GetTimeStep();
        q.alpha *= std::pow(1.0 - m_g, static_cast<double>(periods));
        q.alphaTick += m_alphaPeriod * periods;
    }
    const double line = static_cast<double>(m_lineRate_bps);
    while (q.limited && now >= q.rateTick + m_ratePeriod)
    {
        q.rateTick += m_ratePeriod;
        q.timerEvents++;
        Increase(q);
        if (q.current_bps >= line * (1 - 1e-9))
        {
            q.limited = false; // back at line rate: the rate limiter is released
        }
    }
}

uint64_t
RoceDcqcn::GetRate_bps(uint32_t qp)
{
    Qp& q = m_state[qp];
    Advance(q, Simulator::Now());
    return q.limited ? static_cast<uint64_t>(q.current_bps) : m_lineRate_bps;
}

void
RoceDcqcn::NotifySent(uint32_t qp, uint32_t bytes)
{
    Qp& q = m_state[qp];
    if (!q.limited)
    {
        return;
    }
    q.bytes += bytes;
    while (q.limited && q.bytes >= m_byteCounterBytes)
    {
        q.bytes -= m_byteCounterBytes;
        q.byteEvents++;
        Increase(q);
        q.limited = q.current_bps < static_cast<double>(m_lineRate_bps) * (1 - 1e-9);
    }
}

void
RoceDcqcn::NotifyCnp(uint32_t qp)
{
    const Time now = Simulator::Now();
    Qp& q = m_state[qp];
    ++m_cnps;
    Advance(q, now);
    if (!q.limited)
    {
        q.limited = true;
        q.current_bps = static_cast<double>(m_lineRate_bps);
        q.alpha = m_initialAlpha;
    }
    q.target_bps = q.current_bps;
    const double cut = std::max(1 - q.alpha / 2, m_minDecrease);
    q.current_bps = std::max(q.current_bps * cut, static_cast<double>(m_minRate.GetBitRate()));
    q.alpha = (1 - m_g) * q.alpha + m_g;
    q.alphaTick = now;
    q.rateTick = now;
    q.timerEvents = 0;
    q.byteEvents = 0;
    q.bytes = 0;
    NS_LOG_LOGIC("QP " << qp << " CNP: rate " << q.current_bps / 1e9 << " Gb/s, target "
                       << q.target_bps / 1e9 << ", alpha " << q.alpha);
    m_rateTrace(qp, static_cast<uint64_t>(q.current_bps));
}

} // namespace ns3
