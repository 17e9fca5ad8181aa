#include "cascade/hub/probe_runner.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <utility>

namespace cascade::hub {
namespace {

// One connection attempt in flight.
struct Attempt {
  int fd = -1;
  ProbeOutcome outcome = ProbeOutcome::kNoAnswer;
  bool done = false;
};

bool fill_address(const ProbeTarget& target, sockaddr_storage& storage, socklen_t& length) {
  const auto host = target.host == "localhost" ? std::string("127.0.0.1") : target.host;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  std::memset(&storage, 0, sizeof(storage));
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(target.port);
    length = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(target.port);
    length = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

ProbeOutcome outcome_of_error(int error) {
  return error == ECONNREFUSED ? ProbeOutcome::kRefused : ProbeOutcome::kNoAnswer;
}

// Starts a non-blocking connect; the attempt is done at once when the
// kernel already knows the answer (loopback often does).
Attempt start(const ProbeRequest& request) {
  Attempt attempt;
  const auto target = probe_target(request.address);
  sockaddr_storage address{};
  socklen_t length = 0;
  if (!target || !fill_address(*target, address, length)) {
    attempt.done = true;  // cannot be probed: no evidence either way
    return attempt;
  }
  attempt.fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (attempt.fd < 0) {
    attempt.done = true;
    return attempt;
  }
  if (::connect(attempt.fd, reinterpret_cast<sockaddr*>(&address), length) == 0) {
    attempt.outcome = ProbeOutcome::kAccepted;
    attempt.done = true;
  } else if (errno != EINPROGRESS) {
    attempt.outcome = outcome_of_error(errno);
    attempt.done = true;
  }
  return attempt;
}

void finish(Attempt& attempt) {
  int error = 0;
  socklen_t length = sizeof(error);
  ::getsockopt(attempt.fd, SOL_SOCKET, SO_ERROR, &error, &length);
  attempt.outcome = error == 0 ? ProbeOutcome::kAccepted : outcome_of_error(error);
  attempt.done = true;
}

// Waits for every attempt still in flight, up to `timeout` in all.
void wait_all(std::vector<Attempt>& attempts, Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Attempt*> waiting;
    for (auto& attempt : attempts) {
      if (attempt.done) continue;
      fds.push_back({attempt.fd, POLLOUT, 0});
      waiting.push_back(&attempt);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (fds.empty() || left.count() <= 0) return;  // the rest: no answer
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return;
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents != 0) finish(*waiting[i]);
  }
}

}  // namespace

std::optional<ProbeTarget> probe_target(std::string_view address) {
  if (const auto scheme = address.find("://"); scheme != std::string_view::npos)
    address.remove_prefix(scheme + 3);
  address = address.substr(0, address.find('/'));
  std::string_view host;
  std::string_view port;
  if (address.starts_with('[')) {
    const auto close = address.find("]:");
    if (close == std::string_view::npos) return std::nullopt;
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos || address.find(':') != colon) return std::nullopt;
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  std::uint16_t number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (host.empty() || error != std::errc{} || end != port.data() + port.size() || number == 0)
    return std::nullopt;
  return ProbeTarget{std::string(host), number};
}

ProbeRunner::ProbeRunner(ProbeRunnerConfig config) : config_(config), thread_([this] { run(); }) {}

ProbeRunner::~ProbeRunner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ProbeRunner::submit(std::vector<ProbeRequest> requests) {
  if (requests.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (auto& request : requests)
      requests_.push_back(std::move(request));
  }
  cv_.notify_one();
}

std::vector<ProbeResult> ProbeRunner::take_results() {
  std::lock_guard lock(mu_);
  return std::exchange(results_, {});
}

void ProbeRunner::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !requests_.empty(); });
    if (stop_) return;
    std::vector<ProbeRequest> batch;
    while (!requests_.empty() && batch.size() < config_.max_concurrent) {
      batch.push_back(std::move(requests_.front()));
      requests_.pop_front();
    }
    lock.unlock();
    auto results = probe_batch(std::move(batch));
    lock.lock();
    for (auto& result : results)
      results_.push_back(std::move(result));
  }
}

std::vector<ProbeResult> ProbeRunner::probe_batch(std::vector<ProbeRequest> batch) const {
  std::vector<Attempt> attempts;
  attempts.reserve(batch.size());
  for (const auto& request : batch)
    attempts.push_back(start(request));
  wait_all(attempts, config_.timeout);
  std::vector<ProbeResult> results;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (attempts[i].fd >= 0) ::close(attempts[i].fd);
    results.push_back(
        {std::move(batch[i].node_id), std::move(batch[i].address), attempts[i].outcome});
  }
  return results;
}

}  // namespace cascade::hub
