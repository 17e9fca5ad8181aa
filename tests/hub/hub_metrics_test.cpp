// cascade-hub's metrics on a real HubServer (and a proxy): counted as the
// events happen on the owning thread, the state sampled there at each scrape,
// every status counter shown, and the text accepted by Prometheus's promtool.

#include "cascade/hub/hub_metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cascade/hub/proxy_server.hpp"
#include "cascade/tests/hub/hub_server_fixture.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/metrics/promtool.hpp"
#include "cascade/tests/metrics/samples.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using metrics::testing::sample_value;
using ::testing::IsEmpty;

constexpr const char* kPromtool = PROMTOOL_PATH;
constexpr const char* kUnreachableUpstream = "tcp://127.0.0.1:1";

// The registry outlives the server: it is built before the fixture's base.
struct WithRegistry {
  metrics::Registry registry;

  // The text once the owning thread finished the pass that answered the
  // test: a client gets its answer before the server counts the send. A
  // first scrape takes its sample through the owner's mailbox, which runs
  // only between passes.
  std::string settled_text() {
    registry.render();
    return registry.render();
  }
};

class HubMetricsTest : protected WithRegistry, public HubServerTest {
 protected:
  explicit HubMetricsTest(HubConfig config = default_config()) : HubServerTest(config, &registry) {}

  double value(const std::string& series) {
    return sample_value(settled_text(), series).value_or(-1);
  }
};

TEST_F(HubMetricsTest, BeatsQueriesAndGarbageAreCountedWhereTheyHappen) {
  const auto regs = std::vector{reg("orders", "o1", "10.0.0.1:80")};
  ASSERT_TRUE(request(beat_with_set("n1", 1, regs)));
  ASSERT_TRUE(request(beat("n1", 2, digest(regs))));
  ASSERT_TRUE(request(proto::Query{9, "n1", {"orders", "default"}}));
  client.send(zmq::str_buffer("\xc1 not msgpack"), zmq::send_flags::none);
  ASSERT_TRUE(receive());

  const auto text = settled_text();
  const auto at = [&text](const std::string& series) {
    return sample_value(text, series).value_or(-1);
  };
  EXPECT_EQ(at("cascade_hub_beats_total"), 2) << text;
  EXPECT_EQ(at("cascade_hub_frames_received_total"), 4);
  EXPECT_EQ(at("cascade_hub_frames_sent_total"), 4);
  EXPECT_GT(at("cascade_hub_sent_bytes_total"), 0);
  EXPECT_EQ(at("cascade_hub_frame_handling_seconds_count"), 4);
  EXPECT_EQ(at(R"(cascade_hub_replies_total{type="DownBeat"})"), 2);
  EXPECT_EQ(at(R"(cascade_hub_replies_total{type="QueryReply"})"), 1);
  EXPECT_EQ(at(R"(cascade_hub_replies_total{type="Error"})"), 1);
  EXPECT_EQ(at(R"(cascade_hub_decode_errors_total{kind="malformed"})"), 1);
  EXPECT_EQ(at(R"(cascade_hub_registration_sets_total{kind="full"})"), 1);
  EXPECT_EQ(at(R"(cascade_hub_nodes{kind="agent"})"), 1);
  EXPECT_EQ(at("cascade_hub_services"), 1);
  EXPECT_EQ(at("cascade_hub_instances"), 1);
  EXPECT_EQ(at(R"(cascade_hub_instances_in_state{state="up"})"), 1);
  // The registration's ack waited for its commit: node, instance, version.
  EXPECT_GE(at("cascade_hub_store_commit_seconds_count"), 1);
  EXPECT_GE(at("cascade_hub_store_commit_rows_sum"), 3);
}

TEST_F(HubMetricsTest, AFailedCommitIsCounted) {
  store.failing = true;
  EXPECT_FALSE(
      request(beat_with_set("n1", 1, {reg("orders", "o1", "10.0.0.1:80")}), Duration{200}));
  EXPECT_GE(value("cascade_hub_store_commit_failures_total"), 1);
}

class TieredHubMetricsTest : public HubMetricsTest {
 protected:
  static HubConfig tiered() {
    auto config = default_config();
    config.upstreams = {kUnreachableUpstream};
    config.zone = "dc1";
    return config;
  }
  TieredHubMetricsTest() : HubMetricsTest(tiered()) {}
};

