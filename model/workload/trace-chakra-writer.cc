/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// WorkloadTrace -> Chakra execution traces, readable by ASTRA-sim 2 and by
// ChakraTraceImporter (which gets the same trace back).
#include "chakra-et.pb.h"

#include "ns3/log.h"
#include "ns3/trace-chakra.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ChakraTraceWriter");

namespace
{

namespace pb = aifabric::chakra;

/// ASTRA-sim looks pg_name up among its group file's keys; numbered as in its examples.
std::string
PgName(int32_t group)
{
    return std::to_string(group + 1);
}

int64_t
ChakraCommType(WorkloadOpKind kind)
{
    switch (kind)
    {
    case WorkloadOpKind::AllReduce:
        return pb::ALL_REDUCE;
    case WorkloadOpKind::Reduce:
        return pb::REDUCE;
    case WorkloadOpKind::AllGather:
        return pb::ALL_GATHER;
    case WorkloadOpKind::Broadcast:
        return pb::BROADCAST;
    case WorkloadOpKind::AllToAll:
        return pb::ALL_TO_ALL;
    default:
        return pb::REDUCE_SCATTER;
    }
}

template <typename T>
void
AddAttr(pb::Node* n, const std::string& name, T value)
{
    pb::Attribute* a = n->add_attr();
    a->set_name(name);
    if constexpr (std::is_same_v<T, bool>)
    {
        a->set_bool_val(value);
    }
    else if constexpr (std::is_same_v<T, std::string>)
    {
        a->set_string_val(value);
    }
    else if constexpr (std::is_same_v<T, uint64_t>)
    {
        a->set_uint64_val(value);
    }
    else if constexpr (std::is_same_v<T, int32_t>)
    {
        a->set_int32_val(value);
    }
    else
    {
        a->set_int64_val(value);
    }
}

void
AppendRecord(const google::protobuf::MessageLite& m, std::string* out)
{
    auto len = m.ByteSizeLong();
    do
    {
        const auto b = static_cast<uint8_t>(len & 0x7f);
        len >>= 7;
        out->push_back(static_cast<char>(len ? (b | 0x80) : b));
    } while (len);
    m.AppendToString(out);
}

} // namespace

std::vector<std::string>
ChakraTraceWriter::Serialize(const WorkloadTrace& trace)
{
    NS_LOG_FUNCTION(trace.source);
    nlohmann::json groups = nlohmann::json::array();
    for (std::size_t g = 0; g < trace.groups.size(); ++g)
    {
        const auto& group = trace.groups[g];
        groups.push_back({{"pg_name", PgName(static_cast<int32_t>(g))},
                          {"pg_desc", group.name},
                          {"ranks", group.ranks},
                          {"kind", ParallelismKindKey(group.kind)}});
    }
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    pb::Attribute* table = meta.add_attr();
    table->set_name("process_groups");
    try
    {
        table->set_string_val(groups.dump());
    }
    catch (const nlohmann::json::exception&)
    {
        throw WorkloadError(trace.source, 0, "group", "a group name is not UTF-8 text");
    }

    std::vector<std::string> out(trace.numRanks);
    for (uint32_t r = 0; r < trace.numRanks; ++r)
    {
        AppendRecord(meta, &out[r]);
        const auto& ops = trace.ops[r];
        std::unordered_map<uint32_t, uint32_t> lastOnStream;
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOpRef op = ops[i];
            pb::Node n;
            n.set_id(i);
            n.set_name(op.label);
            // The stream predecessor is a control dependency (so that ASTRA-sim keeps the
            // stream's order); the rest are data dependencies.
            auto prev = lastOnStream.find(op.stream);
            const int64_t pred =
                prev == lastOnStream.end() ? int64_t{-1} : static_cast<int64_t>(prev->second);
            lastOnStream[op.stream] = i;
            if (pred >= 0)
            {
                n.add_ctrl_deps(static_cast<uint64_t>(pred));
            }
            for (uint32_t d : op.deps)
            {
                if (static_cast<int64_t>(d) != pred)
                {
                    n.add_data_deps(d);
                }
            }
            AddAttr(&n, "is_cpu_op", false);
            AddAttr(&n, "stream", static_cast<uint64_t>(op.stream));
            switch (op.kind)
            {
            case WorkloadOpKind::Compute:
                n.set_type(pb::COMP_NODE);
                n.set_duration_micros((op.timeNs + 500) / 1000);
                AddAttr(&n, "duration_ns", op.timeNs);
                break;
            case WorkloadOpKind::Send:
            case WorkloadOpKind::Recv: {
                const bool send = op.kind == WorkloadOpKind::Send;
                n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
                AddAttr(&n, "comm_src", static_cast<int32_t>(send ? r : op.from));
                AddAttr(&n, "comm_dst", static_cast<int32_t>(send ? op.to : r));
                AddAttr(&n, "comm_size", static_cast<int64_t>(op.bytes));
                AddAttr(&n, "comm_tag", int32_t{0});
                break;
            }
            case WorkloadOpKind::SendRecv:
                throw WorkloadError(trace.source,
                                    op.line,
                                    "op",
                                    "sendrecv '" + op.label + "' on rank " + std::to_string(r) +
                                        " has no Chakra node type: write a send and a recv");
            case WorkloadOpKind::Load:
            case WorkloadOpKind::Checkpoint:
                n.set_type(op.kind == WorkloadOpKind::Load ? pb::MEM_LOAD_NODE
                                                           : pb::MEM_STORE_NODE);
                AddAttr(&n, "tensor_size", static_cast<uint64_t>(op.bytes));
                AddAttr(&n, "storage", static_cast<uint64_t>(std::max<int16_t>(op.storage, 0)));
                break;
            default:
                n.set_type(pb::COMM_COLL_NODE);
                AddAttr(&n, "comm_type", ChakraCommType(op.kind));
                AddAttr(&n, "comm_size", static_cast<int64_t>(op.bytes));
                AddAttr(&n, "pg_name", PgName(op.group));
                if (op.algorithm != CollectiveAlgorithm::Auto)
                {
                    AddAttr(&n, "algorithm", std::string(CollectiveAlgorithmName(op.algorithm)));
                }
                if (op.root >= 0)
                {
                    AddAttr(&n, "root", static_cast<uint64_t>(op.root));
                }
                break;
            }
            AppendRecord(n, &out[r]);
        }
    }
    return out;
}

std::string
ChakraTraceWriter::CommGroupsJson(const WorkloadTrace& trace)
{
    nlohmann::json j = nlohmann::json::object();
    for (std::size_t g = 0; g < trace.groups.size(); ++g)
    {
        j[PgName(static_cast<int32_t>(g))] = trace.groups[g].ranks;
    }
    return j.dump(1) + "\n";
}

void
ChakraTraceWriter::WriteFiles(const WorkloadTrace& trace, const std::string& prefix)
{
    NS_LOG_FUNCTION(prefix);
    const auto streams = Serialize(trace);
    auto write = [](const std::string& name, const std::string& bytes) {
        std::ofstream f(name, std::ios::binary | std::ios::trunc);
        f << bytes;
        if (!f)
        {
            throw WorkloadError(name, 0, "", "cannot write the file");
        }
    };
    for (uint32_t r = 0; r < streams.size(); ++r)
    {
        write(ChakraFileName(prefix, r), streams[r]);
    }
    write(prefix + ".comm-groups.json", CommGroupsJson(trace));
}

} // namespace ns3
