/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CLUSTER_CONFIG_H
#define AI_FABRIC_CLUSTER_CONFIG_H

#include "ns3/cluster-layout.h"
#include "ns3/gpu-endpoint-set.h"
#include "ns3/nstime.h"
#include "ns3/nvlink-fabric-preset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class CommandLine;
class RunParameters;

/// The three networks of an AI cluster; names match the results database's plane column.
enum class ClusterPlane
{
    NVLINK,
    INFINIBAND,
    ETHERNET,
    ROCE
};

std::string ClusterPlaneName(ClusterPlane plane);
/// "" or why \p name is not a plane name.
std::string ClusterPlaneFromName(const std::string& name, ClusterPlane& plane);

/**
 * \ingroup ai-fabric
 * Everything a ClusterHelper builds, as concrete numbers.  A preset fills
 * every field; the command line overrides single fields after the preset,
 * whatever the order of the flags.
 *
 * A "server" is the unit with one CPU node and one front-end attachment: a
 * DGX chassis, or a GB200 compute tray.  An NVLink domain spans
 * serversPerDomain servers (1 for DGX, 18 trays for GB200 NVL72).
 */
struct ClusterConfig
{
    std::string preset{"dgx-h100"};
    uint32_t servers{4};
    uint32_t gpusPerServer{8};
    uint32_t serversPerDomain{1};

    // Scale-up (NVLink); per link and direction, data rate.
    uint32_t nvlinkGen{4};
    uint32_t nvlinkLinksPerGpu{18};
    double nvlinkLinkRate_gbyte_per_s{25.0}; //!< from the generation (the device model's figure)
    uint32_t nvswitchesPerDomain{4};
    uint32_t nvswitchPorts{64};
    /// What the GPU endpoint sustains into NVLink (its SMs' stores, the NVSwitch engine) and
    /// into its HCA (the PCIe path), as multiples of the GPU set's figures.  Plane sizing
    /// scales them with the plane's links: a plane twice as fast comes with endpoints that
    /// drive it (a faster HCA with its host interface, faster NVLink with SMs to match).
    double nvlinkEndpointScale{1.0};
    double ibEndpointScale{1.0};

    // Scale-out (InfiniBand), one HCA per GPU, rail-optimised.
    double ibRate_gbit_per_s{400.0};
    uint32_t ibSwitchRadix{64};
    double oversubscription{1.0}; //!< leaf down : up ports
    uint32_t ibTiers{0};          //!< 0: the fewest that fit; else 1, 2 or 3 exactly
    std::string ibRoutingEngine{"ftree"};
    /// "one": every rail in one fat tree and one InfiniBand subnet (leaves of all rails
    /// share the spines); "per-rail": each rail its own fat tree and subnet (own LIDs from 1,
    /// own subnet manager routing), as the planes of large clusters.  With per-rail, ranks on
    /// different rails meet only over NVLink inside a domain.
    std::string ibSubnets{"one"};
    /// Propagation delay of every InfiniBand cable; 0 keeps the channel's default (0 ns).  A
    /// distributed run needs it > 0: the delay of the cut links is ns-3's MPI lookahead.
    double ibDelay_ns{0.0};
    /// Scale-out fabric: "infiniband" (HCAs, InfiniBand switches) or "roce" (RoCEv2 NICs on
    /// Ethernet switches, model/roce), built on the same rail-optimised layout: the ib*
    /// shape fields above (rate, radix, oversubscription, tiers, delay) describe either.
    std::string scaleOut{"infiniband"};
    bool rocePfc{true};           //!< RoCE: lossless Ethernet (PFC) or lossy
    bool roceEcn{true};           //!< RoCE: switches mark ECN (RED on egress)
    bool roceDcqcn{true};         //!< RoCE: NICs run DCQCN
    std::string roceEcmp{"hash"}; //!< RoCE: hash (five-tuple), spray, adaptive
    /// RoCE: bytes of packet buffer each switch shares among its ingress queues (dynamic
    /// thresholds, RoceSharedBuffer); 0: every ingress queue has 1 MiB of its own.
    uint64_t roceSharedBuffer_bytes{0};
    /// RoCE: Ethernet pcap of every GPU's NIC, PREFIX-<node>-<ifindex>.pcap; "" = none.
    std::string pcap;

