// cascade_pick_bench: the cost of choosing an instance (agent/lb), per policy,
// with Google Benchmark.
//
//   BM_Pick/<policy>             one pick over 100 candidates (the hot path;
//                                target: <= 200 ns for every policy)
//   BM_PickRetry/<policy>        a pick that excludes the address already tried
//   BM_PickWithFeedback/<policy> pick + on_call_started + on_call_finished, the
//                                whole per-call cost a learning policy adds
//   BM_SetCandidates/<policy>    rebuilding after a list version change
//
// Candidates look like a production list: host:port addresses in a /16, ids,
// a zone, a few metadata entries, weights 50..150. Learning policies start
// from a warm state (calls in flight, latency averages), so they do not pick
// over all-equal numbers. Randomness is seeded: runs are comparable.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cascade/agent/lb/load_balancer.hpp"

namespace cascade::agent {
namespace {

constexpr int kCandidates = 100;

std::vector<proto::Instance> realistic_candidates(int n) {
  std::vector<proto::Instance> list;
  list.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    proto::Instance in;
    in.id = "orders-" + std::to_string(i);
    in.address = "10.20." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + ":8080";
    in.weight = static_cast<std::uint32_t>(50 + (i * 37) % 101);
    in.zone = i % 3 == 0 ? "dc1-a" : "dc1-b";
    in.metadata = {{"version", "2024.06.1"}, {"protocol", "http"}, {"role", "primary"}};
    list.push_back(std::move(in));
  }
  return list;
}

// A balancer with the candidates and, for the learning policies, a history:
// a few calls in flight and latency averages from 1 to 20 ms.
std::unique_ptr<LoadBalancer> warm_balancer(LbPolicy policy) {
  auto lb = make_load_balancer(policy);
  lb->set_candidates(realistic_candidates(kCandidates));
  Rng rng(11);
  for (int call = 0; call < 20 * kCandidates; ++call) {
    const auto& address = lb->candidates()[static_cast<std::size_t>(call % kCandidates)].address;
    lb->on_call_started(address);
    lb->on_call_finished(address, std::chrono::microseconds{rng.uniform(1'000, 20'000)}, true);
  }
  for (int i = 0; i < kCandidates; i += 3)
    lb->on_call_started(lb->candidates()[static_cast<std::size_t>(i)].address);
  return lb;
}

void BM_Pick(benchmark::State& state, LbPolicy policy) {
  auto lb = warm_balancer(policy);
  Rng rng(1);
  PickContext ctx;
  for (auto _ : state) {
    ++ctx.hash_key;  // a new request key each time (consistent_hash)
    benchmark::DoNotOptimize(lb->pick(ctx, rng));
  }
}

void BM_PickRetry(benchmark::State& state, LbPolicy policy) {
  auto lb = warm_balancer(policy);
  Rng rng(1);
  const std::vector<std::string> tried{lb->candidates()[17].address};
  PickContext ctx;
  ctx.exclude = &tried;
  for (auto _ : state) {
    ++ctx.hash_key;
    benchmark::DoNotOptimize(lb->pick(ctx, rng));
  }
}

void BM_PickWithFeedback(benchmark::State& state, LbPolicy policy) {
  auto lb = warm_balancer(policy);
  Rng rng(1);
  PickContext ctx;
  for (auto _ : state) {
    ++ctx.hash_key;
    const auto i = lb->pick(ctx, rng);
    const auto& address = lb->candidates()[*i].address;
    lb->on_call_started(address);
    lb->on_call_finished(address, std::chrono::microseconds{5'000}, true);
  }
}

void BM_SetCandidates(benchmark::State& state, LbPolicy policy) {
  auto lb = warm_balancer(policy);
  const auto list = realistic_candidates(kCandidates);
  for (auto _ : state) {
    auto copy = list;  // the Client hands over a freshly filtered list
    lb->set_candidates(std::move(copy));
  }
}

const bool registered = [] {
  for (std::size_t i = 0; i < kLbPolicyCount; ++i) {
    const auto policy = static_cast<LbPolicy>(i);
    const std::string name(to_string(policy));
    benchmark::RegisterBenchmark(("BM_Pick/" + name).c_str(), BM_Pick, policy);
    benchmark::RegisterBenchmark(("BM_PickRetry/" + name).c_str(), BM_PickRetry, policy);
    benchmark::RegisterBenchmark(("BM_PickWithFeedback/" + name).c_str(), BM_PickWithFeedback,
                                 policy);
    benchmark::RegisterBenchmark(("BM_SetCandidates/" + name).c_str(), BM_SetCandidates, policy);
  }
  return true;
}();

}  // namespace
}  // namespace cascade::agent

BENCHMARK_MAIN();
