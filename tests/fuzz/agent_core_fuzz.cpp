// Fuzz target: an AgentCore (agent/agent_core.cpp) with registrations, pinned
// services and open queries, fed a session of frames (fuzz_support.hpp) as
// replies from its hubs: down beats, pushes, query replies, acks, errors.
// STEP byte: bit 0 picks the hub the frame comes from, bit 1 asks a query
// first (ids count from 1, as the core issues them), bits 2-7 advance the
// clock by that many times 100 ms (timers fire: beats, retries, failover,
// query timeouts).
// Properties: nothing throws; everything the agent sends decodes again to an
// equal message; every cached list can be looked up, with an age of zero or
// more, and snapshotted.

#include <array>
#include <string_view>

#include "cascade/agent/agent_core.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

// The node and services the golden samples name, so their replies apply.
constexpr std::string_view kNodeId = "node-10.20.4.17-hm01";
const std::array<proto::ServiceKey, 3> kServices{{
    {"monitorframework-MonitorDataFrameworkWorker-/mdf/ingest", "prod-eu"},
    {"healthmanager-HealthManagerServerWorker-/hm/query", "default"},
    {"payments", "default"},
}};
constexpr Duration kStepUnit{100};
constexpr WallMs kWallOffset = 1'700'000'000'000;

agent::AgentCoreConfig config() {
  agent::AgentCoreConfig c;
  c.node_id = std::string(kNodeId);
  c.epoch = 3;
  c.hub_count = 2;
  c.misses_before_failover = 2;
  c.send_deltas = true;
  c.max_registrations_per_beat = 2;
  return c;
}

proto::Registration registration(const char* id) {
  proto::Registration r;
  r.service = kServices[1];
  r.instance.id = id;
  r.instance.address = std::string("10.20.4.17:") + id;
  return r;
}

class AgentSession {
 public:
  AgentSession() : core_(config(), /*rng_seed=*/11) {
    check(core_.start(now_));
    for (const char* id : {"7080", "7081", "7082"})
      check(core_.add_registration(now_, registration(id)));
    core_.pin(kServices[0]);
    for (std::size_t i = 0; i < kServices.size(); ++i)
      ask();
  }

  void step(const SessionStep& s) {
    now_ += kStepUnit * (s.step >> 2);
    check(core_.on_timer(now_));
    if (s.step & 2) ask();
    for (const auto& message : messages_of(proto::decode_frame(s.frame)))
      check(core_.on_message(now_, s.step & 1, message));
    check_cache();
  }

 private:
  void ask() {
    std::uint64_t id = 0;
    check(core_.query(now_, kServices[queries_++ % kServices.size()], id));
  }

  void check(const agent::AgentActions& actions) {
    for (const auto& out : actions.send) {
      CASCADE_FUZZ_CHECK(out.hub < 2);
      check_round_trip(out.message);
    }
  }

  void check_cache() {
    const WallMs wall = to_ms(now_) + kWallOffset;
    for (const auto& key : core_.cached_keys()) {
      const auto held = core_.peek(now_, wall, key);
      CASCADE_FUZZ_CHECK(held.has_value() && held->age >= Duration{0});
      (void)core_.snapshot_of(key, wall, now_);
    }
  }

  MonoTime now_ = mono_from_ms(1'000'000);
  agent::AgentCore core_;
  std::size_t queries_ = 0;
};

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cascade::fuzz::run_session<cascade::fuzz::AgentSession>(data, size);
}
