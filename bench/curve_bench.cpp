// cascade_curve_bench: what CurveZMQ costs a hub (issue 12), measured against
// plain text in one run, so that the ratio holds on a machine whose absolute
// figures do not. docs/benchmarks.md ("Curve versus plaintext") shows a run
// and reads it.
//
// Two in-process hubs alike but for security, over tcp loopback:
//  - plain: no keys (loopback plain text, as the tests run);
//  - curve: a key pair, a ZAP handler and an authorised-keys file listing one
//    `agent` key per sender thread and a `reader` key. Each sender beats for
//    its own slice of nodes, registered (and so bound) under its key, so the
//    per-message principal look-up, the role and scope checks and the node
//    binding check are all in the measured path.
// Both register the same N nodes, then --rounds rounds alternate the modes
// (plain first in even rounds, curve first in odd ones) so drift and the
// other work on the machine hit both:
//  1. steady-state digest-only beats, --batch per frame and 1 per frame
//     (bench/beat_fleet.hpp: pipelined senders, replies checked, the hub's
//     counters must agree with what was sent);
//  2. resolve: Query round trips, one in flight, on one connection;
//  3. connect: a new DEALER, connect and its first Query answered (the Curve
//     handshake and the ZAP request are in this figure);
//  4. registration: --reg-nodes fresh nodes, one full-set beat per frame (an
//     agent registering), round trip per frame.
// Exit code 0 means every reply and counter check held; a MISS against a
// target is a result, not an error.

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/beat_fleet.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/common/curve_keys.hpp"
#include "cascade/hub/hub_config.hpp"

namespace {

using namespace cascade;
using bench::HubAccess;
using bench::LatencyUs;
using bench::PhaseResult;
namespace fs = std::filesystem;

// Issue 12's targets: Curve keeps most of the batched throughput (one
// encryption per frame, amortised over the batch), and beats stay prompt.
constexpr double kTargetBatchedRatio = 0.70;
constexpr double kTargetBeatP99Us = 5'000;

// ---------------------------------------------------------------- options

struct Options {
  std::size_t instances = 20'000;
  std::size_t rounds = 4;
  double seconds = 4;
  std::size_t batch = 64;
  std::size_t senders = 2;
  std::size_t window = 4;          // frames in flight per sender, batched phases
  std::size_t window_single = 64;  // frames in flight per sender, one beat per frame
  std::size_t services = 1000;
  std::size_t reg_nodes = 2000;  // fresh nodes registered per round and mode
  std::size_t reg_window = 8;
  std::size_t resolve_queries = 2000;
  std::size_t connects = 200;
};

constexpr const char* kUsage =
    R"(cascade_curve_bench: a hub with CurveZMQ against one in plain text, in one run (tcp loopback)

  --instances N           registered nodes beating, one instance each (default 20000)
  --rounds R              rounds, each measuring both modes, order alternating (default 4)
  --seconds S             measured seconds per throughput phase (default 4; +20% warm-up)
  --batch B               beats per frame in the batched phases (default 64)
  --senders K             sender threads, one DEALER and (Curve) one agent key each (default 2)
  --window W              frames in flight per sender, batched phases (default 4)
  --window-single W       frames in flight per sender, one beat per frame (default 64)
  --services S            services the instances spread over (default 1000)
  --reg-nodes M           fresh nodes registered per round and mode, one per frame (default 2000)
  --reg-window W          registration frames in flight per sender (default 8)
  --resolve-queries Q     queries per resolve measurement (default 2000)
  --connects C            new connections per connect measurement (default 200)
  --quick                 smoke test: --instances 2000 --rounds 1 --seconds 0.5 --reg-nodes 200
                          --resolve-queries 200 --connects 20
)";

void declare_flags(bench::Flags& f, Options& o) {
  f.add({
      {"--instances", &o.instances},
      {"--rounds", &o.rounds},
      {"--seconds", &o.seconds},
      {"--batch", &o.batch},
      {"--senders", &o.senders},
      {"--window", &o.window},
      {"--window-single", &o.window_single},
      {"--services", &o.services},
      {"--reg-nodes", &o.reg_nodes},
      {"--reg-window", &o.reg_window},
      {"--resolve-queries", &o.resolve_queries},
      {"--connects", &o.connects},
  });
  f.first("--quick", [&o] {  // flags given with it override what it sets, wherever they stand
    o.instances = 2000;
    o.rounds = 1;
    o.seconds = 0.5;
    o.reg_nodes = 200;
    o.resolve_queries = 200;
    o.connects = 20;
  });
}

