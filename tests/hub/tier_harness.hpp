#pragma once
// Several HubCores wired into tiers in one process, on a fake clock: what one
// hub's uplink sends is handed to its upstream's core at once and the reply
// comes straight back, unless the link is cut. What a hub sends a node between
// beats (HubCore::take_node_messages) goes down the same way: to the child hub
// of that id, or to the test's agent, whose pushes are kept for inspection.
// Agents are played by the test (beats and queries handed to a hub's core);
// those that follow config groups keep them in a proto::ConfigCopy, as agents do.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/config_copy.hpp"
#include "cascade/common/digest.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub::testing {

class TierHarness {
 public:
  struct HubSpec {
    std::string id{};
    std::uint32_t tier = 1;
    Duration lease{6000};
    std::vector<std::string> upstreams{};  // hub ids
    UplinkMode mode = UplinkMode::kFailover;
    std::size_t max_registrations_per_beat = 2000;
    std::uint32_t min_local_up = 1;
    std::uint64_t epoch = 1;
    Duration unused_ttl{std::chrono::seconds(30)};
  };

  HubCore& add(const HubSpec& spec) {
    HubCoreConfig config;
    config.hub_id = spec.id;
    config.tier = spec.tier;
    config.lease = spec.lease;
    config.min_local_up = spec.min_local_up;
    if (!spec.upstreams.empty()) {
      UplinkConfig up;
      up.endpoints = spec.upstreams;
      up.mode = spec.mode;
      up.max_registrations_per_beat = spec.max_registrations_per_beat;
      up.unused_ttl = spec.unused_ttl;
      config.uplink = up;
    }
    upstreams_[spec.id] = spec.upstreams;
    auto& slot = hubs_[spec.id];
    slot = std::make_unique<HubCore>(config, spec.epoch, clock.now());
    return *slot;
  }
  HubCore& hub(const std::string& id) { return *hubs_.at(id); }

  void cut(const std::string& child, const std::string& parent) { cut_.insert({child, parent}); }
  void heal(const std::string& child, const std::string& parent) { cut_.erase({child, parent}); }

  // Delivers upstream traffic (and the replies) and what hubs send their
  // nodes between beats, until nothing moves.
  void pump() {
    for (bool moved = true; moved;) {
      moved = false;
      for (auto& [id, core] : hubs_)
        for (auto& out : core->take_upstream_messages()) {
          moved = true;
          deliver_up(id, out);
        }
      for (auto& [id, core] : hubs_)
        for (auto& out : core->take_node_messages()) {
          moved = true;
          deliver_down(id, out);
        }
      for (auto& [id, core] : hubs_)
        for (auto& deferred : core->take_deferred_replies()) {
          moved = true;
          deliver_deferred(id, deferred);
        }
    }
    for (auto& [id, core] : hubs_)
      expect_totals_kept(*core, "a step of hub " + id);
  }

  // An agent of `hub_id` providing `regs`, beating every 2 s from now on.
  void agent(const std::string& hub_id, const std::string& node,
             std::vector<proto::Registration> regs) {
    auto& a = agents_[node];
    a.hub = hub_id;
    a.digest = proto::digest_of(regs);
    beat_agent(node, std::move(regs));
  }
  // An agent of `hub_id` using `services` (it registers nothing), beating
  // every 2 s from now on and keeping the lists it is sent, pushes included.
  void consumer(const std::string& hub_id, const std::string& node,
                std::vector<std::string> services) {
    auto& a = agents_[node];
    a.hub = hub_id;
    a.digest = proto::digest_of({});
    a.uses = std::move(services);
    beat_agent(node, std::vector<proto::Registration>{});
  }
  // An agent of `hub_id` following config `groups` (it registers and uses
  // nothing), beating every 2 s from now on and keeping the groups it is sent,
  // pushes included.
  void follower(const std::string& hub_id, const std::string& node,
                std::vector<std::string> groups) {
    auto& a = agents_[node];
    a.hub = hub_id;
    a.digest = proto::digest_of({});
    a.groups = std::move(groups);
    beat_agent(node, std::vector<proto::Registration>{});
  }
  // From its next beat on, the follower declares these groups only.
  void follow(const std::string& node, std::vector<std::string> groups) {
    agents_.at(node).groups = std::move(groups);
  }
  // What a follower holds of a group (nullptr: not followed).
  const proto::HeldConfig* config(const std::string& node, const std::string& group) const {
    return agents_.at(node).configs.find(group);
  }
  // The entry of `key` a follower holds, or nullptr.
  const proto::ConfigEntry* config_value(const std::string& node, const std::string& group,
                                         const std::string& key) const {
    const auto* held = config(node, group);
    if (held == nullptr) return nullptr;
    auto it = held->entries.find(key);
    return it == held->entries.end() ? nullptr : &it->second;
  }
  // The config updates of each beat reply a follower got, in order.
  const std::vector<std::vector<proto::ConfigUpdate>>& config_replies(
      const std::string& node) const {
    return agents_.at(node).config_replies;
  }
  // An operator sets (or, with nullopt, removes) a key of `group` at `hub_id`.
  void set_config(const std::string& hub_id, const std::string& group, const std::string& key,
                  std::optional<std::string> value) {
    const auto outcome =
        hub(hub_id).edit_config(clock.now(), group, {{key, std::move(value)}}, "ops", 0);
    EXPECT_TRUE(std::holds_alternative<std::vector<ConfigHistoryRecord>>(outcome))
        << std::get<std::string>(outcome);
  }

