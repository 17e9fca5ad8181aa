// Fuzz target: a tiered HubCore (hub/hub_core*.cpp) fed a session of frames
// (fuzz_support.hpp) on a virtual clock, the way HubServer feeds it.
// STEP byte: bits 0-1 pick where the frame comes from (three downstream
// sources, or upstream 0 of the hub's uplink; the first source sends without
// a key, the second with a proxy's key, the third with a scoped agent's key,
// so the authorisation paths are walked too), bits 2-7 advance the clock by
// that many times 50 ms before it arrives (leases are 1 s, so they run out).
// Properties: nothing throws; every reply, push, deferred reply and message
// for the upstream decodes again to an equal message; batch replies decode as
// a batch of the same size; a failure report the hub passes on has crossed
// one hub more than it came with, and fewer than max_report_hops.

#include <array>
#include <string_view>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

// The node id the golden samples' upstream DownBeats are addressed to.
constexpr std::string_view kHubId = "hub-eu1-a";
constexpr std::array<std::string_view, 3> kSources{"", "proxy-1", "rack-2"};
const std::array<const access::Principal, 2> kKeys{
    access::Principal{"proxy-1", access::Role::kProxy, access::ServiceScope({"*"}), {}},
    access::Principal{"rack-2", access::Role::kAgent, access::ServiceScope({"svc-?", "hm*"}),
                      access::ServiceScope({"*cache*"})}};
constexpr std::size_t kFromUpstream = 3;
constexpr Duration kStepUnit{50};

hub::HubCoreConfig config() {
  hub::HubCoreConfig c;
  c.hub_id = std::string(kHubId);
  c.tier = 1;
  c.lease = Duration{1000};
  c.change_log_per_service = 4;
  c.max_registrations_per_node = 64;
  hub::UplinkConfig up;
  up.endpoints = {"tcp://l2-a:7400", "tcp://l2-b:7400"};
  up.beat_interval = Duration{500};
  c.uplink = up;
  return c;
}

class HubSession {
 public:
  HubSession() : hub_(config(), /*hub_epoch=*/7, now_) {}

  void step(const SessionStep& s) {
    now_ += kStepUnit * (s.step >> 2);
    hub_.tick(now_);
    const auto frame = proto::decode_frame(s.frame);
    if ((s.step & 3) == kFromUpstream)
      for (const auto& message : messages_of(frame))
        hub_.on_upstream_message(now_, 0, message);
    else
      handle(frame, s.step & 3);
    drain();
  }

 private:
  // As HubServer::handle: prefetch a batch, then handle each item in order.
  void handle(const proto::DecodedFrame& frame, std::size_t from) {
    const hub::Peer peer{kSources[from], from == 0 ? nullptr : &kKeys[from - 1], "192.0.2.1"};
    for (const auto& item : frame.items)
      if (const auto* message = std::get_if<proto::Message>(&item)) hub_.prefetch(*message);
    std::vector<proto::Message> replies;
    for (const auto& item : frame.items) {
      if (const auto* failure = std::get_if<proto::DecodeFailure>(&item)) {
        replies.emplace_back(hub_.on_decode_failure(*failure));
        continue;
      }
      auto result = hub_.handle(now_, std::get<proto::Message>(item), peer);
      if (result.deferred == 0 && !result.no_reply) replies.push_back(std::move(result.reply));
    }
    for (const auto& reply : replies)
      check_round_trip(reply);
    if (frame.batched) check_batch_round_trip(replies);
  }

  // Everything the hub has to send besides replies, and its persist batch.
  void drain() {
    for (const auto& out : hub_.take_upstream_messages())
      check_sent(out.message);
    for (const auto& deferred : hub_.take_deferred_replies())
      check_round_trip(deferred.reply);
    for (const auto& out : hub_.take_node_messages())
      check_sent(out.message);
    (void)hub_.take_persist_batch();
  }

  void check_sent(const proto::Message& message) {
    check_round_trip(message);
    if (const auto* report = std::get_if<proto::FailureReport>(&message))
      CASCADE_FUZZ_CHECK(report->hops >= 1 && report->hops < hub_.config().max_report_hops,
                         std::to_string(report->hops));
  }

  MonoTime now_ = mono_from_ms(1'000'000);
  hub::HubCore hub_;
};

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cascade::fuzz::run_session<cascade::fuzz::HubSession>(data, size);
}