Options parse_options(int argc, char** argv) {
  auto o = bench::parse_flags<Options>(argc, argv, kUsage, declare_flags);
  if (o.batch < 2 || o.batch > proto::kMaxBatchMessages)
    throw std::invalid_argument("--batch must be between 2 and " +
                                std::to_string(proto::kMaxBatchMessages));
  if (o.instances < o.senders || o.reg_nodes < o.senders)
    throw std::invalid_argument("--instances and --reg-nodes need a node per sender at least");
  return o;
}

// ---------------------------------------------------------------- the two hubs

// The Curve hub's key files in `dir` and the clients' keys: one `agent` key
// per sender (named sender-I) and a `reader` key for resolves and counters.
struct CurveSetup {
  fs::path secret_key;
  fs::path authorized_keys;
  std::vector<bench::CurveClientKey> senders;
  bench::CurveClientKey reader;
};

CurveSetup make_curve_setup(const fs::path& dir, std::size_t senders) {
  fs::create_directories(dir);
  const auto hub_keys = curve::generate_key_pair();
  CurveSetup setup;
  setup.secret_key = curve::write_key_files(dir, "hub", hub_keys).first;
  setup.authorized_keys = dir / "authorized_keys";
  auto client = [&](const char* role, const std::string& name, std::ofstream& file) {
    bench::CurveClientKey key{curve::generate_key_pair(), hub_keys.public_z85};
    file << key.own.public_z85 << ' ' << name << ' ' << role << '\n';
    return key;
  };
  std::ofstream file(setup.authorized_keys);
  file << "# cascade_curve_bench: one agent key per sender thread, one reader\n";
  for (std::size_t s = 0; s < senders; ++s)
    setup.senders.push_back(client("agent", "sender-" + std::to_string(s), file));
  setup.reader = client("reader", "bench-reader", file);
  if (!file.flush()) throw std::runtime_error("cannot write " + setup.authorized_keys.string());
  return setup;
}

// A hub under test: nothing expires during a run.
hub::HubConfig mode_hub_config(const std::string& id, const fs::path& dir) {
  auto config = bench::loopback_hub_config(id, 1, dir);
  config.lease = Duration{3'600'000};
  return config;
}

// One mode of the comparison: its hub, how clients reach it, what it measured.
struct Mode {
  std::string name;
  std::unique_ptr<bench::InProcessHub> hub;
  // The clients' own context: its I/O thread (named, 3/... or 4/...) is
  // where they encrypt, measured apart from the other mode's.
  std::unique_ptr<zmq::context_t> client;
  HubAccess access;
  std::uint64_t seq_floor = 2;
  std::vector<PhaseResult> batched, single;  // one per round
  std::vector<LatencyUs> resolve, connect, registration;
  std::vector<double> registration_per_s;
};

// A context for one mode's clients, its I/O thread named after `io_prefix`.
std::unique_ptr<zmq::context_t> client_context(int io_prefix) {
  auto context = std::make_unique<zmq::context_t>(1);
  zmq_ctx_set(context->handle(), ZMQ_THREAD_NAME_PREFIX, io_prefix);
  return context;
}

Mode plain_mode(const fs::path& dir) {
  Mode m;
  m.name = "plain";
  // Named I/O threads (1/ZMQbg/IO/0, 2/...): where ZeroMQ encrypts, read apart.
  m.hub = std::make_unique<bench::InProcessHub>(mode_hub_config("plain", dir),
                                                bench::InProcessHubOptions{"hub-plain", 1});
  m.access = HubAccess::plain(m.hub->endpoint());
  m.access.client_io_prefix = 3;
  m.client = client_context(m.access.client_io_prefix);
  return m;
}

Mode curve_mode(const fs::path& dir, CurveSetup keys) {
  Mode m;
  m.name = "curve";
  auto config = mode_hub_config("curve", dir);
  config.security.secret_key = keys.secret_key;
  config.security.authorized_keys = keys.authorized_keys;
  m.hub = std::make_unique<bench::InProcessHub>(config, bench::InProcessHubOptions{"hub-curve", 2});
  m.access = HubAccess::plain(m.hub->endpoint());
  m.access.senders = std::move(keys.senders);
  m.access.reader = std::move(keys.reader);
  m.access.client_io_prefix = 4;
  m.client = client_context(m.access.client_io_prefix);
  return m;
}

