#include "cascade/tests/sim/tier_probes.hpp"

#include <algorithm>

namespace cascade::sim::testing {

namespace {

std::string at_ms(const TieredWorld& world, MonoTime t) {
  return "+" + std::to_string((t - world.config().start).count()) + " ms";
}

}  // namespace

// ---------------------------------------------------------------- live views

LiveViewProbe::LiveViewProbe(const TieredWorld& world, const TierFleet& fleet)
    : world_(world), fleet_(fleet), last_settled_(world.now()) {}

void LiveViewProbe::refresh(MonoTime now) {
  armed_ = true;
  live_ = live_sets(world_, fleet_);
  for (const auto& dc : fleet_.dcs)
    for (auto c : dc.consumers)
      for (const auto& service : world_.spec(c).uses)
        check(now, c, service);
}

void LiveViewProbe::check(MonoTime now, std::size_t consumer, const proto::ServiceKey& service) {
  Pair pair{consumer, service};
  if (world_.running(consumer) && !cache_is_live(world_, consumer, service, live_.at(service))) {
    off_.insert(std::move(pair));
  } else if (off_.erase(pair) > 0) {
    last_settled_ = now;
  }
}

void LiveViewProbe::on_agent_received(MonoTime now, std::size_t agent, const proto::Message& m) {
  if (!armed_) return;
  const auto& uses = world_.spec(agent).uses;
  auto recheck = [&](const proto::ServiceKey& service) {
    if (std::find(uses.begin(), uses.end(), service) == uses.end()) return;
    const bool was_live = !off_.contains({agent, service});
    check(now, agent, service);
    if (was_live && off_.contains({agent, service})) {
      ++breaks_;
      ++breaks_by_consumer_[agent];
    }
  };
  if (const auto* down = std::get_if<proto::DownBeat>(&m)) {
    for (const auto& update : down->updates)
      recheck(update.service);
  } else if (const auto* reply = std::get_if<proto::QueryReply>(&m)) {
    recheck(reply->service);
  }
}

std::uint64_t LiveViewProbe::breaks_of(std::size_t consumer) const {
  auto it = breaks_by_consumer_.find(consumer);
  return it == breaks_by_consumer_.end() ? 0 : it->second;
}

std::vector<std::string> LiveViewProbe::out_of_date_pairs() const {
  std::vector<std::string> out;
  for (const auto& [consumer, service] : off_)
    out.push_back(world_.spec(consumer).node_id + " " + service.name);
  return out;
}

// ---------------------------------------------------------------- departures

TierDepartures::TierDepartures(const TieredWorld& world, const TierFleet& fleet,
                               const std::vector<std::size_t>& watched)
    : world_(world) {
  for (auto agent : watched) {
    departures_[agent];
    for (auto hub : chain_of(fleet, fleet.dc_of.at(agent)))
      by_hub_[hub].push_back(agent);
  }
  for (const auto& [hub, agents] : by_hub_)
    check_hub(world.now(), hub);
}

void TierDepartures::on_agent_sent(MonoTime now, std::size_t agent, const proto::Message& m) {
  if (!departures_.contains(agent)) return;
  if (const auto* d = std::get_if<proto::Deregister>(&m)) deregister_sent_[agent][d->seq] = now;
}

void TierDepartures::on_hub_received(MonoTime now, std::size_t hub, Address from,
                                     const proto::Message& m) {
  if (world_.hub_at(from)) {  // a lower hub's uplink (or the upstream's reply)
    check_hub(now, hub);
    return;
  }
  const auto agent = world_.agent_at(from);
  auto it = agent ? departures_.find(*agent) : departures_.end();
  if (it == departures_.end() || world_.hubs_of(*agent).front() != hub) return;
  Departure& d = it->second;
  if (const auto* dereg = std::get_if<proto::Deregister>(&m);
      dereg && !d.first_deregister_arrival) {
    d.first_deregister_arrival = now;
    d.deregister_sent = deregister_sent_[*agent].at(dereg->seq);
  }
  check(now, hub, *agent, d);
}

void TierDepartures::check(MonoTime now, std::size_t hub, std::size_t agent, Departure& d) {
  const auto& reg = provided(world_, agent);
  const bool present = world_.hub_up(hub) && world_.hub_has(hub, reg.service, reg.instance.id);
  const bool was_present = d.present.contains(hub);
  if (was_present && !present) {
    d.gone_at[hub] = now;
    d.present.erase(hub);
  } else if (!was_present && present) {
    if (d.gone_at.contains(hub)) ++d.returns;
    d.present.insert(hub);
  }
}

void TierDepartures::check_hub(MonoTime now, std::size_t hub) {
  auto it = by_hub_.find(hub);
  if (it == by_hub_.end()) return;
  for (auto agent : it->second)
    check(now, hub, agent, departures_[agent]);
}

// ---------------------------------------------------------------- same tier

SameTierWatch::SameTierWatch(const TieredWorld& world, const TierFleet& fleet)
    : world_(world), fleet_(fleet) {}

void SameTierWatch::on_hub_tick(MonoTime now, std::size_t hub) {
  if (!world_.hub_up(hub)) return;
  const auto expired = world_.hub(hub).counters().nodes_expired;
  auto& seen = expired_seen_[hub];
  if (seen == expired) return;  // no lease ran out: nothing can have left
  seen = expired;
  check(now, hub);
}

void SameTierWatch::check(MonoTime now, std::size_t hub) {
  constexpr std::size_t kMaxReported = 20;
  if (!armed_) return;
  for (std::size_t d = 0; d < fleet_.dcs.size(); ++d) {
    const auto& dc = fleet_.dcs[d];
    if (dc.l1 != hub || !world_.hub_up(hub)) continue;
    ++checks_;
    for (auto p : dc.providers) {
      if (!registered(world_, p)) continue;
      const auto& reg = provided(world_, p);
      if (!world_.hub_has(hub, reg.service, reg.instance.id) && failures_.size() < kMaxReported)
        failures_.push_back(at_ms(world_, now) + ": dc" + std::to_string(d) + " lacks " +
                            reg.instance.id);
    }
  }
}

// ---------------------------------------------------------------- beats

std::optional<MonoTime> BeatArrivals::last(std::size_t hub, Address from) const {
  auto it = last_.find(key(hub, from));
  if (it == last_.end()) return std::nullopt;
  return it->second;
}

void BeatArrivals::on_hub_received(MonoTime now, std::size_t hub, Address from,
                                   const proto::Message& m) {
  if (std::holds_alternative<proto::UpBeat>(m)) last_[key(hub, from)] = now;
}

}  // namespace cascade::sim::testing
