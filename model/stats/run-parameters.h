/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RUN_PARAMETERS_H
#define AI_FABRIC_RUN_PARAMETERS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

class ObjectBase;

/**
 * \ingroup ai-fabric
 * Parameters in force for one run, serialised as the JSON object stored in
 * runs.params.  Scenarios Set() every command-line value and preset; keys keep
 * their insertion order and a repeated key replaces the earlier value.
 */
class RunParameters
{
  public:
    void Set(const std::string& key, const std::string& value);
    void Set(const std::string& key, const char* value);
    void Set(const std::string& key, int64_t value);
    void Set(const std::string& key, uint64_t value);
    void Set(const std::string& key, int value);
    void Set(const std::string& key, uint32_t value);
    void Set(const std::string& key, double value);
    void Set(const std::string& key, bool value);

    /// Add every ns-3 GlobalValue (RngSeed, RngRun, ...) as "global.<name>".
    void AddGlobalValues();
    /// Add every attribute of \p object as "<prefix><attribute>" (its value as a string).
    void AddAttributes(const std::string& prefix, const ObjectBase& object);

    /// The JSON object, e.g. {"nodes":8,"preset":"dgx-h100"}.
    std::string ToJson() const;

    /// \p text as a quoted JSON string with all required escapes.
    static std::string JsonQuote(const std::string& text);

  private:
    void SetEncoded(const std::string& key, std::string json);
    std::vector<std::pair<std::string, std::string>> m_items; //!< key, encoded JSON value
};

} // namespace ns3

#endif
