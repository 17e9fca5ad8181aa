#include "cascade/sim/network.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace cascade::sim {
namespace {

const MonoTime kStart = mono_from_ms(1000);

struct Delivery {
  MonoTime at;
  Address from;
  Address to;
  proto::Message message;
};

class SimNetworkTest : public ::testing::Test {
 protected:
  Network make(NetworkConfig config) {
    return Network(config, /*seed=*/9, events,
                   [this](Address from, Address to, const proto::Message& m) {
                     delivered.push_back({events.now(), from, to, m});
                   });
  }
  static proto::UpBeat beat(std::uint64_t seq) {
    proto::UpBeat b;
    b.node_id = "node-1";
    b.epoch = 3;
    b.seq = seq;
    return b;
  }
  EventQueue events{kStart};
  std::vector<Delivery> delivered;
};

TEST_F(SimNetworkTest, DeliversWhatWasSentThroughTheCodec) {
  Network net = make({0.0, Duration{5}, Duration{5}});
  proto::UpBeat b = beat(1);
  proto::Registration reg;
  reg.service.name = "svc";
  reg.instance.id = "i1";
  reg.instance.address = "10.0.0.1:80";
  reg.instance.metadata["k"] = "v";
  b.registrations = std::vector<proto::Registration>{reg};
  net.send(1, 0, b);
  events.run_until(kStart + Duration{100});
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].at, kStart + Duration{5});
  EXPECT_EQ(delivered[0].from, 1u);
  EXPECT_EQ(delivered[0].to, 0u);
  EXPECT_EQ(delivered[0].message, proto::Message{b});
  EXPECT_EQ(net.stats().bytes, proto::encode(b).size());
  EXPECT_EQ(net.stats().decode_failures, 0u);
}

TEST_F(SimNetworkTest, DelaysStayWithinTheConfiguredRangeAndVary) {
  Network net = make({0.0, Duration{1}, Duration{50}});
  for (std::uint64_t i = 1; i <= 500; ++i)
    net.send(1, 0, beat(i));
  events.run_until(kStart + Duration{1000});
  ASSERT_EQ(delivered.size(), 500u);
  std::set<std::int64_t> delays;
  for (const auto& d : delivered) {
    const auto delay = (d.at - kStart).count();
    EXPECT_GE(delay, 1);
    EXPECT_LE(delay, 50);
    delays.insert(delay);
  }
  EXPECT_GT(delays.size(), 40u);
}

TEST_F(SimNetworkTest, DropsAboutTheConfiguredShare) {
  Network net = make({0.05, Duration{1}, Duration{50}});
  for (std::uint64_t i = 1; i <= 10'000; ++i)
    net.send(1, 0, beat(i));
  events.run_until(kStart + Duration{1000});
  EXPECT_GT(net.stats().dropped, 400u);
  EXPECT_LT(net.stats().dropped, 600u);
  EXPECT_EQ(net.stats().dropped + delivered.size(), 10'000u);
}

TEST_F(SimNetworkTest, ACutLinkLosesEverythingInItsDirectionUntilHealed) {
  Network net = make({0.0, Duration{1}, Duration{1}});
  net.cut(1, 0);
  net.send(1, 0, beat(1));
  net.send(0, 1, beat(2));
  net.heal(1, 0);
  net.send(1, 0, beat(3));
  events.run_until(kStart + Duration{10});
  ASSERT_EQ(delivered.size(), 2u);
  EXPECT_EQ(std::get<proto::UpBeat>(delivered[0].message).seq, 2u);
  EXPECT_EQ(std::get<proto::UpBeat>(delivered[1].message).seq, 3u);
  EXPECT_EQ(net.stats().cut, 1u);
}

TEST_F(SimNetworkTest, AFaultScriptChoosesLossAndDelayForItsMessages) {
  Network net = make({0.0, Duration{1}, Duration{1}});
  net.set_fault_script([](Address, Address, const proto::Message& m) {
    Network::Fault fault;
    const auto seq = std::get<proto::UpBeat>(m).seq;
    fault.lose = seq == 1;
    if (seq == 2) fault.delay = Duration{30};
    return fault;
  });
  net.send(1, 0, beat(1));
  net.send(1, 0, beat(2));
  net.send(1, 0, beat(3));
  events.run_until(kStart + Duration{100});
  ASSERT_EQ(delivered.size(), 2u);
  EXPECT_EQ(std::get<proto::UpBeat>(delivered[0].message).seq, 3u);  // overtaken
  EXPECT_EQ(delivered[1].at, kStart + Duration{30});
}

// Lock step (TieredWorld): a message for the other partition waits in the
// outbox until handed over, then arrives there when its delay says.
TEST_F(SimNetworkTest, AMessageToARemoteAddressCrossesThroughTheOutbox) {
  Network net = make({0.0, Duration{7}, Duration{7}});
  EventQueue other_events{kStart};
  std::vector<Delivery> other_delivered;
  Network other(NetworkConfig{0.0, Duration{7}, Duration{7}}, /*seed=*/10, other_events,
                [&](Address from, Address to, const proto::Message& m) {
                  other_delivered.push_back({other_events.now(), from, to, m});
                });
  net.set_remote([](Address to) { return to >= 100; });
  net.send(1, 100, beat(1));
  net.send(1, 2, beat(2));  // local
  ASSERT_EQ(net.outbox().size(), 1u);
  EXPECT_EQ(net.outbox()[0].arrival, kStart + Duration{7});
  EXPECT_EQ(net.outbox()[0].to, 100u);
  other.accept(net.outbox()[0]);
  net.clear_outbox();
  EXPECT_TRUE(net.outbox().empty());

  events.run_until(kStart + Duration{50});
  other_events.run_until(kStart + Duration{50});
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(std::get<proto::UpBeat>(delivered[0].message).seq, 2u);
  ASSERT_EQ(other_delivered.size(), 1u);
  EXPECT_EQ(other_delivered[0].at, kStart + Duration{7});
  EXPECT_EQ(other_delivered[0].from, 1u);
  EXPECT_EQ(other_delivered[0].message, proto::Message{beat(1)});
  EXPECT_EQ(net.stats().sent, 2u) << "the sender counts (and traces) what crossed";
}

TEST_F(SimNetworkTest, AMessageCannotCrossWithinTheMillisecondItWasSentIn) {
  Network net = make({0.0, Duration{1}, Duration{1}});
  net.set_remote([](Address) { return true; });
  net.set_fault_script([](Address, Address, const proto::Message&) {
    return Network::Fault{false, Duration{0}};
  });
  EXPECT_THROW(net.send(1, 100, beat(1)), std::logic_error);
}

}  // namespace
}  // namespace cascade::sim
