#include "cascade/common/msgpack_blob.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cascade/tests/common/vm_peak.hpp"

namespace cascade {
namespace {

// array32 claiming 2^32-1 items, map32 claiming as many entries: five bytes each.
const std::string kHugeArrayClaim("\xdd\xff\xff\xff\xff", 5);
const std::string kHugeMapClaim("\xdf\xff\xff\xff\xff", 5);

TEST(MsgpackBlob, RoundTripsAMetadataMap) {
  using Metadata = std::map<std::string, std::string>;
  const Metadata metadata{{"role", "reader"}, {"rack", "r7"}};
  EXPECT_EQ(unpack_blob<Metadata>(pack_blob(metadata)), metadata);
}

TEST(MsgpackBlob, TrailingBytesAreRefused) {
  EXPECT_FALSE(unpack_blob<std::vector<int>>(pack_blob(std::vector<int>{1, 2}) + "x"));
}

// Seven nested arrays each claiming 4 Mi - 1 items: 35 bytes that would make
// the parser reserve 7 x 64 MiB (16 bytes per claimed item) before reading an
// item, were the claims not bounded by the blob's size. A fresh process, so
// earlier tests do not hide the peak.
TEST(MsgpackBlob, CountsClaimedBeyondTheBlobsSizeReserveNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string blob;
        for (int i = 0; i < 7; ++i)
          blob += std::string("\xdd\x00\x3f\xff\xff", 5);
        const auto before = test_support::vm_peak_kib();
        const auto refused = !unpack_blob<std::vector<std::vector<int>>>(blob);
        const auto grown_mib = (test_support::vm_peak_kib() - before) / 1024;
        std::exit(refused && grown_mib < 16 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_FALSE(unpack_blob<std::vector<int>>(kHugeArrayClaim));
  EXPECT_FALSE((unpack_blob<std::map<std::string, std::string>>(kHugeMapClaim)));
}

TEST(MsgpackBlob, NestingDeeperThanTheLimitIsRefused) {
  const std::string nested(40, '\x91');  // [[[[...]]]] forty deep, never closed
  EXPECT_FALSE(unpack_blob<std::vector<int>>(nested + '\x90'));
}

}  // namespace
}  // namespace cascade
