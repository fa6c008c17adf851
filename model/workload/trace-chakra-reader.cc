/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Chakra execution traces -> WorkloadTrace.  Node semantics follow ASTRA-sim 2's workload
// layer (astra-sim/workload/Workload.cc, public): a node runs when its data and control
// dependencies are done; COMP_NODE durations are microseconds (ASTRA-sim multiplies by 1000,
// 0 counts as 1 ns); METADATA_NODE and INVALID_NODE are skipped (they complete at once);
// collectives run on the pg_name communicator, or on every rank without one.
#include "chakra-et.pb.h"

#include "ns3/log.h"
#include "ns3/trace-chakra.h"

#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ChakraTraceImporter");

namespace
{

namespace pb = aifabric::chakra;

/// Streams of ops without our "stream" attribute: one each, from here or above the highest
/// stream the file names.
constexpr uint32_t kOwnStreamBase = 1u << 24;
const char* const kWorldGroup = "world";

struct ChakraOp
{
    uint64_t id = 0;
    std::string name;
    uint32_t record = 0;
    bool skipped = false; ///< METADATA_NODE / INVALID_NODE: done at once
    std::vector<uint64_t> deps;
    WorkloadOp op;
    bool hasStream = false;
    std::string pg; ///< collectives: communicator name ("" = every rank)
    uint64_t tag = 0;
};

struct RankFile
{
    std::string name;
    std::string processGroups; ///< our metadata table, "" when absent
    std::vector<ChakraOp> ops;
    std::unordered_map<uint64_t, uint32_t> byId;
    std::unordered_map<std::string, uint32_t> nameCount;
};

class Reader
{
  public:
    Reader(const RankFile& f, uint32_t record)
        : m_file(f),
          m_record(record)
    {
    }

    [[noreturn]] void Fail(const std::string& field, const std::string& msg) const
    {
        throw WorkloadError(m_file.name,
                            0,
                            field,
                            "record " + std::to_string(m_record) + ": " + msg);
    }

  private:
    const RankFile& m_file;
    uint32_t m_record;
};

/// An attribute's value as an integer, whatever integer type the writer chose (ASTRA-sim
/// reads each attribute with one fixed type; other tools write others).
bool
AttributeInteger(const pb::Attribute& a, int64_t* out, bool* isUnsignedHuge)
{
    *isUnsignedHuge = false;
    switch (a.value_case())
    {
    case pb::Attribute::kInt32Val:
        *out = a.int32_val();
        return true;
    case pb::Attribute::kInt64Val:
        *out = a.int64_val();
        return true;
    case pb::Attribute::kUint32Val:
        *out = a.uint32_val();
        return true;
    case pb::Attribute::kUint64Val:
        *isUnsignedHuge = a.uint64_val() > uint64_t(std::numeric_limits<int64_t>::max());
        *out = static_cast<int64_t>(a.uint64_val());
        return true;
    case pb::Attribute::kSint32Val:
        *out = a.sint32_val();
        return true;
    case pb::Attribute::kSint64Val:
        *out = a.sint64_val();
        return true;
    case pb::Attribute::kFixed32Val:
        *out = a.fixed32_val();
        return true;
    case pb::Attribute::kFixed64Val:
        *isUnsignedHuge = a.fixed64_val() > uint64_t(std::numeric_limits<int64_t>::max());
        *out = static_cast<int64_t>(a.fixed64_val());
        return true;
    case pb::Attribute::kSfixed32Val:
        *out = a.sfixed32_val();
        return true;
    case pb::Attribute::kSfixed64Val:
        *out = a.sfixed64_val();
        return true;
    default:
        return false;
    }
}

uint64_t
Unsigned(const Reader& r, const pb::Attribute& a, uint64_t max)
{
    int64_t v = 0;
    bool huge = false;
    if (!AttributeInteger(a, &v, &huge))
    {
        r.Fail(a.name(), "expected an integer value");
    }
    if (huge || (v < 0) || static_cast<uint64_t>(v) > max)
    {
        r.Fail(a.name(),
               "expected 0 to " + std::to_string(max) + ", got " +
                   (huge ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v)));
    }
    return static_cast<uint64_t>(v);
}

