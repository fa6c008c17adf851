/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The standard output of a shell command, for the tests that check files with outside
// tools (tshark): empty when the command cannot be started.
#ifndef AI_FABRIC_TEST_RUN_COMMAND_H
#define AI_FABRIC_TEST_RUN_COMMAND_H

#include <array>
#include <cstdio>
#include <string>

namespace ns3
{
namespace test_util
{

inline std::string
RunCommand(const std::string& command)
{
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr)
    {
        return out;
    }
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    {
        out.append(buf.data(), n);
    }
    pclose(pipe);
    return out;
}

} // namespace test_util
} // namespace ns3

#endif // AI_FABRIC_TEST_RUN_COMMAND_H
