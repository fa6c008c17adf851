/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// A private directory for one test's files, removed with everything in it when the test
// ends, however it ends (a failed ASSERT returns early): runs of the suite leave nothing
// behind in the temporary directory.
#ifndef AI_FABRIC_TEST_SCRATCH_DIR_H
#define AI_FABRIC_TEST_SCRATCH_DIR_H

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace ns3
{
namespace test_util
{

class ScratchDir
{
  public:
    // \p tag names the test in the directory's name, for whoever finds one of a run that
    // was killed.  TMPDIR is honoured as mkdtemp's callers usually do.
    explicit ScratchDir(const std::string& tag)
    {
        const char* env = std::getenv("TMPDIR");
        const std::string base = env && *env ? env : "/tmp";
        std::string tmpl = base + "/ai-fabric-" + tag + "-XXXXXX";
        std::vector<char> buffer(tmpl.begin(), tmpl.end());
        buffer.push_back('\0');
        if (!mkdtemp(buffer.data()))
        {
            throw std::runtime_error("mkdtemp failed for " + tmpl);
        }
        m_path = buffer.data();
    }

    ~ScratchDir()
    {
        std::error_code ignored; // a destructor must not throw; nothing to do if it fails
        std::filesystem::remove_all(m_path, ignored);
    }

    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::string& Path() const
    {
        return m_path;
    }

    std::string File(const std::string& name) const
    {
        return m_path + "/" + name;
    }

  private:
    std::string m_path;
};

} // namespace test_util
} // namespace ns3

#endif // AI_FABRIC_TEST_SCRATCH_DIR_H
