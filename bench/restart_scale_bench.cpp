// cascade_restart_scale_bench: a hub restart at 1M instances, without a storm
// (issue 16 section 4; docs/benchmarks.md, "Hub restart at 1M instances").
//
// Starts the real cascade-hub, registers N instances (realistic names, one
// per node) and the resolve target's 20 through the bench's senders, then
// beats them as N agents would: each agent beats its digest once per
// interval at a phase of its own (±10% jitter per beat, as AgentCore), the
// beats of one sender thread batched into frames. Then the hub is killed
// (SIGKILL, or SIGTERM with --graceful) and started again on the same port and
// data directory while the senders keep going. Each emulated agent reacts as
// AgentCore::on_downbeat does: a reply with a new hub epoch schedules one
// full-set beat at uniform(0, interval) after that reply; a reply asking for
// the full set gets it at once; a busy answer delays the beat by the wait it
// asks for plus up to half as much; a beat that could not be sent (the link was
// down) or whose frame was lost in the crash goes when the link is back
// (AgentCore::on_link_up). Every reply is decoded and checked.
//
// Measured: when the restarted hub first answers a Query for the resolve
// target with all its instances (it answers from SQLite), when every agent was
// confirmed by the new epoch (its digest taken; its full set acknowledged),
// full re-sends per 100 ms offered and answered against the steady rate N/I,
// beats lost, unsent and shed, and a resolve prober that must never see the
// target with fewer instances than registered.
//
// Not emulated: an agent's retries of an unanswered beat within its interval
// (only a dropped connection loses replies here, and those agents beat again
// when the link is back, as the retries would).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cascade/bench/beat_fleet.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/child_hub.hpp"
#include "cascade/bench/resolve_prober.hpp"
#include "cascade/bench/restart_agents.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "cascade_restart_scale_bench: N agents beating a real cascade-hub, which is killed and\n"
    "restarted on the same port and data directory; reports when it answers from SQLite, when\n"
    "every agent is confirmed again, the full re-sends per 100 ms against the steady rate, and\n"
    "resolve answers across the restart.\n"
    "  --agents N          emulated agents, one realistic instance each (default 1000000)\n"
    "  --beat-interval-ms  the agents' and the hub's beat interval (default 2000)\n"
    "  --senders N         sender threads, one DEALER each (default 2)\n"
    "  --batch N           beats per frame at most (default 64)\n"
    "  --window N          frames in flight per sender at most (default 32)\n"
    "  --services N        distinct service names (default 1000)\n"
    "  --steady-ms         steady beats before the kill (default 3 intervals)\n"
    "  --down-ms           pause between the hub's exit and its new start (default 0)\n"
    "  --settle-ms         longest wait after the registration for the hub to grant the agents\n"
    "                      their own interval again (default 60000)\n"
    "  --patience-ms       longest wait for every agent's confirmation (default 60000)\n"
    "  --probe-ms          the resolve prober's period (default 10)\n"
    "  --graceful          stop the hub with SIGTERM instead of SIGKILL\n"
    "  --quick             10,000 agents, 1 s interval (smoke test)\n";

