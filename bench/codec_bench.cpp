// cascade_codec_bench: the cost of the wire codec (common/codec.hpp) on the
// messages a hub handles most, with Google Benchmark.
//
//   BM_DecodeBeatBatch   a batch frame of 64 steady-state agent beats (what a
//                        busy hub decodes per frame; items/s = beats/s)
//   BM_DecodeRegistrationBatch
//                        64 first beats of a registration wave, each carrying
//                        its agent's one instance (UUID id, 30-60-byte
//                        service, 2 metadata pairs: the 1M bench's names)
//   BM_EncodeReplyBatch  the 64 down beats answering it
//   BM_DecodeFullList    a down beat carrying a full list of 100 instances
//   BM_EncodeFullList    encoding that down beat
//
// The messages look like production ones: ids and addresses of realistic
// length, three metadata entries per instance.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cascade/common/codec.hpp"

namespace cascade::proto {
namespace {

constexpr int kBatch = 64;

UpBeat steady_beat(int i) {
  UpBeat beat;
  beat.node_id = "node-" + std::to_string(100000 + i);
  beat.epoch = 1764601200123;
  beat.seq = 4000 + static_cast<std::uint64_t>(i);
  beat.digest = 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(i);
  beat.uses = {{{"orders", "default"}, 17}, {{"payments", "default"}, 9}};
  return beat;
}

// An agent's first beat: its whole set, one instance named as in the hub
// bench's --realistic-names.
UpBeat registering_beat(int i) {
  UpBeat beat = steady_beat(i);
  beat.uses.clear();
  Registration reg;
  reg.service.name = "com.example.platform.orders-service-" + std::to_string(i % 1000);
  reg.instance.id = "6f1c2e4a-0b7d-4c1e-9a3f-" + std::to_string(100000000000 + i);
  reg.instance.address =
      "10.20." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ":8080";
  reg.instance.zone = "dc1-a";
  reg.instance.metadata = {{"version", "2024.06.1"}, {"protocol", "http"}};
  beat.registrations = std::vector<Registration>{std::move(reg)};
  return beat;
}

DownBeat reply_to(const UpBeat& beat) {
  DownBeat down;
  down.hub_id = "hub-dc1-a";
  down.hub_epoch = 1764600000000;
  down.node_id = beat.node_id;
  down.ack_seq = beat.seq;
  down.lease_ms = 6000;
  return down;
}

DownBeat full_list(int instances) {
  DownBeat down = reply_to(steady_beat(0));
  ServiceUpdate update;
  update.service = {"orders", "default"};
  update.version = 18;
  update.kind = UpdateKind::kFull;
  for (int i = 0; i < instances; ++i) {
    Instance in;
    in.id = "orders-" + std::to_string(i) + "-6f1c2e4a";
    in.address = "10.20." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + ":8080";
    in.zone = "dc1-a";
    in.metadata = {{"version", "2024.06.1"}, {"protocol", "http"}, {"role", "primary"}};
    update.upserts.push_back(std::move(in));
  }
  update.routes = std::vector<RouteRuleText>{};
  down.updates.push_back(std::move(update));
  return down;
}

std::vector<Message> beat_batch() {
  std::vector<Message> beats;
  for (int i = 0; i < kBatch; ++i)
    beats.emplace_back(steady_beat(i));
  return beats;
}

void BM_DecodeBeatBatch(benchmark::State& state) {
  const auto frame = encode_batch(beat_batch());
  for (auto _ : state)
    benchmark::DoNotOptimize(decode_frame(frame));
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(frame.size()));
}
BENCHMARK(BM_DecodeBeatBatch);

void BM_DecodeRegistrationBatch(benchmark::State& state) {
  std::vector<Message> beats;
  for (int i = 0; i < kBatch; ++i)
    beats.emplace_back(registering_beat(i));
  const auto frame = encode_batch(beats);
  for (auto _ : state)
    benchmark::DoNotOptimize(decode_frame(frame));
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(frame.size()));
}
BENCHMARK(BM_DecodeRegistrationBatch);

void BM_EncodeReplyBatch(benchmark::State& state) {
  std::vector<Message> replies;
  for (const auto& beat : beat_batch())
    replies.emplace_back(reply_to(std::get<UpBeat>(beat)));
  for (auto _ : state)
    benchmark::DoNotOptimize(encode_batch(replies));
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_EncodeReplyBatch);

void BM_DecodeFullList(benchmark::State& state) {
  const auto frame = encode(full_list(100));
  for (auto _ : state)
    benchmark::DoNotOptimize(decode_frame(frame));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(frame.size()));
}
BENCHMARK(BM_DecodeFullList);

void BM_EncodeFullList(benchmark::State& state) {
  const Message message = full_list(100);
  std::string out;
  for (auto _ : state) {
    out.clear();
    encode_into(message, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(out.size()));
}
BENCHMARK(BM_EncodeFullList);

}  // namespace
}  // namespace cascade::proto

BENCHMARK_MAIN();
