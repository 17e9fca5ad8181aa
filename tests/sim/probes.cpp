#include "cascade/tests/sim/probes.hpp"

#include <algorithm>

namespace cascade::sim::testing {

std::uint64_t hub_state_version(const World& world) {
  std::uint64_t version = 0;
  world.hub().registry().for_each_service(
      [&](const hub::ServiceEntry& s) { version = std::max(version, s.version); });
  return version;
}

// ---------------------------------------------------------------- departures

DepartureRecorder::DepartureRecorder(const World& world, const std::vector<std::size_t>& watched)
    : world_(world) {
  for (auto agent : watched)
    departures_[agent];
}

void DepartureRecorder::on_agent_sent(MonoTime now, std::size_t agent, const proto::Message& m) {
  if (!departures_.contains(agent)) return;
  if (const auto* d = std::get_if<proto::Deregister>(&m)) deregister_sent_[agent][d->seq] = now;
}

void DepartureRecorder::on_hub_received(MonoTime now, std::size_t agent, const proto::Message& m) {
  auto it = departures_.find(agent);
  if (it == departures_.end()) return;
  Departure& d = it->second;
  if (std::holds_alternative<proto::UpBeat>(m)) d.last_beat_arrival = now;
  if (const auto* dereg = std::get_if<proto::Deregister>(&m);
      dereg && !d.first_deregister_arrival) {
    d.first_deregister_arrival = now;
    d.deregister_sent = deregister_sent_[agent].at(dereg->seq);
  }
  check(now, agent, d);
}

void DepartureRecorder::check(MonoTime now, std::size_t agent, Departure& d) {
  const auto& reg = provided(world_, agent);
  const bool present = world_.hub_has(reg.service, reg.instance.id);
  if (d.present && !present) d.gone_at = now;
  d.present = present;
}

void DepartureRecorder::check_all(MonoTime now) {
  for (auto& [agent, d] : departures_)
    check(now, agent, d);
}

// ---------------------------------------------------------------- next beat

NextBeatProbe::NextBeatProbe(const World& world, const DepartureRecorder& departures)
    : world_(world), departures_(departures) {}

void NextBeatProbe::on_agent_sent(MonoTime now, std::size_t agent, const proto::Message& m) {
  const auto* beat = std::get_if<proto::UpBeat>(&m);
  if (beat != nullptr && !world_.spec(agent).uses.empty()) beat_sent_[agent][beat->seq] = now;
}

void NextBeatProbe::on_agent_received(MonoTime, std::size_t agent, const proto::Message& m) {
  const auto* down = std::get_if<proto::DownBeat>(&m);
  if (down == nullptr || world_.spec(agent).uses.empty()) return;
  auto& sent = beat_sent_[agent];
  auto it = sent.find(down->ack_seq);
  if (it == sent.end()) return;
  const MonoTime beat_sent = it->second;
  sent.erase(sent.begin(), std::next(it));
  check(agent, beat_sent);
}

void NextBeatProbe::check(std::size_t consumer, MonoTime beat_sent) {
  const auto& uses = world_.spec(consumer).uses;
  for (const auto& [provider, d] : departures_.all()) {
    if (d.present || !d.gone_at || beat_sent <= *d.gone_at) continue;
    const auto& reg = provided(world_, provider);
    if (std::find(uses.begin(), uses.end(), reg.service) == uses.end()) continue;
    ++checks_;
    const auto cached = world_.cached_instances(consumer, reg.service);
    const bool still_there =
        cached && std::any_of(cached->begin(), cached->end(),
                              [&](const proto::Instance& in) { return in.id == reg.instance.id; });
    if (still_there)
      failures_.push_back(world_.spec(consumer).node_id + " still lists " + reg.instance.id +
                          " after a beat sent at +" +
                          std::to_string((beat_sent - world_.config().start).count()) + " ms");
  }
}

// ---------------------------------------------------------------- convergence

ConvergenceProbe::ConvergenceProbe(World& world, const Fleet& fleet, Duration quiet)
    : world_(world), fleet_(fleet), quiet_(quiet) {}

void ConvergenceProbe::note(MonoTime now) {
  if (!world_.hub_up()) return;  // an observer before this one crashed it
  const auto version = hub_state_version(world_);
  if (version != version_) changed(now);
}

void ConvergenceProbe::changed(MonoTime now) {
  version_ = world_.hub_up() ? hub_state_version(world_) : 0;
  last_change_ = now;
  world_.at(now + quiet_, [this, now] { check(now); });
}

void ConvergenceProbe::check(MonoTime change) {
  if (change != last_change_ || world_.now() < check_from_ || !world_.hub_up()) return;
  ++checks_;
  for (const auto& stale : consumers_out_of_date(world_, fleet_))
    failures_.push_back("+" + std::to_string((world_.now() - world_.config().start).count()) +
                        " ms, quiet since +" +
                        std::to_string((change - world_.config().start).count()) + " ms: " + stale);
}

}  // namespace cascade::sim::testing
