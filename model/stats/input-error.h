/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INPUT_ERROR_H
#define AI_FABRIC_INPUT_ERROR_H

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Bad input to a scenario: a file, or a command-line flag (file "command line", line 0,
 * field = the flag's name).  what() is the full message
 * ("trace.txt:12: field 'bytes': expected a size like 64MiB, got '64XB'"); the parts are
 * kept so that ScenarioRun can store them in the failed run row.
 */
class InputError : public std::runtime_error
{
  public:
    InputError(const std::string& file,
               uint32_t line,
               const std::string& field,
               const std::string& message);

    /// A refused command-line flag: "command line: field 'servers': <message>".
    static InputError Flag(const std::string& flag, const std::string& message);

    const std::string& GetFile() const;
    uint32_t GetLine() const; ///< 0 when the error is not tied to one line
    const std::string& GetField() const;
    const std::string& GetDetail() const;

  private:
    std::string m_file;
    uint32_t m_line;
    std::string m_field;
    std::string m_detail;
};

} // namespace ns3

#endif
