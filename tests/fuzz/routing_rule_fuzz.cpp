// Fuzz target: the routing rule parser and globs (agent/routing_rule.cpp),
// which read text from config files and from hubs.
// The input is a rule text; when it holds a newline, the part before the
// first one is also tried as a glob pattern against the part after it.
// Properties: parsing never throws; a rule parses or the error names a column
// inside the text ("column N: ..."); route_rule_problem agrees with the
// parser; every parsed glob is one check_glob accepts; Glob::matches agrees
// with a plain backtracking matcher. Seeds: tests/fuzz/corpus/routing_rule/.

#include <string>
#include <string_view>

#include "cascade/agent/routing_rule.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

// The reference: `*` matches any run of characters, everything else itself.
bool glob_reference(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return text.empty();
  if (pattern.front() == '*') {
    for (std::size_t skip = 0; skip <= text.size(); ++skip)
      if (glob_reference(pattern.substr(1), text.substr(skip))) return true;
    return false;
  }
  return !text.empty() && text.front() == pattern.front() &&
         glob_reference(pattern.substr(1), text.substr(1));
}

void check_conditions(const std::vector<agent::RouteCondition>& conditions, std::size_t size) {
  for (const auto& condition : conditions) {
    CASCADE_FUZZ_CHECK(condition.column >= 1 && condition.column <= size);
    for (const auto& value : condition.values)
      CASCADE_FUZZ_CHECK(agent::check_glob(value.glob.pattern()).empty(), value.glob.pattern());
  }
}

void check_rule(std::string_view text) {
  const auto parsed = agent::parse_route_rule(text);
  const auto force_problem = agent::route_rule_problem(text, /*force=*/true);
  const auto problem = agent::route_rule_problem(text, /*force=*/false);
  if (!parsed) {
    CASCADE_FUZZ_CHECK(parsed.column >= 1 && parsed.column <= text.size() + 1, parsed.error);
    CASCADE_FUZZ_CHECK(parsed.error.starts_with("column " + std::to_string(parsed.column) + ": "),
                       parsed.error);
    CASCADE_FUZZ_CHECK(force_problem == parsed.error && problem == parsed.error);
    return;
  }
  CASCADE_FUZZ_CHECK(parsed.error.empty() && force_problem.empty());
  CASCADE_FUZZ_CHECK(problem.empty() != parsed.rule->denies_all(), problem);
  check_conditions(parsed.rule->consumer_match, text.size());
  check_conditions(parsed.rule->provider_filter, text.size());
  (void)agent::route_rule_name(1, text, 0);
}

// Short texts only: the reference backtracks.
constexpr std::size_t kMaxGlobCheck = 64;

void check_glob_match(std::string_view input) {
  const auto newline = input.find('\n');
  if (newline == std::string_view::npos) return;
  const auto pattern = input.substr(0, newline);
  const auto text = input.substr(newline + 1);
  if (!agent::check_glob(pattern).empty() || input.size() > kMaxGlobCheck) return;
  const agent::Glob glob(pattern);
  CASCADE_FUZZ_CHECK(glob.matches(text) == glob_reference(pattern, text),
                     std::string(pattern) + " ~ " + std::string(text));
}

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = cascade::fuzz::as_text(data, size);
  cascade::fuzz::check_rule(text);
  cascade::fuzz::check_glob_match(text);
  (void)cascade::agent::exact_scope({std::string(text), "default"});
  return 0;
}
