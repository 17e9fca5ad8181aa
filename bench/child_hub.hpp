#pragma once
// The real cascade-hub binary in a child process, for the benchmarks that
// measure what only the binary shows (its resident memory, its start from
// SQLite, a crash): started with a data directory and an endpoint, its log
// in DIR/hub.log, its bound endpoint read from DIR/hub.endpoint. Stopped
// gracefully (SIGTERM, then SIGKILL after a timeout) or killed as in a crash.
// Header-only; used by cascade_hub_bench, cascade_restart_bench and
// cascade_restart_scale_bench.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cascade/bench/bench_util.hpp"

// Defined by bench/CMakeLists.txt for the benches that run the binary.
#ifndef CASCADE_HUB_BINARY
#define CASCADE_HUB_BINARY ""
#endif

namespace cascade::bench {

// The cascade-hub built with the bench ("" when the build did not say).
inline constexpr const char* kHubBinary = CASCADE_HUB_BINARY;

struct ChildHubOptions {
  std::string binary;                        // the cascade-hub to run
  std::filesystem::path dir;                 // --data; also where hub.log and hub.endpoint go
  std::string id = "bench-child-hub";        // --id
  std::string listen = "tcp://127.0.0.1:*";  // --listen; `*` picks a free port
  std::vector<std::string> extra_args{};     // appended to the command line
  bool append_log = false;                   // a restarted hub adds to the first one's log
  std::string log_level = "warn";            // --log-level
};

class ChildHub {
 public:
  // Starts the binary; endpoint() waits until it serves.
  explicit ChildHub(const ChildHubOptions& o) : dir_(o.dir) {
    std::filesystem::create_directories(o.dir);
    std::filesystem::remove(o.dir / "hub.endpoint");  // a restart must not read the old one
    std::vector<std::string> args{o.binary,       "--id",        o.id,           "--listen",
                                  o.listen,       "--data",      o.dir.string(),
                                  "--probe-held",  // made-up instance addresses: never dialled
                                  "off",          "--log-level", o.log_level};
    args.insert(args.end(), o.extra_args.begin(), o.extra_args.end());
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) exec_logged(args, log(), o.append_log);
  }
  ~ChildHub() { stop(); }
  ChildHub(const ChildHub&) = delete;
  ChildHub& operator=(const ChildHub&) = delete;

  // The endpoint it bound, once it wrote it (throws after `patience`, or when
  // the process exited). A hub loads its store before it binds.
  const std::string& endpoint(std::chrono::seconds patience = std::chrono::seconds(15)) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (endpoint_.empty()) {
      std::ifstream in(dir_ / "hub.endpoint");
      std::string line;
      if (std::getline(in, line) && line.starts_with("tcp://")) {
        endpoint_ = line;
        break;
      }
      if (exited() || std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("the hub did not start; see " + log().string());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return endpoint_;
  }

  pid_t pid() const { return pid_; }
  std::uint64_t rss() const { return rss_kib(pid_); }

  // SIGTERM (the hub commits and exits), SIGKILL after `patience`.
  void stop(std::chrono::milliseconds patience = std::chrono::seconds(10)) {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (!exited() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    crash();
  }

  // SIGKILL, as a crash: nothing is committed or closed by the hub.
  void crash() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  std::filesystem::path log() const { return dir_ / "hub.log"; }

  // Reaps the child if it exited (then pid_ is -1).
  bool exited() {
    if (pid_ <= 0) return true;
    if (waitpid(pid_, nullptr, WNOHANG) != pid_) return false;
    pid_ = -1;
    return true;
  }

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  std::string endpoint_;
};

}  // namespace cascade::bench
