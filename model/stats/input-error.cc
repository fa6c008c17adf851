/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/input-error.h"

#include <sstream>

namespace ns3
{

namespace
{

std::string
ComposeMessage(const std::string& file,
               uint32_t line,
               const std::string& field,
               const std::string& message)
{
    std::ostringstream os;
    os << (file.empty() ? "<input>" : file);
    if (line > 0)
    {
        os << ":" << line;
    }
    os << ": ";
    if (!field.empty())
    {
        os << "field '" << field << "': ";
    }
    os << message;
    return os.str();
}

} // namespace

InputError::InputError(const std::string& file,
                       uint32_t line,
                       const std::string& field,
                       const std::string& message)
    : std::runtime_error(ComposeMessage(file, line, field, message)),
      m_file(file),
      m_line(line),
      m_field(field),
      m_detail(message)
{
}

InputError
InputError::Flag(const std::string& flag, const std::string& message)
{
    return InputError("command line", 0, flag, message);
}

const std::string&
InputError::GetFile() const
{
    return m_file;
}

uint32_t
InputError::GetLine() const
{
    return m_line;
}

const std::string&
InputError::GetField() const
{
    return m_field;
}

const std::string&
InputError::GetDetail() const
{
    return m_detail;
}

} // namespace ns3
