/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/instant-end-scheduler.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

class InstantEndSchedulerTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }

    /// Appends \p name and the current time to the log when run.
    Callback<void> Step(const std::string& name)
    {
        return Callback<void>([this, name]() {
            log.push_back(name + "@" + std::to_string(Simulator::Now().GetNanoSeconds()));
        });
    }

    void Add(uint64_t key, const std::string& name)
    {
        InstantEndScheduler::Get().Add(key, Step(name));
    }

    std::vector<std::string> log;
};

} // namespace

// Steps asked for in any event order run in key order, after every event of the instant
// that existed when the first one was asked for: transport steps (StepKey) before device
// decisions (DeviceKey), devices by (node, interface).
TEST_F(InstantEndSchedulerTest, RunsAfterTheInstantsEventsInKeyOrder)
{
    using S = InstantEndScheduler;
    Simulator::Schedule(NanoSeconds(10), [this]() {
        Add(S::DeviceKey(2, 0), "dev2/0");
        Add(S::StepKey(1, 7), "step1.7");
    });
    Simulator::Schedule(NanoSeconds(10), [this]() {
        log.push_back("event@10");
        Add(S::DeviceKey(1, 3), "dev1/3");
        Add(S::StepKey(0, 9), "step0.9");
        Add(S::DeviceKey(1, 1), "dev1/1");
    });
    Simulator::Schedule(NanoSeconds(20), [this]() { Add(S::DeviceKey(0, 0), "dev0/0"); });
    Simulator::Run();
    const std::vector<std::string> expected{"event@10",
                                            "step0.9@10",
                                            "step1.7@10",
                                            "dev1/1@10",
                                            "dev1/3@10",
                                            "dev2/0@10",
                                            "dev0/0@20"};
    EXPECT_EQ(log, expected);
    EXPECT_EQ(InstantEndScheduler::Get().GetNPending(), 0u);
}

// A step's own requests join the same instant-end event: a key below the ones left runs
// next, one above them in its turn; a key already pending keeps its first step.
TEST_F(InstantEndSchedulerTest, StepsAddedWhileRunningJoinTheSameEvent)
{
    using S = InstantEndScheduler;
    Simulator::Schedule(NanoSeconds(5), [this]() {
        Add(S::DeviceKey(3, 0), "dev3/0");
        Add(S::DeviceKey(5, 0), "dev5/0");
        Add(S::DeviceKey(3, 0), "dev3/0-again"); // ignored: dev3/0 is pending
        InstantEndScheduler::Get().Add(S::DeviceKey(1, 0), Callback<void>([this]() {
                                           log.push_back("dev1/0");
                                           Add(S::DeviceKey(2, 0), "dev2/0"); // before 3
                                           Add(S::DeviceKey(9, 0), "dev9/0"); // after 5
                                           Add(S::DeviceKey(1, 0), "dev1/0-rerun");
                                       }));
    });
    Simulator::Schedule(NanoSeconds(6), [this]() { log.push_back("event@6"); });
    Simulator::Run();
    // dev1/0-rerun: the key was free again once its step ran; lowest key left, so next.
    const std::vector<std::string> expected{"dev1/0",
                                            "dev1/0-rerun@5",
                                            "dev2/0@5",
                                            "dev3/0@5",
                                            "dev5/0@5",
                                            "dev9/0@5",
                                            "event@6"};
    EXPECT_EQ(log, expected);
}

// One instant-end event per busy instant, however many steps; none when nothing asked.
TEST_F(InstantEndSchedulerTest, OneEventPerInstant)
{
    Simulator::Schedule(NanoSeconds(1), [this]() {
        for (uint32_t i = 0; i < 100; ++i)
        {
            Add(InstantEndScheduler::DeviceKey(i, 0), "d");
        }
    });
    Simulator::Schedule(NanoSeconds(2), []() {});
    Simulator::Run();
    EXPECT_EQ(log.size(), 100u);
    EXPECT_EQ(Simulator::GetEventCount(), 3u); // two events and one instant-end event
}

// Simulator::Destroy forgets steps of an instant that never ended (a stopped run).
TEST_F(InstantEndSchedulerTest, DestroyForgetsPendingSteps)
{
    Simulator::Schedule(NanoSeconds(1), [this]() {
        Add(InstantEndScheduler::DeviceKey(0, 0), "never");
        Simulator::Stop();
    });
    Simulator::Run();
    EXPECT_EQ(InstantEndScheduler::Get().GetNPending(), 1u);
    Simulator::Destroy();
    EXPECT_EQ(InstantEndScheduler::Get().GetNPending(), 0u);
    Simulator::Schedule(NanoSeconds(1), [this]() { Add(0, "next run"); });
    Simulator::Run();
    EXPECT_EQ(log, std::vector<std::string>{"next run@1"});
}
