// The authorised-keys file: every line kind it accepts, and every mistake
// named with its file and line.
#include "cascade/hub/authorized_keys.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cascade/common/curve_keys.hpp"

namespace cascade::hub {
namespace {

using ::testing::HasSubstr;

const std::string kKeyA = curve::generate_key_pair().public_z85;
const std::string kKeyB = curve::generate_key_pair().public_z85;

std::shared_ptr<const AuthorizedKeys> parsed(const std::string& text) {
  auto result = AuthorizedKeys::parse(text, "keys.txt");
  if (auto* error = std::get_if<std::string>(&result)) ADD_FAILURE() << *error;
  return std::get<std::shared_ptr<const AuthorizedKeys>>(result);
}

std::string error_of(const std::string& text) {
  auto result = AuthorizedKeys::parse(text, "keys.txt");
  auto* error = std::get_if<std::string>(&result);
  return error ? *error : "parsed";
}

TEST(AuthorizedKeys, LineGivesNameRoleAndScopes) {
  const auto keys = parsed("# hubs and agents\n\n" + kKeyA +
                           " orders-1 agent register=orders,orders-* query=pay?\n");
  ASSERT_EQ(keys->size(), 1u);
  const auto* p = keys->find(kKeyA);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "orders-1");
  EXPECT_EQ(p->role, access::Role::kAgent);
  EXPECT_EQ(p->register_scope.globs(), (std::vector<std::string>{"orders", "orders-*"}));
  EXPECT_TRUE(p->query_scope.allows("pay1"));
  EXPECT_FALSE(p->query_scope.allows("pay12"));
  EXPECT_EQ(keys->find(kKeyB), nullptr);
}

TEST(AuthorizedKeys, NoScopeMeansEveryService) {
  const auto keys = parsed(kKeyA + " ops operator\n");
  EXPECT_TRUE(keys->find(kKeyA)->register_scope.all());
  EXPECT_TRUE(keys->find(kKeyA)->query_scope.all());
}

TEST(AuthorizedKeys, RotationGivesOneNameTwoKeys) {
  const auto keys = parsed(kKeyA + " hub-b hub\n" + kKeyB + " hub-b hub\n");
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ(keys->find(kKeyA)->name, "hub-b");
  EXPECT_EQ(keys->find(kKeyB)->name, "hub-b");
}

TEST(AuthorizedKeys, ScopeOnARoleThatIgnoresItIsAccepted) {
  EXPECT_EQ(parsed(kKeyA + " watcher reader register=x\n")->size(), 1u);
}

TEST(AuthorizedKeys, EveryMistakeIsNamedWithItsLine) {
  const std::string ok = kKeyA + " a agent\n";
  EXPECT_THAT(error_of(ok + "abc b agent\n"), HasSubstr("keys.txt:2: bad key 'abc'"));
  EXPECT_THAT(error_of(ok + "\"" + kKeyB.substr(1) + " b agent\n"),
              HasSubstr("keys.txt:2: bad key"));
  EXPECT_THAT(error_of("# c\n" + kKeyB + " b admin\n"),
              HasSubstr("keys.txt:2: unknown role 'admin'"));
  EXPECT_THAT(error_of(ok + kKeyB + " b agent color=red\n"),
              HasSubstr("keys.txt:2: unknown field 'color=red'"));
  EXPECT_THAT(error_of(ok + kKeyB + " b agent register\n"),
              HasSubstr("keys.txt:2: unknown field 'register'"));
  EXPECT_THAT(error_of(ok + kKeyB + " b agent query=a query=b\n"),
              HasSubstr("keys.txt:2: query= given twice"));
  EXPECT_THAT(error_of(ok + kKeyB + " b agent register=a,,b\n"),
              HasSubstr("keys.txt:2: register= needs one or more globs"));
  EXPECT_THAT(error_of(ok + "\n" + kKeyA + " other agent\n"),
              HasSubstr("keys.txt:3: duplicate key (already given for 'a')"));
  EXPECT_THAT(error_of(ok + kKeyB + " lonely\n"),
              HasSubstr("keys.txt:2: expected PUBLIC_KEY NAME ROLE"));
}

TEST(AuthorizedKeys, MissingFileIsAnError) {
  auto result = AuthorizedKeys::load("/nonexistent/cascade-keys");
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_THAT(std::get<std::string>(result), HasSubstr("cannot read authorised keys file"));
}

}  // namespace
}  // namespace cascade::hub
