#include "cascade/agent/api/registration_journal.hpp"

namespace cascade::agent::api {

namespace {

constexpr const char* kFileName = "agent-api.db";

sqlite::DbOptions durable() {
  sqlite::DbOptions options;
  options.synchronous = sqlite::Synchronous::kFull;
  return options;
}

}  // namespace

struct RegistrationJournal::Statements {
  explicit Statements(sqlite::Db& db)
      : put(db,
            "INSERT INTO registrations(key, method, path, body) VALUES(?1, ?2, ?3, ?4) "
            "ON CONFLICT(key) DO UPDATE SET method = ?2, path = ?3, body = ?4"),
        remove(db, "DELETE FROM registrations WHERE key = ?1"),
        all(db, "SELECT key, method, path, body FROM registrations ORDER BY key") {}
  sqlite::Statement put;
  sqlite::Statement remove;
  sqlite::Statement all;
};

std::unique_ptr<RegistrationJournal> RegistrationJournal::open(
    const std::filesystem::path& data_dir) {
  ensure_data_dir(data_dir);
  return std::unique_ptr<RegistrationJournal>(new RegistrationJournal(data_dir / kFileName));
}

RegistrationJournal::RegistrationJournal(const std::filesystem::path& file) : db_(file, durable()) {
  db_.exec(
      "CREATE TABLE IF NOT EXISTS registrations("
      "key TEXT PRIMARY KEY, method TEXT NOT NULL, path TEXT NOT NULL, body TEXT NOT NULL)");
  sql_ = std::make_unique<Statements>(db_);
}

RegistrationJournal::~RegistrationJournal() = default;

void RegistrationJournal::put(const Entry& entry) {
  std::lock_guard lock(mu_);
  sql_->put.bind_text(1, entry.key)
      .bind_text(2, entry.method)
      .bind_text(3, entry.path)
      .bind_text(4, entry.body)
      .run();
}

void RegistrationJournal::remove(std::string_view key) {
  std::lock_guard lock(mu_);
  sql_->remove.bind_text(1, key).run();
}

std::vector<RegistrationJournal::Entry> RegistrationJournal::entries() {
  std::lock_guard lock(mu_);
  std::vector<Entry> out;
  auto& all = sql_->all;
  while (all.step())
    out.push_back({all.column_text(0), all.column_text(1), all.column_text(2), all.column_text(3)});
  return out;
}

std::string RegistrationJournal::native_key(std::string_view service, std::string_view group,
                                            std::string_view id) {
  return "native " + std::string(service) + "@" + std::string(group) + " " + std::string(id);
}

std::string RegistrationJournal::consul_key(std::string_view id) {
  return "consul " + std::string(id);
}

}  // namespace cascade::agent::api
