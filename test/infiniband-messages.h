/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Messages between InfiniBand HCAs in the tests go through the one message layer,
// GpuTransport, over an InfinibandTransportPlane: rank i is the i-th HCA given.
#ifndef AI_FABRIC_TEST_INFINIBAND_MESSAGES_H
#define AI_FABRIC_TEST_INFINIBAND_MESSAGES_H

#include "ns3/gpu-transport.h"
#include "ns3/infiniband-fabric.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <memory>
#include <vector>

namespace ns3
{

class InfinibandMessages
{
  public:
    struct Received
    {
        uint32_t src;
        uint64_t bytes;
        Time at;
    };

    /// \p finePackets: every packet an IbMtu packet (MinPacketsPerMessage 0), as the
    /// tests' analytical figures count them; false: the transport's adaptive bursts.
    InfinibandMessages(const std::vector<Ptr<InfinibandNetDevice>>& hcas,
                       uint8_t sl = 0,
                       uint32_t qp = 0x4754,
                       bool finePackets = true)
        : plane(CreateObject<InfinibandTransportPlane>()),
          transport(CreateObject<GpuTransport>()),
          m_received(std::make_shared<std::vector<Received>>())
    {
        plane->SetAttribute("ServiceLevel", UintegerValue(sl));
        plane->SetAttribute("Qp", UintegerValue(qp));
        for (uint32_t i = 0; i < hcas.size(); ++i)
        {
            plane->AddRank(i, hcas[i]);
        }
        if (finePackets)
        {
            transport->SetAttribute("MinPacketsPerMessage", UintegerValue(0));
        }
        transport->AddPlane(plane);
    }

    static std::vector<Ptr<InfinibandNetDevice>> Hosts(const InfinibandFabric& f)
    {
        std::vector<Ptr<InfinibandNetDevice>> hcas;
        for (uint32_t h = 0; h < f.hosts.GetN(); ++h)
        {
            hcas.push_back(f.GetHostDevice(h));
        }
        return hcas;
    }

    /// \p bytes from rank \p src to \p dst; the receiver's completion lands in GetReceived.
    void Send(uint32_t src, uint32_t dst, uint64_t bytes)
    {
        std::shared_ptr<std::vector<Received>> received = m_received;
        transport->SendMessage(src,
                               dst,
                               bytes,
                               GpuTransport::DoneCallback(),
                               Callback<void>([received, src, bytes]() {
                                   received->push_back(Received{src, bytes, Simulator::Now()});
                               }));
    }

    /// Completed messages at their receivers, in completion order.
    const std::vector<Received>& GetReceived() const
    {
        return *m_received;
    }

    Ptr<InfinibandTransportPlane> plane;
    Ptr<GpuTransport> transport;

  private:
    std::shared_ptr<std::vector<Received>> m_received;
};

} // namespace ns3

#endif
