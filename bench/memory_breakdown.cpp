// cascade_memory_breakdown: where a registered instance's bytes go in a hub
// (docs/benchmarks.md, "Where an instance's bytes go").
//
// In this process, no sockets and no store: --instances nodes (one instance
// each, bench::Fleet's production-shaped names: 8-byte node ids, UUID
// instance ids, 30-60-byte service names over --services services, ~20-byte
// addresses, two metadata pairs) register with one full-set beat each into
// a HubCore, as they do over the wire. The heap in use (mallinfo2) before
// and after, divided by the instances, is the cost of each variant:
//   realistic          the shapes above;
//   no metadata        the same without the two metadata pairs;
//   short ids          8-byte instance ids (inside std::string's inline buffer);
//   registry alone     the same instances upserted into a bare Registry (no
//                      nodes, leases, node index or owned lists).
// The differences attribute the bytes: the metadata, the id's three heap
// copies, and the node side (realistic minus registry alone). sizeof of the
// registry's records is printed beside them. The real binary's figure
// (cascade_hub_bench [4], with SQLite's page cache and ZeroMQ) is in
// docs/benchmarks.md.

#include <malloc.h>

#include <cstdio>
#include <functional>
#include <string>

#include "cascade/bench/beat_fleet.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/registry.hpp"

namespace {

using namespace cascade;

constexpr const char* kUsage = R"(cascade_memory_breakdown [options]
  --instances N   instances registered per variant, one node each (default 1000000)
  --services N    services they are spread over (default 1000)
  --quick         20,000 instances
  --max-bytes N   fail (exit 1) when a realistic HubCore instance takes more than
                  N bytes (default 0: not judged)
)";

struct Options {
  std::size_t instances = 1'000'000;
  std::size_t services = 1000;
  std::size_t max_bytes = 0;
};

Options parse_options(int argc, char** argv) {
  return bench::parse_flags<Options>(argc, argv, kUsage, [](bench::Flags& f, Options& o) {
    f.first("--quick", [&o] { o.instances = 20'000; });
    f.add({{"--instances", &o.instances},
           {"--services", &o.services},
           {"--max-bytes", &o.max_bytes}});
  });
}

// Allocated from the heap and from mmap (large blocks: the node index's
// slots, bucket arrays), whichever malloc's moving threshold chose.
std::size_t heap_in_use() {
  malloc_trim(0);
  const auto info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// How a variant changes the fleet's registrations.
using Shape = std::function<void(proto::Registration&)>;

// Heap bytes per instance of a HubCore holding `n` registered nodes.
double hub_core_bytes(const Options& o, const Shape& shape) {
  bench::Fleet fleet(o.instances, o.services, 0, /*realistic=*/true);
  const auto before = heap_in_use();
  FakeClock clock;
  {
    hub::HubCore hub(hub::HubCoreConfig{}, 1, clock.now());
    for (std::size_t i = 0; i < o.instances; ++i) {
      auto beat = fleet.registration_beat(i);
      for (auto& reg : *beat.registrations)
        shape(reg);
      beat.digest = proto::digest_of(*beat.registrations);
      hub.handle(clock.now(), beat);
      if (i % 4096 == 0) hub.take_persist_batch();  // as the server's flushes do
    }
    hub.take_persist_batch();
    const auto after = heap_in_use();
    return static_cast<double>(after - before) / static_cast<double>(o.instances);
  }
}

// Heap bytes per instance of a bare Registry holding the same instances.
double registry_bytes(const Options& o) {
  bench::Fleet fleet(o.instances, o.services, 0, /*realistic=*/true);
  const auto before = heap_in_use();
  hub::Registry registry(1, hub::HubCoreConfig{}.change_log_per_service);
  for (std::size_t i = 0; i < o.instances; ++i) {
    const auto reg = fleet.registration(i);
    registry.begin_txn();
    registry.upsert(registry.service(reg.service), reg.instance, fleet.node_id(i));
    if (i % 4096 == 0) {
      registry.take_dirty_instances();
      registry.take_dirty_services();
      registry.take_served_changes();
    }
  }
  registry.take_dirty_instances();
  registry.take_dirty_services();
  registry.take_served_changes();
  const auto after = heap_in_use();
  return static_cast<double>(after - before) / static_cast<double>(o.instances);
}

int run(const Options& o) {
  std::printf(
      "cascade_memory_breakdown: %zu instances (one node each) over %zu services, "
      "realistic names; heap in use (mallinfo2) per instance\n\n",
      o.instances, o.services);
  const double realistic = hub_core_bytes(o, [](proto::Registration&) {});
  const double no_metadata =
      hub_core_bytes(o, [](proto::Registration& r) { r.instance.metadata.clear(); });
  const double short_ids = hub_core_bytes(o, [](proto::Registration& r) {
    r.instance.id = r.instance.id.substr(r.instance.id.size() - 8);
  });
  const double registry = registry_bytes(o);
  std::printf("%-48s %10s\n", "variant", "B/instance");
  std::printf("%-48s %10.0f\n", "HubCore, realistic", realistic);
  std::printf("%-48s %10.0f\n", "HubCore, no metadata", no_metadata);
  std::printf("%-48s %10.0f\n", "HubCore, 8-byte instance ids", short_ids);
  std::printf("%-48s %10.0f\n", "Registry alone, realistic", registry);
  std::printf("\nattributed (differences):\n");
  std::printf("%-48s %10.0f\n", "two metadata pairs (an interned set each)",
              realistic - no_metadata);
  std::printf("%-48s %10.0f\n", "a 36-byte id's heap copies (over an 8-byte one)",
              realistic - short_ids);
  std::printf("%-48s %10.0f\n", "node side (Node, nodes_, index, lease, owned)",
              realistic - registry);
  std::printf("%-48s %10.0f\n", "registry side (entry, instance map, change log)", registry);
  std::printf(
      "\nsizeof: InstanceEntry %zu, proto::Instance %zu, Claim %zu, Verdict %zu, "
      "ChangeRecord %zu, ServiceEntry %zu, std::string %zu\n",
      sizeof(hub::InstanceEntry), sizeof(proto::Instance), sizeof(hub::Claim), sizeof(hub::Verdict),
      sizeof(hub::ChangeRecord), sizeof(hub::ServiceEntry), sizeof(std::string));
  if (o.max_bytes != 0 && realistic > static_cast<double>(o.max_bytes)) {
    std::printf("\nFAIL: %.0f B per realistic instance, over the bound of %zu\n", realistic,
                o.max_bytes);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_memory_breakdown",
                                             "memory-breakdown", parse_options, run);
}