  // A FailureReport of one signal handed to `hub_id`: `reporter` saw calls to
  // `address` fail. Returns the hub's reply (empty for request_id 0).
  HandleResult report(const std::string& hub_id, const std::string& reporter,
                      const std::string& service, const std::string& address,
                      std::uint64_t request_id = 0) {
    proto::FailureSignal signal;
    signal.service = proto::ServiceKey{service, std::string(proto::kDefaultGroup)};
    signal.address = address;
    signal.reporter = reporter;
    auto result = hub(hub_id).handle(clock.now(), proto::FailureReport{request_id, {signal}, 0});
    pump();
    return result;
  }

  // Pushes (DownBeats with push=true) a test agent received, in order, and when.
  const std::vector<proto::DownBeat>& pushes_to(const std::string& node) const {
    return agents_.at(node).pushes;
  }
  const std::vector<MonoTime>& pushed_at(const std::string& node) const {
    return agents_.at(node).pushed_at;
  }
  // The list of `service` a consumer holds (from beat replies and pushes).
  const HeldList& list(const std::string& node, const std::string& service) {
    return agents_.at(node).lists[service];
  }
  // The lists the last beat reply to a consumer named as served stale.
  const std::vector<proto::StaleList>& stale_lists(const std::string& node) const {
    return agents_.at(node).stale;
  }
  // Node messages no hub or agent of the harness took (an unknown node, a cut link).
  const std::vector<NodeMessage>& undelivered() const { return undelivered_; }

  // kill -9: it stops beating. stop(): a graceful Deregister.
  void kill(const std::string& node) { agents_.erase(node); }
  void stop(const std::string& node) {
    auto& a = agents_.at(node);
    hub(a.hub).handle(clock.now(), proto::Deregister{node, 1, ++a.seq});
    agents_.erase(node);
    pump();
  }

  // Moves the clock in steps, running every hub's timers and the network.
  void advance(Duration d, Duration step = Duration{10}) {
    for (Duration done{0}; done < d; done += step) {
      clock.advance(step);
      for (auto& [node, a] : agents_)
        if (clock.now() - a.last_beat >= kAgentInterval) beat_agent(node, std::nullopt);
      for (auto& [id, core] : hubs_)
        core->tick(clock.now());
      pump();
    }
  }

  // A query by a consumer of `hub`; waits (on the virtual clock) for a deferred answer.
  proto::Message query(const std::string& hub_id, const std::string& service,
                       Duration max_wait = Duration{3000}) {
    proto::Query q;
    q.request_id = ++request_seq_;
    q.service = proto::ServiceKey{service, std::string(proto::kDefaultGroup)};
    auto result = hub(hub_id).handle(clock.now(), q);
    pump();
    if (result.deferred == 0) return result.reply;
    const auto key = std::make_pair(hub_id, result.deferred);
    for (Duration waited{0}; !client_answers_.contains(key) && waited < max_wait;
         waited += Duration{10})
      advance(Duration{10});
    auto it = client_answers_.find(key);
    if (it == client_answers_.end()) return proto::ErrorReply{};
    auto reply = std::move(it->second);
    client_answers_.erase(it);
    return reply;
  }

  proto::QueryReply query_reply(const std::string& hub_id, const std::string& service) {
    auto m = query(hub_id, service);
    auto* reply = std::get_if<proto::QueryReply>(&m);
    EXPECT_NE(reply, nullptr) << "not a QueryReply";
    return reply ? *reply : proto::QueryReply{};
  }

  // Upstream messages each hub received from the tier below (beats and queries).
  std::uint64_t received(const std::string& hub_id, proto::MsgType type) const {
    auto it = received_.find({hub_id, type});
    return it == received_.end() ? 0 : it->second;
  }
  const std::vector<proto::UpBeat>& beats_to(const std::string& hub_id) { return beats_[hub_id]; }

  FakeClock clock;

 private:
  void deliver_up(const std::string& child, UplinkOutgoing& out) {
    const auto& parent = upstreams_.at(child).at(out.upstream);
    if (cut_.contains({child, parent}) || !hubs_.contains(parent)) return;
    ++received_[{parent, proto::type_of(out.message)}];
    if (const auto* b = std::get_if<proto::UpBeat>(&out.message)) beats_[parent].push_back(*b);
    auto result = hub(parent).handle(clock.now(), out.message);
    if (result.deferred != 0) {
      forwarded_[{parent, result.deferred}] = {child, out.upstream};
      return;
    }
    if (result.no_reply) return;  // a forwarded FailureReport: fire and forget
    hub(child).on_upstream_message(clock.now(), out.upstream, result.reply);
  }