// Fails the run unless the hub runs in the mode it is named for: a Curve
// figure measured in plain text would flatter Curve.
void check_security_mode(const Mode& m, const std::string& expected) {
  const auto status =
      bench::HubProbe(m.access.endpoint, bench::kReplyTimeout, m.access.reader_key()).status();
  if (status.security != expected)
    throw std::runtime_error("hub " + m.name + " serves as '" + status.security + "', expected '" +
                             expected + "'");
}

// ---------------------------------------------------------------- measurements

// New connections: connect, first Query answered, close. The Curve handshake
// (four commands) and the ZAP round trip fall inside each.
LatencyUs measure_connects(zmq::context_t& client, const HubAccess& access, std::size_t count) {
  std::vector<std::int64_t> ns;
  for (std::size_t i = 0; i < count; ++i) {
    const auto t0 = bench::SteadyClock::now();
    auto socket = bench::connect_dealer(client, access.endpoint, access.reader_key());
    bench::query_round_trip(socket, 1);
    ns.push_back(bench::ns_between(t0, bench::SteadyClock::now()));
  }
  return bench::latency_us(ns);
}

void progress(const std::string& what) {
  bench::progress("curve-bench", what);
}

// Nanoseconds of `cpu_per_s` (CPU seconds per wall second) per beat.
double ns_per_beat(double cpu_per_s, const PhaseResult& r, std::size_t batch) {
  const double beats = r.frames_per_s * static_cast<double>(batch);
  return beats > 0 ? cpu_per_s * 1e9 / beats : 0;
}

void print_phase_header() {
  std::printf("%5s %5s %5s %9s %9s %7s %7s %7s %8s %8s %8s %9s %9s\n", "round", "mode", "batch",
              "beats/s", "frames/s", "p50_us", "p99_us", "max_us", "hub_cpu", "hub_ns/b", "io_ns/b",
              "cli_io_ns", "proc_ns/b");
}

void print_phase(std::size_t round, const Mode& m, std::size_t batch, const PhaseResult& r) {
  std::printf("%5zu %5s %5zu %9s %9s %7.0f %7.0f %7.0f %7.0f%% %8.0f %8.0f %9.0f %9.0f\n", round,
              m.name.c_str(), batch, bench::si(r.frames_per_s * static_cast<double>(batch)).c_str(),
              bench::si(r.frames_per_s).c_str(), r.latency.p50_us, r.latency.p99_us,
              r.latency.max_us, r.server_cpu * 100, ns_per_beat(r.server_cpu, r, batch),
              ns_per_beat(r.server_io_cpu, r, batch), ns_per_beat(r.client_io_cpu, r, batch),
              ns_per_beat(r.process_cpu, r, batch));
  std::fflush(stdout);
}

// One round of one mode: beats (batched, then 1 per frame), resolve,
// connects, and the registration of nodes [reg_from, reg_from + reg_nodes).
void measure_round(std::size_t round, Mode& m, bench::Fleet& fleet, std::size_t reg_from,
                   const Options& o) {
  zmq::context_t& client = *m.client;
  const bench::Load load{o.senders, o.seconds};
  for (const auto batch : {o.batch, std::size_t{1}}) {
    progress("round " + std::to_string(round) + ", " + m.name + ", batch " + std::to_string(batch));
    const bench::BeatShape shape{o.instances, batch, batch == 1 ? o.window_single : o.window, {}};
    auto r = bench::measure_beats(client, *m.hub, m.access, fleet, shape, m.seq_floor, load);
    print_phase(round, m, batch, r);
    (batch == 1 ? m.single : m.batched).push_back(r);
  }
  m.resolve.push_back(bench::measure_resolve(client, m.access, o.resolve_queries));
  m.connect.push_back(measure_connects(client, m.access, o.connects));
  const auto reg = bench::register_nodes(client, m.access, fleet, reg_from, reg_from + o.reg_nodes,
                                         {o.senders, 1, o.reg_window});
  m.registration.push_back(reg.latency);
  m.registration_per_s.push_back(static_cast<double>(reg.instances) / reg.seconds);
}

// ---------------------------------------------------------------- summary

