#include "cascade/agent/router.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

namespace cascade::agent {

namespace {

// Counters of one rule; they live beside the immutable rules of a table.
struct RuleCounts {
  std::atomic<std::uint64_t> applied{0};
  std::atomic<std::uint64_t> fallbacks{0};
  std::atomic<std::uint64_t> forced_empty{0};
};

void bump(std::atomic<std::uint64_t>& counter) {
  counter.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t read(const std::atomic<std::uint64_t>& counter) {
  return counter.load(std::memory_order_relaxed);
}

// Room for a tier written in decimal (uint32: at most 10 digits).
using TierBuffer = std::array<char, 16>;

std::string_view tier_text(std::uint32_t tier, TierBuffer& buffer) {
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), tier);
  (void)ec;  // cannot fail: the buffer holds any uint32
  return {buffer.data(), static_cast<std::size_t>(end - buffer.data())};
}

std::string_view metadata_value(const std::map<std::string, std::string>& metadata,
                                const std::string& name) {
  const auto it = metadata.find(name);
  return it == metadata.end() ? std::string_view{} : std::string_view{it->second};
}

std::string_view consumer_value(const RouteAttribute& attribute, const proto::ServiceKey& service,
                                const ConsumerContext& consumer, TierBuffer& buffer) {
  switch (attribute.key) {
    case RouteKey::kHost:
      return consumer.host;
    case RouteKey::kZone:
      return consumer.zone;
    case RouteKey::kTier:
      return tier_text(consumer.tier, buffer);
    case RouteKey::kMethod:
      return consumer.method;
    case RouteKey::kService:
      return service.name;
    case RouteKey::kMetadata:
      return metadata_value(consumer.metadata, attribute.metadata_name);
  }
  return {};
}

// The parser keeps method and service out of provider filters.
std::string_view provider_value(const RouteAttribute& attribute, const proto::Instance& instance,
                                TierBuffer& buffer) {
  switch (attribute.key) {
    case RouteKey::kHost:
      return provider_host(instance.address);
    case RouteKey::kZone:
      return instance.zone;
    case RouteKey::kTier:
      return tier_text(instance.tier, buffer);
    case RouteKey::kMetadata:
      return metadata_value(instance.metadata, attribute.metadata_name);
    case RouteKey::kMethod:
    case RouteKey::kService:
      return {};
  }
  return {};
}

bool condition_holds(const RouteCondition& condition, std::string_view value,
                     const proto::ServiceKey& service, const ConsumerContext& consumer) {
  bool any = false;
  for (const auto& v : condition.values) {
    if (v.consumer_ref) {
      TierBuffer buffer;
      any = value == consumer_value(*v.consumer_ref, service, consumer, buffer);
    } else {
      any = v.glob.matches(value);
    }
    if (any) break;
  }
  return any != condition.negated;
}

bool consumer_matches(const ConditionRule& rule, const proto::ServiceKey& service,
                      const ConsumerContext& consumer) {
  return std::all_of(rule.consumer_match.begin(), rule.consumer_match.end(), [&](const auto& c) {
    TierBuffer buffer;
    return condition_holds(c, consumer_value(c.attribute, service, consumer, buffer), service,
                           consumer);
  });
}

bool provider_matches(const ConditionRule& rule, const proto::Instance& instance,
                      const proto::ServiceKey& service, const ConsumerContext& consumer) {
  if (rule.denies_all()) return false;
  return std::all_of(rule.provider_filter.begin(), rule.provider_filter.end(), [&](const auto& c) {
    TierBuffer buffer;
    return condition_holds(c, provider_value(c.attribute, instance, buffer), service, consumer);
  });
}

// What the picker would consider: a filter that keeps only DOWN or drained
// instances leaves the consumer as stranded as one that keeps none.
bool usable(const proto::Instance& instance) {
  return instance.status == proto::InstanceStatus::kUp && instance.weight > 0;
}

void select_all(std::size_t n, std::vector<std::size_t>& out) {
  out.clear();
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(i);
}

std::string scope_text(const std::optional<std::string>& scope) {
  return scope ? "'" + *scope + "'" : "(every service)";
}

// "route #2 (priority 10, 'host = a => zone = b')", the text shortened.
std::string name_rule(std::size_t number, const RouteRuleSpec& spec) {
  return route_rule_name(number, spec.text, spec.priority);
}

// Compiles "NAME[@GROUP]" into the rule's scope globs; "" or the problem.
std::string compile_scope(const std::string& scope, RouteRule& rule) {
  std::string_view name = scope;
  std::string_view group = proto::kDefaultGroup;
  if (const auto at = name.rfind('@'); at != std::string_view::npos) {
    group = name.substr(at + 1);
    name = name.substr(0, at);
    if (group.empty()) return "scope '" + scope + "': empty group after '@'";
  }
  if (name.empty()) return "scope '" + scope + "': empty service name ('*' for every service)";
  if (auto why = check_glob(name); !why.empty()) return "scope '" + scope + "': " + why;
  if (auto why = check_glob(group); !why.empty()) return "scope '" + scope + "': " + why;
  rule.scope_name = Glob(name);
  rule.scope_group = Glob(group);
  return {};
}

}  // namespace

