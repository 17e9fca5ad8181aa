// The config centre's operator side in the hub core: config_edit and
// config_rollback as AdminRequests (checked, carried out, audited, durable),
// and the reads cascadectl and the HTTP API make (ConfigRequest).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cascade/common/access.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using testing::beat;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr Duration kLease{6000};

proto::AdminRequest config_edit(const std::string& group, std::vector<proto::ConfigEdit> edits) {
  proto::AdminRequest r;
  r.request_id = 5;
  r.op = proto::AdminOp::kConfigEdit;
  r.actor = "alice@ops-1";
  r.service = proto::ServiceKey{"", ""};
  r.config_group = group;
  r.config_edits = std::move(edits);
  return r;
}

proto::AdminRequest config_rollback(const std::string& group, std::uint64_t version) {
  auto r = config_edit(group, {});
  r.op = proto::AdminOp::kConfigRollback;
  r.config_version = version;
  return r;
}

class ConfigAdminTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubCore hub{HubCoreConfig{"hub-a", 2, kLease}, /*epoch=*/3, clock.now()};

  proto::AdminReply admin(const proto::AdminRequest& request, const Peer& peer = {}) {
    auto r = hub.handle(clock.now(), request, peer);
    EXPECT_TRUE(r.durable) << "an operator's reply waits for the commit";
    auto* reply = std::get_if<proto::AdminReply>(&r.reply);
    return reply ? *reply : proto::AdminReply{0, false, "not an AdminReply"};
  }
  proto::ConfigReply read(proto::ConfigView view, const std::string& group = "",
                          const std::string& key = "") {
    auto r = hub.handle(clock.now(), proto::ConfigRequest{11, view, group, key});
    auto* reply = std::get_if<proto::ConfigReply>(&r.reply);
    EXPECT_NE(reply, nullptr);
    return reply ? *reply : proto::ConfigReply{};
  }
  std::uint64_t version_of(const std::string& group) {
    return read(proto::ConfigView::kGet, group).version;
  }
};

TEST_F(ConfigAdminTest, AnEditSetsAndRemovesKeysTogetherAndSaysWhatChanged) {
  ASSERT_TRUE(admin(config_edit("orders", {{"timeout_ms", "300"}, {"retries", "2"}})).ok);
  const auto reply = admin(config_edit("orders", {{"timeout_ms", "250"}, {"retries", {}}}));
  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.request_id, 5u);
  EXPECT_THAT(reply.message, HasSubstr("set timeout_ms"));
  EXPECT_THAT(reply.message, HasSubstr("removed retries"));
  EXPECT_THAT(reply.message, HasSubstr(std::to_string(version_of("orders"))));

  const auto got = read(proto::ConfigView::kGet, "orders");
  ASSERT_TRUE(got.ok);
  ASSERT_EQ(got.entries.size(), 1u);
  EXPECT_EQ(got.entries[0].key, "timeout_ms");
  EXPECT_EQ(got.entries[0].value, "250");
  EXPECT_EQ(got.entries[0].origin, (proto::ConfigOrigin{2, "hub-a", got.version}));
}

TEST_F(ConfigAdminTest, AnEditThatChangesNothingIsAcceptedAndKeepsTheVersion) {
  ASSERT_TRUE(admin(config_edit("orders", {{"timeout_ms", "300"}})).ok);
  const auto before = version_of("orders");
  const auto reply = admin(config_edit("orders", {{"timeout_ms", "300"}}));
  EXPECT_TRUE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("nothing changed"));
  EXPECT_EQ(version_of("orders"), before);
}

TEST_F(ConfigAdminTest, AnEditPastALimitIsRefusedWholeAndAudited) {
  const std::string too_big(proto::kMaxConfigValueBytes + 1, 'x');
  const auto reply = admin(config_edit("orders", {{"ok", "1"}, {"blob", too_big}}));
  EXPECT_FALSE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("group orders"));
  EXPECT_FALSE(read(proto::ConfigView::kGet, "orders").ok) << "nothing of a refused edit applies";
  const auto batch = hub.take_persist_batch();
  ASSERT_EQ(batch.audit.size(), 1u);
  EXPECT_EQ(batch.audit[0].op, "config_edit");
  EXPECT_FALSE(batch.audit[0].ok);
}