TEST_F(TieredHubMetricsTest, EveryStatusCounterIsAMetricAndEveryMetricKeyIsInTheStatus) {
  auto reply = request(proto::StatusRequest{1});
  ASSERT_TRUE(reply);
  const auto& status = std::get<proto::StatusReply>(*reply);
  metrics::SampledFamilies families([] { return std::nullopt; });
  add_hub_state_families(families, {kUnreachableUpstream});

  EXPECT_THAT(unshown_status_counters(families, status), IsEmpty())
      << "give each new status counter a family in hub/hub_metrics.cpp";
  const auto sample = sample_of(status);
  for (const auto& key : families.keys()) {
    if (key == "upstream.0.last_reply_age_seconds" || key == "upstream.0.lease_seconds")
      continue;  // known once the upstream answered
    EXPECT_TRUE(sample.contains(key)) << "no status value for the family key " << key;
  }
}

TEST_F(TieredHubMetricsTest, TheWholeTextPassesPromtool) {
  ASSERT_TRUE(std::filesystem::exists(kPromtool))
      << kPromtool << " is missing: run tools/setup.sh (Debian's prometheus package)";
  ASSERT_TRUE(request(beat_with_set("n1", 1, {reg("orders", "o1", "10.0.0.1:80")})));
  const auto text = registry.render();
  EXPECT_THAT(text,
              ::testing::HasSubstr(R"(cascade_hub_info{hub_id="hub-1",tier="1",zone="dc1",)"));
  EXPECT_EQ(sample_value(text, R"(cascade_hub_upstream_reachable{upstream="tcp://127.0.0.1:1"})"),
            0);
  store_test::TempDir dir;
  const auto check = ::cascade::testing::promtool_check(kPromtool, text, dir.path());
  EXPECT_EQ(check.exit_code, 0) << check.output << "\non:\n" << text;
  EXPECT_EQ(check.output, "");
}

// A proxy in front of the fixture's hub, with its metrics.
class ProxyMetricsTest : protected WithRegistry, public HubServerTest {
 protected:
  ProxyMetricsTest() {
    ProxyServerConfig config;
    config.listen = "tcp://127.0.0.1:*";
    config.upstream = endpoint;
    proxy = std::make_unique<ProxyServer>(config, clock, context);
    proxy->enable_metrics(proxy_registry);
    const auto proxy_endpoint = proxy->bind();
    proxy_thread = std::thread([this] { proxy->run(proxy_stop); });
    agent.set(zmq::sockopt::linger, 0);
    agent.connect(proxy_endpoint);
  }
  ~ProxyMetricsTest() override {
    proxy_stop = true;
    proxy_thread.join();
  }

  metrics::Registry proxy_registry;
  std::unique_ptr<ProxyServer> proxy;
  std::atomic<bool> proxy_stop{false};
  std::thread proxy_thread;
  zmq::socket_t agent{context, zmq::socket_type::dealer};
};

TEST_F(ProxyMetricsTest, AProxyCountsWhatItForwardsAndWhatComesBack) {
  const auto bytes = proto::encode(proto::Message{proto::Query{3, "n1", {"orders", "default"}}});
  agent.send(zmq::buffer(bytes), zmq::send_flags::none);
  zmq::pollitem_t item{agent.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(2000));
  ASSERT_TRUE(item.revents & ZMQ_POLLIN) << "no answer through the proxy";

  proxy_registry.render();  // after the proxy's pass (see settled_text)
  const auto text = proxy_registry.render();
  EXPECT_EQ(sample_value(text, "cascade_proxy_messages_forwarded_total"), 1) << text;
  EXPECT_EQ(sample_value(text, "cascade_proxy_batches_total"), 1);
  EXPECT_EQ(sample_value(text, "cascade_proxy_frames_received_total"), 1);
  EXPECT_EQ(sample_value(text, R"(cascade_proxy_replies_total{type="QueryReply"})"), 1);
  store_test::TempDir dir;
  const auto check = ::cascade::testing::promtool_check(kPromtool, text, dir.path());
  EXPECT_EQ(check.exit_code, 0) << check.output << "\non:\n" << text;
}

}  // namespace
}  // namespace cascade::hub
