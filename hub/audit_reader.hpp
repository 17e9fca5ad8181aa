#pragma once
// The hub's audit log (admin_audit in DATA_DIR/hub.db, hub/sqlite_store.hpp)
// read through a connection of its own: the HTTP admin API pages through it
// on its own thread while the owning thread writes, and the owning thread
// never runs a query for it. WAL lets the reader read while the writer
// commits; a page sees the log as of its last commit.
//
// Thread-safety: page() from any thread (one query at a time).

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "cascade/common/sqlite_db.hpp"
#include "cascade/hub/store.hpp"

namespace cascade::hub {

class AuditReader {
 public:
  // Opens `file` read-only; the store must have created it. Throws StoreError.
  explicit AuditReader(const std::filesystem::path& file);

  // Newest first: at most `limit` records older than the one with id
  // `before` (nullopt: from the newest). Throws StoreError.
  std::vector<AuditEntry> page(std::optional<std::int64_t> before, std::size_t limit);

 private:
  std::mutex mutex_;
  sqlite::Db db_;
};

}  // namespace cascade::hub
