#pragma once
// Prometheus's own linter on metrics text, for any test: `promtool check
// metrics` (Debian's prometheus package) reads exposition text from stdin
// and exits 0 with no output when it parses and breaks none of its naming and
// help rules; on a problem it prints one line each and exits non-zero. Run as
//   promtool check metrics < FILE     (stdout and stderr kept together)
// with no shell in between.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

extern char** environ;

namespace cascade::testing {

struct PromtoolResult {
  int exit_code = -1;
  std::string output;  // promtool's stdout and stderr
};

// `text` checked by the promtool at `promtool`; its files go to `work_dir`.
inline PromtoolResult promtool_check(const std::string& promtool, const std::string& text,
                                     const std::filesystem::path& work_dir) {
  const auto input = work_dir / "metrics.prom", output = work_dir / "promtool.out";
  std::ofstream(input, std::ios::binary) << text;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, input.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string program = promtool, command = "check", what = "metrics";
  char* argv[] = {program.data(), command.data(), what.data(), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, promtool.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  PromtoolResult result;
  int status = 0;
  if (spawned != 0 || ::waitpid(pid, &status, 0) != pid) {
    result.output = std::string("cannot run promtool: ") + std::strerror(spawned ? spawned : errno);
    return result;
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ostringstream out;
  out << std::ifstream(output).rdbuf();
  result.output = out.str();
  return result;
}

}  // namespace cascade::testing
