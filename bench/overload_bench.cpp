// cascade_overload_bench: a hub driven open-loop past what it can serve
// slows its fleet down instead of queueing (protocol section 5.17;
// docs/benchmarks.md, "Overload").
//
// A real HubServer on its own thread (SQLite in a temporary directory),
// beat interval --interval-ms, lease --lease-ms, eviction protection off (it
// would hold what a lost lease shows). --agents nodes register first (closed
// loop, full-set beats). Then they beat open loop, in groups of
// --batch (one frame per group, as a cascading proxy forwards its agents'
// beats), each group on its own jittered schedule whatever the replies say,
// except the interval the hub grants, which every group adopts from its
// reply as an agent does (the longer of its own and the granted one), and a
// `busy` answer to a frame the hub shed (protocol section 5.18), after which
// the group beats again only when the hub asked, plus up to half as much, as
// an agent does. A frame the sender's queue cannot take is a beat not sent
// (its agents beat next interval), never a wait: the load stays open.
//
// Phases, by the agents' own interval: --calm-s at --interval-ms (well below
// capacity), --load-s at --load-interval-ms (the overload: a fleet beating
// far faster than the hub expects, as a bad rollout or a retry storm does;
// agents / load interval beats per second), --after-s at --interval-ms
// again. (A fleet too large for the hub at its own interval is the other
// overload; registering it here would take longer than the lease.) Every
// second a line: beats offered, answered and shed per second, answered
// beats' round trip p50/p99/max, the stretch the replies grant, the
// process's resident set. At the end, per phase: the same, and the leases
// the hub let run out (it must be 0: every agent kept beating). Every reply
// is checked (one DownBeat per beat of its frame, acknowledging that beat, or
// one busy for the whole frame): a wrong or missing one fails the run (exit
// 1); a missed target is a result.
//
// With --shed-after-ms 0 the hub never sheds: the run shows what the bound
// on its queue prevents.
//
// With --max-interval-stretch 1 the hub never slows the fleet: the run shows
// what the governor prevents.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <queue>
#include <random>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/beat_fleet.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/in_process_hub.hpp"

namespace {

using namespace cascade;
using bench::SteadyClock;
using bench::TimePoint;

constexpr const char* kUsage = R"(cascade_overload_bench [options]
  --agents N                nodes, one instance each (default 100000)
  --batch N                 beats per frame: a group of agents behind one proxy (default 64)
  --interval-ms N           the hub's beat interval, the agents' own before and after the load (default 1000)
  --load-interval-ms N      the agents' own interval during the load (default 40)
  --lease-ms N              the hub's lease (default 3000)
  --max-interval-stretch N  the hub's bound on the interval it grants (default 8; 1: off)
  --shed-after-ms N         the hub's bound on a frame's wait in its queue (default 20; 0: off)
  --calm-s S                seconds before the load (default 10: the registration wave
                            stretches the interval, and it comes back first)
  --load-s S                seconds of overload (default 30)
  --after-s S               seconds after it (default 40)
  --quick                   20000 agents, intervals 200 and 5 ms, 2 + 5 + 8 seconds
)";

