/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Checks shared by the importer tests: a rank's program op by op, group members,
 * compute sums, a fixture's bytes.
 */
#ifndef AI_FABRIC_WORKLOAD_IMPORT_EXPECT_H
#define AI_FABRIC_WORKLOAD_IMPORT_EXPECT_H

#include "ns3/workload-trace.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace ns3
{
namespace importtest
{

using K = WorkloadOpKind;

/// One op as the importer should emit it; value is timeNs for compute, bytes otherwise.
struct ExpectedOp
{
    std::string label;
    WorkloadOpKind kind;
    uint32_t stream;
    uint64_t value;
    std::string group; ///< "" for compute, send and recv
    std::vector<uint32_t> deps;
    int32_t peer = -1; ///< send: destination, recv: source
};

inline void
ExpectProgram(const WorkloadTrace& t, uint32_t rank, const std::vector<ExpectedOp>& expected)
{
    ASSERT_LT(rank, t.ops.size());
    const auto& ops = t.ops[rank];
    ASSERT_EQ(ops.size(), expected.size()) << "ops of rank " << rank;
    for (size_t i = 0; i < expected.size(); ++i)
    {
        const auto& e = expected[i];
        const auto& op = ops[i];
        SCOPED_TRACE("rank " + std::to_string(rank) + " op " + std::to_string(i) + " '" + e.label +
                     "'");
        EXPECT_EQ(op.label, e.label);
        EXPECT_EQ(op.kind, e.kind);
        EXPECT_EQ(op.stream, e.stream);
        if (e.kind == K::Compute)
        {
            EXPECT_EQ(op.timeNs, e.value);
            EXPECT_EQ(op.group, -1);
        }
        else if (e.kind == K::Send || e.kind == K::Recv)
        {
            EXPECT_EQ(op.bytes, e.value);
            EXPECT_EQ(op.group, -1);
            EXPECT_EQ(e.kind == K::Send ? op.to : op.from, e.peer);
            EXPECT_GE(e.kind == K::Send ? op.sendPeerOp : op.recvPeerOp, 0);
        }
        else
        {
            EXPECT_EQ(op.bytes, e.value);
            ASSERT_GE(op.group, 0);
            EXPECT_EQ(t.groups[op.group].name, e.group);
            EXPECT_GE(op.collective, 0);
        }
        EXPECT_EQ(op.deps, e.deps);
    }
}

inline std::vector<uint32_t>
RanksOf(const WorkloadTrace& t, const std::string& group)
{
    const int32_t g = t.FindGroup(group);
    return g < 0 ? std::vector<uint32_t>{} : t.groups[g].ranks;
}

inline uint64_t
SumComputeNs(const WorkloadTrace& t, uint32_t rank)
{
    uint64_t ns = 0;
    for (const auto& op : t.ops[rank])
    {
        ns += op.kind == K::Compute ? op.timeNs : 0;
    }
    return ns;
}

inline std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace importtest
} // namespace ns3

#endif
