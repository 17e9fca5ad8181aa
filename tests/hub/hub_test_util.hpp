#pragma once
// Builders shared by the hub core tests, and HubRig: one hub core on a fake
// clock with the agents a test plays.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/digest.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::hub::testing {

using test_support::reg;

inline std::uint64_t digest(std::vector<proto::Registration> regs) {
  proto::canonicalize(regs);
  return proto::digest_of(regs);
}

// A beat carrying the full set.
inline proto::UpBeat beat_with_set(const std::string& node, std::uint64_t seq,
                                   std::vector<proto::Registration> regs, std::uint64_t epoch = 1) {
  proto::UpBeat b;
  b.node_id = node;
  b.epoch = epoch;
  b.seq = seq;
  b.digest = digest(regs);
  b.registrations = std::move(regs);
  return b;
}

// A steady-state beat: digest only.
inline proto::UpBeat beat(const std::string& node, std::uint64_t seq, std::uint64_t set_digest,
                          std::vector<proto::ServiceUse> uses = {}, std::uint64_t epoch = 1) {
  proto::UpBeat b;
  b.node_id = node;
  b.epoch = epoch;
  b.seq = seq;
  b.digest = set_digest;
  b.uses = std::move(uses);
  return b;
}

inline proto::ServiceUse use(const std::string& service, std::uint64_t version) {
  proto::ServiceUse u;
  u.service.name = service;
  u.version = version;
  return u;
}

// The running totals the hub's status reads (HubCore::recount_mismatch) agree
// with a recount of its state. The rigs and fixtures call it after every
// step, so a change that forgets a total fails the scenario that made it.
inline void expect_totals_kept(const HubCore& hub, std::string_view after = "a step") {
  if (auto mismatch = hub.recount_mismatch())
    ADD_FAILURE() << "running totals drifted after " << after << ": " << *mismatch;
}

// ---------------------------------------------------------------- lists as agents hold them

// One service's list as a consumer holds it, built from the updates it got.
struct HeldList {
  std::uint64_t version = 0;
  std::map<std::string, proto::Instance> instances{};  // by id
};

// Applies an update the way an agent does (agent/agent_core.cpp): a delta only
// onto exactly the version it was made from; false when it did not apply.
inline bool apply_update(HeldList& list, const proto::ServiceUpdate& update) {
  switch (update.kind) {
    case proto::UpdateKind::kDelta:
      if (list.version != update.from_version) return false;
      for (const auto& id : update.removed)
        list.instances.erase(id);
      for (const auto& in : update.upserts)
        list.instances.insert_or_assign(in.id, in);
      break;
    case proto::UpdateKind::kFull:
      list.instances.clear();
      for (const auto& in : update.upserts)
        list.instances.emplace(in.id, in);
      break;
    case proto::UpdateKind::kGone:
      list.instances.clear();
      break;
  }
  list.version = update.version;
  return true;
}

// The instance of `update` with this id, or nullptr.
inline const proto::Instance* find_upsert(const proto::ServiceUpdate& update,
                                          const std::string& id) {
  for (const auto& in : update.upserts)
    if (in.id == id) return &in;
  return nullptr;
}

// ---------------------------------------------------------------- one hub and its agents

// One HubCore on a fake clock, with the agents a test plays: providers beat
// their sets, consumers declare the services they use and keep the lists the
// hub sends them (beat replies and pushes between beats). advance() moves the
// clock in small steps, beats every live agent on its interval, runs the
// hub's timers and collects what the hub sends between beats.
class HubRig {
 public:
  static constexpr Duration kBeatInterval{2000};

  struct Agent {
    std::vector<proto::Registration> regs{};
    std::vector<std::string> uses{};  // service names
    std::string source{};             // what its beats come through (HubCore::handle)
    std::uint64_t seq = 0;
    bool send_set = true;  // the next beat carries the set (first beat, or the hub asked)
    bool beating = true;
    MonoTime last_beat{};
    std::map<std::string, HeldList> lists{};  // by service name
    std::vector<proto::DownBeat> pushes{};    // DownBeats with push=true, in arrival order
    std::vector<MonoTime> pushed_at{};
  };

  explicit HubRig(HubCoreConfig config, std::uint64_t epoch = 7)
      : hub(std::move(config), epoch, clock.now()) {}

  FakeClock clock;  // declared before `hub`: the hub starts at its time
  HubCore hub;

  // An agent offering `regs`, beating from now on (through `source`).
  void provider(const std::string& node, std::vector<proto::Registration> regs,
                std::string source = {}) {
    auto& a = agents_[node];
    a.regs = std::move(regs);
    a.source = std::move(source);
    beat(node);
  }
  // An agent using `services` (it registers nothing), beating from now on.
  void consumer(const std::string& node, std::vector<std::string> services,
                std::string source = {}) {
    auto& a = agents_[node];
    a.uses = std::move(services);
    a.source = std::move(source);
    beat(node);
  }