bool
Bool(const Reader& r, const pb::Attribute& a)
{
    if (a.value_case() == pb::Attribute::kBoolVal)
    {
        return a.bool_val();
    }
    int64_t v = 0;
    bool huge = false;
    if (!AttributeInteger(a, &v, &huge) || huge || v < 0 || v > 1)
    {
        r.Fail(a.name(), "expected a bool");
    }
    return v == 1;
}

std::string
String(const Reader& r, const pb::Attribute& a)
{
    if (a.value_case() == pb::Attribute::kStringVal)
    {
        return a.string_val();
    }
    if (a.value_case() == pb::Attribute::kBytesVal)
    {
        return a.bytes_val();
    }
    r.Fail(a.name(), "expected a string");
}

bool
IsUtf8(const std::string& s)
{
    try
    {
        (void)nlohmann::json(s).dump();
        return true;
    }
    catch (const nlohmann::json::exception&)
    {
        return false;
    }
}

bool
CollectiveKindFromChakra(uint64_t type, WorkloadOpKind* kind)
{
    switch (type)
    {
    case pb::ALL_REDUCE:
    case pb::BARRIER: // NCCL has no barrier: PyTorch's is an allreduce of its comm_size
        *kind = WorkloadOpKind::AllReduce;
        return true;
    case pb::REDUCE:
        *kind = WorkloadOpKind::Reduce;
        return true;
    case pb::ALL_GATHER:
        *kind = WorkloadOpKind::AllGather;
        return true;
    case pb::BROADCAST:
        *kind = WorkloadOpKind::Broadcast;
        return true;
    case pb::ALL_TO_ALL:
        *kind = WorkloadOpKind::AllToAll;
        return true;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
        *kind = WorkloadOpKind::ReduceScatter;
        return true;
    default:
        return false;
    }
}

