#pragma once
// The integration fixture: starts the real cascade-hub, cascade-agent and
// cascadectl binaries in a per-test directory and kills whatever is left in
// TearDown. When a test fails, the output of every process it started is
// printed, and the directory is kept (always kept with CASCADE_IT_KEEP=1).
//
// Timing: hubs and agents run with short intervals (kBeat, kLease) so a test
// takes a second or two. Waits poll a condition up to a deadline; the
// deadlines are generous (a loaded 2-core CI machine), the asserted bounds
// are the product's promises plus a stated scheduling margin.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cascade/tests/common/refusing_port.hpp"
#include "cascade/tests/integration/hub_probe.hpp"
#include "cascade/tests/integration/process.hpp"

namespace cascade::integration {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

inline constexpr Millis kBeat{200};   // hub --beat-interval-ms and agent --beat-interval-ms
inline constexpr Millis kLease{600};  // hub --lease-ms: three beats
// Upper bound for anything that should happen "at once" or "soon" (process
// start-up, a registration reaching the hub). Only a deadline: passing tests
// never wait this long.
inline constexpr Millis kPatience{10'000};

// Polls `condition` every `interval` until it holds or `timeout` passes; one
// last check at the deadline. True when it held.
bool poll_until(const std::function<bool()>& condition, Millis timeout,
                Millis interval = Millis{10});

// Checks `condition` every `interval` for `duration`; false as soon as it
// does not hold. For "stays registered" promises, which need time to pass.
bool holds_for(const std::function<bool()>& condition, Millis duration,
               Millis interval = Millis{10});

Millis elapsed_since(SteadyClock::time_point start);

struct HubOptions {
  std::string id = "hub-1";
  std::string listen = "tcp://127.0.0.1:*";
  std::filesystem::path data{};  // empty: a fresh directory in the test's dir
  Millis beat = kBeat;
  Millis lease = kLease;
  // Liveness probes of held agents (--probe-held): off unless a test asks.
  // Tests register made-up addresses such as 10.0.0.1:8080, and a test must
  // never send a packet anywhere but loopback; a test that turns probes on
  // registers loopback addresses only.
  bool probe_held = false;
  std::vector<std::string> extra{};  // more flags
};

struct RunningHub {
  Process* process = nullptr;
  std::string endpoint;  // as written to DATA/hub.endpoint
  std::filesystem::path data;
};

struct CtlResult {
  ExitStatus status;
  std::string out;
  std::string err;
};

class ClusterTest : public ::testing::Test {
 protected:
  ClusterTest();
  void TearDown() override;

  const std::filesystem::path& dir() const { return dir_.path(); }
  // A fresh, not yet existing path in the test's directory.
  std::filesystem::path fresh_path(const std::string& name);

  // Starts any binary; `name` names its log files.
  Process& spawn(const std::string& program, std::vector<std::string> args,
                 const std::string& name);
  Process& spawn_hub(const HubOptions& options);
  // Starts a hub and waits until it has written its endpoint. Fails the
  // test (fatally) if the hub exits or takes longer than kPatience.
  RunningHub start_hub(const HubOptions& options = {});
  // cascade-agent with `args` after --beat-interval-ms kBeat.
  Process& start_agent(const std::string& name, std::vector<std::string> args);
  // An agent named and identified `id`, at `hub_endpoint`, that registers one
  // instance: `registration` as in --register ("orders=10.0.0.1:8080").
  Process& start_provider(const std::string& hub_endpoint, const std::string& id,
                          const std::string& registration);
  // Runs cascadectl to completion (fails the test if it hangs).
  CtlResult ctl(std::vector<std::string> args);

  // Waits until the process's stdout has a line containing `needle`; returns
  // the first such line.
  std::optional<std::string> wait_for_stdout_line(Process& process, const std::string& needle,
                                                  Millis timeout = kPatience);

 private:
  TempDir dir_;
  std::vector<std::unique_ptr<Process>> processes_;
  int spawned_ = 0;
};

// One query (waiting up to 1 s): true when the hub answered and `service`
// lists an instance at `address`.
bool is_listed(HubProbe& probe, const std::string& service, const std::string& address);
// Polls the hub until `service` lists an instance at `address` (each query
// waits up to 1 s); true when it did within `timeout`.
bool wait_until_listed(HubProbe& probe, const std::string& service, const std::string& address,
                       Millis timeout = kPatience);
// The same through a probe of its own, closed before returning.
bool wait_until_listed(const std::string& hub_endpoint, const std::string& service,
                       const std::string& address, Millis timeout = kPatience);

// The lines of `text` that contain `needle`.
std::vector<std::string> lines_containing(const std::string& text, const std::string& needle);

using test_support::RefusingPort;

// "tcp://127.0.0.1:41234" -> 41234.
int port_of(const std::string& endpoint);

}  // namespace cascade::integration