    // Front-end Ethernet: each server's ports bundled as one link of ports x rate.
    uint32_t ethPortsPerServer{2};
    double ethRate_gbit_per_s{400.0};
    uint32_t serversPerRack{4};
    uint32_t racksPerTor{1};
    uint32_t ethAggSwitches{2};
    /// "static": routes from the address plan; "global": ns-3 Ipv4GlobalRoutingHelper
    /// (shortest paths, ECMP off), slower to build at scale.
    std::string ethRouting{"static"};
    /// "bridged": each ToR is an L2 switch (a BridgeNetDevice over one CsmaNetDevice port per
    /// server and one CSMA uplink to a single aggregation router), the rack one IPv4 subnet;
    /// "routed": ToRs are IPv4 routers linked point-to-point to every aggregation switch.
    /// Routed by default: ns-3.37's CSMA (the only device BridgeNetDevice can use) is half
    /// duplex with 1 us backoff slots, under which TCP at hundreds of Gb/s collapses.
    std::string ethFabric{"routed"};
    double ethUplinkRate_gbit_per_s{0.0}; //!< ToR to each aggregation switch; 0 = non-blocking
    double ethDelay_ns{500.0};            //!< per front-end cable, ~100 m of fibre at 5 ns/m
    uint32_t storageNodes{1};
    double storageRate_gbit_per_s{400.0};

    // GPU <-> CPU inside a server, per direction.
    double pcieRate_gbit_per_s{504.0};
    double pcieDelay_ns{100.0};

    /// Distributed runs (ns-3 MPI, several processes): how NVLink domains are spread over
    /// the processes.  "domain-blocks": contiguous blocks of domains; "round-robin": domain
    /// d to process d mod N.  A domain never spans processes; see doc/cluster.md.
    std::string partition{"domain-blocks"};
    /// GPU/NCCL endpoint parameter set (GpuEndpointSet): ideal, a100, h100, b200, or auto
    /// (the preset's GPU generation).
    std::string endpoint{"auto"};
    /// The InfiniBand switches are SHARP aggregation nodes (NVIDIA Quantum-2 class,
    /// SHARPv3): CollNet can reduce in them (NCCL_COLLNET_ENABLE=1).  Off by default.
    bool sharp{false};
    /// How GPU messages move: "packet" or "flow" for every plane, or per plane as
    /// "nvlink:flow,infiniband:packet" (a bare mode first sets the planes not listed);
    /// FlowTransportPlane, doc/flow-mode.md.
    std::string fidelity{"packet"};
    /// The NCCL release whose tuner to model ("2.26.2"); "" = the release the endpoint's
    /// defaults follow (2.29). ApplyNcclTunerVersion.
    std::string ncclVersion;
    /// The servers' host CPUs: "intel", "amd" (x86) or "arm".  NCCL's network proxy runs on
    /// them, and its tuner prices a network step by the vendor (tuning.cc getNetOverhead:
    /// Intel 1 us, AMD 2 us, anything else 1 us), which sets NcclEndpoint NetProxyStepTime.
    std::string hostCpu{"intel"};

    /// NCCL's environment overrides (NcclEndpoint attributes), as a user sets them on a real
    /// system; ApplyCommandLine reads them from the environment.  "" = unset.
    struct NcclEnvironment
    {
        std::string algo;        //!< NCCL_ALGO
        std::string proto;       //!< NCCL_PROTO
        std::string nvlsEnable;  //!< NCCL_NVLS_ENABLE
        std::string collNet;     //!< NCCL_COLLNET_ENABLE
        std::string minChannels; //!< NCCL_MIN_NCHANNELS
        std::string maxChannels; //!< NCCL_MAX_NCHANNELS
        std::string minCtas;     //!< NCCL_MIN_CTAS
        std::string maxCtas;     //!< NCCL_MAX_CTAS
        std::string pxnLevel;    //!< NCCL_P2P_PXN_LEVEL
        std::string netOverhead; //!< NCCL_NET_OVERHEAD (ns)
    } nccl;

