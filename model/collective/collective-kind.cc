/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/collective-kind.h"

#include <cctype>

namespace ns3
{

namespace
{
constexpr const char* kKindNames[] = {
    "allreduce",
    "allgather",
    "reducescatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
};
constexpr const char* kAlgorithmNames[] = {
    "auto",
    "ring",
    "tree",
    "halvingdoubling",
    "direct",
    "hierarchical",
    "nvls",
    "nvlstree",
    "collnetdirect",
    "collnetchain",
    "pat",
};

template <typename Enum, std::size_t N>
bool
Lookup(const std::string& folded, const char* const (&names)[N], Enum* out)
{
    for (std::size_t i = 0; i < N; ++i)
    {
        if (folded == names[i])
        {
            *out = static_cast<Enum>(i);
            return true;
        }
    }
    return false;
}

} // namespace

std::string
CanonicalCollectiveName(const std::string& text)
{
    std::string out;
    for (char c : text)
    {
        if (c != '_' && c != '-')
        {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    if (out == "hd" || out == "rabenseifner")
    {
        return "halvingdoubling";
    }
    return out;
}

namespace
{

template <std::size_t N>
std::string
Join(const char* const (&names)[N])
{
    std::string out;
    for (const char* name : names)
    {
        out += (out.empty() ? "" : ", ") + std::string(name);
    }
    return out;
}
} // namespace

const char*
CollectiveKindName(CollectiveKind kind)
{
    return kKindNames[static_cast<std::size_t>(kind)];
}

const char*
CollectiveAlgorithmName(CollectiveAlgorithm algorithm)
{
    return kAlgorithmNames[static_cast<std::size_t>(algorithm)];
}

bool
ParseCollectiveKind(const std::string& text, CollectiveKind* kind)
{
    return Lookup(CanonicalCollectiveName(text), kKindNames, kind);
}

bool
ParseCollectiveAlgorithm(const std::string& text, CollectiveAlgorithm* algorithm)
{
    return Lookup(CanonicalCollectiveName(text), kAlgorithmNames, algorithm);
}

std::string
CollectiveKindNames()
{
    return Join(kKindNames);
}

std::string
CollectiveAlgorithmNames()
{
    return Join(kAlgorithmNames);
}

bool
CollectiveHasRoot(CollectiveKind kind)
{
    return kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
}

} // namespace ns3
