/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_HEADERS_H
#define AI_FABRIC_INFINIBAND_HEADERS_H

#include "ns3/header.h"
#include "ns3/packet.h"
#include "ns3/trailer.h"

#include <cstddef>
#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Local Route Header, 8 bytes (IBA vol. 1 §7.7; Wireshark packet-infiniband.c
 * hf_infiniband_lrh_*; Linux include/rdma/ib_hdrs.h):
 *
 *   byte 0: VL(4) LVer(4)   byte 1: SL(4) rsv(2) LNH(2)   bytes 2-3: DLID
 *   bytes 4-5: rsv(5) PktLen(11)                          bytes 6-7: SLID
 *
 * PktLen counts 4-byte words from the first byte of the LRH to the last byte
 * of the ICRC; the VCRC is not counted (IBA §7.7.8).
 */
class InfinibandLrh : public Header
{
  public:
    /// Link Next Header values (IBA §7.7.6).
    enum Lnh : uint8_t
    {
        LNH_RAW = 0, //!< raw packet, no IBA transport
        LNH_IP_NON_IBA = 1,
        LNH_IBA_LOCAL = 2, //!< BTH follows
        LNH_IBA_GLOBAL = 3 //!< GRH then BTH
    };

    static constexpr uint32_t SIZE_BYTES = 8;
    static constexpr uint16_t MAX_PKTLEN_WORDS = 0x7ff;

    InfinibandLrh();

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    void SetVl(uint8_t vl);
    uint8_t GetVl() const;
    void SetLver(uint8_t lver);
    uint8_t GetLver() const;
    void SetSl(uint8_t sl);
    uint8_t GetSl() const;
    void SetLnh(uint8_t lnh);
    uint8_t GetLnh() const;
    void SetDlid(uint16_t dlid);
    uint16_t GetDlid() const;
    void SetSlid(uint16_t slid);
    uint16_t GetSlid() const;
    void SetPacketLengthWords(uint16_t words);
    uint16_t GetPacketLengthWords() const;
    /// Sets PktLen from the byte count LRH..ICRC (must be a multiple of 4).
    void SetPacketLengthFromBytes(uint32_t lrhThroughIcrcBytes);

  private:
    uint8_t m_vl;
    uint8_t m_lver;
    uint8_t m_sl;
    uint8_t m_lnh;
    uint16_t m_dlid;
    uint16_t m_pktLenWords;
    uint16_t m_slid;
};

/**
 * \ingroup ai-fabric
 * Base Transport Header, 12 bytes (IBA vol. 1 §9.2; FECN/BECN from Annex A10;
 * Linux include/rdma/ib_hdrs.h IB_BTH_*; Wireshark hf_infiniband_bth_*):
 *
 *   byte 0: OpCode   byte 1: SE(1) M(1) PadCnt(2) TVer(4)   bytes 2-3: P_Key
 *   byte 4: FECN(1) BECN(1) rsv(6)   bytes 5-7: DestQP
 *   byte 8: A(1) rsv(7)              bytes 9-11: PSN
 */
class InfinibandBth : public Header
{
  public:
    /// A few opcodes (IBA Table 38; Linux include/rdma/ib_pack.h IB_OPCODE_*).
    enum Opcode : uint8_t
    {
        RC_SEND_FIRST = 0x00,
        RC_SEND_MIDDLE = 0x01,
        RC_SEND_LAST = 0x02,
        RC_SEND_ONLY = 0x04,
        RC_RDMA_WRITE_ONLY = 0x0a,
        RC_ACKNOWLEDGE = 0x11,
        UD_SEND_ONLY = 0x64
    };

    static constexpr uint32_t SIZE_BYTES = 12;
    static constexpr uint16_t DEFAULT_PKEY = 0xffff; //!< full-member default partition

    InfinibandBth();

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    void SetOpcode(uint8_t opcode);
    uint8_t GetOpcode() const;
    void SetSolicitedEvent(bool se);
    bool GetSolicitedEvent() const;
    void SetMigReq(bool m);
    bool GetMigReq() const;
    void SetPadCount(uint8_t padBytes);
    uint8_t GetPadCount() const;
    void SetTver(uint8_t tver);
    uint8_t GetTver() const;
    void SetPartitionKey(uint16_t pkey);
    uint16_t GetPartitionKey() const;
    void SetFecn(bool fecn);
    bool GetFecn() const;
    void SetBecn(bool becn);
    bool GetBecn() const;
    void SetDestQp(uint32_t qp);
    uint32_t GetDestQp() const;
    void SetAckReq(bool a);
    bool GetAckReq() const;
    void SetPsn(uint32_t psn);
    uint32_t GetPsn() const;

    /// Pad bytes that bring a payload to a multiple of 4 (IBA §9.2.3).
    static uint8_t PadBytesFor(uint32_t payloadBytes);

