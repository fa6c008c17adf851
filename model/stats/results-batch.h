/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RESULTS_BATCH_H
#define AI_FABRIC_RESULTS_BATCH_H

#include "results-schema.h"
#include "results-sqlite.h"

#include <cstddef>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ns3
{

/// The buffered rows of one table and its INSERT, prepared once per Open and reused.
template <typename Row>
class RowBatch
{
  public:
    RowBatch()
        : m_table(TableOf<Row>()),
          m_what("inserting into " + m_table.Def().name)
    {
    }

    void Prepare(SqliteFile& db)
    {
        m_insert.Prepare(db, m_table.Def().InsertSql());
    }

    void Finalize() noexcept
    {
        m_insert.Finalize();
    }

    void Add(Row row)
    {
        m_rows.push_back(std::move(row));
    }

    std::size_t Size() const
    {
        return m_rows.size();
    }

    /// Inserts every buffered row as part of run \p runId, inside the caller's transaction.
    /// The rows stay buffered until Clear, so a failed batch can be retried.
    void Write(int64_t runId)
    {
        for (const Row& row : m_rows)
        {
            m_table.Bind(row, runId, m_insert);
            m_insert.Run(m_what);
        }
    }

    void Clear() noexcept
    {
        m_rows.clear();
    }

  private:
    const RecordTable<Row>& m_table;
    std::string m_what;
    Statement m_insert;
    std::vector<Row> m_rows;
};

/// One RowBatch per table; ForEach visits them in schema order.
template <typename... Rows>
class RowBatches
{
  public:
    template <typename Row>
    RowBatch<Row>& Of()
    {
        return std::get<RowBatch<Row>>(m_batches);
    }

    template <typename F>
    void ForEach(F&& f)
    {
        std::apply([&f](auto&... batch) { (f(batch), ...); }, m_batches);
    }

    std::size_t Size() const
    {
        return std::apply([](const auto&... batch) { return (batch.Size() + ... + 0); }, m_batches);
    }

  private:
    std::tuple<RowBatch<Rows>...> m_batches;
};

} // namespace ns3

#endif