struct Options {
  std::size_t agents = 100'000;
  std::size_t batch = 64;
  Duration interval{1000};
  Duration load_interval{40};
  Duration lease{3000};
  std::size_t max_stretch = 8;
  Duration shed_after{20};  // 0: never
  Duration calm{10'000};
  Duration load{30'000};
  Duration after{40'000};
};

Options parse_options(int argc, char** argv) {
  return bench::parse_flags<Options>(argc, argv, kUsage, [](bench::Flags& f, Options& o) {
    f.first("--quick", [&o] {
      o.agents = 20'000;
      o.interval = Duration{200};
      o.load_interval = Duration{5};
      o.lease = Duration{1000};
      o.calm = Duration{2000};
      o.load = Duration{5000};
      o.after = Duration{8000};
    });
    f.add({{"--agents", &o.agents},
           {"--batch", &o.batch},
           {"--interval-ms", &o.interval},
           {"--load-interval-ms", &o.load_interval},
           {"--lease-ms", &o.lease},
           {"--max-interval-stretch", &o.max_stretch},
           {"--shed-after-ms", &o.shed_after, bench::kZeroOk},
           {"--calm-s", &o.calm},
           {"--load-s", &o.load},
           {"--after-s", &o.after}});
  });
}

// One second (or one phase) of the run, as the sender saw it.
struct Tally {
  std::uint64_t offered = 0;   // beats due
  std::uint64_t unsent = 0;    // ... that the sender's queue could not take
  std::uint64_t answered = 0;  // beats answered
  std::uint64_t shed = 0;      // beats in frames the hub shed (busy)
  std::uint64_t wrong = 0;     // replies that were not the DownBeats their frame asked for
  std::vector<double> rtt_ms;  // round trip of each answered frame
  std::uint32_t stretch = 1;   // the last grant seen

  void add(const Tally& o) {
    offered += o.offered;
    unsent += o.unsent;
    answered += o.answered;
    shed += o.shed;
    wrong += o.wrong;
    rtt_ms.insert(rtt_ms.end(), o.rtt_ms.begin(), o.rtt_ms.end());
    stretch = std::max(stretch, o.stretch);
  }
};

// A group of --batch agents beating together.
struct Group {
  std::uint64_t seq = 1;   // registration used 1
  Duration granted{0};     // the interval the hub granted in its last reply
  TimePoint not_before{};  // shed: when the hub asked it to come back
};

class OpenLoopFleet {
 public:
  OpenLoopFleet(zmq::context_t& context, const std::string& endpoint, bench::Fleet& fleet,
                const Options& o)
      : socket_(bench::connect_dealer(context, endpoint)),
        fleet_(fleet),
        options_(o),
        groups_((o.agents + o.batch - 1) / o.batch) {
    std::uniform_int_distribution<Duration::rep> start(0, o.interval.count() - 1);
    for (std::size_t g = 0; g < groups_.size(); ++g)
      due_.push({SteadyClock::now() + std::chrono::milliseconds(start(rng_)), g});
  }

  // Beats for `span` with the agents' own interval `own`, a line per second.
  Tally run(const char* phase, Duration span, Duration own) {
    Tally whole;
    const auto end = SteadyClock::now() + span;
    for (auto second = SteadyClock::now(); second < end;) {
      const auto until = std::min(end, second + std::chrono::seconds(1));
      Tally t;
      while (SteadyClock::now() < until)
        step(own, until, t);
      print_line(phase, t, std::chrono::duration<double>(until - second).count());
      whole.add(t);
      second = until;
    }
    return whole;
  }

  // Every reply still on its way; returns how many never came.
  std::size_t drain(Duration wait, Tally& t) {
    const auto end = SteadyClock::now() + wait;
    while (!in_flight_.empty() && SteadyClock::now() < end)
      receive(t, 10);
    return in_flight_.size();
  }

 private:
  struct Sent {
    TimePoint at;
    std::size_t group;
    std::uint64_t seq;
    std::size_t beats;
  };
  struct Due {
    TimePoint at;
    std::size_t group;
    bool operator>(const Due& o) const { return at > o.at; }
  };

  void step(Duration own, TimePoint until, Tally& t) {
    const auto now = SteadyClock::now();
    while (!due_.empty() && due_.top().at <= now) {
      const auto g = due_.top().group;
      due_.pop();
      if (groups_[g].not_before > now) {  // shed: back when the hub asked
        due_.push({groups_[g].not_before, g});
        continue;
      }
      send(g, now, t);
      const auto interval = std::max(own, groups_[g].granted);
      std::uniform_real_distribution<double> jitter(0.9, 1.1);
      due_.push({now + std::chrono::microseconds(static_cast<std::int64_t>(
                           std::chrono::microseconds(interval).count() * jitter(rng_))),
                 g});
    }
    const auto next = due_.empty() ? until : std::min(until, due_.top().at);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
    receive(t, static_cast<long>(std::max<std::int64_t>(0, wait)));
  }

  void send(std::size_t g, TimePoint now, Tally& t) {
    const auto first = g * options_.batch;
    const auto last = std::min(options_.agents, first + options_.batch);
    beats_.clear();
    auto& group = groups_[g];
    ++group.seq;
    for (auto i = first; i < last; ++i) {
      proto::UpBeat b;
      b.node_id = fleet_.node_id(i);
      b.epoch = 1;
      b.seq = group.seq;
      b.digest = fleet_.digest(i);
      beats_.emplace_back(std::move(b));
    }
    t.offered += last - first;
    auto frame = bench::to_message(proto::encode_batch(beats_));
    if (!socket_.send(frame, zmq::send_flags::dontwait)) {
      t.unsent += last - first;
      return;
    }
    in_flight_.push_back({now, g, group.seq, last - first});
  }

  // Replies come back in the order their frames left (one DEALER, one ROUTER peer).
  void receive(Tally& t, long timeout_ms) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) == 0) return;
    zmq::message_t reply;
    while (socket_.recv(reply, zmq::recv_flags::dontwait)) {
      if (in_flight_.empty()) {
        ++t.wrong;  // a reply to nothing sent
        continue;
      }
      const auto sent = in_flight_.front();
      in_flight_.pop_front();
      const auto rtt = std::chrono::duration<double, std::milli>(SteadyClock::now() - sent.at);
      if (take_reply(reply, sent, t)) t.rtt_ms.push_back(rtt.count());
    }
  }

  // Every beat of the frame answered by a DownBeat acknowledging it (true),
  // or the whole frame shed with one busy (false).
  bool take_reply(const zmq::message_t& reply, const Sent& sent, Tally& t) {
    const auto frame = proto::decode_frame(reply.to_string_view());
    // A batch names no message: its busy has ref 0.
    if (const auto* busy = bench::whole_frame_busy(frame); busy && busy->ref == 0) {
      t.shed += sent.beats;
      groups_[sent.group].not_before = SteadyClock::now() + bench::busy_backoff(*busy, rng_());
      return false;
    }
    if (frame.items.size() != sent.beats) ++t.wrong;
    for (const auto& item : frame.items) {
      const auto* message = std::get_if<proto::Message>(&item);
      const auto* down = message ? std::get_if<proto::DownBeat>(message) : nullptr;
      if (down == nullptr || down->ack_seq != sent.seq) {
        ++t.wrong;
        continue;
      }
      ++t.answered;
      groups_[sent.group].granted = Duration{down->interval_ms};
      t.stretch = std::max<std::uint32_t>(
          t.stretch, static_cast<std::uint32_t>(down->interval_ms / options_.interval.count()));
    }
    return true;
  }

