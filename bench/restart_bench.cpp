// cascade_restart_bench: a hub restart under a full fleet (docs/benchmarks.md,
// "Hub restart"). Starts the real cascade-hub, connects N agents (DEALERs in
// this process, with the agent library's socket options, each beating its
// one registration), restarts the hub on the same port and data directory,
// and reports how the fleet came back: the kernel's TCP listen-queue
// overflows during the restart (TcpExt ListenOverflows in /proc/net/netstat,
// counted for the whole network namespace), when each agent could send again
// (its connection was up: ZMQ_IMMEDIATE) and when it had its first reply.
// A connection whose SYN the full listen queue dropped waits for the kernel's
// SYN retry (1 s, then 3 s): that tail is what the listen backlog removes.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/child_hub.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/digest.hpp"

namespace cascade::bench {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "cascade_restart_bench: restart a real cascade-hub under N connected agents and report\n"
    "listen-queue overflows and how fast the agents reconnect and get their first reply.\n"
    "  --agents N          agent connections (default 1200)\n"
    "  --restarts N        hub restarts measured (default 3)\n"
    "  --backlog N         the hub's --listen-backlog (default 0: the hub's default)\n"
    "  --beat-interval-ms  agents' and hub's beat interval (default 2000)\n"
    "  --patience-ms       longest wait for the whole fleet after a restart (default 30000)\n"
    "  --quick             50 agents, one restart (smoke test)\n";

struct Options {
  std::size_t agents = 1200;
  std::size_t restarts = 3;
  std::size_t backlog = 0;
  Duration beat{2000};
  Duration patience{30'000};
};

Options parse(int argc, char** argv) {
  return parse_flags<Options>(argc, argv, kUsage, [](Flags& flags, Options& o) {
    flags.first("--quick", [&o] {
      o.agents = 50;
      o.restarts = 1;
    });
    flags.add({{"--agents", &o.agents},
               {"--restarts", &o.restarts},
               {"--backlog", &o.backlog, kZeroOk},
               {"--beat-interval-ms", &o.beat},
               {"--patience-ms", &o.patience}});
  });
}

// TcpExt counters of /proc/net/netstat by name (a header line, then values).
std::uint64_t tcp_ext(const std::string& name) {
  std::ifstream in("/proc/net/netstat");
  std::string header, values;
  while (std::getline(in, header) && std::getline(in, values)) {
    if (!header.starts_with("TcpExt:")) continue;
    std::istringstream names(header), numbers(values);
    std::string n, v;
    while (names >> n && numbers >> v)
      if (n == name) return std::stoull(v);
  }
  return 0;
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line.empty() ? "unknown" : line;
}

void raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

// The real hub in a child process, on a fixed endpoint and data directory.
std::unique_ptr<ChildHub> start_hub(const Options& o, const fs::path& dir,
                                    const std::string& listen) {
  std::vector<std::string> args{"--beat-interval-ms", std::to_string(o.beat.count())};
  if (o.backlog != 0) {
    args.emplace_back("--listen-backlog");
    args.push_back(std::to_string(o.backlog));
  }
  return std::make_unique<ChildHub>(ChildHubOptions{.binary = kHubBinary,
                                                    .dir = dir,
                                                    .id = "restart-bench",
                                                    .listen = listen,
                                                    .extra_args = std::move(args),
                                                    .append_log = true});
}

// N agents as DEALERs in one process: each beats its registration every
// interval (spread over the interval) and, after a restart, as soon as its
// connection is up, until the hub answers.
class Fleet {
 public:
  Fleet(const Options& o, const std::string& endpoint) : beat_(o.beat) {
    context_.set(zmq::ctxopt::max_sockets, static_cast<int>(o.agents) + 16);  // default 1023
    for (std::size_t i = 0; i < o.agents; ++i) {
      auto& a = agents_.emplace_back(context_, i, endpoint);
      a.next_beat = SteadyClock::now() + beat_ * i / o.agents;
    }
  }

  struct Recovery {
    std::vector<double> reconnect_ms, reply_ms;
  };

  // Runs until every agent had a reply since `since` (or `patience`); the
  // times of each agent's first successful send and first reply.
  Recovery run_until_answered(SteadyClock::time_point since, Duration patience) {
    for (auto& a : agents_)
      a.restart_from(since);
    Recovery r;
    const auto deadline = since + patience;
    std::size_t answered = 0;
    while (answered < agents_.size() && SteadyClock::now() < deadline) {
      for (auto& a : agents_)
        a.maybe_beat(beat_);
      answered += receive(r, since);
    }
    if (answered < agents_.size())
      throw std::runtime_error(std::to_string(agents_.size() - answered) +
                               " agents had no reply within the patience");
    for (auto& a : agents_)
      r.reconnect_ms.push_back(a.connected_ms);
    return r;
  }

