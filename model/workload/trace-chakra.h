/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRACE_CHAKRA_H
#define AI_FABRIC_TRACE_CHAKRA_H

#include "ns3/workload-trace.h"

#include <string>
#include <vector>

namespace ns3
{

/// "PREFIX.r.et", the file of rank r (ASTRA-sim's naming).
std::string ChakraFileName(const std::string& prefix, uint32_t rank);

/**
 * \ingroup ai-fabric
 * Reader of MLCommons Chakra execution traces (schema 0.0.4, model/workload/chakra-et.proto):
 * one length-prefixed protobuf stream per rank, a GlobalMetadata record then Node records.
 * doc/workload.md says what maps to what.  Errors (WorkloadError) name the rank's file, the
 * record index (0: the metadata, then one per node) and the field.
 */
class ChakraTraceImporter
{
  public:
    /// PREFIX.0.et, PREFIX.1.et, ... up to the first missing file.  \p groupsFile: an
    /// ASTRA-sim communicator-group JSON ({"pg_name": [ranks]}), "" for none.
    static WorkloadTrace ImportFiles(const std::string& prefix, const std::string& groupsFile = "");
    /// \p streams[r]: the bytes of rank r's file, named \p names[r] in messages.
    static WorkloadTrace ImportStreams(const std::vector<std::string>& streams,
                                       const std::vector<std::string>& names,
                                       const std::string& source,
                                       const std::string& groupsJson = "");
};

/**
 * \ingroup ai-fabric
 * Writes a WorkloadTrace as Chakra: what ASTRA-sim reads (node types, comm_* attributes,
 * pg_name, duration_micros, data_deps / ctrl_deps) plus attributes of ours that it ignores
 * (duration_ns, stream, algorithm, root, storage and the process-group table in the
 * metadata) so that reading the files back gives the same trace.
 */
class ChakraTraceWriter
{
  public:
    /// One serialised stream per rank.  Throws WorkloadError for an op Chakra cannot say
    /// (sendrecv).
    static std::vector<std::string> Serialize(const WorkloadTrace& trace);
    /// ASTRA-sim's communicator-group file of the trace's groups ({"pg_name": [ranks]}).
    static std::string CommGroupsJson(const WorkloadTrace& trace);
    /// PREFIX.r.et for every rank and PREFIX.comm-groups.json.
    static void WriteFiles(const WorkloadTrace& trace, const std::string& prefix);
};

} // namespace ns3

#endif