struct Router::CountValues {
  std::uint64_t applied = 0;
  std::uint64_t fallbacks = 0;
  std::uint64_t forced_empty = 0;
};

struct Router::Table {
  std::vector<RouteRule> rules;  // in evaluation order
  std::unique_ptr<RuleCounts[]> counts;
};

bool RouteRule::in_scope(const proto::ServiceKey& service) const {
  return scope_name.matches(service.name) && scope_group.matches(service.group);
}

std::string_view provider_host(std::string_view address) {
  auto host = address;
  if (const auto scheme = host.find("://"); scheme != std::string_view::npos)
    host.remove_prefix(scheme + 3);
  if (const auto slash = host.find('/'); slash != std::string_view::npos)
    host = host.substr(0, slash);
  if (const auto at = host.rfind('@'); at != std::string_view::npos) host.remove_prefix(at + 1);
  if (host.starts_with('[')) {
    const auto close = host.find(']');
    return close == std::string_view::npos ? host.substr(1) : host.substr(1, close - 1);
  }
  // A port only when there is exactly one ':'; a bare IPv6 address has several.
  const auto colon = host.find(':');
  if (colon != std::string_view::npos && host.find(':', colon + 1) == std::string_view::npos)
    host = host.substr(0, colon);
  return host;
}

std::vector<proto::Instance> selected_instances(const RouteOutcome& outcome,
                                                const std::vector<proto::Instance>& candidates) {
  std::vector<proto::Instance> out;
  out.reserve(outcome.selected.size());
  for (const auto i : outcome.selected)
    if (i < candidates.size()) out.push_back(candidates[i]);
  return out;
}

Router::Router() : table_(std::make_shared<const Table>()) {}
Router::~Router() = default;

std::shared_ptr<const Router::Table> Router::snapshot() const {
  std::lock_guard lock(mu_);
  return table_;
}

std::vector<std::string> Router::compile(std::vector<RouteRuleSpec> specs,
                                         std::vector<RouteRule>& rules) {
  std::vector<std::string> errors;
  rules.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto& spec = specs[i];
    const auto name = name_rule(i + 1, spec);
    auto parsed = parse_route_rule(spec.text);
    if (!parsed) {
      errors.push_back(name + ": " + parsed.error);
      continue;
    }
    RouteRule rule;
    if (spec.scope) {
      if (auto why = compile_scope(*spec.scope, rule); !why.empty()) {
        errors.push_back(name + ": " + why);
        continue;
      }
    }
    if (parsed.rule->denies_all() && !spec.force) {
      errors.push_back(name + ": " + std::string(kDenyNeedsForce));
      continue;
    }
    rule.condition = std::move(*parsed.rule);
    rule.spec = std::move(spec);
    rules.push_back(std::move(rule));
  }
  return errors;
}

