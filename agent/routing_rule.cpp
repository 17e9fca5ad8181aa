#include "cascade/agent/routing_rule.hpp"

#include <array>

namespace cascade::agent {

Glob::Glob(std::string_view pattern) : pattern_(pattern) {
  anchored_front_ = pattern.empty() || pattern.front() != '*';
  anchored_back_ = pattern.empty() || pattern.back() != '*';
  std::size_t start = 0;
  while (start <= pattern.size()) {
    auto star = pattern.find('*', start);
    if (star == std::string_view::npos) star = pattern.size();
    if (star > start) parts_.emplace_back(pattern.substr(start, star - start));
    start = star + 1;
  }
}

bool Glob::matches(std::string_view text) const {
  if (parts_.empty()) return !anchored_front_ || text.empty();  // "*" or ""
  if (anchored_front_ && anchored_back_ && parts_.size() == 1) return text == parts_.front();
  std::size_t begin = 0;
  std::size_t end = text.size();
  std::size_t first = 0;
  std::size_t last = parts_.size();
  if (anchored_front_) {
    if (!text.starts_with(parts_.front())) return false;
    begin = parts_.front().size();
    first = 1;
  }
  if (anchored_back_) {
    const auto& tail = parts_.back();
    if (end - begin < tail.size() || !text.ends_with(tail)) return false;
    end -= tail.size();
    last -= 1;
  }
  // Leftmost match of each middle part is enough with `*` as the only
  // wildcard: an earlier match never leaves less room for the parts after it.
  const auto middle = text.substr(0, end);
  for (std::size_t i = first; i < last; ++i) {
    const auto at = middle.find(parts_[i], begin);
    if (at == std::string_view::npos) return false;
    begin = at + parts_[i].size();
  }
  return true;
}

std::string RouteAttribute::to_string() const {
  switch (key) {
    case RouteKey::kHost:
      return "host";
    case RouteKey::kZone:
      return "zone";
    case RouteKey::kTier:
      return "tier";
    case RouteKey::kMethod:
      return "method";
    case RouteKey::kService:
      return "service";
    case RouteKey::kMetadata:
      return "metadata." + metadata_name;
  }
  return "?";
}

std::string check_glob(std::string_view pattern) {
  if (pattern.find("**") != std::string_view::npos)
    return "bad glob '" + std::string(pattern) + "': '**' says no more than '*'; write one star";
  for (const char c : pattern) {
    if (c == '?' || c == '[' || c == ']' || c == '{' || c == '}')
      return "bad glob '" + std::string(pattern) + "': '" + std::string(1, c) +
             "' is not a wildcard here; only '*' is";
  }
  return {};
}

namespace {

constexpr std::string_view kKeyList = "host, zone, tier, method, service or metadata.NAME";
constexpr std::string_view kMetadataPrefix = "metadata.";

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Keys and metadata entry names: letters, digits and `_ . - /` (so that names
// such as app.kubernetes.io/name work).
bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '/';
}

// Ends a value: the list, condition and token separators.
bool ends_value(char c) {
  return is_space(c) || c == ',' || c == '&';
}

// 'c', or "byte 0x07" for what would not print.
std::string describe(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u > 0x20 && u < 0x7f) return "'" + std::string(1, c) + "'";
  constexpr std::array<char, 16> kHex{'0', '1', '2', '3', '4', '5', '6', '7',
                                      '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 0xf];
}

// Why a byte cannot appear in a value, or "" when it can.
std::string bad_value_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7f) return "unexpected " + describe(c) + " in a value";
  switch (c) {
    case '?':
    case '[':
    case ']':
    case '{':
    case '}':
      return "bad glob: " + describe(c) + " is not a wildcard here; only '*' is";
    case '$':
      return "'$' may only start a value, as in $zone (the consumer's own zone)";
    case '=':
    case '!':
    case '<':
    case '>':
      return "unexpected " + describe(c) + " in a value (conditions are 'key = v1,v2' or " +
             "'key != v1,v2', joined by '&')";
    case '"':
    case '\'':
      return "quotes are not part of the syntax; write values bare";
    default:
      return {};
  }
}

