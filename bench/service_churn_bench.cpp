// cascade_service_churn_bench: a hub that sees millions of distinct service
// names over its life keeps its memory and its store flat
// (docs/benchmarks.md, "Service churn").
//
// One HubCore with its SQLite store (the real one, in a temporary
// directory), on a virtual clock, in this process. --agents providers beat in
// turn, every beat interval (2 s); each beat's set names a new service, so
// the service of its previous beat loses its last instance. Every 20 ms of
// virtual time the hub ticks and its batch is committed, as the server does.
// Entries that stayed empty and unfollowed for --grace-ms are freed with
// their rows (Registry::reclaim); with --no-reclaim the grace is a day, and
// the entries pile up as they did before reclaiming existed.
//
// Every --sample names it prints the process's resident set, the live
// service entries and the store's file size. Checks: the live entries never
// exceed what the grace explains, and the store holds no row of a freed
// service at the end. The target (memory flat) is judged on the resident
// set from the first sample to the last.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/common/digest.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/sqlite_store.hpp"

namespace {

using namespace cascade;

constexpr Duration kBeatInterval{2000};
constexpr Duration kFlushInterval{20};
// Memory is flat when the resident set grows by at most this share between
// the first sample and the last.
constexpr double kFlatGrowth = 0.10;

constexpr const char* kUsage = R"(cascade_service_churn_bench [options]
  --names N       distinct service names registered over the run (default 10000000)
  --agents N      providers; each names a new service on every beat (default 1000)
  --grace-ms N    the hub's empty-service grace (default 1000)
  --sample N      a line every N names (default 1000000)
  --no-reclaim    a grace of a day: freed entries stay (the growth reclaiming prevents)
  --no-store      without SQLite (the registry alone)
  --quick         200,000 names, a line every 50,000
)";

struct Options {
  std::size_t names = 10'000'000;
  std::size_t agents = 1000;
  Duration grace{1000};
  std::size_t sample = 1'000'000;
  bool reclaim = true;
  bool store = true;
};

Options parse_options(int argc, char** argv) {
  return bench::parse_flags<Options>(argc, argv, kUsage, [](bench::Flags& f, Options& o) {
    f.first("--quick", [&o] {
      o.names = 200'000;
      o.sample = 50'000;
    });
    f.add({{"--names", &o.names},
           {"--agents", &o.agents},
           {"--grace-ms", &o.grace, bench::kZeroOk},
           {"--sample", &o.sample},
           {"--no-reclaim", &o.reclaim},
           {"--no-store", &o.store}});
  });
}

// Production-shaped names: a 40-odd-byte service, a UUID-shaped instance id.
std::string service_name(std::size_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "team-payments.orders-api.canary-%010zu", n);
  return buf;
}
std::string instance_id(std::size_t n) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "4f1c2a7e-9b3d-4e6f-a%03zu-%012zu", n % 1000, n);
  return buf;
}

proto::UpBeat beat_naming(std::size_t agent, std::uint64_t seq, std::size_t name) {
  proto::Registration reg;
  reg.service = {service_name(name), std::string(proto::kDefaultGroup)};
  reg.instance.id = instance_id(name);
  reg.instance.address =
      "10.1." + std::to_string(agent / 250) + "." + std::to_string(agent % 250) + ":8080";
  reg.instance.metadata = {{"version", "2.14.1"}, {"zone", "dc1-a"}};
  proto::UpBeat beat;
  beat.node_id = "n" + std::to_string(10'000'000 + agent);  // 8 bytes
  beat.epoch = 1;
  beat.seq = seq;
  std::vector<proto::Registration> set{std::move(reg)};
  proto::canonicalize(set);
  beat.digest = proto::digest_of(set);
  beat.registrations = std::move(set);
  return beat;
}

struct Sample {
  std::size_t names = 0;
  std::uint64_t rss_kib = 0;
  std::size_t services = 0;
};

class Churn {
 public:
  explicit Churn(const Options& o)
      : o_(o), dir_("cascade-churn"), hub_(config(o), epoch(o), clock_.now()) {}

  int run() {
    std::printf("%12s %12s %12s %14s %12s\n", "names", "VmRSS_MiB", "live", "reclaimed",
                "store_MiB");
    const auto started = std::chrono::steady_clock::now();
    const Duration step = kBeatInterval / static_cast<Duration::rep>(o_.agents);
    MonoTime next_flush = clock_.now() + kFlushInterval;
    for (std::size_t name = 1; name <= o_.names; ++name) {
      const std::size_t agent = name % o_.agents;
      hub_.handle(clock_.now(), beat_naming(agent, name, name));
      clock_.advance(step.count() > 0 ? step : Duration{1});
      if (clock_.now() >= next_flush) {
        flush();
        next_flush = clock_.now() + kFlushInterval;
      }
      most_live_ = std::max(most_live_, hub_.registry().service_count());
      if (name % o_.sample == 0) print(sample(name));
    }
    flush();
    return report(bench::seconds_since(started));
  }

