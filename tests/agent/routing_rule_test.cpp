#include "cascade/agent/routing_rule.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cascade/common/random.hpp"

namespace cascade::agent {
namespace {

ConditionRule ok(std::string_view text) {
  auto parsed = parse_route_rule(text);
  EXPECT_TRUE(parsed) << text << " -> " << parsed.error;
  return parsed ? *parsed.rule : ConditionRule{};
}

// The error, checked to name `column`.
std::string error_at(std::string_view text, std::size_t column) {
  auto parsed = parse_route_rule(text);
  EXPECT_FALSE(parsed) << text;
  EXPECT_EQ(parsed.column, column) << text << " -> " << parsed.error;
  EXPECT_TRUE(parsed.error.starts_with("column " + std::to_string(column) + ": ")) << parsed.error;
  return parsed.error;
}

std::vector<std::string> patterns(const RouteCondition& c) {
  std::vector<std::string> out;
  for (const auto& v : c.values)
    out.push_back(v.consumer_ref ? "$" + v.consumer_ref->to_string() : v.glob.pattern());
  return out;
}

using Strings = std::vector<std::string>;

TEST(Glob, LiteralMatchesOnlyItself) {
  Glob g("dc1");
  EXPECT_TRUE(g.matches("dc1"));
  EXPECT_FALSE(g.matches("dc12"));
  EXPECT_FALSE(g.matches("xdc1"));
  EXPECT_FALSE(g.matches(""));
}

TEST(Glob, PrefixSuffixAndInfixStars) {
  EXPECT_TRUE(Glob("10.20.*").matches("10.20.3.4"));
  EXPECT_TRUE(Glob("10.20.*").matches("10.20."));
  EXPECT_FALSE(Glob("10.20.*").matches("10.2.0.1"));
  EXPECT_TRUE(Glob("*-canary").matches("orders-canary"));
  EXPECT_FALSE(Glob("*-canary").matches("orders-canary-2"));
  EXPECT_TRUE(Glob("dc*-a").matches("dc1-a"));
  EXPECT_TRUE(Glob("dc*-a").matches("dc-a"));
  EXPECT_FALSE(Glob("dc*-a").matches("dc1-b"));
  EXPECT_TRUE(Glob("*prod*").matches("eu-prod-1"));
  EXPECT_FALSE(Glob("*prod*").matches("eu-stage-1"));
}

TEST(Glob, SeveralStarsAndAnchorsThatMustNotOverlap) {
  Glob g("a*b*c");
  EXPECT_TRUE(g.matches("abc"));
  EXPECT_TRUE(g.matches("aXXbYYc"));
  EXPECT_TRUE(g.matches("abbbc"));
  EXPECT_FALSE(g.matches("acb"));
  EXPECT_FALSE(g.matches("ab"));
  // Prefix and suffix both "ab"/"ba": "aba" would need them to share a byte.
  EXPECT_FALSE(Glob("ab*ba").matches("aba"));
  EXPECT_TRUE(Glob("ab*ba").matches("abba"));
}

TEST(Glob, LoneStarMatchesEverythingAndEmptyPatternOnlyEmpty) {
  EXPECT_TRUE(Glob("*").matches(""));
  EXPECT_TRUE(Glob("*").matches("anything"));
  EXPECT_TRUE(Glob().matches(""));
  EXPECT_FALSE(Glob().matches("x"));
}

TEST(RouteRuleParse, HostGlobOnBothSides) {
  auto rule = ok("host = 10.20.* => host = 10.20.*");
  ASSERT_EQ(rule.consumer_match.size(), 1u);
  ASSERT_EQ(rule.provider_filter.size(), 1u);
  EXPECT_EQ(rule.consumer_match[0].attribute.key, RouteKey::kHost);
  EXPECT_FALSE(rule.consumer_match[0].negated);
  EXPECT_EQ(patterns(rule.consumer_match[0]), Strings{"10.20.*"});
  EXPECT_EQ(patterns(rule.provider_filter[0]), Strings{"10.20.*"});
  EXPECT_EQ(rule.provider_filter[0].column, 19u);
  EXPECT_FALSE(rule.denies_all());
}

TEST(RouteRuleParse, EmptyMatchMeansEveryConsumer) {
  auto rule = ok("=> zone != dc3");
  EXPECT_TRUE(rule.consumer_match.empty());
  ASSERT_EQ(rule.provider_filter.size(), 1u);
  EXPECT_TRUE(rule.provider_filter[0].negated);
  EXPECT_EQ(rule.provider_filter[0].attribute.key, RouteKey::kZone);
}

TEST(RouteRuleParse, MethodListAndMetadataKey) {
  auto rule = ok("method = get*,find* => metadata.role = reader");
  EXPECT_EQ(rule.consumer_match[0].attribute.key, RouteKey::kMethod);
  EXPECT_EQ(patterns(rule.consumer_match[0]), (Strings{"get*", "find*"}));
  EXPECT_EQ(rule.provider_filter[0].attribute, (RouteAttribute{RouteKey::kMetadata, "role"}));
  EXPECT_EQ(rule.provider_filter[0].attribute.to_string(), "metadata.role");
}

TEST(RouteRuleParse, EmptyFilterIsADenyRule) {
  auto rule = ok("zone = dc1 =>");
  EXPECT_EQ(rule.consumer_match.size(), 1u);
  EXPECT_TRUE(rule.denies_all());
}

TEST(RouteRuleParse, DollarKeyRefersToTheConsumerValue) {
  auto rule = ok("=> zone = $zone,dc9 & metadata.rack != $metadata.rack");
  ASSERT_EQ(rule.provider_filter.size(), 2u);
  EXPECT_EQ(patterns(rule.provider_filter[0]), (Strings{"$zone", "dc9"}));
  EXPECT_EQ(patterns(rule.provider_filter[1]), Strings{"$metadata.rack"});
  // A filter on provider metadata may compare with what the call is about.
  EXPECT_EQ(patterns(ok("=> metadata.serves = $method").provider_filter[0]), Strings{"$method"});
}

TEST(RouteRuleParse, WhitespaceIsFreeBetweenTokens) {
  auto tight = ok("host=10.*&zone=dc1,dc2=>zone=$zone&tier!=1");
  auto loose = ok("  host =\t10.*  &  zone = dc1 , dc2\n=>\r\n zone = $zone &tier != 1  ");
  ASSERT_EQ(tight.consumer_match.size(), 2u);
  ASSERT_EQ(loose.consumer_match.size(), 2u);
  ASSERT_EQ(tight.provider_filter.size(), 2u);
  ASSERT_EQ(loose.provider_filter.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(patterns(tight.consumer_match[i]), patterns(loose.consumer_match[i]));
    EXPECT_EQ(patterns(tight.provider_filter[i]), patterns(loose.provider_filter[i]));
    EXPECT_EQ(tight.provider_filter[i].negated, loose.provider_filter[i].negated);
  }
  EXPECT_EQ(patterns(loose.consumer_match[1]), (Strings{"dc1", "dc2"}));
  EXPECT_TRUE(loose.provider_filter[1].negated);
}

TEST(RouteRuleParse, EveryKeyIsKnown) {
  auto rule =
      ok("host=a & zone=b & tier=0 & method=m & service=s & metadata.app.kubernetes.io/name=x"
         " => host=a & zone=b & tier=1 & metadata.k=v");
  std::vector<RouteKey> keys;
  for (const auto& c : rule.consumer_match)
    keys.push_back(c.attribute.key);
  EXPECT_EQ(keys,
            (std::vector<RouteKey>{RouteKey::kHost, RouteKey::kZone, RouteKey::kTier,
                                   RouteKey::kMethod, RouteKey::kService, RouteKey::kMetadata}));
  EXPECT_EQ(rule.consumer_match[5].attribute.metadata_name, "app.kubernetes.io/name");
}

TEST(RouteRuleParse, MissingArrowIsRejected) {
  EXPECT_NE(error_at("host = 10.*", 12).find("missing '=>'"), std::string::npos);
  EXPECT_NE(error_at("", 1).find("missing '=>'"), std::string::npos);
}

TEST(RouteRuleParse, DuplicateArrowIsRejectedAtTheSecondOne) {
  EXPECT_NE(error_at("host = a => zone = b => tier = 0", 22).find("second '=>'"),
            std::string::npos);
}

TEST(RouteRuleParse, UnknownKeyIsNamedWithTheKnownOnes) {
  auto e = error_at("hots = a => zone = b", 1);
  EXPECT_NE(e.find("unknown key 'hots'"), std::string::npos) << e;
  EXPECT_NE(e.find("metadata.NAME"), std::string::npos) << e;
  EXPECT_NE(error_at("=> zoen = a", 4).find("unknown key 'zoen'"), std::string::npos);
  EXPECT_NE(error_at("=> meta.role = a", 4).find("metadata.role"), std::string::npos);
  EXPECT_NE(error_at("metadata = x =>", 1).find("needs an entry name"), std::string::npos);
  EXPECT_NE(error_at("metadata. = x =>", 1).find("needs an entry name"), std::string::npos);
}

TEST(RouteRuleParse, EmptyValueIsRejected) {
  EXPECT_NE(error_at("host = => zone = b", 8).find("empty value for 'host'"), std::string::npos);
  EXPECT_NE(error_at("zone = a,,b =>", 10).find("empty value"), std::string::npos);
  EXPECT_NE(error_at("zone = a, =>", 11).find("empty value"), std::string::npos);
  EXPECT_NE(error_at("=> zone = ", 11).find("empty value"), std::string::npos);
  EXPECT_NE(error_at("=> zone = & tier = 0", 11).find("empty value"), std::string::npos);
}

TEST(RouteRuleParse, BadGlobIsRejected) {
  EXPECT_NE(error_at("host = 10.** => zone = a", 8).find("bad glob '10.**'"), std::string::npos);
  EXPECT_NE(error_at("host = 10.? => zone = a", 11).find("only '*' is"), std::string::npos);
  EXPECT_NE(error_at("=> zone = dc[12]", 13).find("bad glob"), std::string::npos);
  EXPECT_NE(error_at("=> zone = $zone*", 16).find("cannot be part of a glob"), std::string::npos);
}

TEST(RouteRuleParse, MissingOperatorOrAmpersandIsRejected) {
  EXPECT_NE(error_at("host 10.* =>", 6).find("expected '=' or '!=' after 'host'"),
            std::string::npos);
  EXPECT_NE(error_at("=> zone", 8).find("found the end of the rule"), std::string::npos);
  EXPECT_NE(error_at("zone =>", 6).find("expected '=' or '!='"), std::string::npos);
  EXPECT_NE(error_at("host = a zone = b =>", 10).find("expected '&'"), std::string::npos);
  EXPECT_NE(error_at("host = a & => zone = b", 10).find("'&' with no condition"),
            std::string::npos);
  EXPECT_NE(error_at("& host = a =>", 1).find("expected a key"), std::string::npos);
  EXPECT_NE(error_at("host == a =>", 7).find("unexpected '='"), std::string::npos);
}

TEST(RouteRuleParse, KeysOnTheWrongSideAreRejected) {
  EXPECT_NE(error_at("zone = $zone =>", 8).find("only be used after '=>'"), std::string::npos);
  EXPECT_NE(error_at("=> method = get*", 4).find("describes the call"), std::string::npos);
  EXPECT_NE(error_at("=> service = orders", 4).find("describes the call"), std::string::npos);
  EXPECT_NE(error_at("=> zone = $", 11).find("'$' must be followed by a consumer key"),
            std::string::npos);
  EXPECT_NE(error_at("=> zone = $zoen", 12).find("unknown key 'zoen'"), std::string::npos);
  EXPECT_NE(error_at("=> zone = a$zone", 12).find("'$' may only start a value"), std::string::npos);
}

TEST(RouteRuleParse, ControlBytesQuotesAndOverlongRulesAreRejected) {
  EXPECT_NE(error_at(std::string_view("=> zone = a\x01", 12), 12).find("byte 0x01"),
            std::string::npos);
  EXPECT_NE(error_at("=> zone = \"dc1\"", 11).find("quotes"), std::string::npos);
  const std::string long_rule = "=> zone = " + std::string(kMaxRouteRuleBytes, 'a');
  EXPECT_NE(error_at(long_rule, kMaxRouteRuleBytes + 1).find("at most 4096"), std::string::npos);
}

// Rules from a hub or a config file may be anything: the parser must answer
// every byte string with a rule or a positioned error, never crash or throw.
TEST(RouteRuleParse, RandomGarbageNeverCrashes) {
  Rng rng(20240607);
  const std::vector<std::string> tokens{
      "host", "zone", "tier", "method", "service", "metadata.", "role", "=",  "!=", "=>",
      "&",    ",",    "*",    "$",      "$zone",   "10.20.*",   " ",    "\t", "**", "?",
      "dc1",  "get*", "=",    ">",      "!",       "meta.",     "\n",   "[",  "'",  "\""};
  const std::vector<std::string> seeds{"host = 10.20.* => host = 10.20.*", "=> zone != dc3",
                                       "method = get*,find* => metadata.role = reader",
                                       "zone = dc1 =>", "=> zone = $zone"};
  int parsed = 0;
  int rejected = 0;
  for (int round = 0; round < 6000; ++round) {
    std::string text;
    switch (round % 3) {
      case 0:  // random bytes
        for (auto n = rng.uniform(0, 64); n > 0; --n)
          text.push_back(static_cast<char>(rng.uniform(0, 255)));
        break;
      case 1:  // random tokens
        for (auto n = rng.uniform(0, 16); n > 0; --n)
          text += tokens[static_cast<std::size_t>(rng.uniform(0, std::ssize(tokens) - 1))];
        break;
      default: {  // a good rule with a few bytes changed, dropped or added
        text = seeds[static_cast<std::size_t>(rng.uniform(0, std::ssize(seeds) - 1))];
        for (auto n = rng.uniform(1, 3); n > 0; --n) {
          const auto at = static_cast<std::size_t>(rng.uniform(0, std::ssize(text)));
          const auto byte = static_cast<char>(rng.uniform(0, 255));
          switch (rng.uniform(0, 2)) {
            case 0:
              if (at < text.size()) text[at] = byte;
              break;
            case 1:
              if (at < text.size()) text.erase(at, 1);
              break;
            default:
              text.insert(at, 1, byte);
          }
        }
      }
    }
    RouteParseResult result;
    ASSERT_NO_THROW(result = parse_route_rule(text));
    if (result) {
      ++parsed;
      EXPECT_TRUE(result.error.empty());
      for (const auto& c : result.rule->provider_filter)
        for (const auto& v : c.values)
          (void)v.glob.matches(text);  // compiled globs are usable on any text
    } else {
      ++rejected;
      EXPECT_GE(result.column, 1u) << text;
      EXPECT_LE(result.column, text.size() + 1) << text;
      EXPECT_TRUE(result.error.starts_with("column ")) << result.error;
    }
  }
  // The mix exercised both outcomes.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace cascade::agent
