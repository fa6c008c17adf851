/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// jemalloc's options for the standalone programs, read when it starts (MALLOC_CONF in the
// environment still overrides them).  Transparent huge pages for its arenas and metadata: a
// packet-level run of a large cluster touches hundreds of MiB of packets, queues and devices
// in every simulated microsecond, and with 4 KiB pages most of its loads miss the TLB as
// well as the caches (doc/performance.md, "One plane at a time").  A kernel whose THP mode
// is "never" ignores the request.
extern "C"
{
    extern const char* malloc_conf;
    const char* malloc_conf = "thp:always,metadata_thp:always";
}