  private:
    uint8_t m_opcode;
    bool m_se;
    bool m_m;
    uint8_t m_padCnt;
    uint8_t m_tver;
    uint16_t m_pkey;
    bool m_fecn;
    bool m_becn;
    uint32_t m_destQp;
    bool m_ackReq;
    uint32_t m_psn;
};

/**
 * \ingroup ai-fabric
 * Invariant CRC trailer, 4 bytes (IBA vol. 1 §7.8.1): CRC-32 of IEEE 802.3
 * over LRH..payload with the variant fields set to all ones: LRH.VL and BTH
 * byte 4 (Resv8a, later FECN/BECN) of a local packet; the whole LRH, GRH
 * TClass, FlowLabel, HopLmt and BTH byte 4 of a global one (IBA §7.8.1 as
 * given in Shanley, "InfiniBand Network Architecture" ch. 25; the 8 bytes of
 * ones rxe_icrc.c feeds for RoCE's missing LRH agree).  Transmitted in the
 * byte order of the Ethernet FCS, as Linux drivers/infiniband/sw/rxe/rxe_icrc.c
 * (which interoperates with HCAs) stores it.
 */
class InfinibandIcrc : public Trailer
{
  public:
    static constexpr uint32_t SIZE_BYTES = 4;

    InfinibandIcrc();
    explicit InfinibandIcrc(uint32_t crc);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator end) const override;
    uint32_t Deserialize(Buffer::Iterator end) override;
    void Print(std::ostream& os) const override;

    void SetCrc(uint32_t crc);
    uint32_t GetCrc() const;

    /// ICRC of \p bytes = LRH up to the last payload/pad byte (no trailers).
    static uint32_t Compute(const uint8_t* bytes, size_t length);

  private:
    uint32_t m_crc;
};

/**
 * \ingroup ai-fabric
 * Variant CRC trailer, 2 bytes (IBA vol. 1 §7.8.2): CRC-16 with polynomial
 * x^16+x^12+x^3+x+1 (0x100B), seed 0xFFFF, over LRH..ICRC, recomputed per hop.
 * Bit order and final inversion as the ICRC (reflected, complemented) — the
 * convention of Endace's dagcrc "infiniband_vcrc16_r".
 */
class InfinibandVcrc : public Trailer
{
  public:
    static constexpr uint32_t SIZE_BYTES = 2;

    InfinibandVcrc();
    explicit InfinibandVcrc(uint16_t crc);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator end) const override;
    uint32_t Deserialize(Buffer::Iterator end) override;
    void Print(std::ostream& os) const override;

    void SetCrc(uint16_t crc);
    uint16_t GetCrc() const;

    /// VCRC of \p bytes = LRH through ICRC.
    static uint16_t Compute(const uint8_t* bytes, size_t length);

  private:
    uint16_t m_crc;
};

/**
 * \ingroup ai-fabric
 * Link-level flow-control packet, 6 bytes (IBA vol. 1 §7.9.4; Wireshark
 * packet-infiniband.c dissect_infiniband_link):
 *
 *   Op(4) FCTBS(12) VL(4) FCCL(12) LPCRC(16)
 *
 * LPCRC is the VCRC polynomial over the first 4 bytes; Serialize computes it.
 */
class InfinibandFlowControlPacket : public Header
{
  public:
    enum Op : uint8_t
    {
        OP_NORMAL = 0,
        OP_INIT = 1
    };

    static constexpr uint32_t SIZE_BYTES = 6;

    InfinibandFlowControlPacket();

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    void SetOp(uint8_t op);
    uint8_t GetOp() const;
    /// Total blocks sent, modulo 4096.
    void SetFctbs(uint16_t blocks);
    uint16_t GetFctbs() const;
    void SetVl(uint8_t vl);
    uint8_t GetVl() const;
    /// Credit limit: blocks received + free buffer blocks, modulo 4096.
    void SetFccl(uint16_t blocks);
    uint16_t GetFccl() const;
    /// LPCRC as received (after Deserialize) or as it will be sent.
    uint16_t GetLpcrc() const;
    /// True if the received LPCRC matches the received fields.
    bool IsLpcrcOk() const;

  private:
    uint16_t ComputeLpcrc() const;

    uint8_t m_op;
    uint16_t m_fctbs;
    uint8_t m_vl;
    uint16_t m_fccl;
    uint16_t m_receivedLpcrc;
    bool m_deserialized;
};

/// Appends ICRC and VCRC to \p packet, which must start with the LRH and hold
/// LRH..payload+pad (LNH 2 or 3).
void InfinibandAddCrcs(Ptr<Packet> packet);

/// Checks the ICRC and VCRC of a packet that ends with them.
bool InfinibandCheckCrcs(Ptr<const Packet> packet);

} // namespace ns3

#endif
