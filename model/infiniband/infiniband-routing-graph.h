/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_ROUTING_GRAPH_H
#define AI_FABRIC_INFINIBAND_ROUTING_GRAPH_H

// Boost graph types and searches shared by the subnet manager and its routing engines.
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/pending/queue.hpp>
#include <cstdint>
#include <limits>
#include <vector>

namespace ns3
{

constexpr uint32_t INFINIBAND_NO_HOPS = std::numeric_limits<uint32_t>::max(); //!< unreachable

using InfinibandSwitchGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
using InfinibandDirectedSwitchGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// Hop counts from a set of sources (Boost multi-source BFS).
template <typename Graph>
std::vector<uint32_t>
InfinibandBfsHops(const Graph& g, const std::vector<uint32_t>& sources)
{
    using Vertex = typename boost::graph_traits<Graph>::vertex_descriptor;
    const size_t n = boost::num_vertices(g);
    std::vector<uint32_t> dist(n, INFINIBAND_NO_HOPS);
    if (sources.empty())
    {
        return dist;
    }
    std::vector<Vertex> src(sources.begin(), sources.end());
    for (auto s : src)
    {
        dist[s] = 0;
    }
    boost::queue<Vertex> q;
    std::vector<boost::default_color_type> color(n, boost::white_color);
    auto index = boost::get(boost::vertex_index, g);
    boost::breadth_first_search(g,
                                src.begin(),
                                src.end(),
                                q,
                                boost::make_bfs_visitor(boost::record_distances(
                                    boost::make_iterator_property_map(dist.begin(), index),
                                    boost::on_tree_edge())),
                                boost::make_iterator_property_map(color.begin(), index));
    return dist;
}

/// Switch vertices joined where \p hops (all-pairs hop counts) is 1, in vertex order.
inline InfinibandSwitchGraph
InfinibandAdjacentSwitches(const std::vector<std::vector<uint16_t>>& hops)
{
    const auto nsw = static_cast<uint32_t>(hops.size());
    InfinibandSwitchGraph g(nsw);
    for (uint32_t v = 0; v < nsw; ++v)
    {
        for (uint32_t u = v + 1; u < nsw; ++u)
        {
            if (hops[v][u] == 1)
            {
                boost::add_edge(v, u, g);
            }
        }
    }
    return g;
}

} // namespace ns3

#endif