 private:
  static hub::HubCoreConfig config(const Options& o) {
    hub::HubCoreConfig c;
    c.lease = kBeatInterval * 3;
    c.empty_service_ttl = o.reclaim ? o.grace : Duration{86'400'000};
    c.max_registrations_per_node = 10;
    return c;
  }
  // Opens the store (before hub_ is built: it needs the stored epoch).
  std::uint64_t epoch(const Options& o) {
    if (!o.store) return 1;
    store_ = hub::SqliteHubStore::open(dir_.path(), sqlite::Synchronous::kNormal);
    return store_->next_epoch();
  }

  void flush() {
    hub_.tick(clock_.now());
    hub_.take_node_messages();
    auto batch = hub_.take_persist_batch();
    if (store_) store_->apply(batch);
  }

  Sample sample(std::size_t names) const {
    return {names, bench::rss_kib(getpid()), hub_.registry().service_count()};
  }
  void print(const Sample& s) {
    samples_.push_back(s);
    std::printf("%12zu %12.1f %12zu %14llu %12.1f\n", s.names,
                static_cast<double>(s.rss_kib) / 1024.0, s.services,
                static_cast<unsigned long long>(hub_.counters().services_reclaimed), store_mib());
    std::fflush(stdout);
  }
  double store_mib() const {
    if (!store_) return 0;
    std::uintmax_t bytes = 0;
    for (const auto& file : std::filesystem::directory_iterator(dir_.path()))
      if (file.is_regular_file()) bytes += file.file_size();
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
  }

  int report(double seconds) {
    // Entries a grace explains: the names of the beats within one grace
    // (and one flush), each agent's current one, and the ones a tick's cap
    // or a change list kept for one more grace.
    const auto per_grace =
        static_cast<std::size_t>((o_.grace + kFlushInterval * 2).count() *
                                 static_cast<Duration::rep>(o_.agents) / kBeatInterval.count());
    const std::size_t bound = o_.agents + 2 * per_grace;
    bool ok = true;
    std::printf("\n%zu names in %.1f s (%.0f names/s); most live entries %zu", o_.names, seconds,
                static_cast<double>(o_.names) / seconds, most_live_);
    if (o_.reclaim) {
      std::printf(" (bound %zu)\n", bound);
      if (most_live_ > bound) {
        std::printf("CHECK FAILED: more live entries than the grace explains\n");
        ok = false;
      }
    } else {
      std::printf(" (nothing reclaimed)\n");
    }
    if (store_) ok = check_store() && ok;
    if (samples_.size() >= 2) {
      const double first = static_cast<double>(samples_.front().rss_kib);
      const double growth = static_cast<double>(samples_.back().rss_kib) / first - 1.0;
      std::printf(
          "VmRSS from the first sample to the last: %+.1f%% (target: flat, <= %+.0f%%): %s\n",
          growth * 100, kFlatGrowth * 100,
          growth <= kFlatGrowth ? "ok" : (o_.reclaim ? "MISS" : "grows, as expected"));
    }
    std::printf("%s; load average at end: %s\n", ok ? "checks passed" : "checks FAILED",
                bench::load_average().c_str());
    return ok ? 0 : 1;
  }

  // Rows of the store equal the live entries that have a version.
  bool check_store() {
    const auto rows = store_->load().services.size();
    std::size_t versioned = 0;
    hub_.registry().for_each_service([&](const hub::ServiceEntry& svc) {
      if (svc.version != 0) ++versioned;
    });
    std::printf("store: %zu service rows for %zu live versioned entries\n", rows, versioned);
    if (rows == versioned) return true;
    std::printf("CHECK FAILED: the store's service rows and the hub's entries differ\n");
    return false;
  }

  const Options o_;
  bench::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<hub::SqliteHubStore> store_;
  hub::HubCore hub_;
  std::size_t most_live_ = 0;
  std::vector<Sample> samples_;
};

int run(const Options& o) {
  std::printf("service churn: %zu names, %zu agents, grace %lld ms%s%s\n", o.names, o.agents,
              static_cast<long long>(o.grace.count()), o.reclaim ? "" : ", reclaiming off",
              o.store ? ", SQLite store" : ", no store");
  Churn churn(o);
  return churn.run();
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_service_churn_bench",
                                             "churn-bench", parse_options, run);
}
