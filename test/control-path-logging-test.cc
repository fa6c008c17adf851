/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The link, NVLink and transport models log their control paths: NS_LOG=<component>
// prints their construction and setup (LOG_FUNCTION) and the link's decisions (LOG_LOGIC).
#include "ns3/credit-link-channel.h"
#include "ns3/credit-link-header.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>
#include <iostream>
#include <sstream>
#include <string>

using namespace ns3;

namespace
{

/// std::clog (where NS_LOG writes) into a string while in scope.
class ClogCapture
{
  public:
    ClogCapture()
        : m_old(std::clog.rdbuf(m_text.rdbuf()))
    {
    }

    ~ClogCapture()
    {
        std::clog.rdbuf(m_old);
    }

    std::string Text() const
    {
        return m_text.str();
    }

  private:
    std::ostringstream m_text;
    std::streambuf* m_old;
};

} // namespace

// Creating each model object prints its constructor under its component at LOG_FUNCTION.
TEST(ControlPathLogging, ConstructionLogsUnderEachComponent)
{
    // (component, TypeId created); an abstract base logs through a subclass.
    const std::pair<const char*, const char*> cases[] = {
        {"CreditLinkNetDevice", "ns3::CreditLinkNetDevice"},
        {"CreditLinkChannel", "ns3::CreditLinkChannel"},
        {"CreditSwitch", "ns3::CreditSwitch"},
        {"CreditLinkWatchdog", "ns3::CreditLinkWatchdog"},
        {"CreditArbiter", "ns3::WeightedTableArbiter"},
        {"NvLinkNetDevice", "ns3::NvLinkNetDevice"},
        {"NvSwitch", "ns3::NvSwitch"},
        {"NvLinkGpu", "ns3::NvLinkGpu"},
        {"GpuTransport", "ns3::GpuTransport"},
        {"TransportPlane", "ns3::CreditLinkPlane"},
        {"CreditLinkPlane", "ns3::CreditLinkPlane"},
        {"NvLinkTransportPlane", "ns3::NvLinkTransportPlane"},
        {"InfinibandTransportPlane", "ns3::InfinibandTransportPlane"},
        {"FrontEndTransport", "ns3::FrontEndTransport"},
    };
    for (const auto& [component, typeId] : cases)
    {
        SCOPED_TRACE(component);
        std::string text;
        {
            ClogCapture capture;
            LogComponentEnable(component, LOG_LEVEL_FUNCTION);
            ObjectFactory factory(typeId);
            Ptr<Object> object = factory.Create();
            object->Dispose();
            LogComponentDisable(component, LOG_LEVEL_ALL);
            text = capture.Text();
        }
        EXPECT_NE(text.find(std::string(component) + ":"), std::string::npos) << text;
    }
}

// A packet over a two-host link: the device logs attach and the link coming up with its
// credits (LOG_LOGIC): 65536 B of receive buffer / 64 B credits = 1024 credits.
TEST(ControlPathLogging, LinkUpIsLogged)
{
    Ptr<Node> a = CreateObject<Node>();
    Ptr<Node> b = CreateObject<Node>();
    Ptr<CreditLinkNetDevice> da = CreateObject<CreditLinkNetDevice>();
    Ptr<CreditLinkNetDevice> db = CreateObject<CreditLinkNetDevice>();
    a->AddDevice(da);
    b->AddDevice(db);
    Ptr<CreditLinkChannel> channel = CreateObject<CreditLinkChannel>();
    std::string text;
    {
        ClogCapture capture;
        LogComponentEnable("CreditLinkNetDevice", LOG_LEVEL_LOGIC);
        da->Attach(channel);
        db->Attach(channel);
        Ptr<Packet> p = Create<Packet>(1000);
        p->AddHeader(CreditLinkHeader(1, 0));
        EXPECT_TRUE(da->SendOnVc(p, 0));
        Simulator::Run();
        LogComponentDisable("CreditLinkNetDevice", LOG_LEVEL_ALL);
        text = capture.Text();
    }
    EXPECT_NE(text.find("CreditLinkNetDevice:Attach("), std::string::npos) << text;
    const std::string linkUp = "link up n" + std::to_string(a->GetId()) + "/0-n" +
                               std::to_string(b->GetId()) + "/0: 1 VCs, 1024 credits of 64 B";
    EXPECT_NE(text.find(linkUp), std::string::npos) << text;
    EXPECT_EQ(db->GetCounters().rxPackets, 1u);
    Simulator::Destroy();
}