// The median of per-round values (nearest rank: the lower middle for an even count).
template <typename T, typename Get>
double median_of(const std::vector<T>& rounds, Get get) {
  std::vector<double> values;
  for (const auto& r : rounds)
    values.push_back(get(r));
  return bench::percentiles(values).p50;
}

template <typename T, typename Get>
double max_of(const std::vector<T>& rounds, Get get) {
  double most = 0;
  for (const auto& r : rounds)
    most = std::max(most, get(r));
  return most;
}

// curve/plain of one figure in each round (the two were measured back to
// back), then their median: steadier than a ratio of medians on a busy machine.
double median_ratio(const std::vector<PhaseResult>& plain, const std::vector<PhaseResult>& curve) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < plain.size(); ++i)
    ratios.push_back(curve[i].frames_per_s / plain[i].frames_per_s);
  return bench::percentiles(ratios).p50;
}

void summary_line(const char* what, double plain, double curve, const char* format) {
  char p[32], c[32];
  std::snprintf(p, sizeof p, format, plain);
  std::snprintf(c, sizeof c, format, curve);
  std::printf("%-38s %10s %10s %9.2f\n", what, p, c, plain > 0 ? curve / plain : 0);
}

void print_summary(const Mode& plain, const Mode& curve, const Options& o) {
  std::printf("\nsummary: medians over %zu round(s); ratio = curve / plain\n", o.rounds);
  std::printf("%-38s %10s %10s %9s\n", "", "plain", "curve", "ratio");
  const auto beats = [](std::size_t batch) {
    return [batch](const PhaseResult& r) { return r.frames_per_s * static_cast<double>(batch); };
  };
  const auto p99 = [](const auto& r) { return r.latency.p99_us; };
  const auto lat_p50 = [](const LatencyUs& l) { return l.p50_us; };
  const auto lat_p99 = [](const LatencyUs& l) { return l.p99_us; };
  const auto same = [](double v) { return v; };
  const std::string b = std::to_string(o.batch);
  // One row: the median over rounds of get(x) for x in Mode::*member, per mode.
  auto both = [&](const std::string& what, auto member, auto get, const char* format) {
    summary_line(what.c_str(), median_of(plain.*member, get), median_of(curve.*member, get),
                 format);
  };
  both("beats/s, batch " + b, &Mode::batched, beats(o.batch), "%.0f");
  both("beats/s, 1 per frame", &Mode::single, beats(1), "%.0f");
  both("beat p99 us, batch " + b, &Mode::batched, p99, "%.0f");
  both("beat p99 us, 1 per frame", &Mode::single, p99, "%.0f");
  both("registration p50 us (1 per frame)", &Mode::registration, lat_p50, "%.0f");
  both("registration p99 us (1 per frame)", &Mode::registration, lat_p99, "%.0f");
  both("registrations/s", &Mode::registration_per_s, same, "%.0f");
  both("resolve p50 us", &Mode::resolve, lat_p50, "%.0f");
  both("resolve p99 us", &Mode::resolve, lat_p99, "%.0f");
  both("connect + first reply p50 us", &Mode::connect, lat_p50, "%.0f");
  both("connect + first reply p99 us", &Mode::connect, lat_p99, "%.0f");
  for (const auto batch : {o.batch, std::size_t{1}}) {
    const auto member = batch == 1 ? &Mode::single : &Mode::batched;
    const std::string at = batch == 1 ? "1/frame" : "batch " + b;
    // CPU per beat of each party: where Curve's work lands.
    const std::pair<const char*, double PhaseResult::*> parties[] = {
        {"hub thread", &PhaseResult::server_cpu},
        {"hub I/O thread", &PhaseResult::server_io_cpu},
        {"clients' I/O thread", &PhaseResult::client_io_cpu},
        {"process", &PhaseResult::process_cpu}};
    for (const auto& [who, cpu] : parties)
      both(
          std::string(who) + " ns/beat, " + at, member,
          [batch, cpu = cpu](const PhaseResult& r) { return ns_per_beat(r.*cpu, r, batch); },
          "%.0f");
  }
  std::printf("%-38s %10s %10s %9.2f\n", "per-round ratio, beats/s batch", "", "",
              median_ratio(plain.batched, curve.batched));
  std::printf("%-38s %10s %10s %9.2f\n", "per-round ratio, beats/s 1/frame", "", "",
              median_ratio(plain.single, curve.single));
}