/// Decodes one node into \p c (kind, sizes, peers; labels and deps come later).
void
DecodeNode(const Reader& r, const pb::Node& n, uint32_t rank, uint32_t numRanks, ChakraOp* c)
{
    c->id = n.id();
    c->name = n.name();
    c->deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
    c->deps.insert(c->deps.end(), n.data_deps().begin(), n.data_deps().end());
    WorkloadOp& op = c->op;
    bool haveType = false;
    uint64_t commType = 0;
    bool haveSize = false;
    uint64_t size = 0;
    bool haveTensor = false;
    uint64_t tensorSize = 0;
    int64_t src = -1;
    int64_t dst = -1;
    bool haveDurationNs = false;
    uint64_t durationNs = 0;
    uint64_t runtimeUs = 0;
    bool involvesAll = true;
    for (const auto& a : n.attr())
    {
        const std::string& k = a.name();
        if (k == "comm_type")
        {
            commType = Unsigned(r, a, 1000);
            haveType = true;
        }
        else if (k == "comm_size")
        {
            size = Unsigned(r, a, std::numeric_limits<int64_t>::max());
            haveSize = true;
        }
        else if (k == "tensor_size")
        {
            tensorSize = Unsigned(r, a, std::numeric_limits<int64_t>::max());
            haveTensor = true;
        }
        else if (k == "comm_src")
        {
            src = static_cast<int64_t>(Unsigned(r, a, numRanks - 1));
        }
        else if (k == "comm_dst")
        {
            dst = static_cast<int64_t>(Unsigned(r, a, numRanks - 1));
        }
        else if (k == "comm_tag")
        {
            c->tag = Unsigned(r, a, std::numeric_limits<int64_t>::max());
        }
        else if (k == "pg_name")
        {
            c->pg = String(r, a);
            if (!IsUtf8(c->pg))
            {
                r.Fail(k, "not UTF-8 text (protobuf's string type, which ASTRA-sim reads)");
            }
        }
        else if (k == "involved_dim")
        {
            if (a.value_case() == pb::Attribute::kBoolList)
            {
                for (bool b : a.bool_list().values())
                {
                    involvesAll = involvesAll && b;
                }
            }
            else
            {
                involvesAll = Bool(r, a);
            }
        }
        else if (k == "is_cpu_op")
        {
            Bool(r, a); // checked; the replay has no CPU apart from the GPU (doc/workload.md)
        }
        else if (k == "runtime")
        {
            runtimeUs = Unsigned(r, a, std::numeric_limits<uint64_t>::max() / 1000);
        }
        else if (k == "duration_ns")
        {
            durationNs = Unsigned(r, a, std::numeric_limits<int64_t>::max());
            haveDurationNs = true;
        }
        else if (k == "stream")
        {
            op.stream = static_cast<uint32_t>(Unsigned(r, a, std::numeric_limits<uint32_t>::max()));
            c->hasStream = true;
        }
        else if (k == "algorithm")
        {
            if (!ParseCollectiveAlgorithm(String(r, a), &op.algorithm))
            {
                r.Fail(k, "expected one of " + CollectiveAlgorithmNames());
            }
        }
        else if (k == "root")
        {
            op.root = static_cast<int32_t>(Unsigned(r, a, numRanks - 1));
        }
        else if (k == "storage")
        {
            op.storage = static_cast<int16_t>(Unsigned(r, a, 32767));
        }
    }
    switch (n.type())
    {
    case pb::COMP_NODE: {
        op.kind = WorkloadOpKind::Compute;
        if (haveDurationNs)
        {
            op.timeNs = durationNs;
        }
        else
        {
            const uint64_t us = n.duration_micros() ? n.duration_micros() : runtimeUs;
            if (us > std::numeric_limits<uint64_t>::max() / 1000)
            {
                r.Fail("duration_micros", "overflows 64-bit nanoseconds");
            }
            op.timeNs = us ? us * 1000 : 1; // ASTRA-sim: a node of no duration takes 1 ns
        }
        return;
    }
    case pb::COMM_COLL_NODE: {
        if (!haveType)
        {
            r.Fail("comm_type", "a COMM_COLL_NODE needs comm_type");
        }
        if (!CollectiveKindFromChakra(commType, &op.kind))
        {
            r.Fail("comm_type",
                   "collective type " + std::to_string(commType) +
                       (commType == pb::GATHER || commType == pb::SCATTER
                            ? " (GATHER/SCATTER) has no NCCL collective here"
                            : " is not a Chakra CollectiveCommType"));
        }
        if (!haveSize)
        {
            r.Fail("comm_size", "a COMM_COLL_NODE needs comm_size");
        }
        if (c->pg.empty() && !involvesAll)
        {
            r.Fail("involved_dim",
                   "a subset of ASTRA-sim's topology dimensions has no meaning without its "
                   "network file: name the communicator with pg_name instead");
        }
        if (op.root >= 0 && op.kind != WorkloadOpKind::Broadcast &&
            op.kind != WorkloadOpKind::Reduce)
        {
            r.Fail("root", "only broadcast and reduce have a root");
        }
        op.bytes = size;
        return;
    }
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE: {
        const bool send = n.type() == pb::COMM_SEND_NODE;
        const char* peerField = send ? "comm_dst" : "comm_src";
        const int64_t peer = send ? dst : src;
        if (peer < 0)
        {
            r.Fail(peerField,
                   std::string("a ") + (send ? "COMM_SEND_NODE" : "COMM_RECV_NODE") + " needs " +
                       peerField);
        }
        if (peer == static_cast<int64_t>(rank))
        {
            r.Fail(peerField, "rank " + std::to_string(rank) + " cannot message itself");
        }
        if (!haveSize)
        {
            r.Fail("comm_size", "a point-to-point node needs comm_size");
        }
        op.kind = send ? WorkloadOpKind::Send : WorkloadOpKind::Recv;
        (send ? op.to : op.from) = static_cast<int32_t>(peer);
        op.bytes = size;
        return;
    }
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE: {
        if (!haveTensor)
        {
            r.Fail("tensor_size", "a memory node needs tensor_size");
        }
        op.kind = n.type() == pb::MEM_LOAD_NODE ? WorkloadOpKind::Load : WorkloadOpKind::Checkpoint;
        op.bytes = tensorSize;
        if (op.storage < 0)
        {
            op.storage = 0;
        }
        return;
    }
    case pb::METADATA_NODE:
    case pb::INVALID_NODE:
        c->skipped = true;
        return;
    default:
        r.Fail("type", "unknown node type " + std::to_string(static_cast<int>(n.type())));
    }
}