    /// Fills nccl from the process environment.
    void ReadNcclEnvironment();
    /// The endpoint of GetEndpointSet() with the NCCL overrides applied (null: ideal);
    /// \p error gets the refusal naming the variable, and null is returned.
    Ptr<NcclEndpoint> MakeEndpoint(std::string* error = nullptr) const;

    static std::vector<std::string> GetPresetNames();
    /// Sets every field from preset \p name; "" or an error listing the valid names.
    std::string ApplyPreset(const std::string& name);
    /// Sets the NVLink generation, its per-link rate, links per GPU and NVSwitch ports.
    std::string ApplyNvLinkGeneration(uint32_t gen);
    /// The NvLinkHelper fabric of one domain: the preset's, or links spread evenly when
    /// the links per GPU or the switch count are overridden.
    NvLinkFabricSpec GetNvLinkSpec() const;

    /// Servers, GPUs and NVLink domains as ranks see them.
    ClusterLayout GetLayout() const;
    /// Distributed runs: ClusterLayout::PartitionDomains by `partition`.
    std::string PartitionDomains(uint32_t processes, std::vector<uint32_t>& systemOfDomain) const;

    /// "" or why this cluster cannot be built; nothing is built before this passes.
    /// \p field (if given) receives the command-line flag the refusal is about.
    std::string Validate(std::string* field = nullptr) const;
    /// Aborts with Validate()'s message.
    void ValidateOrAbort() const;

    /**
     * Registers --preset, --servers, --gpusPerServer, --nvlinkGen, --ibRate_gbit_per_s,
     * --ethRate_gbit_per_s, --oversubscription, --pcieRate_gbit_per_s, --racksPerTor... on
     * \p cmd (the rates also under their old names --ibRate, --ethRate, ..., deprecated).
     * After cmd.Parse(), call ApplyCommandLine(): it applies the preset, then
     * the flags given.  This object must stay in place in between.
     */
    void AddCommandLineArguments(CommandLine& cmd);
    /// "" or the error (unknown preset, invalid values per Validate()); \p field as there.
    std::string ApplyCommandLine(std::string* field = nullptr);
    void ApplyCommandLineOrAbort();
    /// Every field as "cluster.<name>" in the run's params JSON.
    void AddToRunParameters(RunParameters& params) const;

    /// "" and the planes `fidelity` makes flow-level, or why it is refused.
    std::string ParseFidelity(std::vector<ClusterPlane>& flowPlanes) const;
    /// True when \p plane moves GPU messages as flows (`fidelity` valid).
    bool IsFlowPlane(ClusterPlane plane) const;
    /// `fidelity` per plane that carries GPU messages: "nvlink:flow,infiniband:packet".
    std::string GetFidelityName() const;

    // Derived figures.
    uint32_t GetNRanks() const;
    /// The endpoint set, auto resolved: dgx-a100 a100, dgx-h100 h100, dgx-b200 and
    /// gb200-nvl72 b200.
    GpuEndpointSet GetEndpointSet() const;
    /// NCCL's network overhead per proxy step: NCCL_NET_OVERHEAD when set, else the host
    /// CPU's (getNetOverhead); \p error names the variable of a value NCCL would not take.
    Time GetNetOverhead(std::string* error = nullptr) const;
    uint32_t GetGpusPerDomain() const;
    uint32_t GetNDomains() const;
    uint32_t GetServersPerTor() const;
    uint32_t GetNTors() const;
    double GetTorUplinkRate_gbit_per_s() const;
    /// Every uplink of one ToR together: aggregation switches x GetTorUplinkRate_gbit_per_s().  A
    /// bridged ToR has one uplink at this rate (same capacity as the routed ToR's uplinks).
    double GetTorUplinkTotal_gbit_per_s() const;
    bool IsEthBridged() const;
    /// Per GPU and direction, in Gb/s.
    double GetNvLinkPerGpu_gbit_per_s() const;
    double GetIbPerGpu_gbit_per_s() const;
    /// The scale-out plane --scaleOut selects.
    ClusterPlane GetScaleOutPlane() const;
    /// True for --ibSubnets=per-rail: one InfiniBand subnet (and fat tree) per rail.
    bool IsIbSubnetPerRail() const;
    double GetEthPerGpu_gbit_per_s() const;
    /// Address bits of each server's front-end block in 10.0.0.0/9 (its CPU-ToR /30 and one
    /// /30 per GPU): 10 (a /22) while 8,192 such blocks fit, beyond that the fewest bits that
    /// hold the server's links, so 16,384 servers of 8 GPUs take a /26 each.
    uint32_t GetFrontEndServerBlockBits() const;