enum class Side : std::uint8_t { kConsumer, kProvider };

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  RouteParseResult run() {
    RouteParseResult result;
    if (text_.size() > kMaxRouteRuleBytes) {
      fail(kMaxRouteRuleBytes, "the rule is " + std::to_string(text_.size()) +
                                   " bytes long; at most " + std::to_string(kMaxRouteRuleBytes) +
                                   " are accepted");
      return finish(std::move(result));
    }
    const auto arrow = text_.find("=>");
    if (arrow == std::string_view::npos) {
      fail(text_.size(),
           "missing '=>' (a rule is 'CONSUMER-MATCH => PROVIDER-FILTER'; leave the match empty "
           "for every consumer, as in '=> zone = dc1')");
      return finish(std::move(result));
    }
    if (const auto again = text_.find("=>", arrow + 2); again != std::string_view::npos) {
      fail(again,
           "a second '=>' (a rule has exactly one, between the consumer match and the "
           "provider filter)");
      return finish(std::move(result));
    }
    ConditionRule rule;
    if (!side(0, arrow, Side::kConsumer, rule.consumer_match) ||
        !side(arrow + 2, text_.size(), Side::kProvider, rule.provider_filter))
      return finish(std::move(result));
    result.rule = std::move(rule);
    return result;
  }

 private:
  // Conditions joined by `&` in [pos, end); false after fail().
  bool side(std::size_t pos, std::size_t end, Side which, std::vector<RouteCondition>& out) {
    pos_ = pos;
    end_ = end;
    skip_space();
    if (pos_ == end_) return true;
    while (true) {
      RouteCondition condition;
      if (!parse_condition(which, condition)) return false;
      out.push_back(std::move(condition));
      skip_space();
      if (pos_ == end_) return true;
      if (text_[pos_] != '&') {
        const auto where = which == Side::kConsumer ? "before '=>'" : "at the end of the rule";
        return fail(pos_, "expected '&' between conditions, or nothing " + std::string(where) +
                              ", found '" + std::string(token_at(pos_)) + "'");
      }
      const auto amp = pos_++;
      skip_space();
      if (pos_ == end_) return fail(amp, "'&' with no condition after it");
    }
  }

  bool parse_condition(Side which, RouteCondition& condition) {
    condition.column = pos_ + 1;
    if (!parse_key(which, condition.attribute)) return false;
    const auto key_text = condition.attribute.to_string();
    skip_space();
    if (pos_ < end_ && text_[pos_] == '=') {
      ++pos_;
    } else if (pos_ + 1 < end_ && text_[pos_] == '!' && text_[pos_ + 1] == '=') {
      condition.negated = true;
      pos_ += 2;
    } else {
      return fail(pos_, "expected '=' or '!=' after '" + key_text + "', found " + found_here());
    }
    const auto op = condition.negated ? "'!='" : "'='";
    skip_space();
    while (true) {
      if (pos_ == end_ || text_[pos_] == ',' || text_[pos_] == '&')
        return fail(pos_, "empty value for '" + key_text + "' (after " + op +
                              " or ','); give at least one value, '*' for any");
      RouteValue value;
      if (!parse_value(which, value)) return false;
      condition.values.push_back(std::move(value));
      skip_space();
      if (pos_ == end_ || text_[pos_] != ',') return true;
      ++pos_;
      skip_space();
    }
  }

  // A key at pos_; `which` decides whether method and service are allowed.
  bool parse_key(Side which, RouteAttribute& attribute) {
    const auto start = pos_;
    while (pos_ < end_ && is_key_char(text_[pos_]))
      ++pos_;
    const auto key = text_.substr(start, pos_ - start);
    if (key.empty())
      return fail(start, "expected a key (" + std::string(kKeyList) + "), found " + found_here());
    if (!resolve_key(start, key, attribute)) return false;
    if (which == Side::kProvider &&
        (attribute.key == RouteKey::kMethod || attribute.key == RouteKey::kService))
      return fail(start, "'" + std::string(key) +
                             "' describes the call, not a provider: match it before '=>'");
    return true;
  }

  bool resolve_key(std::size_t start, std::string_view key, RouteAttribute& attribute) {
    if (key == "host") {
      attribute.key = RouteKey::kHost;
    } else if (key == "zone") {
      attribute.key = RouteKey::kZone;
    } else if (key == "tier") {
      attribute.key = RouteKey::kTier;
    } else if (key == "method") {
      attribute.key = RouteKey::kMethod;
    } else if (key == "service") {
      attribute.key = RouteKey::kService;
    } else if (key.starts_with(kMetadataPrefix) && key.size() > kMetadataPrefix.size()) {
      attribute.key = RouteKey::kMetadata;
      attribute.metadata_name = key.substr(kMetadataPrefix.size());
    } else if (key == "metadata" || key == kMetadataPrefix) {
      return fail(start, "'metadata' needs an entry name, as in metadata.role");
    } else if (key.starts_with("meta.")) {
      return fail(start, "unknown key '" + std::string(key) + "'; metadata keys are written " +
                             "metadata." + std::string(key.substr(5)));
    } else {
      return fail(start,
                  "unknown key '" + std::string(key) + "' (keys: " + std::string(kKeyList) + ")");
    }
    return true;
  }

  bool parse_value(Side which, RouteValue& value) {
    const auto start = pos_;
    if (text_[pos_] == '$') {
      ++pos_;
      const auto key_start = pos_;
      while (pos_ < end_ && is_key_char(text_[pos_]))
        ++pos_;
      const auto key = text_.substr(key_start, pos_ - key_start);
      if (key.empty())
        return fail(start,
                    "'$' must be followed by a consumer key, as in $zone, found " + found_here());
      RouteAttribute ref;
      if (!resolve_key(key_start, key, ref)) return false;
      if (which == Side::kConsumer)
        return fail(start, "'$" + std::string(key) +
                               "' is the consumer's own value: it can only be used after '=>'");
      if (pos_ < end_ && !ends_value(text_[pos_])) {
        if (text_[pos_] == '*')
          return fail(pos_,
                      "'$" + std::string(key) + "' cannot be part of a glob; it is compared whole");
        return fail(pos_,
                    "unexpected " + describe(text_[pos_]) + " after '$" + std::string(key) + "'");
      }
      value.consumer_ref = std::move(ref);
      return true;
    }
    while (pos_ < end_ && !ends_value(text_[pos_])) {
      if (auto why = bad_value_char(text_[pos_]); !why.empty()) return fail(pos_, why);
      ++pos_;
    }
    const auto pattern = text_.substr(start, pos_ - start);
    if (auto why = check_glob(pattern); !why.empty()) return fail(start, why);
    value.glob = Glob(pattern);
    return true;
  }

  void skip_space() {
    while (pos_ < end_ && is_space(text_[pos_]))
      ++pos_;
  }

  // The run of non-space bytes at `pos`, shortened for messages.
  std::string_view token_at(std::size_t pos) const {
    std::size_t end = pos;
    while (end < end_ && !is_space(text_[end]) && end - pos < 32)
      ++end;
    return text_.substr(pos, end - pos);
  }

  std::string found_here() const {
    if (pos_ >= end_) return end_ == text_.size() ? "the end of the rule" : "'=>'";
    return describe(text_[pos_]);
  }

  bool fail(std::size_t offset, std::string message) {
    column_ = offset + 1;
    message_ = std::move(message);
    return false;
  }

  RouteParseResult finish(RouteParseResult result) {
    result.column = column_;
    result.error = "column " + std::to_string(column_) + ": " + message_;
    return result;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::size_t column_ = 0;
  std::string message_;
};

}  // namespace

RouteParseResult parse_route_rule(std::string_view text) {
  return Parser(text).run();
}

std::string route_rule_problem(std::string_view text, bool force) {
  auto parsed = parse_route_rule(text);
  if (!parsed) return parsed.error;
  if (parsed.rule->denies_all() && !force) return std::string(kDenyNeedsForce);
  return {};
}

std::string route_rule_name(std::size_t number, std::string_view text, std::int32_t priority) {
  constexpr std::size_t kShown = 60;
  const std::string shown =
      text.size() > kShown ? std::string(text.substr(0, kShown)) + "..." : std::string(text);
  return "route #" + std::to_string(number) + " (priority " + std::to_string(priority) + ", '" +
         shown + "')";
}

std::optional<std::string> exact_scope(const proto::ServiceKey& service) {
  const auto literal = [](std::string_view part) {
    return !part.empty() && part.find('*') == std::string_view::npos && check_glob(part).empty();
  };
  if (!literal(service.name) || !literal(service.group) ||
      service.group.find('@') != std::string::npos)
    return std::nullopt;
  return service.name + "@" + service.group;
}

}  // namespace cascade::agent
