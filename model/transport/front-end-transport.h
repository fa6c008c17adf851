/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_FRONT_END_TRANSPORT_H
#define AI_FABRIC_FRONT_END_TRANSPORT_H

#include "ns3/callback.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>
#include <vector>

namespace ns3
{

class ResultsDatabase;
class Socket;

/**
 * \ingroup ai-fabric
 * Data loading and checkpoint traffic between GPUs and storage nodes over the
 * front-end, as ns-3 TCP connections (doc/workload.md, "Front-end ops").
 *
 * Load: storage -> the rank's CPU over the Ethernet front-end, then, once the
 * whole batch is in host memory, CPU -> GPU over the PCIe link.  Checkpoint:
 * GPU -> CPU over PCIe, then CPU -> storage.  Each stage is its own TCP
 * connection (a fresh socket pair, so slow start and the handshake are paid
 * per stage) and its own `flows` row with plane "ethernet" (the results
 * database files PCIe links under that plane too).  A transfer is done when
 * the last byte of the last stage has reached the receiving application.
 */
class FrontEndTransport : public Object
{
  public:
    typedef Callback<void> DoneCallback;
    /// (transfer id, rank, storage index, bytes, duration)
    typedef void (*TransferTracedCallback)(uint64_t, uint32_t, uint32_t, uint64_t, Time);

    static TypeId GetTypeId();
    FrontEndTransport();
    ~FrontEndTransport() override;

    /// The rank's GPU (PCIe end) and its server's CPU (front-end address).
    void AddRank(uint32_t rank,
                 Ptr<Node> gpu,
                 Ipv4Address gpuAddress,
                 Ptr<Node> cpu,
                 Ipv4Address cpuAddress);
    /// \return the storage node's index.
    uint32_t AddStorage(Ptr<Node> node, Ipv4Address address);
    bool HasRank(uint32_t rank) const;
    uint32_t GetNStorage() const;

    /// Every completed stage becomes a `flows` row (plane "ethernet").
    void SetResultsDatabase(Ptr<ResultsDatabase> db);

    /**
     * Storage \p storage -> CPU -> GPU of \p rank; \p done when the GPU holds
     * the last byte.  \p opId goes to the flows rows.  \throws
     * std::invalid_argument for an unknown rank or storage index.
     * \return the transfer id.
     */
    uint64_t Load(uint32_t rank,
                  uint32_t storage,
                  uint64_t bytes,
                  DoneCallback done,
                  int64_t opId = -1);
    /// GPU of \p rank -> CPU -> storage \p storage; \p done when storage holds the last byte.
    uint64_t Checkpoint(uint32_t rank,
                        uint32_t storage,
                        uint64_t bytes,
                        DoneCallback done,
                        int64_t opId = -1);

    uint64_t GetTransfersCompleted() const;
    uint64_t GetTransfersInFlight() const;
    uint64_t GetBytesLoaded() const;
    uint64_t GetBytesCheckpointed() const;

  protected:
    void DoDispose() override;

  private:
    struct Endpoint
    {
        Ptr<Node> node;
        Ipv4Address address;
        int64_t rank{-1};
    };

    struct Stage
    {
        uint64_t transfer{0};
        Endpoint src;
        Endpoint dst;
        uint64_t bytes{0};
        uint64_t sent{0};
        uint64_t received{0};
        Time start;
        Ptr<Socket> sender;
        Ptr<Socket> listener;
        Ptr<Socket> receiver;
    };

    struct Transfer
    {
        uint64_t id{0};
        bool load{true};
        uint32_t rank{0};
        uint32_t storage{0};
        uint64_t bytes{0};
        int64_t opId{-1};
        Time start;
        std::vector<std::pair<Endpoint, Endpoint>> hops;
        uint32_t next{0}; ///< next hop to start
        DoneCallback done;
    };

    uint64_t Start(bool load,
                   uint32_t rank,
                   uint32_t storage,
                   uint64_t bytes,
                   DoneCallback done,
                   int64_t opId);
    void StartStage(uint64_t transfer);
    Ptr<Socket> MakeSocket(Ptr<Node> node) const;
    uint16_t NextPort(Ptr<Node> node);
    void Accept(uint64_t stage, Ptr<Socket> socket, const Address& from);
    void Connected(uint64_t stage, Ptr<Socket> socket);
    void ConnectFailed(uint64_t stage, Ptr<Socket> socket);
    void Fill(uint64_t stage, Ptr<Socket> socket, uint32_t available);
    void Receive(uint64_t stage, Ptr<Socket> socket);
    void StageDone(uint64_t stage);
    void TransferDone(uint64_t transfer);

    uint32_t m_segmentSize;
    uint32_t m_bufferBytes;
    Time m_minRto;
    uint16_t m_firstPort;
    uint64_t m_flowIdOffset;

    std::map<uint32_t, std::pair<Endpoint, Endpoint>> m_ranks; ///< rank -> (GPU, CPU)
    std::vector<Endpoint> m_storage;
    std::map<uint32_t, uint16_t> m_nextPort; ///< node id -> next listening port
    std::map<uint64_t, Transfer> m_transfers;
    std::map<uint64_t, Stage> m_stages;
    uint64_t m_nextTransfer{0};
    uint64_t m_nextStage{0};
    uint64_t m_completed{0};
    uint64_t m_bytesLoaded{0};
    uint64_t m_bytesCheckpointed{0};
    Ptr<ResultsDatabase> m_db;

    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, Time> m_loadDone;
    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, Time> m_checkpointDone;
};

} // namespace ns3

#endif