void Router::install(std::vector<RouteRule> rules, std::vector<CountValues> counts) {
  std::vector<std::size_t> order(rules.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rules[a].spec.priority != rules[b].spec.priority)
      return rules[a].spec.priority > rules[b].spec.priority;
    return rules[a].sequence < rules[b].sequence;
  });
  auto table = std::make_shared<Table>();
  table->counts = std::make_unique<RuleCounts[]>(rules.size());
  table->rules.reserve(rules.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto i = order[k];
    table->rules.push_back(std::move(rules[i]));
    if (!counts.empty()) {
      table->counts[k].applied = counts[i].applied;
      table->counts[k].fallbacks = counts[i].fallbacks;
      table->counts[k].forced_empty = counts[i].forced_empty;
    }
  }
  std::shared_ptr<const Table> frozen = std::move(table);
  std::lock_guard lock(mu_);
  table_.swap(frozen);
  // The old table dies here or with the last outcome that holds one of its rules.
}

std::vector<std::string> Router::load(std::vector<RouteRuleSpec> specs) {
  std::lock_guard write(write_mu_);
  std::vector<RouteRule> rules;
  auto errors = compile(std::move(specs), rules);
  if (!errors.empty()) return errors;
  for (auto& rule : rules)
    rule.sequence = next_sequence_++;
  install(std::move(rules), {});
  return {};
}

std::vector<std::string> Router::replace_scope(const std::optional<std::string>& scope,
                                               std::vector<RouteRuleSpec> specs) {
  std::lock_guard write(write_mu_);
  std::vector<std::string> errors;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].scope != scope)
      errors.push_back(name_rule(i + 1, specs[i]) + ": its scope " + scope_text(specs[i].scope) +
                       " is not the scope being replaced, " + scope_text(scope));
  if (!errors.empty()) return errors;
  std::vector<RouteRule> fresh;
  errors = compile(std::move(specs), fresh);
  if (!errors.empty()) return errors;

  const auto old = snapshot();
  std::vector<RouteRule> rules;
  std::vector<CountValues> counts;
  for (std::size_t k = 0; k < old->rules.size(); ++k) {
    if (old->rules[k].spec.scope == scope) continue;
    const auto& c = old->counts[k];
    rules.push_back(old->rules[k]);
    counts.push_back({read(c.applied), read(c.fallbacks), read(c.forced_empty)});
  }
  for (auto& rule : fresh) {
    rule.sequence = next_sequence_++;
    rules.push_back(std::move(rule));
    counts.push_back({});
  }
  install(std::move(rules), std::move(counts));
  return {};
}

RouteOutcome Router::route(const proto::ServiceKey& service, const ConsumerContext& consumer,
                           const std::vector<proto::Instance>& candidates) const {
  bump(routed_);
  const auto table = snapshot();
  RouteOutcome out;
  out.selected.reserve(candidates.size());
  for (std::size_t k = 0; k < table->rules.size(); ++k) {
    const auto& rule = table->rules[k];
    if (!rule.spec.enabled || !rule.in_scope(service) ||
        !consumer_matches(rule.condition, service, consumer))
      continue;
    auto& counts = table->counts[k];
    bump(counts.applied);
    out.applied = std::shared_ptr<const RouteRule>(table, &rule);  // shares the table's ownership
    bool any_usable = false;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!provider_matches(rule.condition, candidates[i], service, consumer)) continue;
      out.selected.push_back(i);
      any_usable = any_usable || usable(candidates[i]);
    }
    if (any_usable) return out;
    if (rule.spec.force) {
      bump(counts.forced_empty);
      bump(forced_empty_);
      return out;
    }
    bump(counts.fallbacks);
    bump(fallbacks_);
    out.fell_back = true;
    select_all(candidates.size(), out.selected);
    return out;
  }
  bump(unmatched_);
  select_all(candidates.size(), out.selected);
  return out;
}

RouterStats Router::stats() const {
  const auto table = snapshot();
  RouterStats stats;
  stats.routed = read(routed_);
  stats.unmatched = read(unmatched_);
  stats.fallbacks = read(fallbacks_);
  stats.forced_empty = read(forced_empty_);
  stats.rules.reserve(table->rules.size());
  for (std::size_t k = 0; k < table->rules.size(); ++k) {
    const auto& counts = table->counts[k];
    stats.rules.push_back({table->rules[k].spec, read(counts.applied), read(counts.fallbacks),
                           read(counts.forced_empty)});
  }
  return stats;
}

std::size_t Router::size() const {
  return snapshot()->rules.size();
}

}  // namespace cascade::agent