int print_targets(const Mode& plain, const Mode& curve, const Options& o) {
  std::printf("\ntargets (issue 12):\n");
  bench::Verdicts v;
  const double ratio = median_ratio(plain.batched, curve.batched);
  char what[200];
  std::snprintf(what, sizeof what,
                "Curve throughput, batch %zu: %.0f%% of plain text (median of per-round ratios; "
                "target >= %.0f%%)",
                o.batch, ratio * 100, kTargetBatchedRatio * 100);
  v.line(ratio >= kTargetBatchedRatio, what);
  const auto p99 = [](const PhaseResult& r) { return r.latency.p99_us; };
  const std::pair<std::string, const std::vector<PhaseResult>*> beat_phases[] = {
      {"batch " + std::to_string(o.batch), &curve.batched}, {"1 per frame", &curve.single}};
  for (const auto& [label, rounds] : beat_phases) {
    const double median = median_of(*rounds, p99);
    std::snprintf(
        what, sizeof what,
        "Curve beat p99, %s: %.2f ms (median of rounds, worst %.2f ms; target <= %.0f ms)",
        label.c_str(), median / 1000, max_of(*rounds, p99) / 1000, kTargetBeatP99Us / 1000);
    v.line(median <= kTargetBeatP99Us, what);
  }
  return v.misses;
}

// The Curve hub refused nothing and admitted every client by its key: the
// figures are those of authorised traffic, not of refusals.
void check_curve_counters(const Mode& curve, const Options& o) {
  const auto c = bench::hub_counters(curve.access);
  if (c.at("unauthenticated") != 0 || c.at("forbidden") != 0 || c.at("zap_refused") != 0)
    throw std::runtime_error("the Curve hub refused messages or connections");
  if (c.at("zap_accepted") < o.rounds * o.connects)
    throw std::runtime_error("the Curve hub's ZAP handler admitted fewer clients than connected");
}

int run(const Options& o) {
  std::printf(
      "cascade_curve_bench: %u cores (%s), %zu instances, senders %zu (one agent key each), "
      "window %zu (batch %zu) / %zu (1 per frame), %zu round(s), %.1f s per phase after %.1f s "
      "warm-up\n",
      std::thread::hardware_concurrency(), bench::cpu_model().c_str(), o.instances, o.senders,
      o.window, o.batch, o.window_single, o.rounds, o.seconds, o.seconds * 0.2);
  std::printf("load average at start: %s (other work on the machine skews every figure)\n",
              bench::load_average().c_str());
  const auto run_start = bench::SteadyClock::now();
  bench::TempDir tmp("cascade-curve-bench");
  bench::Fleet fleet(o.instances + o.rounds * o.reg_nodes, o.services, 9);

  std::array<Mode, 2> modes{
      plain_mode(tmp.path()),
      curve_mode(tmp.path(), make_curve_setup(tmp.path() / "keys", o.senders))};
  check_security_mode(modes[0], "loopback");
  check_security_mode(modes[1], "curve");
  for (auto& m : modes) {
    progress("registering " + std::to_string(o.instances) + " nodes at " + m.name);
    bench::register_resolve_target(*m.client, m.access);
    bench::register_nodes(*m.client, m.access, fleet, 0, o.instances, {o.senders, 1024, 8});
  }

  std::printf(
      "\nsteady-state beats (hub_ns/b, io_ns/b, cli_io_ns, proc_ns/b: CPU per beat of the hub "
      "thread, its ZeroMQ I/O thread, the clients' I/O thread, the whole process)\n");
  print_phase_header();
  for (std::size_t round = 0; round < o.rounds; ++round) {
    const std::size_t reg_from = o.instances + round * o.reg_nodes;
    for (std::size_t k = 0; k < modes.size(); ++k)
      measure_round(round, modes[(k + round) % modes.size()], fleet, reg_from, o);
  }
  check_curve_counters(modes[1], o);
  print_summary(modes[0], modes[1], o);
  const int misses = print_targets(modes[0], modes[1], o);
  std::printf(
      "%d target(s) missed; all replies and counters checked; total run %.0f s; load average at "
      "end: %s\n",
      misses, bench::seconds_since(run_start), bench::load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_curve_bench", "curve-bench",
                                             parse_options, run);
}