  static void print_line(const char* phase, Tally& t, double seconds) {
    const auto p = bench::percentiles(t.rtt_ms);
    std::printf("%-6s %10.0f %10.0f %9.0f %9.0f %8.1f %8.1f %8.1f %7u %9.0f\n", phase,
                static_cast<double>(t.offered) / seconds, static_cast<double>(t.answered) / seconds,
                static_cast<double>(t.shed) / seconds, static_cast<double>(t.unsent) / seconds,
                p.p50, p.p99, p.max, t.stretch,
                static_cast<double>(bench::rss_kib(getpid())) / 1024.0);
    std::fflush(stdout);
  }

  zmq::socket_t socket_;
  bench::Fleet& fleet_;
  const Options& options_;
  std::vector<Group> groups_;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  std::deque<Sent> in_flight_;
  std::vector<proto::Message> beats_;
  std::mt19937_64 rng_{42};
};

void print_phase(const char* phase, Tally& t, Duration span) {
  const auto p = bench::percentiles(t.rtt_ms);
  const double s = std::chrono::duration<double>(span).count();
  std::printf(
      "%-6s offered %.0f beats/s, answered %.0f/s, shed %.0f/s, not sent %.0f/s, wrong replies "
      "%llu; answered round trip p50 %.1f ms, p99 %.1f ms, max %.1f ms; largest stretch %u\n",
      phase, static_cast<double>(t.offered) / s, static_cast<double>(t.answered) / s,
      static_cast<double>(t.shed) / s, static_cast<double>(t.unsent) / s,
      static_cast<unsigned long long>(t.wrong), p.p50, p.p99, p.max, t.stretch);
}

int run(const Options& o) {
  bench::TempDir tmp("cascade-overload-bench");
  hub::HubConfig config;
  config.id = "overload-hub";
  config.listen = "tcp://127.0.0.1:*";
  config.data_dir = tmp.path() / "hub";
  config.beat_interval = o.interval;
  config.lease = o.lease;
  config.governor.max_stretch = static_cast<std::uint32_t>(o.max_stretch);
  config.inbound.shed_after = o.shed_after;
  config.eviction.enabled = false;
  bench::InProcessHub hub(config, {.thread_name = "hub"});
  zmq::context_t client;
  bench::Fleet fleet(o.agents, 1000, 9);
  std::printf("registering %zu agents ...\n", o.agents);
  const auto reg = bench::register_nodes(client, bench::HubAccess::plain(hub.endpoint()), fleet, 0,
                                         o.agents, {});
  std::printf(
      "registered in %.1f s; open loop: %zu agents in frames of %zu, overload at %.0f "
      "beats/s\n",
      reg.seconds, o.agents, o.batch,
      static_cast<double>(o.agents) * 1000.0 / static_cast<double>(o.load_interval.count()));
  std::printf("%-6s %10s %10s %9s %9s %8s %8s %8s %7s %9s\n", "phase", "offered/s", "answered/s",
              "shed/s", "unsent/s", "p50_ms", "p99_ms", "max_ms", "stretch", "rss_mib");
  OpenLoopFleet open(client, hub.endpoint(), fleet, o);
  auto calm = open.run("calm", o.calm, o.interval);
  auto load = open.run("load", o.load, o.load_interval);
  auto after = open.run("after", o.after, o.interval);
  Tally late;
  const auto missing = open.drain(Duration{20'000}, late);
  const auto counters = bench::hub_counters(bench::HubAccess::plain(hub.endpoint()));
  std::printf("\n");
  print_phase("calm", calm, o.calm);
  print_phase("load", load, o.load);
  print_phase("after", after, o.after);
  const auto expired = counters.count("nodes_expired") ? counters.at("nodes_expired") : 0;
  std::printf(
      "leases lost (nodes expired at the hub): %llu (%llu extended while shedding); frames shed "
      "%llu; stretch now %llu, changes %llu up, %llu down\n",
      static_cast<unsigned long long>(expired),
      static_cast<unsigned long long>(counters.at("expiries_postponed")),
      static_cast<unsigned long long>(counters.at("frames_shed")),
      static_cast<unsigned long long>(counters.at("interval_stretch")),
      static_cast<unsigned long long>(counters.at("interval_stretched")),
      static_cast<unsigned long long>(counters.at("interval_relaxed")));
  const auto wrong = calm.wrong + load.wrong + after.wrong + late.wrong;
  if (wrong + missing == 0) return 0;
  std::printf("FAILED: %llu wrong replies, %zu frames never answered\n",
              static_cast<unsigned long long>(wrong), missing);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_overload_bench", "overload-bench",
                                             parse_options, run);
}