struct Options {
  std::size_t agents = 1'000'000;
  Duration beat{2000};
  std::size_t senders = 2;
  std::size_t batch = 64;
  std::size_t window = 32;
  std::size_t services = 1000;
  Duration steady{0};  // 0: three intervals
  Duration down{0};
  Duration settle{60'000};
  Duration patience{60'000};
  Duration probe{10};
  bool graceful = false;
};

Options parse(int argc, char** argv) {
  auto o = parse_flags<Options>(argc, argv, kUsage, [](Flags& flags, Options& opt) {
    flags.first("--quick", [&opt] {
      opt.agents = 10'000;
      opt.beat = Duration{1000};
    });
    flags.on("--graceful", [&opt] { opt.graceful = true; });
    flags.add({{"--agents", &opt.agents},
               {"--beat-interval-ms", &opt.beat},
               {"--senders", &opt.senders},
               {"--batch", &opt.batch},
               {"--window", &opt.window},
               {"--services", &opt.services},
               {"--steady-ms", &opt.steady},
               {"--down-ms", &opt.down, kZeroOk},
               {"--settle-ms", &opt.settle},
               {"--patience-ms", &opt.patience},
               {"--probe-ms", &opt.probe}});
  });
  if (o.steady.count() == 0) o.steady = o.beat * 3;
  if (o.batch > proto::kMaxBatchMessages) throw std::invalid_argument("--batch is too large");
  return o;
}

// ---------------------------------------------------------------- the run

std::unique_ptr<ChildHub> start_hub(const Options& o, const fs::path& dir,
                                    const std::string& listen, bool again) {
  return std::make_unique<ChildHub>(
      ChildHubOptions{.binary = kHubBinary,
                      .dir = dir,
                      .id = kHubId,
                      .listen = listen,
                      .extra_args = {"--beat-interval-ms", std::to_string(o.beat.count())},
                      .append_log = again,
                      // The restarted hub says how long it read its store.
                      .log_level = again ? "info" : "warn"});
}

void register_all(Nodes& nodes, const std::string& endpoint, const Options& o) {
  zmq::context_t context(1);
  const auto access = HubAccess::plain(endpoint);
  progress("cascade_restart_scale_bench", "registering " + std::to_string(o.agents) + " instances");
  const auto reg = register_nodes(context, access, nodes.fleet(), 0, o.agents, RegistrationLoad{});
  register_resolve_target(context, access);
  std::printf("registration: %zu instances in %.1f s (%s/s), %llu frames shed and sent again\n",
              reg.instances, reg.seconds,
              si(static_cast<double>(reg.instances) / reg.seconds).c_str(),
              static_cast<unsigned long long>(reg.frames_shed));
}

// Beats until the hub grants the agents their own interval again for one
// whole interval (the registration wave made it stretch them), at least one
// interval and at most --settle-ms; the seconds it took.
double settle(EmulatedFleet& fleet, const Options& o) {
  const auto start = SteadyClock::now();
  auto calm_since = start;
  while (SteadyClock::now() < start + o.settle) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fleet.throw_if_failed();
    if (fleet.granted_ms() != 0) calm_since = SteadyClock::now();
    if (SteadyClock::now() - calm_since >= o.beat) break;
  }
  return seconds_since(start);
}

// Waits until every agent's full set was acknowledged by the new epoch, or the patience ran out.
void await_confirmations(EmulatedFleet& fleet, std::size_t total, TimePoint exec,
                         Duration patience) {
  while (fleet.confirmed_full() < total && SteadyClock::now() < exec + patience) {
    fleet.throw_if_failed();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void print_buckets(const SenderStats& s, double steady_per_bucket) {
  std::printf("\nper 100 ms since the restart's exec (steady beat rate N/I = %s per bucket):\n",
              si(steady_per_bucket).c_str());
  std::printf("%8s %12s %12s %10s %14s\n", "from_ms", "full_offered", "full_answered", "full_shed",
              "beats_answered");
  const auto buckets =
      std::max({s.full_offered.size(), s.full_answered.size(), s.beats_answered.size()});
  auto at = [](const std::vector<std::uint64_t>& v, std::size_t b) {
    return b < v.size() ? v[b] : std::uint64_t{0};
  };
  for (std::size_t b = 0; b < buckets; ++b)
    std::printf("%8zu %12llu %12llu %10llu %14llu\n", b * 100,
                static_cast<unsigned long long>(at(s.full_offered, b)),
                static_cast<unsigned long long>(at(s.full_answered, b)),
                static_cast<unsigned long long>(at(s.full_shed, b)),
                static_cast<unsigned long long>(at(s.beats_answered, b)));
}

double peak(const std::vector<std::uint64_t>& v) {
  return v.empty() ? 0.0 : static_cast<double>(*std::max_element(v.begin(), v.end()));
}

void print_percentiles(const char* what, std::vector<double>& ms) {
  const auto p = percentiles(ms);
  std::printf("  %-44s p50 %7.0f ms  p99 %7.0f ms  max %7.0f ms  (%zu)\n", what, p.p50, p.p99,
              p.max, p.count);
}

struct Timeline {
  double listening_ms = 0;           // the endpoint file was written
  double all_full_ms = -1;           // every agent's full set acknowledged
  double steady_answered_per_s = 0;  // beats answered per second before the kill
  std::uint64_t rss_loaded = 0;      // KiB, the restarted hub as it starts listening
  std::string load_line;             // the restarted hub's log line on reading its store
};

// The last line of the hub's log that holds `needle` ("" if none).
std::string last_log_line(const fs::path& log, std::string_view needle) {
  std::ifstream in(log);
  std::string line, found;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) found = line;
  return found;
}

int report(const Options& o, std::size_t total, const EmulatedFleet& fleet, ProbeStats& probe,
           const Timeline& t, std::uint64_t rss_before, std::uint64_t rss_after,
           const std::map<std::string, std::uint64_t>& counters) {
  const auto s = fleet.stats();
  const double steady_per_s =
      static_cast<double>(total) / std::chrono::duration<double>(o.beat).count();
  const double steady_per_bucket = steady_per_s * kBucketUs / 1e6;
  const double measured_per_bucket = t.steady_answered_per_s * kBucketUs / 1e6;
  print_buckets(s, steady_per_bucket);
  std::vector<double> digest_ms, full_ms;
  std::size_t never = 0;
  fleet.confirmation_times(digest_ms, full_ms, never);
  std::printf("\nrestart (%s), times since the new hub's exec:\n",
              o.graceful ? "SIGTERM" : "SIGKILL");
  std::printf("  listening (endpoint written)                 %7.0f ms\n", t.listening_ms);
  std::printf("  first complete answer to a Query             %7lld ms\n",
              static_cast<long long>(probe.first_correct_ms));
  if (!t.load_line.empty()) std::printf("  hub: %s\n", t.load_line.c_str());
  print_percentiles("agent's digest taken by the new epoch", digest_ms);
  print_percentiles("agent's full set acknowledged (confirmed)", full_ms);
  std::printf("  every agent confirmed: %s (%zu of %zu never)\n",
              t.all_full_ms < 0
                  ? "no"
                  : (std::to_string(static_cast<long long>(t.all_full_ms)) + " ms").c_str(),
              never, total);
  std::printf(
      "full re-sends per 100 ms: peak offered %s, peak answered %s; steady N/I %s (%.2fx / "
      "%.2fx); beats answered before the kill %s (%.2fx / %.2fx)\n",
      si(peak(s.full_offered)).c_str(), si(peak(s.full_answered)).c_str(),
      si(steady_per_bucket).c_str(), peak(s.full_offered) / steady_per_bucket,
      peak(s.full_answered) / steady_per_bucket, si(measured_per_bucket).c_str(),
      peak(s.full_offered) / measured_per_bucket, peak(s.full_answered) / measured_per_bucket);
  std::printf(
      "beats: %llu lost (in flight when the connection went; %llu of them unanswered for %lld s), "
      "%llu unsent while down (%llu link losses), %llu shed (busy), %llu full sets asked for "
      "after the exec (%llu before: leases run out while registering), %llu re-sends "
      "scheduled, %llu frames sent after the exec; longest granted interval %u ms; %llu "
      "regular beats sent >100 ms late (max %.0f ms)\n",
      static_cast<unsigned long long>(s.lost), static_cast<unsigned long long>(s.timed_out),
      static_cast<long long>(kFrameTimeoutUs / 1'000'000),
      static_cast<unsigned long long>(s.unsent), static_cast<unsigned long long>(s.link_downs),
      static_cast<unsigned long long>(s.shed), static_cast<unsigned long long>(s.full_requested),
      static_cast<unsigned long long>(s.full_requested_before),
      static_cast<unsigned long long>(s.resends_scheduled),
      static_cast<unsigned long long>(s.frames_after_exec), s.max_interval_ms,
      static_cast<unsigned long long>(s.late_100ms), static_cast<double>(s.max_late_us) / 1000.0);
  std::printf(
      "hub counters after (new hub): beats %llu, full_sets_received %llu, "
      "full_sets_requested %llu, frames_shed %llu, nodes_expired %llu, instances %llu\n",
      static_cast<unsigned long long>(counters.at("beats")),
      static_cast<unsigned long long>(counters.at("full_sets_received")),
      static_cast<unsigned long long>(counters.at("full_sets_requested")),
      static_cast<unsigned long long>(counters.at("frames_shed")),
      static_cast<unsigned long long>(counters.at("nodes_expired")),
      static_cast<unsigned long long>(counters.at("instances")));
  std::printf(
      "resolve prober (every %lld ms): %llu sent, %llu answered, %llu unanswered, %llu "
      "unsent (hub down), %llu misses (fewer than %zu instances; %llu before the kill, the others "
      "from %lld to %lld ms after the exec)\n",
      static_cast<long long>(o.probe.count()), static_cast<unsigned long long>(probe.sent),
      static_cast<unsigned long long>(probe.answered),
      static_cast<unsigned long long>(probe.unanswered),
      static_cast<unsigned long long>(probe.unsent), static_cast<unsigned long long>(probe.misses),
      kResolveInstances, static_cast<unsigned long long>(probe.misses_before_exec),
      static_cast<long long>(probe.first_miss_ms), static_cast<long long>(probe.last_miss_ms));
  print_percentiles("resolve round trip after the exec", probe.rtt_ms);
  std::printf(
      "hub RSS: %.1f MiB before the kill, %.1f MiB once restarted and listening, %.1f MiB after "
      "every agent was confirmed\n",
      static_cast<double>(rss_before) / 1024, static_cast<double>(t.rss_loaded) / 1024,
      static_cast<double>(rss_after) / 1024);
  std::printf("load average at end: %s\n\n", load_average().c_str());

  Verdicts v;
  v.line(peak(s.full_answered) <= 2 * steady_per_bucket,
         "peak full re-sends answered per 100 ms <= 2x steady (" + si(peak(s.full_answered)) +
             " vs " + si(2 * steady_per_bucket) + ")");
  v.line(probe.misses == 0,
         "resolve never short of instances (" + std::to_string(probe.misses) + " misses)");
  v.line(never == 0 && t.all_full_ms >= 0, "every agent confirmed by the new epoch");
  if (s.unmatched != 0)
    throw std::runtime_error(std::to_string(s.unmatched) +
                             " replies answered no frame sent; first: " + s.first_unmatched);
  v.line(s.full_requested == 0 && counters.at("nodes_expired") == 0,
         "nothing lost from SQLite (no full set asked for, no node expired)");
  return 0;
}

int run(const Options& o) {
  const BenchClock clock;
  RestartMark mark;
  TempDir dir("cascade-restart-scale");
  std::printf(
      "cascade_restart_scale_bench: %zu agents + %zu resolve-target owners, interval %lld "
      "ms, %zu senders, batch %zu, window %zu, %s\n  cpu %s x%u, load average at start %s\n",
      o.agents, kResolveInstances, static_cast<long long>(o.beat.count()), o.senders, o.batch,
      o.window, o.graceful ? "graceful (SIGTERM)" : "crash (SIGKILL)", cpu_model().c_str(),
      std::thread::hardware_concurrency(), load_average().c_str());
  auto hub = start_hub(o, dir.path(), "tcp://127.0.0.1:*", false);
  const std::string endpoint = hub->endpoint();  // fixed from now on: the restart binds it again
  Nodes nodes(o.agents, o.services);
  register_all(nodes, endpoint, o);

  EmulatedFleet fleet(nodes, o.senders, SenderConfig{endpoint, o.beat, o.batch, o.window}, clock,
                      mark);
  ResolveProber prober(endpoint, o.probe, clock, mark);
  const double settle_s = settle(fleet, o);
  const auto answered_before = fleet.answered();
  std::this_thread::sleep_for(o.steady);
  fleet.throw_if_failed();
  const auto rss_before = hub->rss();
  const double steady_s = std::chrono::duration<double>(o.steady).count();
  Timeline t;
  t.steady_answered_per_s = static_cast<double>(fleet.answered() - answered_before) / steady_s;
  std::printf(
      "steady beats before the kill: %s/s answered (N/I = %s/s), interval granted %u ms "
      "(%.1f s after the registration for the grant to settle)\n",
      si(t.steady_answered_per_s).c_str(),
      si(static_cast<double>(nodes.size()) * 1000.0 / static_cast<double>(o.beat.count())).c_str(),
      fleet.granted_ms(), settle_s);
  std::fflush(stdout);

  progress("cascade_restart_scale_bench", o.graceful ? "stopping the hub" : "killing the hub");
  o.graceful ? hub->stop() : hub->crash();
  std::this_thread::sleep_for(o.down);
  const auto exec = SteadyClock::now();
  mark.exec_us = clock.now_us();
  hub = start_hub(o, dir.path(), endpoint, true);
  hub->endpoint(std::chrono::seconds(300));  // it binds once it loaded 1M rows
  t.listening_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - exec).count();
  t.rss_loaded = hub->rss();
  t.load_line = last_log_line(dir.path() / "hub.log", "read the store in");
  await_confirmations(fleet, nodes.size(), exec, o.patience);
  if (fleet.confirmed_full() == nodes.size())
    t.all_full_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - exec).count();
  std::this_thread::sleep_for(o.beat);  // one more interval: the tail of the re-send rate
  const auto rss_after = hub->rss();
  auto probe = prober.stop();
  fleet.stop();
  const auto counters = hub_counters(HubAccess::plain(endpoint));
  return report(o, nodes.size(), fleet, probe, t, rss_before, rss_after, counters);
}

}  // namespace
}  // namespace cascade::bench

int main(int argc, char** argv) {
  return cascade::bench::bench_main<cascade::bench::Options>(
      argc, argv, "cascade_restart_scale_bench", "restart-scale-bench", cascade::bench::parse,
      cascade::bench::run);
}
