// cascade_codec_bench: the cost of the wire codec (common/codec.hpp) on the
// messages a hub handles most, with Google Benchmark.
//
//   BM_DecodeBeatBatch   a batch frame of 64 steady-state agent beats (what a
//                        busy hub decodes per frame; items/s = beats/s)
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
