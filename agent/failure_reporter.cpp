#include "cascade/agent/failure_reporter.hpp"

#include <algorithm>

namespace cascade::agent {

void FailureReporter::report(MonoTime now, const proto::ServiceKey& service,
                             const std::string& address, proto::FailureKind kind) {
  ++counters_.failures;
  Target target{service, address};
  auto it = slots_.find(target);
  if (it == slots_.end()) {
    prune(now);
    if (slots_.size() >= config_.max_addresses) {
      ++counters_.dropped;
      return;
    }
    it = slots_.emplace(std::move(target), Slot{}).first;
    it->second.folded = 1;
    it->second.kind = kind;
    queue(it->first, it->second, now);
    arm(now + config_.batch_delay);
    return;
  }
  Slot& slot = it->second;
  ++slot.folded;
  slot.kind = kind;
  if (now >= slot.sent_at + config_.per_address_interval) {
    queue(it->first, slot, now);
    arm(now + config_.batch_delay);
  } else {
    arm(slot.sent_at + config_.per_address_interval);
  }
}

void FailureReporter::queue(const Target& target, Slot& slot, MonoTime now) {
  ready_.push_back({target.first, target.second, slot.kind, reporter_, slot.folded});
  slot.folded = 0;
  slot.sent_at = now;
}

void FailureReporter::arm(MonoTime at) {
  if (!due_ || at < *due_) due_ = at;
}

std::vector<proto::FailureSignal> FailureReporter::take_due(MonoTime now) {
  if (!due_ || now < *due_) return {};
  due_.reset();
  for (auto& [target, slot] : slots_) {
    if (slot.folded == 0) continue;
    if (now >= slot.sent_at + config_.per_address_interval)
      queue(target, slot, now);
    else
      arm(slot.sent_at + config_.per_address_interval);
  }
  counters_.signals += ready_.size();
  return std::exchange(ready_, {});
}

// Addresses quiet for a whole interval are forgotten: their next failure is news.
void FailureReporter::prune(MonoTime now) {
  if (slots_.size() < config_.max_addresses) return;
  std::erase_if(slots_, [&](const auto& kv) {
    return kv.second.folded == 0 && now >= kv.second.sent_at + config_.per_address_interval;
  });
}

}  // namespace cascade::agent