/// Splits a length-prefixed stream into records (varint32 length, then the message).
std::vector<std::pair<const char*, uint32_t>>
SplitRecords(const std::string& bytes, const RankFile& f)
{
    std::vector<std::pair<const char*, uint32_t>> records;
    size_t pos = 0;
    while (pos < bytes.size())
    {
        const Reader r(f, static_cast<uint32_t>(records.size()));
        uint64_t len = 0;
        int shift = 0;
        while (true)
        {
            if (pos >= bytes.size())
            {
                r.Fail("length", "the file ends inside a length prefix");
            }
            const auto b = static_cast<uint8_t>(bytes[pos++]);
            len |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
            {
                break;
            }
            shift += 7;
            if (shift >= 35)
            {
                r.Fail("length", "length prefix longer than 5 bytes (not a Chakra stream?)");
            }
        }
        if (len > bytes.size() - pos)
        {
            r.Fail("length",
                   "the record says " + std::to_string(len) + " bytes but only " +
                       std::to_string(bytes.size() - pos) + " remain");
        }
        records.emplace_back(bytes.data() + pos, static_cast<uint32_t>(len));
        pos += len;
    }
    return records;
}

void
ParseRank(const std::string& bytes, uint32_t rank, uint32_t numRanks, RankFile* f, uint64_t* total)
{
    const auto records = SplitRecords(bytes, *f);
    if (records.empty())
    {
        Reader(*f, 0).Fail("", "empty file: a Chakra trace starts with a GlobalMetadata record");
    }
    pb::GlobalMetadata meta;
    if (!meta.ParseFromArray(records[0].first, static_cast<int>(records[0].second)))
    {
        Reader(*f, 0).Fail("", "not a GlobalMetadata message");
    }
    for (const auto& a : meta.attr())
    {
        if (a.name() == "process_groups")
        {
            f->processGroups = String(Reader(*f, 0), a);
        }
    }
    f->ops.reserve(records.size() - 1);
    for (uint32_t i = 1; i < records.size(); ++i)
    {
        const Reader r(*f, i);
        if (++*total > WorkloadTraceBuilder::GetMaxOps())
        {
            r.Fail("", "more than " + std::to_string(WorkloadTraceBuilder::GetMaxOps()) + " nodes");
        }
        pb::Node n;
        if (!n.ParseFromArray(records[i].first, static_cast<int>(records[i].second)))
        {
            r.Fail("", "not a Node message");
        }
        ChakraOp c;
        c.record = i;
        c.op.line = i;
        DecodeNode(r, n, rank, numRanks, &c);
        if (!f->byId.emplace(c.id, static_cast<uint32_t>(f->ops.size())).second)
        {
            r.Fail("id",
                   "node id " + std::to_string(c.id) + " also at record " +
                       std::to_string(f->ops[f->byId[c.id]].record));
        }
        ++f->nameCount[c.name];
        f->ops.push_back(std::move(c));
    }
}

struct GroupTable
{
    std::vector<std::string> order; ///< pg names in group index order
    std::map<std::string, std::vector<uint32_t>> ranks;
    std::map<std::string, std::string> displayName;
    std::map<std::string, ParallelismKind> kind;
};