  // One beat of `node` now; its reply is applied like an agent applies it.
  proto::Message beat(const std::string& node) {
    auto& a = agents_.at(node);
    proto::UpBeat b;
    b.node_id = node;
    b.epoch = 1;
    b.seq = ++a.seq;
    b.digest = digest(a.regs);
    if (a.send_set) b.registrations = a.regs;
    for (const auto& service : a.uses) {
      proto::ServiceUse u;
      u.service = test_support::key(service);
      u.version = a.lists[service].version;
      b.uses.push_back(std::move(u));
    }
    a.last_beat = clock.now();
    auto result = hub.handle(clock.now(), b, a.source);
    if (const auto* down = std::get_if<proto::DownBeat>(&result.reply)) {
      a.send_set = down->send_full;
      for (const auto& update : down->updates)
        apply_update(a.lists[update.service.name], update);
    }
    collect();
    return result.reply;
  }

  // kill -9: it stops beating (it stays known to the test). resume(): it beats again now.
  void silence(const std::string& node) { agents_.at(node).beating = false; }
  void resume(const std::string& node) {
    agents_.at(node).beating = true;
    beat(node);
  }
  // A graceful stop: one Deregister, and the agent is gone.
  proto::Message deregister(const std::string& node) {
    auto& a = agents_.at(node);
    auto result = hub.handle(clock.now(), proto::Deregister{node, 1, ++a.seq}, a.source);
    agents_.erase(node);
    collect();
    return result.reply;
  }

  // Moves the clock in steps: live agents beat every kBeatInterval, the hub's
  // timers run, and what it sends between beats is collected.
  void advance(Duration d, Duration step = Duration{10}) {
    for (Duration done{0}; done < d; done += step) {
      clock.advance(std::min(step, d - done));
      for (auto& [node, a] : agents_)
        if (a.beating && clock.now() - a.last_beat >= kBeatInterval) beat(node);
      tick();
    }
  }
  // Runs the hub's timers now, without moving the clock.
  void tick() {
    hub.tick(clock.now());
    collect();
  }

  HandleResult handle(const proto::Message& message, std::string_view source = {}) {
    auto result = hub.handle(clock.now(), message, source);
    collect();
    return result;
  }
  // A FailureReport of one signal: `reporter` saw `count` calls to `address` fail.
  HandleResult report(const std::string& reporter, const std::string& service,
                      const std::string& address, std::uint32_t count = 1,
                      std::uint64_t request_id = 0) {
    proto::FailureSignal signal;
    signal.service = test_support::key(service);
    signal.address = address;
    signal.reporter = reporter;
    signal.count = count;
    return handle(proto::FailureReport{request_id, {signal}, 0});
  }
  proto::QueryReply query(const std::string& service) {
    proto::Query q;
    q.request_id = ++request_seq_;
    q.service = test_support::key(service);
    auto result = hub.handle(clock.now(), q);
    auto* reply = std::get_if<proto::QueryReply>(&result.reply);
    EXPECT_NE(reply, nullptr) << "not a QueryReply";
    return reply ? *reply : proto::QueryReply{};
  }
  proto::StatusReply status() {
    return std::get<proto::StatusReply>(hub.handle(clock.now(), proto::StatusRequest{1}).reply);
  }
  // A status counter by name (asserts that it exists).
  std::uint64_t counter(const std::string& name) {
    for (const auto& [key, value] : status().counters)
      if (key == name) return value;
    ADD_FAILURE() << "no status counter " << name;
    return 0;
  }

  // The registry's entry of an instance, or nullptr.
  const InstanceEntry* entry(const std::string& service, const std::string& id) const {
    const auto* svc = hub.registry().find(test_support::key(service));
    if (svc == nullptr) return nullptr;
    const InstanceSlot* slot = svc->instances.find(id);
    return slot == nullptr ? nullptr : &slot->entry();
  }
  // What consumers are served as the instance's health (nullopt: not listed).
  std::optional<proto::Health> health(const std::string& service, const std::string& id) const {
    const auto* e = entry(service, id);
    return e ? std::optional<proto::Health>(e->served(id).health) : std::nullopt;
  }

  const Agent& agent(const std::string& node) const { return agents_.at(node); }
  const std::vector<proto::DownBeat>& pushes_to(const std::string& node) const {
    return agents_.at(node).pushes;
  }
  // The list `node` holds of `service` (empty when it holds none).
  const HeldList& list(const std::string& node, const std::string& service) {
    return agents_.at(node).lists[service];
  }
  // Pushes sent so far to any agent.
  std::size_t push_count() const {
    std::size_t n = 0;
    for (const auto& [node, a] : agents_)
      n += a.pushes.size();
    return n;
  }
  // Messages the hub sent between beats to nodes the rig does not play.
  const std::vector<NodeMessage>& other_messages() const { return other_messages_; }

 private:
  // Hands the hub's messages between beats to the agents they are for, and
  // checks the hub's running totals after the step that produced them.
  void collect() {
    expect_totals_kept(hub);
    for (auto& out : hub.take_node_messages()) {
      auto it = agents_.find(out.node_id);
      auto* push = std::get_if<proto::DownBeat>(&out.message);
      if (it == agents_.end() || push == nullptr || !push->push) {
        other_messages_.push_back(std::move(out));
        continue;
      }
      for (const auto& update : push->updates)
        apply_update(it->second.lists[update.service.name], update);
      it->second.pushes.push_back(*push);
      it->second.pushed_at.push_back(clock.now());
    }
  }

  std::map<std::string, Agent> agents_;
  std::vector<NodeMessage> other_messages_;
  std::uint64_t request_seq_ = 0;
};

}  // namespace cascade::hub::testing
