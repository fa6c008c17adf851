/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_HEADERS_H
#define AI_FABRIC_INFINIBAND_HEADERS_H

#include "ns3/header.h"
// The CRC trailers and the link flow-control packet, so that this one include still
// gives every InfiniBand wire format.
#include "ns3/infiniband-crc.h"
#include "ns3/infiniband-flow-control-packet.h"
#include "ns3/packet.h"

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
        UD_SEND_ONLY = 0x64,
        CNP = 0x81 //!< congestion notification packet (Linux ib_hdrs.h IB_BTH_OPCODE_CNP)
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
 * Datagram Extended Transport Header, 8 bytes (IBA §9.3.3; Linux ib_pack.h
 * IB_DETH_BYTES): Q_Key(32) rsv(8) SrcQP(24).  Carried by UD packets (IPoIB).
 */
class InfinibandDeth : public Header
{
  public:
    static constexpr uint32_t SIZE_BYTES = 8;
    static constexpr uint32_t IPOIB_QKEY = 0x0000000b; //!< RFC 4391 §4.4 (IPv4 broadcast group)

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint32_t qkey{IPOIB_QKEY};
    uint32_t srcQp{0};
};

/**
 * \ingroup ai-fabric
 * IPoIB encapsulation header, 4 bytes (RFC 4391 §6): EtherType(16), reserved(16) = 0.
 */
class InfinibandIpoibHeader : public Header
{
  public:
    static constexpr uint32_t SIZE_BYTES = 4;

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint16_t etherType{0x0800};
};

} // namespace ns3

#endif
