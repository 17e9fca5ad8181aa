#include "cascade/bench/mass_change.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "cascade/bench/fast_fail_fleet.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/bench/last_beats.hpp"
#include "cascade/bench/latency_prober.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr Duration kLease{6000};  // the hub's default: three 2 s beats
constexpr auto kPatience = std::chrono::seconds(60);

proto::ServiceKey big() {
  return proto::ServiceKey{"mass-big", std::string(proto::kDefaultGroup)};
}

double seconds(SteadyTime a, SteadyTime b) {
  return std::chrono::duration<double>(b - a).count();
}

// The consumers' side: each beat's round trip, each push's arrival, and the
// version of the big list each consumer held after each change. The
// callbacks run on the fleet's driver thread; the reads happen once it is idle.
class MassWatch : public FleetObserver {
 public:
  struct Rtt {
    SteadyTime at;
    double ms;
  };
  struct Held {
    SteadyTime at;
    std::uint64_t version;
  };

  explicit MassWatch(std::size_t consumers) : sent_(consumers), held_(consumers) {}
  void attach(const AgentFleet* fleet) { fleet_ = fleet; }

  void on_sent(std::size_t agent, const proto::Message& message, SteadyTime at) override {
    if (const auto* beat = std::get_if<proto::UpBeat>(&message)) {
      std::lock_guard lock(mu_);
      sent_[agent] = {beat->seq, at};
    }
  }
  void on_received(std::size_t agent, const proto::Message& message, SteadyTime at) override {
    const auto* down = std::get_if<proto::DownBeat>(&message);
    if (down == nullptr) return;
    std::lock_guard lock(mu_);
    if (down->push) {
      pushes_.push_back(at);
    } else if (down->ack_seq == sent_[agent].first) {
      rtts_.push_back(
          {at, std::chrono::duration<double, std::milli>(at - sent_[agent].second).count()});
    }
  }
  void on_changed(std::size_t agent, const proto::ServiceKey& service, SteadyTime at) override {
    if (service != big()) return;
    const auto held = fleet_->core(agent).held(clock_.now(), service);
    std::lock_guard lock(mu_);
    if (held) held_[agent].push_back({at, held->version});
  }

  std::vector<double> rtts_between(SteadyTime from, SteadyTime to) {
    std::lock_guard lock(mu_);
    std::vector<double> out;
    for (const auto& r : rtts_)
      if (r.at >= from && r.at <= to) out.push_back(r.ms);
    return out;
  }
  std::vector<SteadyTime> pushes_after(SteadyTime from) {
    std::lock_guard lock(mu_);
    std::vector<SteadyTime> out;
    for (auto t : pushes_)
      if (t >= from) out.push_back(t);
    return out;
  }
  // When the last consumer came to hold `version` (nullopt: one never did).
  std::optional<SteadyTime> all_held(std::uint64_t version) {
    std::lock_guard lock(mu_);
    SteadyTime last{};
    for (const auto& changes : held_) {
      auto it = std::find_if(changes.begin(), changes.end(),
                             [&](const Held& h) { return h.version == version; });
      if (it == changes.end()) return std::nullopt;
      last = std::max(last, it->at);
    }
    return last;
  }

 private:
  const AgentFleet* fleet_ = nullptr;
  SystemClock clock_;
  std::mutex mu_;
  std::vector<std::pair<std::uint64_t, SteadyTime>> sent_;  // per consumer: last beat's seq
  std::vector<Rtt> rtts_;
  std::vector<SteadyTime> pushes_;
  std::vector<std::vector<Held>> held_;
};

// The i-th agent of a fleet whose node ids start with `prefix`.
FleetAgent numbered_agent(const std::string& prefix, std::size_t i) {
  return FleetAgent{default_agent_config(prefix + std::to_string(i), i + 1), {}, {}};
}

