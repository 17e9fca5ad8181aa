#include "cascade/tests/integration/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace cascade::integration {

namespace {

// Only async-signal-safe calls between fork and exec: the test process has
// threads (ZeroMQ's), and the child must not touch a lock one of them held.
void write_all(int fd, const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const auto n = ::write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void exec_child(const char* program, char* const* argv, const char* out_path,
                             const char* err_path, pid_t parent) {
  // Die with the test process, even when it is killed by a timeout.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(126);  // the parent died before prctl
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = ::open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0) ::_exit(125);
  ::dup2(in, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  ::execv(program, argv);
  write_all(STDERR_FILENO, "integration harness: execv failed: ");
  write_all(STDERR_FILENO, program);
  write_all(STDERR_FILENO, "\n");
  ::_exit(127);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (exited) return "exit code " + std::to_string(code);
  return std::string("killed by signal ") + std::to_string(signal) + " (" + ::strsignal(signal) +
         ")";
}

Process::Process(std::string program, std::vector<std::string> args, std::filesystem::path log_stem)
    : program_(std::move(program)),
      args_(std::move(args)),
      out_path_(log_stem.string() + ".out"),
      err_path_(log_stem.string() + ".err") {
  std::vector<std::string> argv_storage;
  argv_storage.reserve(args_.size() + 1);
  argv_storage.push_back(program_);
  argv_storage.insert(argv_storage.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string out = out_path_.string();
  const std::string err = err_path_.string();
  const pid_t parent = ::getpid();

  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid_ == 0) exec_child(program_.c_str(), argv.data(), out.c_str(), err.c_str(), parent);
}

Process::~Process() {
  if (!status_) kill_and_wait();
}

bool Process::reap(bool block) {
  if (status_) return true;
  int raw = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &raw, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  ExitStatus s;
  if (r < 0) {
    s.exited = false;  // not ours any more; should not happen
  } else if (WIFEXITED(raw)) {
    s.exited = true;
    s.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    s.signal = WTERMSIG(raw);
  }
  status_ = s;
  return true;
}

bool Process::running() {
  return !reap(false);
}

void Process::signal(int sig) {
  if (!reap(false)) ::kill(pid_, sig);
}

std::optional<ExitStatus> Process::wait_for(Millis timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!reap(false)) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(Millis{2});
  }
  return status_;
}

ExitStatus Process::kill_and_wait() {
  if (!reap(false)) {
    ::kill(pid_, SIGKILL);
    reap(true);
  }
  return *status_;
}

std::string Process::out() const {
  return read_file(out_path_);
}
std::string Process::err() const {
  return read_file(err_path_);
}

std::string Process::command_line() const {
  std::string text = program_;
  for (const auto& arg : args_)
    text += " " + arg;
  return text;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error(std::string("mkdtemp failed: ") + std::strerror(errno));
  path_ = pattern;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace cascade::integration
