#include "cascade/agent/call_levers.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace cascade::agent {

namespace {

bool switched_on(std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "on" || lower == "true" || lower == "1" || lower == "yes";
}

std::optional<std::uint32_t> limit_of(std::string_view value) {
  std::uint64_t n = 0;
  const auto* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, n);
  if (value.empty() || ec != std::errc{} || ptr != end ||
      n > std::numeric_limits<std::uint32_t>::max())
    return std::nullopt;
  return static_cast<std::uint32_t>(n);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::map<std::string, LeverKeys, std::less<>> levers_of(const proto::ConfigValues& values,
                                                        std::vector<std::string>& problems) {
  std::map<std::string, LeverKeys, std::less<>> levers;
  for (const auto& [key, entry] : values) {
    if (starts_with(key, kDegradePrefix) && key.size() > kDegradePrefix.size()) {
      levers[key.substr(kDegradePrefix.size())].degraded = switched_on(entry.value);
    } else if (starts_with(key, kLimitPrefix) && ends_with(key, kMaxInFlightSuffix) &&
               key.size() > kLimitPrefix.size() + kMaxInFlightSuffix.size()) {
      const auto service = key.substr(kLimitPrefix.size(),
                                      key.size() - kLimitPrefix.size() - kMaxInFlightSuffix.size());
      if (auto limit = limit_of(entry.value))
        levers[service].max_in_flight = limit;
      else
        problems.push_back(key + " is not a number of calls from 0 to 4294967295: no limit");
    }
  }
  return levers;
}

namespace {

// Sets `field` from `candidate` unless an earlier group set it; false when
// both did (a conflict to report).
template <typename T>
bool merge_field(std::optional<T>& field, const std::optional<T>& candidate) {
  if (!candidate) return true;
  if (field) return false;
  field = candidate;
  return true;
}

}  // namespace

std::vector<std::string> CallLevers::update(const proto::ConfigCopy& copy) {
  std::map<std::string, LeverKeys, std::less<>> merged;
  std::vector<std::string> problems;
  for (const auto& [group, held] : copy.groups()) {  // in name order: the first group wins
    for (const auto& [service, keys] : levers_of(held.entries, problems)) {
      auto& into = merged[service];
      const bool degrade_ok = merge_field(into.degraded, keys.degraded);
      const bool limit_ok = merge_field(into.max_in_flight, keys.max_in_flight);
      if (!degrade_ok || !limit_ok)
        problems.push_back("levers of " + service + " set in more than one group; group " + group +
                           " is not the first, its value is not used");
    }
  }
  std::map<std::string, Lever, std::less<>> all;
  for (const auto& [service, keys] : merged)
    all.emplace(service, Lever{keys.degraded.value_or(false), keys.max_in_flight});
  std::vector<std::string> appeared;
  std::lock_guard lock(mu_);
  for (const auto& problem : problems)
    if (std::find(problems_.begin(), problems_.end(), problem) == problems_.end())
      appeared.push_back(problem);
  levers_ = std::move(all);
  problems_ = std::move(problems);
  return appeared;
}

LeverCounters CallLevers::counters() const {
  std::lock_guard lock(mu_);
  return {degraded_.load(std::memory_order_relaxed), over_limit_.load(std::memory_order_relaxed),
          problems_.size()};
}

Lever CallLevers::lever(std::string_view service) const {
  std::lock_guard lock(mu_);
  auto it = levers_.find(service);
  return it == levers_.end() ? Lever{} : it->second;
}

std::shared_ptr<std::atomic<std::uint32_t>> CallLevers::counter_of(std::string_view service) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(service);
  if (it == in_flight_.end())
    it = in_flight_.emplace(std::string(service), std::make_shared<std::atomic<std::uint32_t>>(0))
             .first;
  return it->second;
}

std::optional<CallLevers::Slot> CallLevers::enter(std::string_view service, const Lever& lever) {
  if (!lever.max_in_flight) return Slot{};
  auto counter = counter_of(service);
  auto current = counter->load(std::memory_order_relaxed);
  do {
    if (current >= *lever.max_in_flight) {
      over_limit_.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
  } while (!counter->compare_exchange_weak(current, current + 1, std::memory_order_relaxed));
  return Slot{std::move(counter)};
}

std::uint32_t CallLevers::in_flight(std::string_view service) const {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(service);
  return it == in_flight_.end() ? 0 : it->second->load(std::memory_order_relaxed);
}

std::vector<std::string> CallLevers::problems() const {
  std::lock_guard lock(mu_);
  return problems_;
}

}  // namespace cascade::agent