 private:
  struct Agent {
    Agent(zmq::context_t& context, std::size_t i, const std::string& endpoint)
        : socket(context, zmq::socket_type::dealer) {
      socket.set(zmq::sockopt::linger, 0);
      socket.set(zmq::sockopt::immediate, 1);  // as the agent library: no queueing while down
      socket.connect(endpoint);
      std::vector<proto::Registration> set(1);
      set[0].service.name = "svc-" + std::to_string(i % 50);
      set[0].instance.id = "agent-" + std::to_string(i);
      set[0].instance.address = address(i, 8080);
      proto::canonicalize(set);
      beat.node_id = set[0].instance.id;
      beat.epoch = 1;
      beat.digest = proto::digest_of(set);
      beat.registrations = std::move(set);
    }
    void restart_from(SteadyClock::time_point t) {
      since = t;
      answered = false;
      connected_ms = -1;
      next_beat = t;
    }
    void maybe_beat(Duration interval) {
      const auto now = SteadyClock::now();
      if (answered ? now < next_beat : connected_ms >= 0 && now < next_beat) return;
      ++beat.seq;
      const auto bytes = proto::encode(proto::Message{beat});
      if (!socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return;  // not up yet
      if (connected_ms < 0) connected_ms = ms_between(since, now);
      next_beat = now + (answered ? interval : Duration{200});  // retry an unanswered beat
    }
    zmq::socket_t socket;
    proto::UpBeat beat;
    SteadyClock::time_point since{}, next_beat{};
    double connected_ms = -1;
    bool answered = true;
  };

  static double ms_between(SteadyClock::time_point a, SteadyClock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  }

  // Reads every reply waiting (1 ms poll); the number of agents answered
  // for the first time since the restart.
  std::size_t receive(Recovery& r, SteadyClock::time_point since) {
    items_.clear();
    for (auto& a : agents_)
      items_.push_back({a.socket.handle(), 0, ZMQ_POLLIN, 0});
    zmq::poll(items_.data(), items_.size(), std::chrono::milliseconds(1));
    std::size_t first = 0;
    for (std::size_t i = 0; i < agents_.size(); ++i) {
      zmq::message_t reply;
      if (!(items_[i].revents & ZMQ_POLLIN)) continue;
      while (agents_[i].socket.recv(reply, zmq::recv_flags::dontwait)) {
        if (agents_[i].answered) continue;
        agents_[i].answered = true;
        r.reply_ms.push_back(ms_between(since, SteadyClock::now()));
        ++first;
      }
    }
    return first;
  }

  zmq::context_t context_{2};
  Duration beat_;
  std::deque<Agent> agents_;
  std::vector<zmq::pollitem_t> items_;
};

void print_latencies(const char* what, std::vector<double>& ms) {
  const auto p = percentiles(ms);
  const auto over_1s = std::count_if(ms.begin(), ms.end(), [](double v) { return v >= 1000; });
  std::printf("  %-22s p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms  >=1 s: %zu\n", what, p.p50, p.p99,
              p.max, static_cast<std::size_t>(over_1s));
}

// One restart: stop the hub, let the fleet retry for a beat interval, start
// it again on the same endpoint and wait for every agent's reply. Returns the
// ListenOverflows of the restart.
std::uint64_t restart(const Options& o, const fs::path& dir, const std::string& endpoint,
                      std::unique_ptr<ChildHub>& hub, Fleet& fleet, std::size_t round) {
  const auto syn_before_stop = tcp_ext("TCPSynRetrans");
  const auto overflows_before_stop = tcp_ext("ListenOverflows");
  hub.reset();                          // SIGTERM, waits for the exit
  std::this_thread::sleep_for(o.beat);  // the fleet retries its connects meanwhile
  const auto overflows = tcp_ext("ListenOverflows");
  const auto syn_at_start = tcp_ext("TCPSynRetrans");
  const auto start = SteadyClock::now();
  hub = start_hub(o, dir, endpoint);
  hub->endpoint();
  const double listening_ms =
      std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
  auto recovery = fleet.run_until_answered(start, o.patience);
  const auto delta = tcp_ext("ListenOverflows") - overflows;
  std::printf(
      "restart %zu: listening after %.0f ms; ListenOverflows +%llu while it stopped, "
      "+%llu after its start; SYN retransmits +%llu while it stopped, +%llu after\n",
      round, listening_ms, static_cast<unsigned long long>(overflows - overflows_before_stop),
      static_cast<unsigned long long>(delta),
      static_cast<unsigned long long>(syn_at_start - syn_before_stop),
      static_cast<unsigned long long>(tcp_ext("TCPSynRetrans") - syn_at_start));
  print_latencies("reconnected (can send)", recovery.reconnect_ms);
  print_latencies("first reply", recovery.reply_ms);
  return delta;
}

int run(const Options& o) {
  raise_open_file_limit();
  TempDir dir("cascade-restart-bench");
  std::printf(
      "cascade_restart_bench: %zu agents, %zu restarts, hub --listen-backlog %s, "
      "net.core.somaxconn %s, beat %lld ms\n  cpu %s, load %s\n",
      o.agents, o.restarts, o.backlog ? std::to_string(o.backlog).c_str() : "default",
      read_first_line("/proc/sys/net/core/somaxconn").c_str(),
      static_cast<long long>(o.beat.count()), cpu_model().c_str(), load_average().c_str());
  auto hub = start_hub(o, dir.path(), "tcp://127.0.0.1:*");
  const auto endpoint = hub->endpoint();
  Fleet fleet(o, endpoint);
  fleet.run_until_answered(SteadyClock::now(), o.patience);  // all registered
  std::uint64_t total_overflows = 0;
  for (std::size_t round = 1; round <= o.restarts; ++round)
    total_overflows += restart(o, dir.path(), endpoint, hub, fleet, round);
  std::printf("total ListenOverflows over %zu restarts: %llu\n", o.restarts,
              static_cast<unsigned long long>(total_overflows));
  return 0;
}

}  // namespace
}  // namespace cascade::bench

int main(int argc, char** argv) {
  return cascade::bench::bench_main<cascade::bench::Options>(argc, argv, "cascade_restart_bench",
                                                             "restart-bench", cascade::bench::parse,
                                                             cascade::bench::run);
}
