#pragma once
// A child process of an integration test: one of the real binaries, started
// with fork/execv, its stdout and stderr written to files in the test's
// directory so they can be read while it runs and shown when a test fails.
//
// Ownership: a Process kills (SIGKILL) and reaps its child when destroyed, so
// nothing outlives the test that started it. The child also gets SIGKILL when
// the test process itself dies (PR_SET_PDEATHSIG), e.g. on a crash or a ctest
// timeout. Thread-safety: none; one test thread drives it.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cascade::integration {

using Millis = std::chrono::milliseconds;

// How a child ended.
struct ExitStatus {
  bool exited = false;  // true: returned `code`; false: killed by `signal`
  int code = -1;
  int signal = 0;

  bool exited_with(int expected) const { return exited && code == expected; }
  std::string describe() const;
};

class Process {
 public:
  // Starts `program` with `args` (argv[0] is set to the program path). Output
  // goes to `log_stem`.out and `log_stem`.err; stdin is /dev/null.
  // Throws std::runtime_error when fork fails; an exec failure shows up as
  // exit code 127 with the reason in stderr.
  Process(std::string program, std::vector<std::string> args, std::filesystem::path log_stem);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& program() const { return program_; }
  const std::vector<std::string>& args() const { return args_; }

  // True until the child has ended (reaps it when it has).
  bool running();
  // Sends `sig` to the child if it still runs.
  void signal(int sig);
  // Waits up to `timeout` for the child to end; nullopt if it still runs.
  std::optional<ExitStatus> wait_for(Millis timeout);
  // SIGKILL, then waits until the child is reaped.
  ExitStatus kill_and_wait();
  // How it ended, once reaped.
  const std::optional<ExitStatus>& exit_status() const { return status_; }

  // Everything the child wrote so far.
  std::string out() const;
  std::string err() const;
  const std::filesystem::path& out_path() const { return out_path_; }
  const std::filesystem::path& err_path() const { return err_path_; }

  // Command line as text, for failure messages.
  std::string command_line() const;

 private:
  bool reap(bool block);

  std::string program_;
  std::vector<std::string> args_;
  std::filesystem::path out_path_;
  std::filesystem::path err_path_;
  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

// Reads a whole file; "" if it does not exist.
std::string read_file(const std::filesystem::path& path);

// A fresh directory, removed with everything in it when destroyed unless
// keep() was called (a failed test keeps its logs for inspection).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace cascade::integration
