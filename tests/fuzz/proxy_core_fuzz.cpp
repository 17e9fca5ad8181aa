// Fuzz target: a ProxyCore (hub/proxy_core.cpp) fed a session of frames
// (fuzz_support.hpp): messages from downstream peers and reply frames from
// the hub above, in any order and any shape.
// STEP byte: bit 0 says the frame is a reply from upstream (else a message
// from downstream peer bits 1-2; peers 0 and 1 send without a key, peer 2
// with a scoped agent's key, peer 3 with a proxy's), bits 3-7 advance the clock by that many
// times 10 ms (batches go out after 20 ms, replies time out after 200 ms).
// Properties: nothing throws; every batch, report and downstream message the
// proxy emits decodes again to equal messages; no batch exceeds max_batch;
// replies go only to peers that sent something; what waits stays bounded by
// what was forwarded.

#include <array>
#include <set>

#include "cascade/hub/proxy_core.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

constexpr Duration kStepUnit{10};
const std::array<const access::Principal, 2> kKeys{
    access::Principal{"agent-2", access::Role::kAgent, access::ServiceScope({"svc-?", "hm*"}),
                      access::ServiceScope({"*cache*"})},
    access::Principal{"proxy-3", access::Role::kProxy, {}, {}}};

hub::ProxyCoreConfig config() {
  hub::ProxyCoreConfig c;
  c.max_batch = 3;
  c.max_delay = Duration{20};
  c.reply_timeout = Duration{200};
  return c;
}

class ProxySession {
 public:
  void step(const SessionStep& s) {
    now_ += kStepUnit * (s.step >> 3);
    check(proxy_.on_timer(now_));
    auto messages = messages_of(proto::decode_frame(s.frame));
    if (s.step & 1) {
      check(proxy_.on_upstream_reply(now_, std::move(messages)));
    } else {
      const hub::PeerToken peer = (s.step >> 1) & 3;
      peers_.insert(peer);
      for (auto& message : messages)
        check(proxy_.accept(now_, peer, std::move(message), peer < 2 ? nullptr : &kKeys[peer - 2]));
    }
    const auto& counters = proxy_.counters();
    CASCADE_FUZZ_CHECK(proxy_.pending_count() < proxy_.config().max_batch);
    CASCADE_FUZZ_CHECK(proxy_.pending_count() + proxy_.in_flight_count() <= counters.forwarded);
  }

 private:
  void check(const hub::ProxyActions& actions) {
    for (const auto& batch : actions.upstream_batches) {
      CASCADE_FUZZ_CHECK(!batch.empty() && batch.size() <= proxy_.config().max_batch);
      check_batch_round_trip(batch);
    }
    for (const auto& message : actions.upstream_now)
      check_round_trip(message);
    for (const auto& out : actions.downstream) {
      CASCADE_FUZZ_CHECK(peers_.contains(out.peer));
      check_round_trip(out.message);
    }
  }

  MonoTime now_ = mono_from_ms(1'000'000);
  hub::ProxyCore proxy_{config()};
  std::set<hub::PeerToken> peers_;
};

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cascade::fuzz::run_session<cascade::fuzz::ProxySession>(data, size);
}
