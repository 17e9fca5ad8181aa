// cascade_loopback_wake_floor: the least a server can spend waking N parked
// HTTP long polls on this machine. N loopback TCP connections; the "server"
// sends each one pre-rendered 200 response (one send() per connection, from
// --senders threads), a reader thread with epoll takes them all. It prints
// the time until the last response is read: the floor under any HTTP
// server's wake-up of N watchers (the agent's included), with the
// clients on the same cores as in cascade_http_api_bench.
//
//   cascade_loopback_wake_floor [--connections N] [--senders K] [--rounds R] [--spin 1]
//
// --spin 1: the reader polls epoll without sleeping (no wake-ups to pay).
//
// N is capped by the open-file limit (two descriptors a connection).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using SteadyClock = std::chrono::steady_clock;

struct Options {
  int connections = 9000;
  int senders = 1;
  int rounds = 3;
  bool spin = false;  // the reader polls without sleeping
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const int value = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--connections") == 0)
      o.connections = value;
    else if (std::strcmp(argv[i], "--senders") == 0)
      o.senders = value;
    else if (std::strcmp(argv[i], "--rounds") == 0)
      o.rounds = value;
    else if (std::strcmp(argv[i], "--spin") == 0)
      o.spin = value != 0;
  }
  return o;
}

// The connections a loopback listener accepts, both ends kept.
struct Pairs {
  std::vector<int> client;
  std::vector<int> server;
  ~Pairs() {
    for (int fd : client)
      ::close(fd);
    for (int fd : server)
      ::close(fd);
  }
};

bool connect_pairs(int count, Pairs& pairs) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(listener, 4096) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return false;
  const int one = 1;
  for (int i = 0; i < count; ++i) {
    const int client = ::socket(AF_INET, SOCK_STREAM, 0);
    if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&address), length) != 0)
      return false;
    const int server = ::accept(listener, nullptr, nullptr);
    if (server < 0) return false;
    ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    pairs.client.push_back(client);
    pairs.server.push_back(server);
  }
  ::close(listener);
  return true;
}

// Reads until every client has its whole response; the time of the last read.
SteadyClock::time_point read_all(const std::vector<int>& clients, std::size_t response_bytes,
                                 bool spin) {
  const int epoll = ::epoll_create1(0);
  for (int fd : clients) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
  }
  std::vector<std::size_t> have(static_cast<std::size_t>(clients.back()) + 1, 0);
  std::vector<epoll_event> events(1024);
  char buffer[4096];
  std::size_t done = 0;
  while (done < clients.size()) {
    const auto give_up = SteadyClock::now() + std::chrono::seconds(2);
    int ready = 0;
    do {
      ready = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), spin ? 0 : 2000);
    } while (spin && ready == 0 && SteadyClock::now() < give_up);
    if (ready <= 0) break;  // lost answers: reported as a short count
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      const auto got = ::recv(fd, buffer, sizeof(buffer), 0);
      if (got > 0) have[fd] += static_cast<std::size_t>(got);
      if (have[fd] < response_bytes) continue;
      have[fd] = 0;
      ++done;
      ::epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
    }
  }
  ::close(epoll);
  if (done < clients.size())
    std::fprintf(stderr, "only %zu of %zu responses read\n", done, clients.size());
  return SteadyClock::now();
}

double ms_between(SteadyClock::time_point from, SteadyClock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = parse(argc, argv);
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  Pairs pairs;
  if (!connect_pairs(options.connections, pairs)) {
    std::fprintf(stderr, "cannot open %d loopback connections (open-file limit %llu)\n",
                 options.connections, static_cast<unsigned long long>(limit.rlim_cur));
    return 1;
  }
  // The size of the agent's answer for a service of 10 instances.
  const std::string response =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Cascade-Index: 1099511627787\r\n"
      "Content-Length: 1511\r\n\r\n" +
      std::string(1511, 'x');
  std::printf(
      "cascade_loopback_wake_floor: %d connections, %d sender thread(s), %zu-byte response\n",
      options.connections, options.senders, response.size());
  for (int round = 0; round < options.rounds; ++round) {
    const auto start = SteadyClock::now();
    SteadyClock::time_point last_read;
    std::thread reader([&] { last_read = read_all(pairs.client, response.size(), options.spin); });
    std::vector<std::thread> senders;
    for (int s = 0; s < options.senders; ++s)
      senders.emplace_back([&, s] {
        for (std::size_t i = static_cast<std::size_t>(s); i < pairs.server.size();
             i += static_cast<std::size_t>(options.senders))
          ::send(pairs.server[i], response.data(), response.size(), MSG_NOSIGNAL);
      });
    for (auto& sender : senders)
      sender.join();
    const auto sent = SteadyClock::now();
    reader.join();
    std::printf("round %d: all sent after %.1f ms, the last read after %.1f ms\n", round,
                ms_between(start, sent), ms_between(start, last_read));
  }
  return 0;
}