  // A message from hub `parent` for one of its nodes: a child hub (which
  // takes it as a message from that upstream) or a test agent.
  void deliver_down(const std::string& parent, NodeMessage& out) {
    if (auto child = upstreams_.find(out.node_id); child != upstreams_.end()) {
      const auto& ups = child->second;
      const auto it = std::find(ups.begin(), ups.end(), parent);
      if (it == ups.end() || cut_.contains({out.node_id, parent})) {
        undelivered_.push_back(std::move(out));
        return;
      }
      hub(out.node_id)
          .on_upstream_message(clock.now(), static_cast<std::size_t>(it - ups.begin()),
                               out.message);
      return;
    }
    auto agent = agents_.find(out.node_id);
    const auto* push = std::get_if<proto::DownBeat>(&out.message);
    if (agent == agents_.end() || agent->second.hub != parent || push == nullptr || !push->push) {
      undelivered_.push_back(std::move(out));
      return;
    }
    for (const auto& update : push->updates)
      apply_update(agent->second.lists[update.service.name], update);
    agent->second.configs.apply(clock.now(), push->config_updates);
    agent->second.pushes.push_back(*push);
    agent->second.pushed_at.push_back(clock.now());
  }

  void deliver_deferred(const std::string& at, DeferredReply& deferred) {
    auto it = forwarded_.find({at, deferred.token});
    if (it == forwarded_.end()) {
      client_answers_[{at, deferred.token}] = std::move(deferred.reply);
      return;
    }
    const auto [child, index] = it->second;
    forwarded_.erase(it);
    if (cut_.contains({child, at})) return;
    hub(child).on_upstream_message(clock.now(), index, deferred.reply);
  }

  struct Agent {
    std::string hub;
    std::uint64_t digest = 0;
    std::uint64_t seq = 0;
    MonoTime last_beat{};
    std::vector<std::string> uses{};          // service names
    std::map<std::string, HeldList> lists{};  // by service name
    std::vector<proto::DownBeat> pushes{};
    std::vector<MonoTime> pushed_at{};
    std::vector<proto::StaleList> stale{};  // of the last beat reply
    std::vector<std::string> groups{};      // config groups followed
    proto::ConfigCopy configs{std::chrono::hours(1)};
    std::vector<std::vector<proto::ConfigUpdate>> config_replies{};
  };
  static constexpr Duration kAgentInterval{2000};

  void beat_agent(const std::string& node, std::optional<std::vector<proto::Registration>> regs) {
    auto& a = agents_.at(node);
    proto::UpBeat b;
    b.node_id = node;
    b.epoch = 1;
    b.seq = ++a.seq;
    b.digest = a.digest;
    b.registrations = std::move(regs);
    for (const auto& service : a.uses)
      b.uses.push_back(proto::ServiceUse{
          proto::ServiceKey{service, std::string(proto::kDefaultGroup)}, a.lists[service].version});
    for (const auto& group : a.groups)
      a.configs.use(clock.now(), group);
    for (const auto& use : a.configs.uses())
      if (std::find(a.groups.begin(), a.groups.end(), use.group) != a.groups.end())
        b.configs.push_back(use);
    a.last_beat = clock.now();
    auto result = hub(a.hub).handle(clock.now(), b);
    if (const auto* down = std::get_if<proto::DownBeat>(&result.reply)) {
      for (const auto& update : down->updates)
        apply_update(a.lists[update.service.name], update);
      a.stale = down->stale;
      if (!b.configs.empty() || !down->config_updates.empty()) {
        a.configs.apply(clock.now(), down->config_updates);
        a.configs.confirm(clock.now(), b.configs, down->stale_configs);
        a.config_replies.push_back(down->config_updates);
      }
    }
    pump();
  }

  std::map<std::string, Agent> agents_;
  std::map<std::string, std::unique_ptr<HubCore>> hubs_;
  std::map<std::string, std::vector<std::string>> upstreams_;
  std::set<std::pair<std::string, std::string>> cut_;
  std::map<std::pair<std::string, std::uint64_t>, std::pair<std::string, std::size_t>> forwarded_;
  std::map<std::pair<std::string, std::uint64_t>, proto::Message> client_answers_;
  std::map<std::pair<std::string, proto::MsgType>, std::uint64_t> received_;
  std::map<std::string, std::vector<proto::UpBeat>> beats_;
  std::vector<NodeMessage> undelivered_;
  std::uint64_t request_seq_ = 0;
};

// dc1 and dc2, one L1 hub each ("l1-dc1", "l1-dc2"), under one L2 ("l2"),
// settled for 100 ms.
inline void add_two_datacenters(TierHarness& net) {
  net.add({.id = "l2", .tier = 2});
  net.add({.id = "l1-dc1", .upstreams = {"l2"}});
  net.add({.id = "l1-dc2", .upstreams = {"l2"}});
  net.advance(Duration{100});
}

}  // namespace cascade::hub::testing
