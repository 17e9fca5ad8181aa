// An agent's inline hub list (sim/agent_hubs.hpp): places and hubs both
// ways, and the limits it refuses instead of truncating.

#include "cascade/sim/agent_hubs.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace cascade::sim {
namespace {

TEST(SimAgentHubs, EachHubIsFoundAtItsPlaceInFailoverOrder) {
  const std::vector<std::size_t> hubs{12, 3, 40'000};
  const AgentHubs list(hubs);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list.front(), 12u);
  for (std::size_t place = 0; place < hubs.size(); ++place) {
    EXPECT_EQ(list.at(place), hubs[place]);
    EXPECT_EQ(list.place_of(hubs[place]), place);
  }
  EXPECT_FALSE(list.place_of(4)) << "not one of its hubs";
  EXPECT_THROW(list.at(3), std::out_of_range);
}

TEST(SimAgentHubs, TooManyHubsOrAHubIndexBeyondTheListAreRefused) {
  const std::vector<std::size_t> eight(AgentHubs::kMaxHubs + 1, 1);
  EXPECT_THROW(AgentHubs{eight}, std::invalid_argument);
  const std::vector<std::size_t> far{AgentHubs::kMaxHubIndex + 1};
  EXPECT_THROW(AgentHubs{far}, std::invalid_argument);
  const std::vector<std::size_t> seven(AgentHubs::kMaxHubs, AgentHubs::kMaxHubIndex);
  EXPECT_EQ(AgentHubs{seven}.size(), AgentHubs::kMaxHubs);
}

}  // namespace
}  // namespace cascade::sim
