#include "cascade/common/sqlite_db.hpp"

#include <sqlite3.h>

#include <system_error>
#include <utility>

namespace cascade {
namespace {

std::string format_error(const std::filesystem::path& path, std::string_view action,
                         const std::string& detail) {
  std::string out = path.string();
  out.append(": ").append(action).append(": ").append(detail);
  return out;
}

// Statements in messages are cut short: the operator needs to recognise the
// statement, not read the whole upsert.
std::string shorten(std::string_view sql) {
  constexpr std::size_t kMax = 60;
  if (sql.size() <= kMax) return std::string(sql);
  return std::string(sql.substr(0, kMax)) + "...";
}

// For I/O-type failures SQLite's own text ("unable to open database file",
// "disk I/O error") hides the cause; the OS error names it.
bool is_io_failure(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR || primary == SQLITE_FULL ||
         primary == SQLITE_READONLY || primary == SQLITE_PERM;
}

std::string describe(sqlite3* db, int rc) {
  std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int os_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
  if (is_io_failure(rc) && os_errno != 0) {
    detail += " (" + std::error_code(os_errno, std::generic_category()).message() + ")";
  }
  return detail;
}

// Before SQLite initializes (the first open): no memory statistics, which
// SQLite keeps under one process-wide mutex taken on every allocation;
// nothing here reads them. Refused (SQLITE_MISUSE) if something else in the
// process initialized SQLite first, which costs only the speed.
bool configure_library() {
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
}

}  // namespace

StoreError::StoreError(std::filesystem::path path, std::string_view action, std::string detail,
                       int sqlite_code)
    : std::runtime_error(format_error(path, action, detail)),
      path_(std::move(path)),
      detail_(std::move(detail)),
      sqlite_code_(sqlite_code) {}

void ensure_data_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw StoreError(dir, "cannot create data directory", ec.message());
  if (!std::filesystem::is_directory(dir, ec)) {
    throw StoreError(dir, "cannot use data directory", "it exists and is not a directory");
  }
}

namespace sqlite {

// ------------------------------------------------------------------- Db

Db::Db(std::filesystem::path file, const DbOptions& options) : path_(std::move(file)) {
  [[maybe_unused]] static const bool configured = configure_library();
  // NOMUTEX: each connection is used by one thread at a time (its owner's,
  // or behind the owner's mutex), so SQLite's own lock on every call (bind,
  // step, reset) is pure cost.
  const int flags =
      SQLITE_OPEN_NOMUTEX |
      (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // SQLite usually hands out a handle even on failure, holding the message.
    StoreError error(path_, "cannot open database", describe(db_, rc), rc);
    sqlite3_close_v2(db_);
    throw error;
  }
  // From here on the destructor does not run if we throw, so close by hand.
  try {
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, static_cast<int>(options.busy_timeout.count()));
    if (options.read_only) {
      exec("PRAGMA query_only=1");
      return;
    }
    Statement wal(*this, "PRAGMA journal_mode=WAL");
    const std::string mode = wal.step() ? wal.column_text(0) : std::string();
    wal.reset();
    if (mode != "wal") {
      throw StoreError(path_, "cannot enable WAL journal",
                       "the file system kept journal mode '" + mode + "'");
    }
    set_synchronous(options.synchronous);
    exec("PRAGMA foreign_keys=OFF");
  } catch (...) {
    sqlite3_close_v2(db_);
    throw;
  }
}

Db::~Db() {
  sqlite3_close_v2(db_);
}

void Db::exec(std::string_view sql) {
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    fail("cannot run '" + shorten(sql) + "'");
  }
}