TEST_F(ConfigAdminTest, ARequestWithoutGroupOrKeysIsRefusedBeforeItReachesTheGroups) {
  EXPECT_THAT(admin(config_edit("", {{"k", "v"}})).message, HasSubstr("config group"));
  EXPECT_THAT(admin(config_edit("orders", {})).message, HasSubstr("names no key"));
  EXPECT_THAT(admin(config_rollback("orders", 0)).message, HasSubstr("version to go back to"));
}

TEST_F(ConfigAdminTest, RollbackPutsTheKeysBackAsANewVersionAndHistoryListsEveryChange) {
  ASSERT_TRUE(admin(config_edit("orders", {{"timeout_ms", "300"}})).ok);
  const auto first = version_of("orders");
  ASSERT_TRUE(admin(config_edit("orders", {{"timeout_ms", "900"}, {"debug", "on"}})).ok);
  const auto reply = admin(config_rollback("orders", first));
  ASSERT_TRUE(reply.ok) << reply.message;
  EXPECT_THAT(reply.message, HasSubstr("rolled back to version " + std::to_string(first)));
  const auto got = read(proto::ConfigView::kGet, "orders");
  ASSERT_EQ(got.entries.size(), 1u);
  EXPECT_EQ(got.entries[0].value, "300");
  EXPECT_GT(got.version, first);

  const auto history = read(proto::ConfigView::kHistory, "orders").history;
  ASSERT_EQ(history.size(), 5u);  // newest first: the rollback's two, the edit's two, the first
  EXPECT_EQ(history.front().version, got.version);
  EXPECT_EQ(history.back().version, first);
  EXPECT_EQ(history.back().old_value, std::nullopt);
  EXPECT_EQ(history.back().new_value, "300");
  EXPECT_EQ(history.back().author, "alice@ops-1");
}

TEST_F(ConfigAdminTest, ReadsAnswerOneKeyTheListAndSayWhatIsMissing) {
  ASSERT_TRUE(admin(config_edit("orders", {{"a", "1"}, {"b", std::string("\0\xff", 2)}})).ok);
  ASSERT_TRUE(admin(config_edit("billing", {{"c", "3"}})).ok);
  const auto one = read(proto::ConfigView::kGet, "orders", "b");
  ASSERT_TRUE(one.ok);
  ASSERT_EQ(one.entries.size(), 1u);
  EXPECT_EQ(one.entries[0].value, std::string("\0\xff", 2));
  EXPECT_THAT(read(proto::ConfigView::kGet, "orders", "zz").message, HasSubstr("no key zz"));
  EXPECT_THAT(read(proto::ConfigView::kGet, "payments").message, HasSubstr("no group payments"));

  auto b = beat("n1", 1, 0);
  b.configs = {{"orders", 0}};
  hub.handle(clock.now(), b);
  const auto list = read(proto::ConfigView::kList).groups;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].group, "billing");
  EXPECT_EQ(list[1].group, "orders");
  EXPECT_EQ(list[1].keys, 2u);
  EXPECT_EQ(list[1].own_keys, 2u);
  EXPECT_EQ(list[1].bytes, 5u);  // a=1, b=\0\xff
  EXPECT_EQ(list[1].followers, 1u);
}

TEST_F(ConfigAdminTest, OnlyAnOperatorKeyMayEditButAnyKeyMayRead) {
  const access::Principal agent{"svc-a", access::Role::kAgent, {}, {}};
  auto r = hub.handle(clock.now(), config_edit("orders", {{"k", "v"}}), Peer{"", &agent});
  const auto* error = std::get_if<proto::ErrorReply>(&r.reply);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, proto::ErrorCode::kForbidden);
  EXPECT_FALSE(read(proto::ConfigView::kGet, "orders").ok);

  const access::Principal ops{"ops", access::Role::kOperator, {}, {}};
  EXPECT_TRUE(admin(config_edit("orders", {{"k", "v"}}), Peer{"", &ops}).ok);
  auto got = hub.handle(clock.now(), proto::ConfigRequest{1, proto::ConfigView::kGet, "orders", ""},
                        Peer{"", &agent});
  EXPECT_TRUE(std::get<proto::ConfigReply>(got.reply).ok);
}

}  // namespace
}  // namespace cascade::hub
