/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Writes the native workload trace of a transformer training job, e.g.
 *   trace-gen --layers=96 --hidden=12288 --tp=8 --pp=8 --dp=2 --out=gpt3.trace
 *   trace-gen --tp=2 --dp=2 --format=chakra --out=job   (job.0.et ... job.3.et, Chakra ET)
 */
#include "ns3/command-line.h"
#include "ns3/trace-chakra.h"
#include "ns3/trace-native.h"
#include "ns3/trace-transformer-gen.h"

#include <fstream>
#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    TransformerTraceConfig c;
    std::string out;
    std::string format = "native";
    bool check = true;
    uint64_t bucketMiB = c.bucketBytes >> 20;
    CommandLine cmd(__FILE__);
    cmd.AddValue("layers", "transformer layers", c.layers);
    cmd.AddValue("hidden", "hidden size", c.hidden);
    cmd.AddValue("seq", "sequence length (tokens)", c.seq);
    cmd.AddValue("vocab", "vocabulary size", c.vocab);
    cmd.AddValue("ffn", "MLP inner size (0: 4 x hidden)", c.ffn);
    cmd.AddValue("gatedMlp", "SwiGLU MLP: three hidden x ffn matrices (Llama)", c.gatedMlp);
    cmd.AddValue("heads", "attention heads (0: no grouped-query attention)", c.heads);
    cmd.AddValue("kvHeads", "key/value heads (grouped-query attention; divides heads)", c.kvHeads);
    cmd.AddValue("microBatch", "sequences per micro-batch", c.microBatch);
    cmd.AddValue("globalBatch", "sequences per iteration", c.globalBatch);
    cmd.AddValue("dtypeBytes", "bytes per activation / gradient element", c.dtypeBytes);
    cmd.AddValue("experts", "MoE experts per layer (0: dense)", c.experts);
    cmd.AddValue("topk", "experts per token", c.topk);
    cmd.AddValue("tp", "tensor-parallel size", c.tp);
    cmd.AddValue("pp", "pipeline stages", c.pp);
    cmd.AddValue("dp", "data-parallel size", c.dp);
    cmd.AddValue("ep", "expert-parallel size (divides dp)", c.ep);
    cmd.AddValue("schedule", "pipeline schedule: 1f1b or gpipe", c.schedule);
    cmd.AddValue("microBatches",
                 "micro-batches per iteration (0: globalBatch / (microBatch x dp))",
                 c.microBatches);
    cmd.AddValue("zero", "ZeRO stage: 0, 1 or 3", c.zero);
    cmd.AddValue("sequenceParallel",
                 "reduce-scatter + all-gather instead of TP allreduce",
                 c.sequenceParallel);
    cmd.AddValue("pipelineScatterGather",
                 "Megatron scatter-gather: 1/tp of each pipeline tensor per TP rank, then a TP "
                 "all-gather",
                 c.pipelineScatterGather);
    cmd.AddValue("gpu", "GPU preset for compute times: A100, H100 or B200", c.gpu);
    cmd.AddValue("efficiency", "achieved fraction of peak dense BF16", c.efficiency);
    cmd.AddValue("iterations", "training iterations", c.iterations);
    cmd.AddValue("mapping",
                 "rank layout: tp-inner (TP on consecutive ranks) or dp-inner",
                 c.mapping);
    cmd.AddValue("bucketMiB", "DP gradient bucket size in MiB", bucketMiB);
    cmd.AddValue("loadBytes",
                 "input batch per first-stage rank and iteration, loaded from storage0",
                 c.loadBytes);
    cmd.AddValue("checkpointBytes",
                 "synchronous checkpoint per rank and iteration to storage0",
                 c.checkpointBytes);
    cmd.AddValue("check", "parse the generated trace before writing it", check);
    cmd.AddValue("format",
                 "native (one text file) or chakra (PREFIX.r.et per rank and "
                 "PREFIX.comm-groups.json, for ASTRA-sim)",
                 format);
    cmd.AddValue("out", "output file, or the prefix for chakra (default: standard output)", out);
    cmd.Parse(argc, argv);
    c.bucketBytes = bucketMiB << 20;

    try
    {
        TransformerTraceGenerator gen(c);
        const std::string text = gen.Generate();
        if (format == "chakra")
        {
            if (out.empty())
            {
                throw InputError::Flag("out", "--format=chakra writes files: give --out=PREFIX");
            }
            WorkloadTrace t = NativeTraceParser::ParseString(text, out);
            ChakraTraceWriter::WriteFiles(t, out);
            std::cerr << "trace-gen: " << t.numRanks << " ranks, " << t.CountOps() << " ops -> "
                      << ChakraFileName(out, 0) << " ... " << ChakraFileName(out, t.numRanks - 1)
                      << "\n";
            return 0;
        }
        if (format != "native")
        {
            throw InputError::Flag("format", "expected native or chakra, got '" + format + "'");
        }
        if (check)
        {
            WorkloadTrace t = NativeTraceParser::ParseString(text, out.empty() ? "trace-gen" : out);
            std::cerr << "trace-gen: " << t.numRanks << " ranks, " << t.CountOps() << " ops in "
                      << t.ops.CountPrograms() << " programs (" << t.ops.MemoryBytes()
                      << " bytes), " << t.collectives.size() << " collectives, "
                      << gen.GetMicroBatches() << " micro-batches\n";
        }
        if (out.empty())
        {
            std::cout << text;
            return 0;
        }
        std::ofstream f(out);
        f << text;
        if (!f)
        {
            std::cerr << "trace-gen: cannot write " << out << "\n";
            return 1;
        }
    }
    catch (const InputError& e)
    {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
