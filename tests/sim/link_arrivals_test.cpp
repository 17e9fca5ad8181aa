#include "cascade/sim/link_arrivals.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "cascade/common/random.hpp"

namespace cascade::sim {
namespace {

const MonoTime kStart = mono_from_ms(1000);
constexpr Address kHubA = Address{1} << 31;
constexpr Address kHubB = kHubA + 1;
constexpr Address kHubC = kHubA + 2;

TEST(SimLinkArrivalsTest, AMessageNeverArrivesBeforeTheOneSentBeforeItOnItsLink) {
  LinkArrivals links;
  EXPECT_EQ(links.arrival(7, kHubA, kStart, Duration{40}), kStart + Duration{40});
  // Sent later with a shorter delay: waits for the first.
  EXPECT_EQ(links.arrival(7, kHubA, kStart + Duration{5}, Duration{1}), kStart + Duration{40});
  EXPECT_EQ(links.arrival(kHubA, kHubB, kStart, Duration{30}), kStart + Duration{30});
  EXPECT_EQ(links.arrival(kHubA, kHubB, kStart, Duration{2}), kStart + Duration{30});
}

TEST(SimLinkArrivalsTest, TheTwoDirectionsAndOtherLinksDoNotWaitForEachOther) {
  LinkArrivals links;
  links.arrival(7, kHubA, kStart, Duration{40});
  EXPECT_EQ(links.arrival(kHubA, 7, kStart, Duration{3}), kStart + Duration{3});
  EXPECT_EQ(links.arrival(7, kHubB, kStart, Duration{4}), kStart + Duration{4});
  EXPECT_EQ(links.arrival(8, kHubA, kStart, Duration{5}), kStart + Duration{5});
  EXPECT_EQ(links.arrival(kHubB, kHubA, kStart, Duration{6}), kStart + Duration{6});
}

TEST(SimLinkArrivalsTest, AnArrivalThatPassedConstrainsNothing) {
  LinkArrivals links;
  links.arrival(7, kHubA, kStart, Duration{40});
  links.arrival(kHubA, kHubB, kStart, Duration{40});
  const MonoTime later = kStart + Duration{5000};  // past a prune of the map too
  EXPECT_EQ(links.arrival(7, kHubA, later, Duration{2}), later + Duration{2});
  EXPECT_EQ(links.arrival(kHubA, kHubB, later, Duration{2}), later + Duration{2});
}

// Agents with more peers than a slot holds, hubs among themselves, address 0
// (World's hub) and both directions: the same arrivals as one map by link.
TEST(SimLinkArrivalsTest, ArrivalsMatchAReferenceMapOnRandomSends) {
  const std::vector<Address> hubs{0, kHubA, kHubB, kHubC};
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed);
    LinkArrivals links;
    std::map<std::pair<Address, Address>, MonoTime> reference;
    MonoTime now = kStart;
    for (int i = 0; i < 5000; ++i) {
      now += Duration{rng.uniform(0, 20)};
      const Address hub = hubs[rng.uniform(0, static_cast<std::int64_t>(hubs.size()) - 1)];
      const Address other = rng.unit() < 0.2
                                ? hubs[rng.uniform(0, static_cast<std::int64_t>(hubs.size()) - 1)]
                                : static_cast<Address>(rng.uniform(1, 6));
      const bool up = rng.unit() < 0.5;
      const Address from = up ? other : hub;
      const Address to = up ? hub : other;
      const Duration delay{rng.uniform(1, 50)};
      MonoTime& last = reference[{from, to}];
      last = std::max(last, now + delay);
      ASSERT_EQ(links.arrival(from, to, now, delay), last)
          << "seed " << seed << ", send " << i << ": " << from << " -> " << to;
    }
  }
}

}  // namespace
}  // namespace cascade::sim
