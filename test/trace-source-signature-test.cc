/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Every trace source of the link, NVLink and transport models names, as its callback
// signature, a typedef its class declares, and that typedef is the TracedCallback's
// signature: a function of the typedef's type connects to the source.
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-link-watchdog.h"
#include "ns3/credit-switch.h"
#include "ns3/front-end-transport.h"
#include "ns3/gpu-transport.h"
#include "ns3/nvlink-gpu.h"
#include "ns3/nvswitch-core.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>

using namespace ns3;

namespace
{

/// A callback that does nothing with the arguments of the trace signature \p Fn; the
/// argument only names the typedef (a compile-time use of it).
template <typename... Args>
CallbackBase
NoOpFor(void (*)(Args...))
{
    return Callback<void, Args...>([](Args...) {});
}

/// Every signature typedef the three models declare, by the name AddTraceSource uses.
const std::map<std::string, CallbackBase>&
DeclaredSignatures()
{
    static const std::map<std::string, CallbackBase> signatures{
        {"ns3::CreditLinkNetDevice::PacketVcTracedCallback",
         NoOpFor(CreditLinkNetDevice::PacketVcTracedCallback{})},
        {"ns3::CreditLinkNetDevice::VcBytesTracedCallback",
         NoOpFor(CreditLinkNetDevice::VcBytesTracedCallback{})},
        {"ns3::CreditLinkNetDevice::VcTracedCallback",
         NoOpFor(CreditLinkNetDevice::VcTracedCallback{})},
        {"ns3::CreditLinkNetDevice::VcTimeTracedCallback",
         NoOpFor(CreditLinkNetDevice::VcTimeTracedCallback{})},
        {"ns3::CreditLinkNetDevice::VcCreditsTracedCallback",
         NoOpFor(CreditLinkNetDevice::VcCreditsTracedCallback{})},
        {"ns3::CreditSwitch::ForwardTracedCallback",
         NoOpFor(CreditSwitch::ForwardTracedCallback{})},
        {"ns3::CreditSwitch::DropTracedCallback", NoOpFor(CreditSwitch::DropTracedCallback{})},
        {"ns3::CreditLinkWatchdog::ReportTracedCallback",
         NoOpFor(CreditLinkWatchdog::ReportTracedCallback{})},
        {"ns3::NvSwitch::NvlsReduceTracedCallback", NoOpFor(NvSwitch::NvlsReduceTracedCallback{})},
        {"ns3::NvLinkGpu::NvlsChunkTracedCallback", NoOpFor(NvLinkGpu::NvlsChunkTracedCallback{})},
        {"ns3::GpuTransport::MessageTracedCallback",
         NoOpFor(GpuTransport::MessageTracedCallback{})},
        {"ns3::GpuTransport::MessageDoneTracedCallback",
         NoOpFor(GpuTransport::MessageDoneTracedCallback{})},
        {"ns3::FrontEndTransport::TransferTracedCallback",
         NoOpFor(FrontEndTransport::TransferTracedCallback{})},
    };
    return signatures;
}

/// TypeIds of model/link, model/nvlink and model/transport: their class-name prefixes.
bool
IsModelTypeId(const std::string& name)
{
    static const char* const prefixes[] = {
        "ns3::Credit",
        "ns3::RoundRobinArbiter",
        "ns3::StrictPriorityArbiter",
        "ns3::WeightedTable",
        "ns3::NvLink",
        "ns3::NvSwitch",
        "ns3::GpuTransport",
        "ns3::FrontEndTransport",
        "ns3::Transport",
        "ns3::InfinibandTransportPlane",
    };
    for (const char* p : prefixes)
    {
        if (name.rfind(p, 0) == 0)
        {
            return true;
        }
    }
    return false;
}

std::vector<TypeId>
ModelTypeIds()
{
    std::vector<TypeId> tids;
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); ++i)
    {
        const TypeId tid = TypeId::GetRegistered(i);
        if (IsModelTypeId(tid.GetName()))
        {
            tids.push_back(tid);
        }
    }
    return tids;
}

} // namespace

// The filter sees the models' classes, those with trace sources among them.
TEST(TraceSourceSignature, FilterFindsTheModelTypeIds)
{
    std::set<std::string> names;
    for (const TypeId& tid : ModelTypeIds())
    {
        names.insert(tid.GetName());
    }
    for (const char* expected : {"ns3::CreditLinkNetDevice",
                                 "ns3::CreditLinkChannel",
                                 "ns3::CreditSwitch",
                                 "ns3::CreditLinkWatchdog",
                                 "ns3::CreditArbiter",
                                 "ns3::WeightedTableArbiter",
                                 "ns3::NvLinkNetDevice",
                                 "ns3::NvSwitch",
                                 "ns3::NvLinkGpu",
                                 "ns3::GpuTransport",
                                 "ns3::FrontEndTransport",
                                 "ns3::TransportPlane",
                                 "ns3::CreditLinkPlane",
                                 "ns3::NvLinkTransportPlane",
                                 "ns3::InfinibandTransportPlane"})
    {
        EXPECT_EQ(names.count(expected), 1u) << expected;
    }
    EXPECT_NE(names.count("ns3::InfinibandNetDevice"), 1u); // another model's
}

// Each trace source's callback name is one of the declared typedefs, and a function of
// that type connects to it (a mismatch is a fatal error in TraceConnectWithoutContext).
TEST(TraceSourceSignature, EveryTraceSourceNamesADeclaredMatchingTypedef)
{
    const auto& declared = DeclaredSignatures();
    std::set<std::string> used;
    uint32_t sources = 0;
    for (const TypeId& tid : ModelTypeIds())
    {
        for (std::size_t i = 0; i < tid.GetTraceSourceN(); ++i)
        {
            const TypeId::TraceSourceInformation info = tid.GetTraceSource(i);
            ++sources;
            SCOPED_TRACE(tid.GetName() + "::" + info.name);
            ASSERT_FALSE(info.callback.empty());
            const auto it = declared.find(info.callback);
            ASSERT_NE(it, declared.end()) << info.callback << " is not a declared typedef";
            used.insert(info.callback);
            ASSERT_TRUE(tid.HasConstructor());
            ObjectFactory factory;
            factory.SetTypeId(tid);
            Ptr<Object> object = factory.Create();
            EXPECT_TRUE(object->TraceConnectWithoutContext(info.name, it->second));
            object->Dispose();
        }
    }
    // TxBegin, TxEnd, Rx, QueueLength, CreditStallBegin, CreditStallEnd, Backpressure,
    // CreditUpdate; Forward, Drop; Deadlock; NvlsReduce; NvlsChunkReceived; MessageSent,
    // MessageReceived; LoadDone, CheckpointDone.
    EXPECT_EQ(sources, 17u);
    EXPECT_EQ(used.size(), declared.size()); // no typedef left without its source
    Simulator::Destroy();
}
