#!/usr/bin/env python3
"""Writes the hand-built Chakra fixtures of this directory (test/workload-chakra-test.cc).

The protobuf wire format is spelt out by hand with the field numbers of Chakra's public
schema (et_def.proto, schema 0.0.4), independently of model/workload/chakra-et.proto, so the
files also check that the importer's schema matches the published one.  Each fixture is
PREFIX.r.et per rank: a varint length, then a GlobalMetadata, then Nodes.
Run from anywhere: python3 make-fixtures.py (rewrites the files beside it)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# Node types and collective types of the schema.
METADATA_NODE, COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE = 1, 4, 5, 6, 7
ALL_REDUCE, ALL_GATHER, GATHER = 0, 2, 3


def varint(n):
    n &= (1 << 64) - 1  # negative int32/int64 values are 10-byte two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_varint(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def f_packed(field, values):
    return f_bytes(field, b''.join(varint(v) for v in values))


# AttributeProto: name 1, int32_val 7, int64_val 9, uint64_val 13, bool_val 27,
# bool_list 28 (BoolList.values 1), string_val 29.
def attr(name, **value):
    (kind, v), = value.items()
    body = f_bytes(1, name)
    if kind == 'i32':
        body += f_varint(7, v)
    elif kind == 'i64':
        body += f_varint(9, v)
    elif kind == 'u64':
        body += f_varint(13, v)
    elif kind == 'b':
        body += f_varint(27, 1 if v else 0)
    elif kind == 'bools':
        body += f_bytes(28, f_packed(1, [1 if x else 0 for x in v]))
    elif kind == 's':
        body += f_bytes(29, v)
    elif kind == 'd':
        body += key(3, 1) + struct.pack('<d', v)
    return body


# Node: id 1, name 2, type 3, ctrl_deps 4, data_deps 5, duration_micros 7, attr 10.
def node(id_, name, type_, data=(), ctrl=(), micros=None, attrs=()):
    body = f_varint(1, id_) + f_bytes(2, name) + f_varint(3, type_)
    if ctrl:
        body += f_packed(4, ctrl)
    if data:
        body += f_packed(5, data)
    if micros is not None:
        body += f_varint(7, micros)
    for a in attrs:
        body += f_bytes(10, a)
    return body


# GlobalMetadata: version 1, attr 2.
def metadata(version='0.0.4'):
    return f_bytes(1, version)


def stream(messages):
    return b''.join(varint(len(m)) + m for m in messages)


def write(prefix, ranks):
    for r, messages in enumerate(ranks):
        data = messages if isinstance(messages, bytes) else stream(messages)
        with open(os.path.join(HERE, '%s.%d.et' % (prefix, r)), 'wb') as f:
            f.write(data)


def coll(id_, name, comm_type, size, data=(), pg=None, dims=None):
    attrs = [attr('is_cpu_op', b=False), attr('comm_type', i64=comm_type),
             attr('comm_size', i64=size)]
    if pg is not None:
        attrs.append(attr('pg_name', s=pg))
    if dims is not None:
        attrs.append(attr('involved_dim', bools=dims))
    return node(id_, name, COMM_COLL_NODE, data=data, attrs=attrs)


def comp(id_, name, micros, data=(), cpu=False):
    return node(id_, name, COMP_NODE, data=data, micros=micros, attrs=[attr('is_cpu_op', b=cpu)])


def p2p(id_, name, send, rank, peer, size, tag, data=()):
    src, dst = (rank, peer) if send else (peer, rank)
    return node(id_, name, COMM_SEND_NODE if send else COMM_RECV_NODE, data=data,
                attrs=[attr('is_cpu_op', b=False), attr('comm_src', i32=src),
                       attr('comm_dst', i32=dst), attr('comm_tag', i32=tag),
                       attr('comm_size', i64=size)])


def astrasim_rank(r):
    """4 ranks as ASTRA-sim's generators and converters write them."""
    tp_pg = '10' if r < 2 else '11'
    send = r % 2 == 0
    return [
        metadata(),
        comp(0, 'fwd', 10),
        node(1, 'meta', METADATA_NODE, data=[0]),  # skipped: deps pass through it
        coll(2, 'allreduce', ALL_REDUCE, 1 << 20, data=[1], dims=[True, True]),
        coll(3, 'tp_allgather', ALL_GATHER, 65536, data=[0], pg=tp_pg),
        comp(5, 'bwd', 0, data=[2, 3], cpu=True),
        p2p(6, 'send' if send else 'recv', send, r, r + 1 if send else r - 1, 4096, 7, data=[5]),
        comp(9, 'opt', 2, data=[8]),  # a dependency on a later record
        comp(8, 'tail', 3, data=[6]),
    ]


def two_ranks(bad_rank0, rank1=None):
    good = [metadata(), comp(0, 'fwd', 1), coll(1, 'ar', ALL_REDUCE, 1024, data=[0])]
    return [bad_rank0, rank1 if rank1 is not None else good]


def main():
    write('astrasim', [astrasim_rank(r) for r in range(4)])
    good = [metadata(), comp(0, 'fwd', 1), coll(1, 'ar', ALL_REDUCE, 1024, data=[0])]
    full = stream(good)
    write('bad-truncated', [full, full[:-5]])
    write('bad-no-size', two_ranks([metadata(), comp(0, 'fwd', 1), node(
        1, 'ar', COMM_COLL_NODE, data=[0], attrs=[attr('comm_type', i64=ALL_REDUCE)])]))
    write('bad-gather', two_ranks([metadata(), comp(0, 'fwd', 1),
                                   coll(1, 'ar', GATHER, 1024, data=[0])]))
    write('bad-dep', two_ranks([metadata(), comp(0, 'fwd', 1),
                                coll(1, 'ar', ALL_REDUCE, 1024, data=[42])]))
    write('bad-dup-id', two_ranks([metadata(), comp(0, 'fwd', 1),
                                   coll(0, 'ar', ALL_REDUCE, 1024)]))
    write('bad-unmatched-send', two_ranks(
        good + [p2p(2, 'x', True, 0, 1, 64, 0, data=[1])]))
    write('bad-coll-count', two_ranks(good + [coll(2, 'ar2', ALL_REDUCE, 1024, data=[1])]))
    write('bad-involved-dim', two_ranks([metadata(), comp(0, 'fwd', 1), coll(
        1, 'ar', ALL_REDUCE, 1024, data=[0], dims=[True, False])]))
    write('bad-size-type', two_ranks([metadata(), comp(0, 'fwd', 1), node(
        1, 'ar', COMM_COLL_NODE, data=[0],
        attrs=[attr('comm_type', i64=ALL_REDUCE), attr('comm_size', s='1MiB')])]))
    write('bad-empty', two_ranks(b''))
    write('bad-pg-utf8', two_ranks([metadata(), comp(0, 'fwd', 1),
                                    coll(1, 'ar', ALL_REDUCE, 1024, data=[0], pg=b'tp\xb1')]))


if __name__ == '__main__':
    main()
