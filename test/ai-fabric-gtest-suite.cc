/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * One body of tests, two runners: the GoogleTest cases of this module run
 * under ctest out-of-tree and, through this suite, under ns-3's test.py in-tree.
 */
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <gtest/gtest.h>
#include <sstream>

namespace
{

// Collects GoogleTest failures so that ns-3's report names them.
class FailureCollector : public ::testing::EmptyTestEventListener
{
  public:
    void OnTestPartResult(const ::testing::TestPartResult& result) override
    {
        if (result.failed())
        {
            m_failures << result.file_name() << ":" << result.line_number() << ": "
                       << result.summary() << "\n";
        }
    }

    std::string Text() const
    {
        return m_failures.str();
    }

  private:
    std::ostringstream m_failures;
};

// ctest runs every case in a process of its own; here they share one, so each case ends as a
// process would: no simulator state, no object names, no attribute defaults left for the next.
class Isolation : public ::testing::EmptyTestEventListener
{
  public:
    void OnTestEnd(const ::testing::TestInfo& /* info */) override
    {
        ns3::Simulator::Destroy();
        ns3::Names::Clear();
        ns3::Config::Reset();
    }
};

class GoogleTestCase : public ns3::TestCase
{
  public:
    GoogleTestCase()
        : TestCase("GoogleTest cases of ai-fabric (test/*-test.cc)")
    {
    }

  private:
    void DoRun() override
    {
        int argc = 1;
        char name[] = "ai-fabric";
        char* argv[] = {name, nullptr};
        ::testing::InitGoogleTest(&argc, argv);
        auto* collector = new FailureCollector; // owned by GoogleTest's listener list
        ::testing::UnitTest::GetInstance()->listeners().Append(collector);
        ::testing::UnitTest::GetInstance()->listeners().Append(new Isolation); // GoogleTest owns it
        const int rc = RUN_ALL_TESTS();
        const std::string failures = collector->Text();
        ::testing::UnitTest::GetInstance()->listeners().Release(collector);
        delete collector;
        ns3::Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(rc, 0, "GoogleTest failures:\n" << failures);
    }
};

class AiFabricTestSuite : public ns3::TestSuite
{
  public:
    AiFabricTestSuite()
        : TestSuite("ai-fabric", UNIT)
    {
        AddTestCase(new GoogleTestCase, TestCase::QUICK);
    }
};

AiFabricTestSuite g_aiFabricTestSuite;

} // namespace
