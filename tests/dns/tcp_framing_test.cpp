// DNS over TCP's two-octet length prefixes, in both directions.
#include "cascade/agent/dns/tcp_framing.hpp"

#include <gtest/gtest.h>

namespace cascade::agent::dns {
namespace {

using Bytes = std::vector<std::uint8_t>;

TEST(DnsTcpFramingTest, MessagesSplitAcrossReadsComeOutWhole) {
  TcpFraming framing;
  const Bytes stream = {0, 3, 'a', 'b', 'c', 0, 2, 'd', 'e', 0};
  framing.received({stream.data(), 4});
  EXPECT_FALSE(framing.next_message());
  framing.received({stream.data() + 4, stream.size() - 4});
  EXPECT_EQ(framing.next_message(), (Bytes{'a', 'b', 'c'}));
  EXPECT_EQ(framing.next_message(), (Bytes{'d', 'e'}));
  EXPECT_FALSE(framing.next_message()) << "half a length prefix waits for the rest";
  EXPECT_EQ(framing.buffered(), 1u);
}

TEST(DnsTcpFramingTest, ZeroLengthMessageComesOutEmpty) {
  TcpFraming framing;
  const Bytes stream = {0, 0};
  framing.received(stream);
  EXPECT_EQ(framing.next_message(), Bytes{});
}

TEST(DnsTcpFramingTest, QueuedRepliesGoOutWithTheirLengthsInOrder) {
  TcpFraming framing;
  const Bytes big(300, 'x');
  framing.queue(Bytes{'h', 'i'});
  framing.queue(big);
  auto unsent = framing.unsent();
  ASSERT_EQ(unsent.size(), 2u + 2u + 2u + 300u);
  EXPECT_EQ(unsent[0], 0);
  EXPECT_EQ(unsent[1], 2);
  EXPECT_EQ(unsent[4], 1);  // 300 = 0x012C
  EXPECT_EQ(unsent[5], 0x2C);
  framing.sent(5);
  EXPECT_EQ(framing.unsent().size(), 301u);
  framing.sent(301);
  EXPECT_TRUE(framing.unsent().empty());
}

}  // namespace
}  // namespace cascade::agent::dns
