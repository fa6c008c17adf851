/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "run-parameters.h"

#include "ns3/global-value.h"
#include "ns3/object-base.h"
#include "ns3/string.h"

#include <nlohmann/json.hpp>

namespace ns3
{

std::string
RunParameters::JsonQuote(const std::string& text)
{
    // replace: invalid UTF-8 (e.g. a raw byte from a file name) becomes U+FFFD
    // instead of an exception in the middle of a run.
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void
RunParameters::SetEncoded(const std::string& key, std::string json)
{
    for (auto& item : m_items)
    {
        if (item.first == key)
        {
            item.second = std::move(json);
            return;
        }
    }
    m_items.emplace_back(key, std::move(json));
}

void
RunParameters::Set(const std::string& key, const std::string& value)
{
    SetEncoded(key, JsonQuote(value));
}

void
RunParameters::Set(const std::string& key, const char* value)
{
    Set(key, std::string(value ? value : ""));
}

void
RunParameters::Set(const std::string& key, int64_t value)
{
    SetEncoded(key, nlohmann::json(value).dump());
}

void
RunParameters::Set(const std::string& key, uint64_t value)
{
    SetEncoded(key, nlohmann::json(value).dump());
}

void
RunParameters::Set(const std::string& key, int value)
{
    Set(key, static_cast<int64_t>(value));
}

void
RunParameters::Set(const std::string& key, uint32_t value)
{
    Set(key, static_cast<uint64_t>(value));
}

void
RunParameters::Set(const std::string& key, double value)
{
    // JSON has no NaN/Inf: nlohmann writes null for them, which is the honest value.
    SetEncoded(key, nlohmann::json(value).dump());
}

void
RunParameters::Set(const std::string& key, bool value)
{
    SetEncoded(key, value ? "true" : "false");
}

void
RunParameters::AddGlobalValues()
{
    for (auto it = GlobalValue::Begin(); it != GlobalValue::End(); ++it)
    {
        StringValue value;
        (*it)->GetValue(value);
        Set("global." + (*it)->GetName(), value.Get());
    }
}

void
RunParameters::AddAttributes(const std::string& prefix, const ObjectBase& object)
{
    const TypeId tid = object.GetInstanceTypeId();
    for (std::size_t i = 0; i < tid.GetAttributeN(); ++i)
    {
        const TypeId::AttributeInformation info = tid.GetAttribute(i);
        StringValue value;
        object.GetAttribute(info.name, value);
        Set(prefix + info.name, value.Get());
    }
}

std::string
RunParameters::ToJson() const
{
    std::string out = "{";
    for (std::size_t i = 0; i < m_items.size(); ++i)
    {
        if (i)
        {
            out += ",";
        }
        out += JsonQuote(m_items[i].first);
        out += ":";
        out += m_items[i].second;
    }
    out += "}";
    return out;
}

} // namespace ns3