    /// Command-line values; -1 / empty = not given (the preset's value stays).
    struct Overrides
    {
        std::string preset;
        int64_t servers{-1};
        int64_t gpusPerServer{-1};
        int64_t serversPerDomain{-1};
        int64_t nvlinkGen{-1};
        int64_t nvlinkLinksPerGpu{-1};
        double ibRate_gbit_per_s{-1};
        int64_t ibSwitchRadix{-1};
        double oversubscription{-1};
        int64_t ibTiers{-1};
        std::string ibRoutingEngine;
        std::string ibSubnets;
        double ibDelay_ns{-1};
        std::string scaleOut;
        std::string pfc; //!< "1"/"0" (also on/off, true/false)
        std::string ecn;
        std::string dcqcn;
        std::string ecmp;
        int64_t sharedBuffer_bytes{-1};
        std::string pcap;
        int64_t ethPortsPerServer{-1};
        double ethRate_gbit_per_s{-1};
        int64_t serversPerRack{-1};
        int64_t racksPerTor{-1};
        int64_t ethAggSwitches{-1};
        std::string ethRouting;
        std::string ethFabric;
        double ethUplinkRate_gbit_per_s{-1};
        int64_t storageNodes{-1};
        double storageRate_gbit_per_s{-1};
        double pcieRate_gbit_per_s{-1};
        std::string partition;
        std::string endpoint;
        bool sharp{false};
        std::string fidelity;
        std::string ncclVersion;
        std::string hostCpu;
    };

    Overrides cli;
};

/**
 * Rail-optimised scale-out shape for a config: rails = GPUs per server, each
 * rail's HCAs on its own leaves; leaf down:up ports = oversubscription.
 * Computed before anything is built so Validate() can refuse what does not fit.
 *
 * With one subnet per rail (ClusterConfig::ibSubnets) the tree is computed for one
 * rail's HCAs and replicated per rail: tiers, hostsPerLeaf, leafUplinks,
 * linksPerLeafSpine and podLeaves are those of one subnet's tree; leaves, spines, pods,
 * cores, switches and cables count the whole plane (every subnet).
 */
struct ClusterIbShape
{
    uint32_t tiers{0};
    uint32_t rails{0};
    uint32_t subnets{1};      //!< 1, or one per rail
    uint32_t hostsPerLeaf{0}; //!< down ports used on a full leaf
    uint32_t leavesPerRail{0};
    uint32_t leaves{0};
    uint32_t leafUplinks{0}; //!< up ports used per leaf
    uint32_t spines{0};      //!< 2 tiers: spines; 3 tiers: aggregation switches in all pods
    uint32_t linksPerLeafSpine{0};
    uint32_t podLeaves{0}; //!< 3 tiers
    uint32_t pods{0};      //!< 3 tiers
    uint32_t cores{0};     //!< 3 tiers
    uint32_t switches{0};
    uint32_t cables{0}; //!< HCA and switch-switch cables
    std::string error;
    const char* errorField{""}; //!< the command-line flag the error is about

    static ClusterIbShape Compute(const ClusterConfig& c);
    /// The tree of one subnet: every rail with one subnet, one rail with one per rail.
    static ClusterIbShape ComputeSubnet(const ClusterConfig& c);
};

} // namespace ns3

#endif
