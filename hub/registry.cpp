#include "cascade/hub/registry.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

namespace cascade::hub {

namespace {
constexpr int kVersionEpochShift = 40;

template <typename T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// The change lists hold pointers to entries; each entry counts how many wait
// there (ServiceEntry::waiting), so reclaiming never frees one still listed.
const ServiceEntry& entry_of(const ServiceEntry* svc) {
  return *svc;
}
const ServiceEntry& entry_of(const DirtyInstance& dirty) {
  return *dirty.service;
}
template <typename T>
void enlist(std::vector<T>& list, T item) {
  ++entry_of(item).waiting;
  list.push_back(std::move(item));
}
// The list's items, deduplicated, and the list empty.
template <typename T>
std::vector<T> drain(std::vector<T>& list) {
  auto out = std::move(list);
  list.clear();
  for (const auto& item : out)
    --entry_of(item).waiting;
  sort_unique(out);
  return out;
}

// What one instance adds to its service's counts and to the registry's totals.
struct Tally {
  bool up = false;
  proto::Health health = proto::Health::kOk;
  bool out_of_service = false;
  bool is_static = false;
};

// What consumers are served: an operator's out-of-service mark is not UP.
Tally tally_of(const InstanceEntry& e) {
  return {e.status() == proto::InstanceStatus::kUp && !e.out_of_service, e.health(),
          e.out_of_service, e.owner == kStaticOwner};
}

template <typename Count>
void step(Count& count, bool adding) {
  adding ? ++count : --count;
}

void add(ServiceEntry& svc, InstanceTotals& totals, const Tally& t, bool adding) {
  if (t.up) {
    step(svc.up, adding);
    step(totals.up, adding);
  }
  if (t.health == proto::Health::kIsolated) {
    step(svc.isolated, adding);
    step(totals.isolated, adding);
  }
  if (t.health == proto::Health::kUnconfirmed) {
    step(svc.unconfirmed, adding);
    step(totals.unconfirmed, adding);
  }
  if (t.out_of_service) {
    step(svc.out_of_service, adding);
    step(totals.out_of_service, adding);
  }
  if (t.is_static) step(totals.static_instances, adding);
}

// The one place the counts change: keeps the service's counts and the
// registry's totals right when one instance goes from `before` to `after`
// (nullopt: absent).
void recount(ServiceEntry& svc, InstanceTotals& totals, const std::optional<Tally>& before,
             const std::optional<Tally>& after) {
  if (before) add(svc, totals, *before, false);
  if (after) add(svc, totals, *after, true);
}

}  // namespace

Registry::Registry(std::uint64_t hub_epoch, std::size_t change_log_capacity)
    : version_base_(hub_epoch << kVersionEpochShift), log_capacity_(change_log_capacity) {}

ServiceEntry& Registry::service(const proto::ServiceKey& key) {
  auto [it, inserted] = services_.try_emplace(key);
  if (inserted) {
    it->second = std::make_unique<ServiceEntry>(key);
    ++unregistered_;
    note(*it->second);
  }
  return *it->second;
}

ServiceEntry* Registry::find(const proto::ServiceKey& key) {
  auto it = services_.find(key);
  return it == services_.end() ? nullptr : it->second.get();
}

const ServiceEntry* Registry::find(const proto::ServiceKey& key) const {
  auto it = services_.find(key);
  return it == services_.end() ? nullptr : it->second.get();
}

Registry::Upserted Registry::upsert(ServiceEntry& svc, const proto::Instance& instance,
                                    std::string_view node) {
  auto [slot, inserted] = svc.instances.try_emplace(instance.id);
  InstanceEntry& entry = slot->entry();
  const Upserted unchanged{slot, false};
  const auto before = inserted ? std::nullopt : std::optional<Tally>(tally_of(entry));
  if (inserted) {
    assign_row(*slot);
    entry.set_report(instance, interner_);
    entry.owner = node;
    entry.out_of_service = is_marked_out_of_service(svc.key, instance.id);
    ++instance_count_;
  } else if (entry.owner == node) {
    if (entry.reports(instance)) return unchanged;
    entry.set_report(instance, interner_);
    entry.claims_differ();
  } else if (entry.owner == kStaticOwner) {
    // The operator's definition stands; the node takes it when it is removed.
    entry.drop_claim(node);
    entry.add_claim(std::string(node), entry.reports(instance));
    return unchanged;
  } else {
    entry.drop_claim(node);
    if (entry.reports(instance)) {
      entry.add_claim(std::string(node), true);  // reported twice: not news
      return unchanged;
    }
    // Different content: the newer report wins; the owner it replaces keeps
    // its claim, so the instance survives whichever of them drops it first.
    entry.claims_differ();
    entry.add_claim(entry.owner.str(), false);
    entry.owner = node;
    entry.set_report(instance, interner_);
  }
  recount(svc, totals_, before, tally_of(entry));
  list_dirty(svc, *slot);
  record_change(svc, instance.id);
  return {slot, true};
}

bool Registry::remove(ServiceEntry& svc, std::string_view id, std::string_view node,
                      std::string* ask_again) {
  InstanceSlot* slot = svc.instances.find(id);
  if (slot == nullptr) return false;
  InstanceEntry& entry = slot->entry();
  if (entry.owner != node) {
    entry.drop_claim(node);
    return false;
  }
  if (!entry.claimants().empty()) {
    // Another node still reports it: it stays, in that node's name (a
    // static instance stops being one).
    const auto before = tally_of(entry);
    Claim next = entry.take_first_claim();
    entry.owner = next.node;
    recount(svc, totals_, before, tally_of(entry));
    if (!next.same_content && ask_again != nullptr) *ask_again = std::move(next.node);
    list_dirty(svc, *slot);
    return false;
  }
  recount(svc, totals_, tally_of(entry), std::nullopt);
  record_change(svc, id);  // before the erase: `id` may be the slot's own
  erased_rows_.push_back(slot->row());
  erase_slot(svc, slot);
  --instance_count_;
  if (svc.instances.empty()) note(svc);
  return true;
}

void Registry::list_dirty(ServiceEntry& svc, InstanceSlot& slot) {
  if (slot.listed()) return;
  slot.set_listed(true);
  ++svc.waiting;
  dirty_instances_.push_back({&svc, &slot});
}

void Registry::erase_slot(ServiceEntry& svc, InstanceSlot* slot) {
  if (slot->listed())
    detached_.push_back(svc.instances.detach(slot));
  else
    svc.instances.erase(slot);
}

bool Registry::set_verdict(ServiceEntry& svc, std::string_view id, Verdict verdict) {
  InstanceSlot* slot = svc.instances.find(id);
  if (slot == nullptr || slot->entry().verdict() == verdict) return false;
  const auto before = tally_of(slot->entry());
  slot->entry().set_verdict(std::move(verdict));
  recount(svc, totals_, before, tally_of(slot->entry()));
  record_change(svc, id);
  return true;
}

bool Registry::set_out_of_service(const proto::ServiceKey& key, const std::string& id,
                                  bool out_of_service) {
  proto::InstanceKey mark{key, id};
  const bool changed = out_of_service ? out_of_service_.insert(std::move(mark)).second
                                      : out_of_service_.erase(mark) > 0;
  ServiceEntry* svc = find(key);
  if (svc == nullptr) return changed;
  InstanceSlot* slot = svc->instances.find(id);
  if (slot == nullptr || slot->entry().out_of_service == out_of_service) return changed;
  const auto before = tally_of(slot->entry());
  slot->entry().out_of_service = out_of_service;
  recount(*svc, totals_, before, tally_of(slot->entry()));
  record_change(*svc, id);
  return changed;
}

std::optional<proto::Instance> Registry::reported_by(const InstanceSlot& slot,
                                                     std::string_view node) {
  const InstanceEntry& e = slot.entry();
  if (e.owner == node) return e.report(slot.id());
  for (const auto& claim : e.claimants())
    if (claim.node == node && claim.same_content) return e.report(slot.id());
  return std::nullopt;
}

std::vector<const ServiceEntry*> Registry::take_served_changes() {
  return drain(served_changes_);
}

std::vector<DirtyInstance> Registry::take_changes() {
  return drain(changes_);
}

void Registry::record_change(ServiceEntry& svc, std::string_view id) {
  log_change(svc, id);
  if (track_changes_) enlist(changes_, {&svc, std::string(id)});
}

void Registry::log_change(ServiceEntry& svc, std::string_view id) {
  if (svc.txn != txn_) {
    svc.txn = txn_;
    if (svc.version == 0) --unregistered_;
    svc.version = issue_version();
    enlist(dirty_services_, static_cast<const ServiceEntry*>(&svc));
    // Once per version: every drain of served changes ends a transaction.
    enlist(served_changes_, static_cast<const ServiceEntry*>(&svc));
  }
  svc.log.push_back({svc.version, id});
  // A log of a quarter of the list lets a delta reach back over a mass change
  // (a tenth of the instances expiring) without growing past a small share of
  // the list itself; a longer reach would make deltas as big as the list.
  const auto capacity = std::max(log_capacity_, svc.instances.size() / 4);
  while (svc.log.size() > capacity) {
    svc.log_floor = svc.log.front().version;
    svc.log.pop_front();
  }
}

bool Registry::set_routes(ServiceEntry& svc, std::vector<proto::RouteRuleText> routes) {
  if (svc.routes == routes) return false;
  svc.routes = std::move(routes);
  log_change(svc, {});  // "" marks the rules in the log; the uplink never sees it
  svc.routes_version = svc.version;
  if (svc.routes.empty() && svc.instances.empty()) note(svc);
  return true;
}

bool Registry::can_delta_from(const ServiceEntry& svc, std::uint64_t held) const {
  if (held == 0 || held > svc.version) return false;
  if (held == svc.log_floor) return true;
  auto it = std::lower_bound(svc.log.begin(), svc.log.end(), held,
                             [](const ChangeRecord& c, std::uint64_t v) { return c.version < v; });
  return it != svc.log.end() && it->version == held;
}

proto::ServiceUpdate Registry::full_update(const ServiceEntry& svc,
                                           std::uint64_t from_version) const {
  proto::ServiceUpdate u;
  u.service = svc.key;
  u.from_version = from_version;
  u.version = svc.version;
  u.kind = proto::UpdateKind::kFull;
  u.upserts.reserve(svc.instances.size());
  for (const InstanceSlot* slot : svc.instances.sorted())
    u.upserts.push_back(slot->entry().served(slot->id()));
  u.routes = svc.routes;  // a full list always says the rules, none included
  return u;
}

std::optional<proto::ServiceUpdate> Registry::update_for(const ServiceEntry& svc,
                                                         std::uint64_t held) const {
  if (held == svc.version) return std::nullopt;
  if (!can_delta_from(svc, held)) return full_update(svc, held);
  std::set<std::string_view> changed;
  for (auto it = svc.log.rbegin(); it != svc.log.rend() && it->version > held; ++it)
    if (!it->instance_id.empty()) changed.insert(it->instance_id);  // "" = the rules
  proto::ServiceUpdate u;
  u.service = svc.key;
  u.from_version = held;
  u.version = svc.version;
  u.kind = proto::UpdateKind::kDelta;
  // Versions this hub issued are ordered, and `held` is one of them (checked above).
  if (held < svc.routes_version) u.routes = svc.routes;
  for (auto id : changed) {
    if (const InstanceSlot* found = svc.instances.find(id); found != nullptr)
      u.upserts.push_back(found->entry().served(id));
    else
      u.removed.emplace_back(id);
  }
  // A delta re-sending most of the list is no cheaper than the list itself.
  if (!u.upserts.empty() && u.upserts.size() >= svc.instances.size()) return full_update(svc, held);
  return u;
}

void Registry::restore_instance(const proto::ServiceKey& key, const proto::Instance& instance,
                                std::string_view owner, std::uint32_t row) {
  auto& svc = service(key);
  auto [slot, made] = svc.instances.try_emplace(instance.id);
  if (!made) {
    recount(svc, totals_, tally_of(slot->entry()), std::nullopt);
    if (slot->row() != row) forget_row(slot->row());  // restored twice: the earlier row goes
  }
  InstanceEntry& entry = slot->entry();
  entry = InstanceEntry{};
  entry.set_report(instance, interner_);
  entry.owner = owner;
  entry.out_of_service = is_marked_out_of_service(key, instance.id);
  recount(svc, totals_, std::nullopt, tally_of(entry));
  if (made) ++instance_count_;
  if (row == 0) {
    assign_row(*slot);
    list_dirty(svc, *slot);
  } else {
    // A row past the slots' bound (a store numbered with more bits) is
    // renumbered with every other once the restore is done.
    slot->set_row(row <= InstanceSlot::kMaxRow ? row : 0);
    last_row_ = std::max(last_row_, row);
  }
}

void Registry::settle_restored_rows() {
  if (last_row_ > InstanceSlot::kMaxRow) renumber_rows();
}

void Registry::forget_row(std::uint32_t row) {
  if (row == 0) return;
  erased_rows_.push_back(row);
  last_row_ = std::max(last_row_, row);
}

void Registry::assign_row(InstanceSlot& slot) {
  if (last_row_ >= InstanceSlot::kMaxRow) {
    renumber_rows();  // `slot` is in its map already: numbered with the rest
    return;
  }
  slot.set_row(++last_row_);
}

void Registry::renumber_rows() {
  last_row_ = 0;
  erased_rows_.clear();  // every old row goes
  renumbered_ = true;
  for (auto& [key, svc] : services_) {
    for (InstanceSlot& slot : svc->instances) {
      slot.set_row(++last_row_);
      list_dirty(*svc, slot);
    }
  }
}

std::vector<std::uint32_t> Registry::take_erased_rows() {
  return std::exchange(erased_rows_, {});
}

void Registry::requeue_rows(std::span<const std::uint32_t> erased, bool renumbered) {
  renumbered_ = renumbered_ || renumbered;
  // A renumbering's batch deletes every old row.
  if (!renumbered_) erased_rows_.insert(erased_rows_.end(), erased.begin(), erased.end());
}

void Registry::restore_version(const proto::ServiceKey& key, std::uint64_t version) {
  auto& svc = service(key);
  if (svc.version == 0 && version != 0) --unregistered_;
  if (svc.version != 0 && version == 0) ++unregistered_;
  svc.version = version;
  svc.log.clear();
  svc.log_floor = version;
}

void Registry::restore_routes(const proto::ServiceKey& key,
                              std::vector<proto::RouteRuleText> routes) {
  auto& svc = service(key);
  svc.routes = std::move(routes);
  svc.routes_version = 0;  // what consumers of the restored version hold
}

void Registry::stamp_unversioned() {
  begin_txn();
  for (auto& [key, svc] : services_) {
    if (svc->version != 0 || (svc->instances.empty() && svc->routes.empty())) continue;
    svc->txn = txn_;
    --unregistered_;
    svc->version = issue_version();
    svc->log_floor = svc->version;
    enlist(dirty_services_, static_cast<const ServiceEntry*>(svc.get()));
  }
}

namespace {

// "what: running R, recounted C" when they differ.
template <typename T>
std::optional<std::string> differs(const std::string& what, T running, T recounted) {
  if (running == recounted) return std::nullopt;
  return what + ": running " + std::to_string(running) + ", recounted " + std::to_string(recounted);
}

std::string service_name(const ServiceEntry& svc) {
  return "service " + svc.key.name + " (group " + svc.key.group + ")";
}

// Every instance has a row of its own, none above the counter.
std::optional<std::string> rows_mismatch(std::vector<std::uint32_t> rows, std::uint32_t last) {
  std::sort(rows.begin(), rows.end());
  if (!rows.empty() && rows.front() == 0) return "an instance without a row";
  if (!rows.empty() && rows.back() > last) return "a row above the counter";
  if (std::adjacent_find(rows.begin(), rows.end()) != rows.end())
    return "two instances share a row";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> Registry::recount_mismatch() const {
  InstanceTotals totals;
  std::size_t instances = 0;
  std::vector<std::uint32_t> rows;
  for (const auto& [key, svc] : services_) {
    ServiceEntry recounted(key);
    for (const InstanceSlot& slot : svc->instances) {
      add(recounted, totals, tally_of(slot.entry()), true);
      rows.push_back(slot.row());
    }
    instances += svc->instances.size();
    const auto name = service_name(*svc);
    if (auto d = differs(name + " up", svc->up, recounted.up)) return d;
    if (auto d = differs(name + " isolated", svc->isolated, recounted.isolated)) return d;
    if (auto d = differs(name + " unconfirmed", svc->unconfirmed, recounted.unconfirmed)) return d;
    if (auto d = differs(name + " out of service", svc->out_of_service, recounted.out_of_service))
      return d;
  }
  std::size_t unregistered = 0;
  for (const auto& [key, svc] : services_)
    if (svc->version == 0) ++unregistered;
  if (auto d = differs("unregistered services", unregistered_, unregistered)) return d;
  if (auto d = rows_mismatch(std::move(rows), last_row_)) return d;
  if (auto d = differs("instances", instance_count_, instances)) return d;
  if (auto d = differs("instances up", totals_.up, totals.up)) return d;
  if (auto d = differs("instances isolated", totals_.isolated, totals.isolated)) return d;
  if (auto d = differs("instances unconfirmed", totals_.unconfirmed, totals.unconfirmed)) return d;
  if (auto d = differs("instances out of service", totals_.out_of_service, totals.out_of_service))
    return d;
  return differs("static instances", totals_.static_instances, totals.static_instances);
}

void Registry::mark_dirty(const proto::ServiceKey& key, const std::optional<std::string>& id) {
  if (!id && find(key) == nullptr) {
    reclaimed_.push_back(key);  // freed since: its row goes
    return;
  }
  if (id) {
    // Gone since: its row's delete is requeued with the erased rows.
    ServiceEntry* svc = find(key);
    if (InstanceSlot* slot = svc ? svc->instances.find(*id) : nullptr) list_dirty(*svc, *slot);
    return;
  }
  // A freed service's row: the entry comes back (empty, noted) until the
  // delete is written.
  enlist(dirty_services_, static_cast<const ServiceEntry*>(&service(key)));
}

// Listed once each (InstanceSlot::listed): no sort, no lookup by id.
std::vector<DirtySlot> Registry::take_dirty_instances() {
  std::vector<DirtySlot> out;
  out.reserve(dirty_instances_.size());
  for (const auto& [svc, slot] : dirty_instances_) {
    --svc->waiting;
    slot->set_listed(false);
    if (!slot->detached()) out.push_back({svc, slot});
  }
  dirty_instances_ = {};  // a registration wave's list is not kept
  detached_.clear();
  return out;
}

std::vector<const ServiceEntry*> Registry::take_dirty_services() {
  return drain(dirty_services_);
}

void Registry::note(ServiceEntry& svc) {
  if (svc.reclaim_noted) {
    svc.noted_again = true;
    return;
  }
  svc.reclaim_noted = true;
  noted_.push_back(svc.key);
}

void Registry::note_maybe_unused(const proto::ServiceKey& key) {
  if (ServiceEntry* svc = find(key); svc != nullptr && svc->instances.empty()) note(*svc);
}

// An entry that has instances or rules by the end of the event that noted
// it (one created by a registration) is not queued: it is noted again when
// they are gone, and its grace runs from then.
void Registry::stamp_noted(MonoTime now, Duration ttl) {
  for (auto& key : noted_) {
    ServiceEntry* svc = find(key);
    if (svc == nullptr) continue;
    if (!svc->instances.empty() || !svc->routes.empty()) {
      svc->reclaim_noted = false;
      svc->noted_again = false;
      continue;
    }
    reclaim_queue_.push_back({now + ttl, std::move(key), svc->version});
  }
  noted_.clear();
}

ServiceEntry* Registry::next_due(MonoTime now) {
  while (!reclaim_queue_.empty() && reclaim_queue_.front().due <= now) {
    Noted noted = std::move(reclaim_queue_.front());
    reclaim_queue_.pop_front();
    ServiceEntry* svc = find(noted.key);
    if (svc == nullptr) continue;
    svc->reclaim_noted = false;
    const bool again = std::exchange(svc->noted_again, false);
    if (svc->version == noted.version && !again) return svc;
    note(*svc);  // changed or left by a consumer during its grace: a grace from now
  }
  return nullptr;
}

std::optional<MonoTime> Registry::next_reclaim() const {
  if (reclaim_queue_.empty()) return std::nullopt;
  return reclaim_queue_.front().due;
}

std::vector<proto::ServiceKey> Registry::take_reclaimed() {
  auto out = std::move(reclaimed_);
  reclaimed_.clear();
  sort_unique(out);
  return out;
}

}  // namespace cascade::hub
