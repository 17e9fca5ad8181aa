#pragma once
// Condition routing rules (after Dubbo's condition router): which providers a
// consumer may call.
//
//   CONSUMER-MATCH => PROVIDER-FILTER
//   host = 10.20.* => host = 10.20.*      consumers on 10.20.* call providers on 10.20.* only
//   => zone != dc3                        empty match: every consumer
//   method = get*,find* => metadata.role = reader
//   => zone = $zone                       `$key`: the consumer's own value of that key
//   zone = dc1 =>                         empty filter: no provider at all (a deny rule)
//
// Each side is zero or more conditions joined by `&`; a condition is
// `KEY = V1,V2` (the value matches one of them) or `KEY != V1,V2` (it matches
// none). Values are literals or globs where `*` stands for any run of
// characters (`10.20.*`, `*-canary`, `dc*-a`); `*` is the only wildcard. Keys:
//   host, zone, tier, metadata.NAME   on both sides
//   method, service                   describe the call (the method, the called
//                                     service's name), so only before `=>`
// A provider's host is its address without scheme and port; its tier is
// Instance::tier in decimal (0 = the answering hub's own tier); a missing
// metadata entry reads as "". `$key` may name any key, also method and
// service. Whitespace between tokens is free.
//
// This file is the parser and the syntax tree; the evaluation against
// consumers and instances is in agent/router.hpp. Parsing compiles every glob
// once so that evaluation never allocates.
//
// Linked into cascade_agent_core (sans-IO, no sockets), so the hub core uses
// the same parser to refuse a bad rule before it serves it (cascadectl
// set-routes, protocol section 5.12).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::agent {

// Longest rule text accepted: rules come from config files and from hubs;
// anything longer is a mistake, not a routing policy (the wire's limit).
inline constexpr std::size_t kMaxRouteRuleBytes = proto::kMaxRouteRuleBytes;

// A `*` pattern split at its stars once, so that matching never allocates
// (each literal part is searched for left to right).
class Glob {
 public:
  Glob() = default;  // matches only ""
  // The caller has checked the pattern (no `**`); any string compiles.
  explicit Glob(std::string_view pattern);

  bool matches(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::vector<std::string> parts_;  // the literal runs between stars (empty ones dropped)
  bool anchored_front_ = true;      // no leading `*`
  bool anchored_back_ = true;       // no trailing `*`
};

enum class RouteKey : std::uint8_t { kHost, kZone, kTier, kMethod, kService, kMetadata };

// A key of a condition: one of RouteKey, with the entry name for kMetadata.
struct RouteAttribute {
  RouteKey key = RouteKey::kHost;
  std::string metadata_name{};    // only for kMetadata
  std::string to_string() const;  // as written: "zone", "metadata.role"
  bool operator==(const RouteAttribute&) const = default;
};

// One value of a condition: a glob, or a reference to the consumer's value of
// a key (`$zone`), compared for equality.
struct RouteValue {
  Glob glob{};
  std::optional<RouteAttribute> consumer_ref{};
};

struct RouteCondition {
  RouteAttribute attribute{};
  bool negated = false;  // `!=`: the value must match none of `values`
  std::vector<RouteValue> values{};
  std::size_t column = 0;  // 1-based, where the key starts (for messages)
};

// A parsed rule. An empty consumer_match matches every consumer; an empty
// provider_filter matches no provider (see denies_all()).
struct ConditionRule {
  std::vector<RouteCondition> consumer_match{};
  std::vector<RouteCondition> provider_filter{};
  // `X =>` with nothing after the arrow: the matched consumers may call no
  // provider. Without `force` such a rule would always fall back to the full
  // list and do nothing, so the Router accepts it only with force = true.
  bool denies_all() const { return provider_filter.empty(); }
};

// The rule, or the first problem found: `error` reads
// "column N: <problem>" and `column` is that N (1-based byte offset).
struct RouteParseResult {
  std::optional<ConditionRule> rule{};
  std::string error{};
  std::size_t column = 0;
  explicit operator bool() const { return rule.has_value(); }
};

// Never throws for bad input (only std::bad_alloc can escape) and accepts any
// byte string, e.g. text received from a hub.
RouteParseResult parse_route_rule(std::string_view text);

// Checks a glob written as a route value or a scope: "" when it is good, else
// what is wrong with it (`**`, `?`, character classes).
std::string check_glob(std::string_view pattern);

// Why a Router refuses a rule that parses: nothing after '=>' without force.
inline constexpr std::string_view kDenyNeedsForce =
    "nothing after '=>' denies every provider, which only takes effect with force = true "
    "(without it the rule would always fall back)";

// "" when a Router would load the rule, else why not: the parse error
// ("column N: ...") or kDenyNeedsForce. What a hub checks before serving it.
std::string route_rule_problem(std::string_view text, bool force);

// How messages name a rule: "route #2 (priority 10, 'host = a => zone = b')",
// the text cut after 60 bytes. `number` counts from 1.
std::string route_rule_name(std::size_t number, std::string_view text, std::int32_t priority);

// The Router scope that holds exactly this service and no other,
// "NAME@GROUP": the scope of the rules a hub serves with it. nullopt when a
// scope cannot say it: the name or group holds '*' (a wildcard there would
// also hold other services) or a character check_glob refuses, or the group
// holds '@'. A hub refuses rules for such a service.
std::optional<std::string> exact_scope(const proto::ServiceKey& service);

}  // namespace cascade::agent
