// The agent's journal of registrations made through its HTTP API, against
// real files: what is put is there after a reopen, replaced by key, removed.

#include "cascade/agent/api/registration_journal.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::agent::api {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Entry = RegistrationJournal::Entry;

class RegistrationJournalTest : public ::testing::Test {
 protected:
  std::unique_ptr<RegistrationJournal> open() const { return RegistrationJournal::open(dir()); }
  std::filesystem::path dir() const { return tmp_.path() / "agent-data"; }
  store_test::TempDir tmp_;
};

TEST_F(RegistrationJournalTest, EntriesSurviveAReopenAndAreReplacedByKey) {
  const Entry native{RegistrationJournal::native_key("orders", "default", "o-1"), "PUT",
                     "/api/v1/instances", R"({"service":"orders","id":"o-1"})"};
  const Entry consul{RegistrationJournal::consul_key("billing-1"), "PUT",
                     "/v1/agent/service/register", R"({"ID":"billing-1","Name":"billing"})"};
  {
    auto journal = open();
    EXPECT_THAT(journal->entries(), IsEmpty());
    journal->put(native);
    journal->put(consul);
    journal->put({consul.key, "PUT", consul.path, R"({"ID":"billing-1","Name":"billing2"})"});
  }
  EXPECT_TRUE(std::filesystem::exists(dir() / "agent-api.db"));
  auto journal = open();
  const Entry replaced{consul.key, "PUT", consul.path, R"({"ID":"billing-1","Name":"billing2"})"};
  EXPECT_THAT(journal->entries(), ElementsAre(replaced, native));
  journal->remove(consul.key);
  journal->remove("consul never-there");
  EXPECT_THAT(open()->entries(), ElementsAre(native));
}

TEST_F(RegistrationJournalTest, KeysTellServicesGroupsAndApisApart) {
  EXPECT_EQ(RegistrationJournal::native_key("orders", "blue", "o-1"), "native orders@blue o-1");
  EXPECT_NE(RegistrationJournal::native_key("orders", "blue", "o-1"),
            RegistrationJournal::native_key("orders", "green", "o-1"));
  EXPECT_EQ(RegistrationJournal::consul_key("o-1"), "consul o-1");
}

}  // namespace
}  // namespace cascade::agent::api