void
ReadGroupJson(const std::string& text,
              const std::string& file,
              const std::string& field,
              bool ours,
              uint32_t numRanks,
              GroupTable* t)
{
    auto fail = [&](const std::string& msg) { throw WorkloadError(file, 0, field, msg); };
    nlohmann::json j;
    try
    {
        j = nlohmann::json::parse(text);
    }
    catch (const nlohmann::json::exception& e)
    {
        fail(std::string("not JSON: ") + e.what());
    }
    auto readRanks = [&](const nlohmann::json& list, const std::string& pg) {
        if (!list.is_array() || list.empty())
        {
            fail("group '" + pg + "': expected a non-empty list of ranks");
        }
        std::vector<uint32_t> ranks;
        for (const auto& v : list)
        {
            if (!v.is_number_unsigned() || v.get<uint64_t>() >= numRanks)
            {
                fail("group '" + pg + "': ranks are 0 to " + std::to_string(numRanks - 1) +
                     ", got " + v.dump());
            }
            ranks.push_back(v.get<uint32_t>());
        }
        if (t->ranks.count(pg))
        {
            fail("group '" + pg + "' given twice");
        }
        t->order.push_back(pg);
        t->ranks[pg] = ranks;
    };
    if (!ours)
    {
        if (!j.is_object())
        {
            fail("expected an object {\"pg_name\": [ranks]}");
        }
        for (const auto& [pg, list] : j.items())
        {
            readRanks(list, pg);
        }
        return;
    }
    if (!j.is_array())
    {
        fail("expected a list of {pg_name, pg_desc, ranks, kind}");
    }
    for (const auto& g : j)
    {
        if (!g.is_object() || !g.contains("pg_name") || !g["pg_name"].is_string() ||
            !g.contains("ranks"))
        {
            fail("each entry needs pg_name (a string) and ranks");
        }
        const std::string pg = g["pg_name"].get<std::string>();
        readRanks(g["ranks"], pg);
        if (g.contains("pg_desc") && g["pg_desc"].is_string())
        {
            t->displayName[pg] = g["pg_desc"].get<std::string>();
        }
        ParallelismKind kind;
        if (g.contains("kind") && g["kind"].is_string() &&
            ParseParallelismKind(g["kind"].get<std::string>(), &kind))
        {
            t->kind[pg] = kind;
        }
    }
}

/// Whether every list of ops (rank, indices into that rank's ops) carries names unique in
/// their files and the same set of names: then names match calls, as in the native format;
/// otherwise the position does.
bool
SameUniqueNames(const std::vector<std::pair<uint32_t, const std::vector<uint32_t>*>>& lists,
                std::vector<RankFile>& files)
{
    std::set<std::string> firstNames;
    for (std::size_t k = 0; k < lists.size(); ++k)
    {
        RankFile& f = files[lists[k].first];
        std::set<std::string> names;
        for (uint32_t i : *lists[k].second)
        {
            const std::string& name = f.ops[i].name;
            if (name.empty() || f.nameCount[name] != 1)
            {
                return false;
            }
            names.insert(name);
        }
        if (k == 0)
        {
            firstNames = std::move(names);
        }
        else if (names != firstNames)
        {
            return false;
        }
    }
    return true;
}

std::string
P2pLabel(uint32_t src, uint32_t dst, uint64_t tag, size_t k)
{
    return "p2p." + std::to_string(src) + "." + std::to_string(dst) + "." + std::to_string(tag) +
           "." + std::to_string(k);
}

} // namespace

std::string
ChakraFileName(const std::string& prefix, uint32_t rank)
{
    return prefix + "." + std::to_string(rank) + ".et";
}

WorkloadTrace
ChakraTraceImporter::ImportFiles(const std::string& prefix, const std::string& groupsFile)
{
    NS_LOG_FUNCTION(prefix << groupsFile);
    std::vector<std::string> streams;
    std::vector<std::string> names;
    while (true)
    {
        const std::string name = ChakraFileName(prefix, static_cast<uint32_t>(streams.size()));
        std::ifstream probe(name, std::ios::binary);
        if (!probe)
        {
            break;
        }
        if (streams.size() >= WorkloadTraceBuilder::GetMaxRanks())
        {
            throw WorkloadError(name,
                                0,
                                "ranks",
                                "more than " + std::to_string(WorkloadTraceBuilder::GetMaxRanks()) +
                                    " rank files");
        }
        streams.push_back(ReadWorkloadFile(name));
        names.push_back(name);
    }
    if (streams.empty())
    {
        throw WorkloadError(ChakraFileName(prefix, 0),
                            0,
                            "",
                            "cannot open the first rank's file (--trace=PREFIX reads PREFIX.0.et, "
                            "PREFIX.1.et, ...)");
    }
    return ImportStreams(streams,
                         names,
                         prefix,
                         groupsFile.empty() ? std::string() : ReadWorkloadFile(groupsFile));
}