void Db::set_synchronous(Synchronous mode) {
  exec(mode == Synchronous::kFull ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}

void Db::fail(std::string_view action) const {
  const int rc = sqlite3_extended_errcode(db_);
  throw StoreError(path_, action, describe(db_, rc), rc);
}

// ------------------------------------------------------------ Statement

Statement::Statement(Db& db, std::string_view sql) : db_(db), sql_(sql) {
  // PERSISTENT: these statements live as long as the store, which SQLite
  // uses to place them outside its short-lived lookaside memory.
  const int rc = sqlite3_prepare_v3(db_.handle(), sql_.data(), static_cast<int>(sql_.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK || stmt_ == nullptr) db_.fail("cannot prepare '" + shorten(sql_) + "'");
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) {
    db_.fail("cannot bind parameter " + std::to_string(index) + " of '" + shorten(sql_) + "'");
  }
}

Statement& Statement::bind_int64(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

// TRANSIENT: SQLite copies the bytes; STATIC: it reads them in place, and
// the statement remembers to clear that binding at its reset.
Statement::Lifetime Statement::lifetime(Bind bind) {
  if (bind == Bind::kCopy) return SQLITE_TRANSIENT;
  borrowing_ = true;
  return SQLITE_STATIC;
}

Statement& Statement::bind_text(int index, std::string_view value, Bind bind) {
  check_bind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), lifetime(bind), SQLITE_UTF8),
      index);
  return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes, Bind bind) {
  check_bind(sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), lifetime(bind)), index);
  return *this;
}

Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    reset();
    return false;
  }
  // Read the message before the reset, which may replace it.
  StoreError error(db_.path(), "statement '" + shorten(sql_) + "' failed",
                   describe(db_.handle(), rc), rc);
  reset();
  throw error;
}

void Statement::run() {
  if (step()) {
    reset();
    throw StoreError(db_.path(), "statement '" + shorten(sql_) + "'",
                     "returned rows where none were expected");
  }
}

// The return code repeats the last step's error, which step() already threw.
// A reset keeps the bindings; borrowed ones are cleared, as their bytes may
// be gone by the next run.
void Statement::reset() {
  sqlite3_reset(stmt_);
  if (!borrowing_) return;
  sqlite3_clear_bindings(stmt_);
  borrowing_ = false;
}

std::int64_t Statement::column_int64(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

std::string_view Statement::column_text_view(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  const int size = sqlite3_column_bytes(stmt_, index);  // after _text: the UTF-8 size
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(size)};
}

std::string_view Statement::column_blob_view(int index) const {
  const void* data = sqlite3_column_blob(stmt_, index);
  const int size = sqlite3_column_bytes(stmt_, index);
  if (data == nullptr) return {};
  return {static_cast<const char*>(data), static_cast<std::size_t>(size)};
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

// ---------------------------------------------------------- Transaction

Transaction::Transaction(Db& db) : db_(db) {
  db_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  // Some errors (disk full, I/O) make SQLite roll back by itself; a second
  // ROLLBACK would only fail, and a destructor has nobody to tell.
  if (!done_ && sqlite3_get_autocommit(db_.handle()) == 0) {
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

// ----------------------------------------------------------------- meta

std::int64_t read_meta(Db& db, std::string_view key, std::int64_t fallback) {
  Statement select(db, "SELECT value FROM meta WHERE key = ?1");
  select.bind_text(1, key);
  if (!select.step()) return fallback;
  const std::int64_t value = select.column_int64(0);
  select.reset();
  return value;
}

void write_meta(Db& db, std::string_view key, std::int64_t value) {
  Statement upsert(db,
                   "INSERT INTO meta(key, value) VALUES (?1, ?2) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  upsert.bind_text(1, key).bind_int64(2, value).run();
}

std::int64_t check_schema_version(Db& db, std::int64_t version, std::int64_t oldest_upgradable) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS meta("
      "key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID");
  const std::int64_t found = read_meta(db, "schema_version", 0);
  const bool upgradable = oldest_upgradable > 0 && found >= oldest_upgradable && found < version;
  if (found == 0 || upgradable) {
    write_meta(db, "schema_version", version);
  } else if (found != version) {
    const std::string readable =
        oldest_upgradable > 0 && oldest_upgradable < version
            ? "versions " + std::to_string(oldest_upgradable) + " to " + std::to_string(version)
            : "only version " + std::to_string(version);
    throw StoreError(
        db.path(), "unsupported schema",
        "the file has schema version " + std::to_string(found) + ", this build reads " + readable);
  }
  return found;
}

}  // namespace sqlite
}  // namespace cascade
