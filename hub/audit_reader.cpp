#include "cascade/hub/audit_reader.hpp"

#include "cascade/hub/sqlite_store.hpp"

namespace cascade::hub {

AuditReader::AuditReader(const std::filesystem::path& file)
    : db_(file, sqlite::DbOptions{.read_only = true}) {}

std::vector<AuditEntry> AuditReader::page(std::optional<std::int64_t> before, std::size_t limit) {
  std::lock_guard lock(mutex_);
  return read_audit_page(db_, before, limit);
}

}  // namespace cascade::hub
