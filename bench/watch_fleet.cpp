#include "cascade/bench/watch_fleet.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace cascade::bench {

namespace {

constexpr std::size_t kEventsPerWait = 4096;

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// Header names compare without regard to case.
bool same_name(std::string_view name, std::string_view lower) {
  return name.size() == lower.size() && strncasecmp(name.data(), lower.data(), name.size()) == 0;
}

std::uint64_t number_in(std::string_view text) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

int milliseconds_until(WatchFleet::SteadyClock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - WatchFleet::SteadyClock::now());
  return static_cast<int>(std::max<std::int64_t>(left.count(), 0));
}

}  // namespace

WatchFleet::WatchFleet(std::uint16_t port, std::size_t watchers)
    : port_(port), epoll_(epoll_create1(EPOLL_CLOEXEC)), conns_(watchers) {
  if (epoll_ < 0) throw system_error("epoll_create1");
}

WatchFleet::~WatchFleet() {
  for (auto& c : conns_)
    close_conn(c);
  ::close(epoll_);
}

void WatchFleet::open(std::uint32_t i) {
  Conn& c = conns_[i];
  c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) throw system_error("socket (open files limited by RLIMIT_NOFILE?)");
  const int one = 1;
  setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port_);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(c.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)
    throw system_error("connect to 127.0.0.1:" + std::to_string(port_));
  epoll_event event{};
  event.events = EPOLLOUT;
  event.data.u32 = i;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &event) != 0) throw system_error("epoll_ctl");
}

void WatchFleet::close_conn(Conn& c) {
  if (c.fd < 0) return;
  const linger abort{1, 0};
  setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  ::close(c.fd);  // also leaves the epoll set
  c.fd = -1;
}

bool WatchFleet::write_rest(Conn& c, const std::string& request) {
  while (c.written < request.size()) {
    const auto n = send(c.fd, request.data() + c.written, request.size() - c.written,
                        MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      throw system_error("send to 127.0.0.1:" + std::to_string(port_));
    }
    c.written += static_cast<std::size_t>(n);
  }
  return true;
}

void WatchFleet::watch_for(std::uint32_t i, std::uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u32 = i;
  if (epoll_ctl(epoll_, EPOLL_CTL_MOD, conns_[i].fd, &event) != 0) throw system_error("epoll_ctl");
}

void WatchFleet::send_all(const std::string& request, std::size_t batch,
                          const std::function<void(std::size_t)>& paced,
                          std::chrono::milliseconds patience) {
  std::vector<epoll_event> events(kEventsPerWait);
  for (std::size_t start = 0; start < conns_.size(); start += batch) {
    const auto end = std::min(start + batch, conns_.size());
    std::size_t pending = 0;
    for (auto i = static_cast<std::uint32_t>(start); i < end; ++i) {
      Conn& c = conns_[i];
      if (c.fd >= 0) {
        // Kept alive since the last round, unless the server closed it.
        char byte = 0;
        if (recv(c.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 || errno != EAGAIN) close_conn(c);
      }
      c.in.clear();
      c.written = 0;
      if (c.fd < 0) {
        open(i);  // written once connected
        ++pending;
      } else if (!write_rest(c, request)) {
        watch_for(i, EPOLLOUT);
        ++pending;
      }
    }
    const auto deadline = SteadyClock::now() + patience;
    while (pending > 0) {
      const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                               milliseconds_until(deadline));
      if (n < 0 && errno != EINTR) throw system_error("epoll_wait");
      if (n == 0 && SteadyClock::now() >= deadline)
        throw std::runtime_error(std::to_string(pending) + " watch requests not written within " +
                                 std::to_string(patience.count()) + " ms");
      for (int k = 0; k < n; ++k) {
        const auto i = events[k].data.u32;
        Conn& c = conns_[i];
        int error = 0;
        socklen_t size = sizeof error;
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &size);
        if (error != 0) {
          errno = error;
          throw system_error("connection " + std::to_string(i) +
                             " to 127.0.0.1:" + std::to_string(port_));
        }
        if (c.written == request.size())
          throw std::runtime_error("watcher " + std::to_string(i) +
                                   " had an answer (or was closed) before the change");
        if ((events[k].events & EPOLLOUT) != 0 && write_rest(c, request)) {
          watch_for(i, EPOLLIN);
          --pending;
        }
      }
    }
    paced(end);
  }
}

std::size_t WatchFleet::readable_now() {
  std::vector<epoll_event> events(conns_.size() + 1);
  const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 0);
  return n < 0 ? 0 : static_cast<std::size_t>(n);
}

bool WatchFleet::parse(const std::string& in, std::string_view marker, Answer& a) {
  const auto head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  const std::string_view head(in.data(), head_end);
  std::size_t length = 0;
  std::uint64_t index = 0;
  auto line_start = head.find("\r\n");
  const auto status_line = head.substr(0, line_start);
  while (line_start != std::string_view::npos) {
    line_start += 2;
    const auto line_end = head.find("\r\n", line_start);
    const auto line = head.substr(line_start, line_end - line_start);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      const auto name = line.substr(0, colon);
      if (same_name(name, "content-length"))
        length = static_cast<std::size_t>(number_in(line.substr(colon + 1)));
      else if (same_name(name, "x-cascade-index"))
        index = number_in(line.substr(colon + 1));
    }
    line_start = line_end;
  }
  const auto body_start = head_end + 4;
  if (in.size() < body_start + length) return false;
  const auto space = status_line.find(' ');
  a.status = space == std::string_view::npos
                 ? -1
                 : static_cast<int>(number_in(status_line.substr(space + 1, 3)));
  a.index = index;
  a.has_marker = std::string_view(in).substr(body_start, length).find(marker) != std::string::npos;
  return true;
}

std::vector<WatchFleet::Answer> WatchFleet::collect(std::string_view marker,
                                                    std::chrono::milliseconds patience) {
  std::vector<Answer> answers(conns_.size());
  std::vector<bool> done(conns_.size(), false);
  std::size_t remaining = conns_.size();
  std::vector<epoll_event> events(kEventsPerWait);
  char buffer[16 * 1024];
  const auto deadline = SteadyClock::now() + patience;
  while (remaining > 0) {
    const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                             milliseconds_until(deadline));
    if (n < 0 && errno != EINTR) throw system_error("epoll_wait");
    if (n <= 0 && SteadyClock::now() >= deadline) break;
    for (int k = 0; k < n; ++k) {
      const auto i = events[k].data.u32;
      Conn& c = conns_[i];
      // One read per event: the set is level-triggered, so what this read
      // leaves is reported again, and a reader that read on until EAGAIN
      // would spend a second system call on every answer (this process
      // shares the two cores with the agent it measures).
      const auto r = read(c.fd, buffer, sizeof buffer);
      if (r > 0) c.in.append(buffer, static_cast<std::size_t>(r));
      const bool closed = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
      if (done[i]) {  // after its answer: the server closed it, or sent more
        close_conn(c);
        continue;
      }
      Answer& a = answers[i];
      if (parse(c.in, marker, a)) {
        a.at = SteadyClock::now();
        c.in.clear();
      } else if (closed) {
        a.status = -1;
        a.at = SteadyClock::now();
        close_conn(c);
      } else {
        continue;  // more of it to come
      }
      done[i] = true;
      --remaining;
    }
  }
  return answers;
}

}  // namespace cascade::bench
