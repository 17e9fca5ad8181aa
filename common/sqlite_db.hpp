#pragma once
// A small RAII layer over the sqlite3 C API, shared by the hub's store and the
// agent's snapshot. It exists so that the stores read as SQL plus bindings, and
// so that every SQLite failure becomes one exception type naming the file.
//
// Threading: a Db and its Statements belong to one thread (the stores are used
// from their owner's thread only). Nothing here is safe to share.
//
// Errors: every failure of the environment (cannot create or open the file,
// disk full, database locked by another process, corrupt content) is thrown
// as StoreError. Misuse by our own code (bad SQL text, wrong bind index) also
// ends up there, because SQLite reports both the same way; the message says
// which statement failed.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace cascade {

// A failure of durable storage. what() reads "<file>: <action>: <detail>", so a
// log line or an exit message alone tells the operator which file to look at.
class StoreError : public std::runtime_error {
 public:
  // `sqlite_code` is the extended result code, 0 when the failure did not
  // come from SQLite (e.g. the data directory could not be created).
  StoreError(std::filesystem::path path, std::string_view action, std::string detail,
             int sqlite_code = 0);

  const std::filesystem::path& path() const { return path_; }
  // The SQLite (or OS) message alone, without path and action.
  const std::string& detail() const { return detail_; }
  int sqlite_code() const { return sqlite_code_; }

 private:
  std::filesystem::path path_;
  std::string detail_;
  int sqlite_code_;
};

// Creates `dir` (and parents) when missing. Throws StoreError naming `dir` when
// it cannot be created or exists but is not a directory.
void ensure_data_dir(const std::filesystem::path& dir);

namespace sqlite {

// How hard a commit waits for the disk. With WAL both survive a process
// crash; NORMAL may lose the last commits on power loss, FULL does not.
enum class Synchronous { kNormal, kFull };

struct DbOptions {
  Synchronous synchronous = Synchronous::kNormal;
  // How long a statement waits for a lock held by another connection (another
  // process opening the same file, e.g. an operator's sqlite3 shell).
  std::chrono::milliseconds busy_timeout{5000};
  // A reader beside the file's writer (another connection, another thread):
  // never creates the file, never writes (query_only), and takes the journal
  // mode the writer set (WAL lets it read while the writer commits).
  bool read_only = false;
};

// One open database file: WAL journal, the given synchronous mode, foreign
// keys off (our schemas have none; the pragma pins the behaviour).
class Db {
 public:
  // Opens or creates `file` (opens only, with DbOptions::read_only). Throws
  // StoreError when it cannot be opened or does not accept WAL mode (e.g. a
  // filesystem without shared memory).
  Db(std::filesystem::path file, const DbOptions& options);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more statements that return no rows (schema, pragmas).
  void exec(std::string_view sql);
  void set_synchronous(Synchronous mode);

  const std::filesystem::path& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Throws StoreError for the connection's latest error, e.g. action "prepare
  // SELECT ...". Used by Statement and Transaction.
  [[noreturn]] void fail(std::string_view action) const;

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

// A prepared statement, prepared once and reused: bind, step, read columns.
// Indices: bind_* count from 1 and column_* from 0, as in SQLite itself.
class Statement {
 public:
  Statement(Db& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind_int64(int index, std::int64_t value);
  // kCopy: SQLite copies the bytes, so a temporary may be bound. kBorrow:
  // SQLite reads them where they are, so they must stay valid until the
  // statement's run() returns (or step() returns false); the bindings are
  // cleared then, so no pointer outlives them. A store writing a batch of
  // rows borrows: the copies were a fifth of its thread at 1M registrations.
  enum class Bind { kCopy, kBorrow };
  Statement& bind_text(int index, std::string_view value, Bind bind = Bind::kCopy);
  // Bytes as a BLOB; std::string is our byte buffer (as in proto::Bytes).
  Statement& bind_blob(int index, std::string_view bytes, Bind bind = Bind::kCopy);
  Statement& bind_null(int index);

  // Advances to the next row: true when a row is ready to read, false when the
  // statement is done (it is then reset, so it can be rebound and run again
  // and holds no read lock). Throws StoreError on failure, after a reset.
  bool step();
  // Runs a statement that returns no rows, then resets it.
  void run();
  // Resets after a partial read (done automatically when step() returns false).
  void reset();

  std::int64_t column_int64(int index) const;
  std::string column_text(int index) const { return std::string(column_text_view(index)); }
  std::string column_blob(int index) const { return std::string(column_blob_view(index)); }
  // The column's bytes where SQLite holds them: valid until the next step(),
  // reset() or read of the same column as another type. For reading many
  // rows without a heap string per text.
  std::string_view column_text_view(int index) const;
  std::string_view column_blob_view(int index) const;
  bool column_is_null(int index) const;

 private:
  void check_bind(int rc, int index);
  // SQLite's destructor argument (sqlite3_destructor_type) for this kind;
  // a borrow also marks the bindings to be cleared at the reset.
  using Lifetime = void (*)(void*);
  Lifetime lifetime(Bind bind);

  Db& db_;
  std::string sql_;  // kept for error messages
  sqlite3_stmt* stmt_ = nullptr;
  bool borrowing_ = false;  // a binding points at the caller's bytes
};

// BEGIN IMMEDIATE on construction: the write lock is taken up front, so a
// transaction never fails half-way for want of it. Rolls back on destruction
// unless commit() succeeded, so an exception leaves the file as it was.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

// SQLite integers are signed 64-bit. Our epochs, digests and versions are
// unsigned 64-bit and a digest uses the top bit, so they are stored with their
// bits unchanged (two's complement) and read back the same way: exact round
// trip, at the price of large values looking negative in a sqlite3 shell.
inline std::int64_t from_u64(std::uint64_t v) {
  return static_cast<std::int64_t>(v);
}
inline std::uint64_t to_u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

// Reads an integer of the `meta(key TEXT PRIMARY KEY, value INTEGER)` table
// both stores keep; `fallback` when the key is absent.
std::int64_t read_meta(Db& db, std::string_view key, std::int64_t fallback);
void write_meta(Db& db, std::string_view key, std::int64_t value);

// Creates the meta table and records `version` in a new file. A file of an
// older version from `oldest_upgradable` on (0: none) is accepted and marked
// `version`: the only migrations are additive, the caller's CREATE TABLE IF
// NOT EXISTS adds what the newer version has. Any other version (a newer
// build's file, or one too old) throws StoreError. Call it inside the
// Transaction that creates the store's tables, so a file gets its version and
// tables together. @return the version the file had: 0 for a new file.
std::int64_t check_schema_version(Db& db, std::int64_t version, std::int64_t oldest_upgradable = 0);

}  // namespace sqlite
}  // namespace cascade
