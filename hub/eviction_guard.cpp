#include "cascade/hub/eviction_guard.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>

namespace cascade::hub {
namespace {

// Shares are compared with a little slack, so 0.2 * 10 allows 2 whatever the
// rounding of 0.2.
constexpr double kSlack = 1e-9;

std::size_t allowance(double share, std::size_t base) {
  return static_cast<std::size_t>(std::floor(share * static_cast<double>(base) + kSlack));
}

std::string check_share(std::string_view name, double value) {
  if (value > 0.0 && value <= 1.0) return {};
  return std::string(name) + " must be a share in (0, 1], got " + std::to_string(value);
}

std::string check_positive(std::string_view name, Duration value) {
  if (value > Duration{0}) return {};
  return std::string(name) + " must be more than 0 ms, got " + std::to_string(value.count()) +
         " ms";
}

}  // namespace

std::string check_eviction_guard_config(const EvictionGuardConfig& config) {
  for (auto error :
       {check_positive("window", config.window), check_positive("max_hold", config.max_hold),
        check_share("max_service_share", config.max_service_share),
        check_share("max_registry_share", config.max_registry_share),
        check_share("source_partition_share", config.source_partition_share)})
    if (!error.empty()) return error;
  if (config.min_source_nodes < 2)
    return "min_source_nodes must be at least 2 (one node cannot tell a partition from a death), "
           "got " +
           std::to_string(config.min_source_nodes);
  return {};
}

std::string_view verdict_name(ExpiryVerdict verdict) {
  switch (verdict) {
    case ExpiryVerdict::kExpire:
      return "expire";
    case ExpiryVerdict::kHoldBudget:
      return "hold-budget";
    case ExpiryVerdict::kHoldPartition:
      return "hold-partition";
  }
  return "unknown";
}

EvictionGuard::EvictionGuard(EvictionGuardConfig config) : config_(config) {
  assert(check_eviction_guard_config(config_).empty());
}

std::variant<EvictionGuard, std::string> EvictionGuard::create(EvictionGuardConfig config) {
  if (auto error = check_eviction_guard_config(config); !error.empty()) return error;
  return EvictionGuard(config);
}

// ---- membership ---------------------------------------------------------

EvictionGuard::SourceEntry* EvictionGuard::join(std::string_view source) {
  if (source.empty()) return nullptr;
  auto it = sources_.find(source);
  if (it == sources_.end()) it = sources_.emplace(std::string(source), SourceState{}).first;
  ++it->second.members;
  return &*it;
}

void EvictionGuard::leave(SourceEntry* source) {
  if (source == nullptr) return;
  assert(source->second.members > 0);
  --source->second.members;
  maybe_erase_source(source);
}

// Where the core says a node is counted. A source the guard does not know
// (a core that broke the contract) counts as the node's own: nothing is
// decremented that was never incremented.
EvictionGuard::SourceEntry* EvictionGuard::counted_in(std::string_view source) {
  if (source.empty()) return nullptr;
  auto it = sources_.find(source);
  return it == sources_.end() ? nullptr : &*it;
}

void EvictionGuard::maybe_erase_source(SourceEntry* source) {
  // Expiry records and holds point at the source while they last.
  if (source == nullptr || source->second.members > 0 || source->second.expired_in_window > 0)
    return;
  sources_.erase(sources_.find(source->first));
}

std::size_t EvictionGuard::members(std::string_view source) const {
  if (source.empty()) return 0;
  auto it = sources_.find(source);
  return it == sources_.end() ? 0 : it->second.members;
}

std::size_t EvictionGuard::total_members() const {
  std::size_t total = 0;
  for (const auto& [name, source] : sources_)
    total += source.members;
  return total;
}

bool EvictionGuard::on_node_seen(std::string_view node_id, std::string_view from,
                                 std::string_view to) {
  bool was_held = false;
  if (auto held = held_index_.find(node_id); held != held_index_.end()) {
    release_refs(unhold(held));
    ++counters_.returned;
    was_held = true;
  }
  if (from != to) {
    join(to);
    leave(counted_in(from));
  }
  return was_held;
}

void EvictionGuard::on_node_removed(std::string_view node_id, std::string_view source) {
  if (auto held = held_index_.find(node_id); held != held_index_.end()) release_refs(unhold(held));
  leave(counted_in(source));
}

// ---- the decision -------------------------------------------------------

ExpiryVerdict EvictionGuard::on_lease_expired(MonoTime now, const ExpiryRequest& request) {
  prune(now);
  if (auto held = held_index_.find(request.node_id); held != held_index_.end())
    return held->second->reason;
  const auto source = counted_in(request.source);
  Footprint footprint = footprint_of(request);
  const ExpiryVerdict verdict = decide(source, footprint);
  if (verdict == ExpiryVerdict::kExpire)
    expire(now, source, std::move(footprint));
  else
    hold(now, request.node_id, source, verdict, std::move(footprint));
  return verdict;
}

EvictionGuard::Footprint EvictionGuard::footprint_of(const ExpiryRequest& request) {
  Footprint fp;
  for (const ServiceShare& s : request.services) {
    if (s.node_instances == 0) continue;
    auto [budget, inserted] = budgets_.try_emplace(s.service);
    if (!inserted && s.service_instances > budget->second.size) budget_may_fit();
    budget->second.size = s.service_instances;
    ++budget->second.refs;
    fp.shares.push_back({budget, s.node_instances});
    fp.instances += s.node_instances;
  }
  if (request.registry_instances > registry_size_) budget_may_fit();
  registry_size_ = request.registry_instances;
  return fp;
}

void EvictionGuard::release_refs(const Footprint& footprint) {
  for (const Share& s : footprint.shares)
    if (--s.budget->second.refs == 0) budgets_.erase(s.budget);
}

ExpiryVerdict EvictionGuard::decide(const SourceEntry* source, const Footprint& footprint) {
  if (!config_.enabled || footprint.instances == 0) return ExpiryVerdict::kExpire;
  if (partitioned(source)) {
    ++counters_.partition_holds;
    return ExpiryVerdict::kHoldPartition;
  }
  switch (over_cap(footprint)) {
    case Cap::kService:
      ++counters_.service_cap_holds;
      return ExpiryVerdict::kHoldBudget;
    case Cap::kRegistry:
      ++counters_.registry_cap_holds;
      return ExpiryVerdict::kHoldBudget;
    case Cap::kNone:
      break;
  }
  return ExpiryVerdict::kExpire;
}

// A node alone (its own source) is never judged partitioned: min_source_nodes >= 2.
bool EvictionGuard::partitioned(const SourceEntry* entry) const {
  if (entry == nullptr) return false;
  const SourceState& source = entry->second;
  if (source.held_partition > 0) return true;  // stays so while any of its nodes is held for it
  const std::size_t base = source.members + source.expired_in_window;
  const std::size_t losses = source.held + source.expired_in_window + 1;  // + the one asked about
  return base >= config_.min_source_nodes &&
         static_cast<double>(losses) + kSlack >= config_.source_partition_share * base;
}

EvictionGuard::Cap EvictionGuard::over_cap(const Footprint& footprint) const {
  for (const Share& s : footprint.shares)
    if (service_over(s)) return Cap::kService;
  return registry_over(footprint.instances) ? Cap::kRegistry : Cap::kNone;
}

bool EvictionGuard::service_over(const Share& share) const {
  const ServiceBudget& b = share.budget->second;
  const std::size_t base = b.size + b.expired;  // the size before the window's expirations
  if (base < config_.min_service_instances_for_cap) return false;
  return b.expired + share.instances > allowance(config_.max_service_share, base);
}

bool EvictionGuard::registry_over(std::size_t instances) const {
  const std::size_t base = registry_size_ + registry_expired_;
  if (base < config_.min_registry_instances_for_cap) return false;
  return registry_expired_ + instances > allowance(config_.max_registry_share, base);
}

// ---- expiring and holding ------------------------------------------------

void EvictionGuard::expire(MonoTime now, SourceEntry* source, Footprint footprint) {
  for (const Share& s : footprint.shares) {
    ServiceBudget& b = s.budget->second;
    b.size -= std::min<std::size_t>(b.size, s.instances);
    b.expired += s.instances;
  }
  registry_size_ -= std::min(registry_size_, footprint.instances);
  registry_expired_ += footprint.instances;
  if (source != nullptr) ++source->second.expired_in_window;
  records_.push_back(Record{now, source, std::move(footprint)});
  leave(source);
}

void EvictionGuard::hold(MonoTime now, std::string_view node_id, SourceEntry* source,
                         ExpiryVerdict reason, Footprint footprint) {
  held_instances_ += footprint.instances;
  if (source != nullptr) {
    SourceState& src = source->second;
    ++src.held;
    if (reason == ExpiryVerdict::kHoldPartition && src.held_partition++ == 0)
      ++partitioned_sources_;
  }
  HeldList& list = list_for(reason);
  list.push_back(Held{std::string(node_id), now, reason, std::move(footprint), source});
  held_index_.emplace(list.back().node_id, std::prev(list.end()));
}

EvictionGuard::Footprint EvictionGuard::unhold(HeldIndex::iterator index) {
  const auto held = index->second;
  Footprint footprint = std::move(held->footprint);
  held_instances_ -= footprint.instances;
  if (held->source != nullptr) {
    SourceState& src = held->source->second;
    --src.held;
    if (held->reason == ExpiryVerdict::kHoldPartition && --src.held_partition == 0)
      --partitioned_sources_;
  }
  held_index_.erase(index);
  list_for(held->reason).erase(held);
  return footprint;
}

// Expires a held node: forgotten, and its instances count against the budgets.
void EvictionGuard::release(MonoTime now, HeldIndex::iterator held, std::vector<std::string>& out) {
  out.push_back(held->first);
  const auto source = held->second->source;
  expire(now, source, unhold(held));
}

// ---- time ---------------------------------------------------------------

void EvictionGuard::prune(MonoTime now) {
  while (!records_.empty() && records_.front().at + config_.window <= now) {
    Record& r = records_.front();
    for (const Share& s : r.footprint.shares)
      s.budget->second.expired -= s.instances;
    release_refs(r.footprint);
    registry_expired_ -= r.footprint.instances;
    if (r.source != nullptr) {
      --r.source->second.expired_in_window;
      maybe_erase_source(r.source);
    }
    records_.pop_front();
    budget_may_fit();
  }
}

std::vector<std::string> EvictionGuard::due(MonoTime now, std::size_t max) {
  prune(now);
  std::vector<std::string> out;
  release_overdue(now, max, out);
  if (config_.enabled && recheck_budget_) drain_budget(now, max, out);
  return out;
}

const EvictionGuard::HeldList* EvictionGuard::oldest_list() const {
  if (held_budget_.empty()) return held_partition_.empty() ? nullptr : &held_partition_;
  if (held_partition_.empty()) return &held_budget_;
  return held_partition_.front().since < held_budget_.front().since ? &held_partition_
                                                                    : &held_budget_;
}

// Holds past max_hold, or every hold when disabled, oldest first.
void EvictionGuard::release_overdue(MonoTime now, std::size_t max, std::vector<std::string>& out) {
  while (out.size() < max) {
    const HeldList* list = oldest_list();
    if (list == nullptr) return;
    if (config_.enabled && now < list->front().since + config_.max_hold) return;
    ++(config_.enabled ? counters_.released_max_hold : counters_.released_disabled);
    release(now, held_index_.find(list->front().node_id), out);
  }
}

// Budget-held nodes that fit the budgets now, oldest first. Each release
// consumes budget, so later ones are checked against what is left.
void EvictionGuard::drain_budget(MonoTime now, std::size_t max, std::vector<std::string>& out) {
  for (auto it = held_budget_.begin(); it != held_budget_.end() && out.size() < max;) {
    const auto next = std::next(it);
    if (over_cap(it->footprint) == Cap::kNone) {
      ++counters_.released_budget;
      release(now, held_index_.find(it->node_id), out);
    }
    it = next;
  }
  if (out.size() < max) recheck_budget_ = false;  // the whole list was checked
}

std::optional<MonoTime> EvictionGuard::next_deadline() const {
  const HeldList* oldest = oldest_list();
  if (oldest == nullptr) return std::nullopt;
  const MonoTime since = oldest->front().since;  // in the past: "now"
  if (!config_.enabled) return since;
  MonoTime next = since + config_.max_hold;
  if (!held_budget_.empty() && recheck_budget_) next = std::min(next, since);
  if (!held_budget_.empty() && !records_.empty())
    next = std::min(next, records_.front().at + config_.window);
  return next;
}

void EvictionGuard::set_enabled(bool enabled) {
  config_.enabled = enabled;
  budget_may_fit();
}

bool EvictionGuard::is_held(std::string_view node_id) const {
  return held_index_.find(node_id) != held_index_.end();
}

// ---- stats --------------------------------------------------------------

GuardGauges EvictionGuard::gauges() const {
  GuardGauges g;
  g.held_for_budget = held_budget_.size();
  g.held_for_partition = held_partition_.size();
  g.held_nodes = g.held_for_budget + g.held_for_partition;
  g.held_instances = held_instances_;
  g.partitioned_sources = partitioned_sources_;
  g.counters = counters_;
  return g;
}

GuardStats EvictionGuard::stats(MonoTime now) const {
  const GuardGauges g = gauges();
  GuardStats s;
  s.held_for_budget = g.held_for_budget;
  s.held_for_partition = g.held_for_partition;
  s.held_nodes = g.held_nodes;
  s.held_instances = g.held_instances;
  s.partitioned_sources = partitioned_sources();
  // Records not yet pruned may already be out of the window.
  auto first = std::partition_point(records_.begin(), records_.end(),
                                    [&](const Record& r) { return r.at + config_.window <= now; });
  for (auto it = first; it != records_.end(); ++it) {
    ++s.window_expired_nodes;
    s.window_expired_instances += it->footprint.instances;
  }
  s.counters = counters_;
  return s;
}

std::vector<PartitionedSource> EvictionGuard::partitioned_sources() const {
  std::vector<PartitionedSource> out;
  for (const auto& [name, src] : sources_)
    if (src.held_partition > 0) out.push_back({name, src.members, src.held_partition});
  return out;
}

std::optional<std::string> EvictionGuard::recount_mismatch() const {
  const auto differs = [](const char* what, std::size_t running, std::size_t recounted) {
    return "guard " + std::string(what) + ": running " + std::to_string(running) + ", recounted " +
           std::to_string(recounted);
  };
  const auto sources = partitioned_sources().size();
  if (sources != partitioned_sources_)
    return differs("partitioned sources", partitioned_sources_, sources);
  std::size_t instances = 0;
  for (const HeldList* list : {&held_budget_, &held_partition_})
    for (const Held& held : *list)
      instances += held.footprint.instances;
  if (instances != held_instances_) return differs("held instances", held_instances_, instances);
  const auto listed = held_budget_.size() + held_partition_.size();
  if (listed != held_index_.size()) return differs("held nodes", held_index_.size(), listed);
  return std::nullopt;
}

}  // namespace cascade::hub