std::vector<FleetAgent> providers(const MassChangeOptions& o) {
  std::vector<FleetAgent> out;
  for (std::size_t i = 0; i < o.instances; ++i) {
    auto a = numbered_agent("mass-provider-", i);
    proto::Registration r;
    r.service = big();
    r.instance.id = "mass-" + std::to_string(i);
    r.instance.address = address(i, 9090);
    a.registrations.push_back(std::move(r));
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<FleetAgent> consumers(const MassChangeOptions& o) {
  std::vector<FleetAgent> out;
  for (std::size_t k = 0; k < o.consumers; ++k) {
    auto a = numbered_agent("mass-consumer-", k);
    a.pinned.push_back(big());
    out.push_back(std::move(a));
  }
  return out;
}

template <typename Done>
bool wait_until(Done done, std::chrono::seconds patience) {
  const auto deadline = SteadyClock::now() + patience;
  while (!done()) {
    if (SteadyClock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

bool every_consumer_holds(AgentFleet& fleet, std::size_t instances) {
  bool all = true;
  fleet.call([&](AgentFleet::Access& a) {
    for (std::size_t k = 0; all && k < a.size(); ++k) {
      const auto held = a.core(k).peek(a.now(), 0, big());
      all = held && held->instances.size() == instances;
    }
  });
  return all;
}

std::uint64_t list_version(HubProbe& probe) {
  proto::Query q;
  q.node_id = "mass-bench";
  q.service = big();
  const auto reply = probe.request(q);
  const auto* r = std::get_if<proto::QueryReply>(&reply);
  if (r == nullptr) throw std::runtime_error("the hub did not answer a Query for the big list");
  return r->version;
}

double peak_per_second(std::vector<SteadyTime> times) {
  std::sort(times.begin(), times.end());
  std::size_t best = 0;
  for (std::size_t i = 0, j = 0; j < times.size(); ++j) {
    while (times[j] - times[i] > std::chrono::seconds(1))
      ++i;
    best = std::max(best, j - i + 1);
  }
  return static_cast<double>(best);
}

}  // namespace

MassChangeResult run_mass_change(const MassChangeOptions& o, std::vector<std::string>& problems) {
  MassChangeResult result;
  TempDir dir("cascade-push-bench-mass");
  const auto config = loopback_hub_config("mass", 1, dir.path());
  result.push_cap = config.push.max_per_second;
  InProcessHub hub(config);
  // A saturated hub answers late: the measurement waits rather than fails.
  HubProbe probe(hub.endpoint(), std::chrono::seconds(60));

  LastBeats beats(o.instances);
  AgentFleet provider_fleet({.name = "mass-prov",
                             .endpoint = hub.endpoint(),
                             .sockets = o.provider_sockets,
                             .start_spread = Duration{2000},
                             .seed = 11},
                            providers(o), &beats);
  MassWatch watch(o.consumers);
  AgentFleet consumer_fleet(
      {.name = "mass-cons", .endpoint = hub.endpoint(), .start_spread = Duration{2000}, .seed = 13},
      consumers(o), &watch);
  watch.attach(&consumer_fleet);
  if (!wait_until([&] { return every_consumer_holds(consumer_fleet, o.instances); }, kPatience))
    throw std::runtime_error("the consumers never held the whole big list");

  // One interval for the beats the readiness checks (which copy every list) delayed.
  std::this_thread::sleep_for(Duration{2000});
  LatencyProber prober(hub.endpoint(), std::chrono::milliseconds(5));
  const auto steady_from = SteadyClock::now();
  std::this_thread::sleep_for(o.baseline);
  auto steady = watch.rtts_between(steady_from, SteadyClock::now());
  result.beat_rtt_before_ms = percentiles(steady);
  auto probed = prober.between(steady_from, SteadyClock::now());
  result.hub_rtt_before_ms = percentiles(probed);

  result.killed = static_cast<std::size_t>(static_cast<double>(o.instances) * o.killed_share);
  const auto before = probe.counters();
  progress("push-bench", "mass change: killing " + std::to_string(result.killed) + " providers");
  provider_fleet.call([&](AgentFleet::Access& a) {
    for (std::size_t i = 0; i < result.killed; ++i)
      a.silence(i);
  });
  SteadyTime first_expiry = SteadyTime::max();
  SteadyTime last_expiry{};
  for (std::size_t i = 0; i < result.killed; ++i) {
    first_expiry = std::min(first_expiry, beats.last_beat(i) + kLease);
    last_expiry = std::max(last_expiry, beats.last_beat(i) + kLease);
  }
  result.expiry_spread_s = seconds(first_expiry, last_expiry);

  const auto survivors = o.instances - result.killed;
  if (!wait_until([&] { return probe.status().instances == survivors; }, kPatience)) {
    problems.push_back("mass change: the hub never expired every killed provider");
    return result;
  }
  const auto final_version = list_version(probe);
  std::optional<SteadyTime> all;
  wait_until([&] { return (all = watch.all_held(final_version)).has_value(); },
             std::chrono::seconds(10));
  const auto after = probe.counters();
  result.pushes = after.at("pushes") - before.at("pushes");
  result.pushes_over_rate = after.at("pushes_over_rate") - before.at("pushes_over_rate");
  result.pushes_by_switch = after.at("pushes_held_by_switch") - before.at("pushes_held_by_switch");
  result.updates_full = after.at("updates_full") - before.at("updates_full");
  result.updates_delta = after.at("updates_delta") - before.at("updates_delta");
  if (!all) {
    problems.push_back("mass change: a consumer never held the list without the killed");
    return result;
  }
  result.last_consumer_after_last_expiry_s = seconds(last_expiry, *all);
  auto during = watch.rtts_between(first_expiry, *all);
  result.beat_rtt_during_ms = percentiles(during);
  auto probed_during = prober.between(first_expiry, *all);
  result.hub_rtt_during_ms = percentiles(probed_during);
  result.hub_probes_unanswered = prober.unanswered();
  const auto pushes = watch.pushes_after(first_expiry - std::chrono::milliseconds(100));
  if (!pushes.empty())
    result.push_seconds = seconds(*std::min_element(pushes.begin(), pushes.end()),
                                  *std::max_element(pushes.begin(), pushes.end()));
  result.peak_pushes_per_s = peak_per_second(pushes);
  return result;
}

}  // namespace cascade::bench