WorkloadTrace
ChakraTraceImporter::ImportStreams(const std::vector<std::string>& streams,
                                   const std::vector<std::string>& names,
                                   const std::string& source,
                                   const std::string& groupsJson)
{
    NS_LOG_FUNCTION(source << streams.size());
    const auto numRanks = static_cast<uint32_t>(streams.size());
    WorkloadTraceBuilder b(source);
    b.SetNumRanks(numRanks, 0);
    std::vector<RankFile> files(numRanks);
    uint64_t total = 0;
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        files[r].name = r < names.size() ? names[r] : ChakraFileName(source, r);
        ParseRank(streams[r], r, numRanks, &files[r], &total);
    }

    // Communicators: our table in the metadata, else ASTRA-sim's group file, else the ranks
    // that use each pg_name.  Ops without pg_name run on every rank.
    GroupTable groups;
    if (!files[0].processGroups.empty())
    {
        for (uint32_t r = 1; r < numRanks; ++r)
        {
            if (files[r].processGroups != files[0].processGroups)
            {
                throw WorkloadError(files[r].name,
                                    0,
                                    "process_groups",
                                    "record 0: differs from " + files[0].name + "'s");
            }
        }
        ReadGroupJson(files[0].processGroups,
                      files[0].name,
                      "process_groups",
                      true,
                      numRanks,
                      &groups);
    }
    else if (!groupsJson.empty())
    {
        ReadGroupJson(groupsJson, source + " groups", "", false, numRanks, &groups);
    }
    const bool inferGroups = groups.order.empty();
    // per group: per rank, the collectives in file order
    std::map<std::string, std::vector<std::vector<uint32_t>>> collsOf;
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        for (uint32_t i = 0; i < files[r].ops.size(); ++i)
        {
            auto& c = files[r].ops[i];
            if (c.skipped || !IsCollective(c.op.kind))
            {
                continue;
            }
            const std::string pg = c.pg.empty() ? kWorldGroup : c.pg;
            if (!groups.ranks.count(pg))
            {
                if (!inferGroups && !c.pg.empty())
                {
                    Reader(files[r], c.record)
                        .Fail("pg_name", "communicator '" + pg + "' is not in the group table");
                }
                groups.order.push_back(pg);
                if (c.pg.empty())
                {
                    for (uint32_t k = 0; k < numRanks; ++k)
                    {
                        groups.ranks[pg].push_back(k);
                    }
                }
            }
            if (inferGroups && !c.pg.empty())
            {
                auto& members = groups.ranks[pg];
                if (members.empty() || members.back() != r)
                {
                    members.push_back(r);
                }
            }
            auto& per = collsOf[pg];
            per.resize(numRanks);
            per[r].push_back(i);
        }
    }
    std::map<std::string, int32_t> groupIndex;
    for (const auto& pg : groups.order)
    {
        const auto name = groups.displayName.count(pg) ? groups.displayName[pg] : pg;
        const int32_t g = groups.kind.count(pg)
                              ? b.AddGroup(name, groups.ranks[pg], 0, groups.kind[pg])
                              : b.AddGroup(name, groups.ranks[pg], 0);
        groupIndex[pg] = g;
    }

    // Collective labels: the k-th collective of a communicator on each member is one call
    // (NCCL's rule).  Its node name when every member uses the same name, once per file.
    std::vector<std::vector<std::string>> labels(numRanks);
    std::vector<std::vector<bool>> fixed(numRanks);
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        labels[r].resize(files[r].ops.size());
        fixed[r].assign(files[r].ops.size(), false);
    }
    auto unique = [&](uint32_t r, const std::string& name) {
        return !name.empty() && files[r].nameCount[name] == 1;
    };
    for (const auto& [pg, per] : collsOf)
    {
        const auto& members = b.GetGroup(groupIndex[pg]).ranks;
        const uint32_t first = members.front();
        for (uint32_t r = 0; r < numRanks; ++r)
        {
            const bool member = std::binary_search(members.begin(), members.end(), r);
            if (!per[r].empty() && !member)
            {
                Reader(files[r], files[r].ops[per[r][0]].record)
                    .Fail("pg_name",
                          "rank " + std::to_string(r) + " is not a member of communicator '" + pg +
                              "'");
            }
            if (member && per[r].size() != per[first].size())
            {
                throw WorkloadError(files[r].name,
                                    0,
                                    "pg_name",
                                    "communicator '" + pg + "': " + std::to_string(per[r].size()) +
                                        " collectives here but " +
                                        std::to_string(per[first].size()) + " in " +
                                        files[first].name + " (every member calls each one)");
            }
        }
        std::vector<std::pair<uint32_t, const std::vector<uint32_t>*>> lists;
        for (uint32_t r : members)
        {
            lists.emplace_back(r, &per[r]);
        }
        const bool byName = SameUniqueNames(lists, files);
        for (size_t k = 0; k < per[first].size(); ++k)
        {
            const std::string& name = files[first].ops[per[first][k]].name;
            bool same = true;
            for (uint32_t r : members)
            {
                same = same && files[r].ops[per[r][k]].name == name && unique(r, name);
            }
            for (uint32_t r : members)
            {
                const uint32_t i = per[r][k];
                labels[r][i] = byName ? files[r].ops[i].name
                               : same ? name
                                      : pg + "#" + std::to_string(k);
                fixed[r][i] = true;
                files[r].ops[i].op.group = groupIndex[pg];
            }
        }
    }

    // Point-to-point: the k-th send from s to d with tag t meets the k-th such receive.
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>,
             std::pair<std::vector<uint32_t>, std::vector<uint32_t>>>
        p2p;
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        for (uint32_t i = 0; i < files[r].ops.size(); ++i)
        {
            const auto& c = files[r].ops[i];
            if (!c.skipped && c.op.kind == WorkloadOpKind::Send)
            {
                p2p[{r, static_cast<uint32_t>(c.op.to), c.tag}].first.push_back(i);
            }
            else if (!c.skipped && c.op.kind == WorkloadOpKind::Recv)
            {
                p2p[{static_cast<uint32_t>(c.op.from), r, c.tag}].second.push_back(i);
            }
        }
    }
    for (const auto& [key, lists] : p2p)
    {
        const auto [s, d, tag] = key;
        const auto& [sends, recvs] = lists;
        if (sends.size() != recvs.size())
        {
            const bool moreSends = sends.size() > recvs.size();
            const uint32_t at = moreSends ? s : d;
            const auto& extra =
                files[at].ops[(moreSends ? sends : recvs)[std::min(sends.size(), recvs.size())]];
            Reader(files[at], extra.record)
                .Fail(moreSends ? "comm_dst" : "comm_src",
                      std::to_string(sends.size()) + " sends from rank " + std::to_string(s) +
                          " to rank " + std::to_string(d) + " with tag " + std::to_string(tag) +
                          " but " + std::to_string(recvs.size()) + " receives");
        }
        const bool byName = SameUniqueNames({{s, &sends}, {d, &recvs}}, files);
        for (size_t k = 0; k < sends.size(); ++k)
        {
            const std::string& name = files[s].ops[sends[k]].name;
            const bool same =
                name == files[d].ops[recvs[k]].name && unique(s, name) && unique(d, name);
            labels[s][sends[k]] = byName ? name : same ? name : P2pLabel(s, d, tag, k);
            labels[d][recvs[k]] = byName ? files[d].ops[recvs[k]].name : labels[s][sends[k]];
            fixed[s][sends[k]] = true;
            fixed[d][recvs[k]] = true;
        }
    }

    for (uint32_t r = 0; r < numRanks; ++r)
    {
        RankFile& f = files[r];
        std::set<std::string> used;
        for (uint32_t i = 0; i < f.ops.size(); ++i)
        {
            if (fixed[r][i] && !used.insert(labels[r][i]).second)
            {
                Reader(f, f.ops[i].record)
                    .Fail("name", "label '" + labels[r][i] + "' of this node is taken");
            }
        }
        for (uint32_t i = 0; i < f.ops.size(); ++i)
        {
            if (fixed[r][i] || f.ops[i].skipped)
            {
                continue;
            }
            const auto& c = f.ops[i];
            std::string label = unique(r, c.name) ? c.name
                                : c.name.empty()  ? "node" + std::to_string(c.id)
                                                  : c.name + "#" + std::to_string(c.id);
            if (!used.insert(label).second)
            {
                label += "#" + std::to_string(c.id);
                if (!used.insert(label).second)
                {
                    Reader(f, c.record).Fail("name", "label '" + label + "' of this node is taken");
                }
            }
            labels[r][i] = label;
        }
        // Dependencies through skipped nodes are on what those waited for (ASTRA-sim
        // completes them at once).  Iterative, with a visit state to refuse cycles.
        std::vector<std::vector<uint32_t>> resolved(f.ops.size());
        std::vector<uint8_t> state(f.ops.size(), 0); // 0 new, 1 on the stack, 2 done
        auto depIndex = [&](uint32_t i, uint64_t id) {
            auto it = f.byId.find(id);
            if (it == f.byId.end())
            {
                Reader(f, f.ops[i].record)
                    .Fail("data_deps",
                          "node " + std::to_string(f.ops[i].id) + " depends on node " +
                              std::to_string(id) + ", which is not in this file");
            }
            return it->second;
        };
        auto resolve = [&](uint32_t start) {
            std::vector<std::pair<uint32_t, size_t>> stack{{start, 0}};
            state[start] = 1;
            while (!stack.empty())
            {
                auto& [i, next] = stack.back();
                if (next < f.ops[i].deps.size())
                {
                    const uint32_t d = depIndex(i, f.ops[i].deps[next++]);
                    if (f.ops[d].skipped)
                    {
                        if (state[d] == 1)
                        {
                            Reader(f, f.ops[d].record).Fail("data_deps", "dependency cycle");
                        }
                        if (state[d] == 0)
                        {
                            state[d] = 1;
                            stack.emplace_back(d, 0);
                        }
                    }
                    continue;
                }
                std::vector<uint32_t> out;
                for (uint64_t id : f.ops[i].deps)
                {
                    const uint32_t d = f.byId.at(id);
                    if (!f.ops[d].skipped)
                    {
                        out.push_back(d);
                    }
                    else
                    {
                        out.insert(out.end(), resolved[d].begin(), resolved[d].end());
                    }
                }
                resolved[i] = std::move(out);
                state[i] = 2;
                stack.pop_back();
            }
        };
        for (uint32_t i = 0; i < f.ops.size(); ++i)
        {
            if (state[i] == 0)
            {
                resolve(i);
            }
        }
        uint64_t ownStream = kOwnStreamBase;
        for (const auto& c : f.ops)
        {
            if (c.hasStream && c.op.stream >= ownStream)
            {
                ownStream = uint64_t(c.op.stream) + 1;
            }
        }
        if (ownStream + f.ops.size() > std::numeric_limits<uint32_t>::max())
        {
            Reader(f, 0).Fail("stream", "no stream numbers left for the nodes without one");
        }
        for (uint32_t i = 0; i < f.ops.size(); ++i)
        {
            auto& c = f.ops[i];
            if (c.skipped)
            {
                continue;
            }
            WorkloadOp op = std::move(c.op);
            op.label = labels[r][i];
            op.statement = c.record;
            if (!c.hasStream)
            {
                op.stream = static_cast<uint32_t>(ownStream++); // only dependencies order ops
            }
            std::set<uint32_t> seen;
            for (uint32_t d : resolved[i])
            {
                if (seen.insert(d).second)
                {
                    op.after.push_back(labels[r][d]);
                }
            }
            b.AddOp(r, std::move(op));
        }
    }
    return b.Build();
}

} // namespace ns3
