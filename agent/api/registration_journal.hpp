#pragma once
// The registrations applications made through the agent's HTTP API, kept on
// disk so that an agent restart does not drop what it acknowledged: in
// DATA_DIR/agent-api.db (with --data), each registration as the request that
// made it (method, path, JSON body), keyed by what identifies the instance.
// At start the agent replays them through the API's own routes before it
// listens, so a restored registration is checked and applied exactly as it
// was the first time. A deregistration removes its entry.
//
//   registrations(key TEXT PRIMARY KEY, method TEXT, path TEXT, body TEXT)
//
// Synchronous FULL: an entry is on disk before its request is answered.
// Thread-safety: every method may be called from any thread (one mutex).

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/sqlite_db.hpp"

namespace cascade::agent::api {

class RegistrationJournal {
 public:
  struct Entry {
    std::string key;  // "native SERVICE@GROUP ID" or "consul ID"
    std::string method;
    std::string path;
    std::string body;
    friend bool operator==(const Entry&, const Entry&) = default;
  };

  // Creates `data_dir` when missing and opens (or creates) the file. Throws
  // StoreError naming the directory or file when either is unusable.
  static std::unique_ptr<RegistrationJournal> open(const std::filesystem::path& data_dir);
  ~RegistrationJournal();

  // Replaces the entry with the same key. Throws StoreError (nothing changed).
  void put(const Entry& entry);
  void remove(std::string_view key);
  // In key order.
  std::vector<Entry> entries();

  static std::string native_key(std::string_view service, std::string_view group,
                                std::string_view id);
  static std::string consul_key(std::string_view id);

 private:
  struct Statements;
  explicit RegistrationJournal(const std::filesystem::path& file);

  std::mutex mu_;
  sqlite::Db db_;  // before the statements, which are finalized first
  std::unique_ptr<Statements> sql_;
};

}  // namespace cascade::agent::api
