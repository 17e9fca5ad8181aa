#pragma once
// A table of condition routing rules (agent/routing_rule.hpp) and the choice
// of which instances of a service a consumer may call.
//
// Order: rules are tried by priority, higher first, and in load order among
// equal priorities; the first enabled rule whose scope holds the service and
// whose consumer match holds the consumer applies, and no other is tried.
// Its provider filter selects the candidates. When the filter leaves no
// usable instance (UP with a positive weight, the picker's notion) the rule
// falls back to the whole list and the fallback is counted, so that a stale
// or mistaken rule cannot take a service down; a rule with `force` returns
// what the filter left, possibly nothing.
//
// Deny rules (`zone = dc1 =>`, empty filter) only make sense with force:
// without it they would always fall back. load() therefore refuses them
// unless force = true.
//
// Threading: every method is thread-safe. route() reads an immutable snapshot
// of the table, so a concurrent load() never shows it half a table; the
// outcome keeps its rule alive. Counters are relaxed atomics.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/agent/routing_rule.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent {

// A rule as configured (a `[[route]]` table, or sent by a hub).
struct RouteRuleSpec {
  std::string text{};         // "CONSUMER-MATCH => PROVIDER-FILTER"
  std::int32_t priority = 0;  // higher first
  bool force = false;         // keep an empty result instead of falling back
  bool enabled = true;        // a disabled rule is kept (and listed) but never applies
  // The services it applies to: "NAME" or "NAME@GROUP", where each part may
  // be a `*` glob; without "@GROUP" only the default group. nullopt: every service.
  std::optional<std::string> scope{};
  bool operator==(const RouteRuleSpec&) const = default;
};

// Who is calling. The service called is route()'s own argument.
struct ConsumerContext {
  std::string host{};  // the consumer's address (no port), e.g. 10.20.3.4
  std::string zone{};
  std::uint32_t tier = 0;
  std::string method{};  // the method about to be called; "" when unknown
  std::map<std::string, std::string> metadata{};
};

// A loaded rule: the spec with its condition and scope compiled.
struct RouteRule {
  RouteRuleSpec spec{};
  ConditionRule condition{};
  Glob scope_name{"*"};        // matched against ServiceKey::name
  Glob scope_group{"*"};       // and ServiceKey::group
  std::uint64_t sequence = 0;  // load order, breaks priority ties

  bool in_scope(const proto::ServiceKey& service) const;
};

struct RouteOutcome {
  // Indexes into route()'s candidates, in their order: the instances the
  // consumer may call. All of them when no rule applied or on fallback.
  std::vector<std::size_t> selected{};
  bool fell_back = false;
  // The rule that applied, or null. It stays valid as long as this outcome
  // holds it, whatever load() does meanwhile.
  std::shared_ptr<const RouteRule> applied{};
};

// Counters of one rule of the current table (they start at zero on load(),
// and survive replace_scope() for the rules it leaves alone).
struct RouteRuleStats {
  RouteRuleSpec spec{};
  std::uint64_t applied = 0;       // times it was the rule that applied
  std::uint64_t fallbacks = 0;     // ... and its filter left nothing usable, so all were kept
  std::uint64_t forced_empty = 0;  // ... and left nothing usable, kept so by force
};

struct RouterStats {
  // Since the Router was made, across loads.
  std::uint64_t routed = 0;     // route() calls
  std::uint64_t unmatched = 0;  // calls no rule applied to
  std::uint64_t fallbacks = 0;
  std::uint64_t forced_empty = 0;
  std::vector<RouteRuleStats> rules{};  // the current table, in evaluation order
};

// A provider's host as rules see it: the address without a scheme
// ("tcp://"), user info, port, path or IPv6 brackets. "tcp://10.0.0.7:80" -> "10.0.0.7",
// "[::1]:80" -> "::1". A view into `address`.
std::string_view provider_host(std::string_view address);

// The instances an outcome selected, copied (for pick_instance()).
std::vector<proto::Instance> selected_instances(const RouteOutcome& outcome,
                                                const std::vector<proto::Instance>& candidates);

class Router {
 public:
  Router();
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Replaces every rule, only if all of `specs` are good; otherwise the table
  // is left as it was. Returns one message per bad rule, naming it
  // ("route #2 (priority 10, 'hots = a => zone = b'): column 1: unknown key 'hots' ...").
  std::vector<std::string> load(std::vector<RouteRuleSpec> specs);

  // Replaces the rules of one scope (nullopt: the rules without a scope),
  // leaving the others and their counters alone; all or nothing like load().
  // Every spec must carry exactly that scope. Meant for rules a hub sends per service.
  std::vector<std::string> replace_scope(const std::optional<std::string>& scope,
                                         std::vector<RouteRuleSpec> specs);

  // The instances of `service` that `consumer` may call. Allocates only the
  // outcome's index vector: globs were compiled at load.
  RouteOutcome route(const proto::ServiceKey& service, const ConsumerContext& consumer,
                     const std::vector<proto::Instance>& candidates) const;

  RouterStats stats() const;
  std::size_t size() const;  // rules in the table, enabled or not

 private:
  struct Table;
  struct CountValues;
  std::shared_ptr<const Table> snapshot() const;
  // Compiles `specs` into `rules`; one message per bad spec (#1 = the first).
  static std::vector<std::string> compile(std::vector<RouteRuleSpec> specs,
                                          std::vector<RouteRule>& rules);
  // Sorts `rules` into evaluation order and swaps them in; `counts` (one per
  // rule, or empty for zeros) carries counters over from the old table.
  void install(std::vector<RouteRule> rules, std::vector<CountValues> counts);

  std::mutex write_mu_;    // serialises load() and replace_scope()
  mutable std::mutex mu_;  // guards table_ (the pointer, not the table)
  std::shared_ptr<const Table> table_;
  std::uint64_t next_sequence_ = 0;  // guarded by write_mu_

  mutable std::atomic<std::uint64_t> routed_{0};
  mutable std::atomic<std::uint64_t> unmatched_{0};
  mutable std::atomic<std::uint64_t> fallbacks_{0};
  mutable std::atomic<std::uint64_t> forced_empty_{0};
};

}  // namespace cascade::agent
