#include "cascade/common/msgpack_blob.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

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

// The parser would reserve memory for every claimed item before reading one:
// the blob's size bounds the claim, so it is refused before any reservation.
TEST(MsgpackBlob, CountsClaimedBeyondTheBlobsSizeAreRefusedBeforeAnyReservation) {
  std::size_t offset = 0;
  EXPECT_THROW(msgpack::unpack(kHugeArrayClaim.data(), kHugeArrayClaim.size(), offset, nullptr,
                               nullptr, blob_limits(kHugeArrayClaim.size())),
               msgpack::array_size_overflow);
  offset = 0;
  EXPECT_THROW(msgpack::unpack(kHugeMapClaim.data(), kHugeMapClaim.size(), offset, nullptr, nullptr,
                               blob_limits(kHugeMapClaim.size())),
               msgpack::map_size_overflow);
  EXPECT_FALSE(unpack_blob<std::vector<int>>(kHugeArrayClaim));
  EXPECT_FALSE((unpack_blob<std::map<std::string, std::string>>(kHugeMapClaim)));
}

TEST(MsgpackBlob, NestingDeeperThanTheLimitIsRefused) {
  const std::string nested(40, '\x91');  // [[[[...]]]] forty deep, never closed
  EXPECT_FALSE(unpack_blob<std::vector<int>>(nested + '\x90'));
}

}  // namespace
}  // namespace cascade
