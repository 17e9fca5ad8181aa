#include "cascade/tests/integration/cluster.hpp"

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace cascade::integration {

namespace {

// The last `max` bytes of a log, enough to diagnose a failure without flooding.
std::string tail(const std::string& text, std::size_t max = 6000) {
  if (text.size() <= max) return text;
  return "[... " + std::to_string(text.size() - max) + " bytes cut ...]\n" +
         text.substr(text.size() - max);
}

std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "cascade-it";
  return std::string("cascade-it-") + info->name();
}

}  // namespace

bool poll_until(const std::function<bool()>& condition, Millis timeout, Millis interval) {
  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (SteadyClock::now() >= deadline) return condition();
    std::this_thread::sleep_for(interval);
  }
}

bool holds_for(const std::function<bool()>& condition, Millis duration, Millis interval) {
  const auto end = SteadyClock::now() + duration;
  for (;;) {
    if (!condition()) return false;
    if (SteadyClock::now() >= end) return true;
    std::this_thread::sleep_for(interval);
  }
}

Millis elapsed_since(SteadyClock::time_point start) {
  return std::chrono::duration_cast<Millis>(SteadyClock::now() - start);
}

bool is_listed(HubProbe& probe, const std::string& service, const std::string& address) {
  const auto r = probe.query(service, 1s);
  return r && has_address(*r, address);
}

bool wait_until_listed(HubProbe& probe, const std::string& service, const std::string& address,
                       Millis timeout) {
  return poll_until([&] { return is_listed(probe, service, address); }, timeout);
}

bool wait_until_listed(const std::string& hub_endpoint, const std::string& service,
                       const std::string& address, Millis timeout) {
  HubProbe probe(hub_endpoint);
  return wait_until_listed(probe, service, address, timeout);
}

std::vector<std::string> lines_containing(const std::string& text, const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) found.push_back(line);
  return found;
}

ClusterTest::ClusterTest() : dir_(test_name()) {}

void ClusterTest::TearDown() {
  for (auto& p : processes_)
    p->kill_and_wait();
  if (!HasFailure() && std::getenv("CASCADE_IT_KEEP") != nullptr) {
    dir_.keep();
    std::cout << "test directory kept (CASCADE_IT_KEEP): " << dir_.path() << "\n";
  }
  if (HasFailure()) {
    dir_.keep();
    std::ostringstream report;
    report << "test directory kept: " << dir_.path() << "\n";
    for (const auto& p : processes_) {
      report << "---- " << p->command_line() << "\n     ended: " << p->exit_status()->describe()
             << "\n---- stdout (" << p->out_path().filename().string() << "):\n"
             << tail(p->out()) << "---- stderr (" << p->err_path().filename().string() << "):\n"
             << tail(p->err());
    }
    std::cout << report.str() << std::flush;
  }
  processes_.clear();
}

std::filesystem::path ClusterTest::fresh_path(const std::string& name) {
  return dir() / (name + "-" + std::to_string(++spawned_));
}

Process& ClusterTest::spawn(const std::string& program, std::vector<std::string> args,
                            const std::string& name) {
  processes_.push_back(std::make_unique<Process>(program, std::move(args), fresh_path(name)));
  return *processes_.back();
}

Process& ClusterTest::spawn_hub(const HubOptions& options) {
  HubOptions o = options;
  if (o.data.empty()) o.data = fresh_path(o.id + "-data");
  std::vector<std::string> args = {"--id",
                                   o.id,
                                   "--listen",
                                   o.listen,
                                   "--data",
                                   o.data.string(),
                                   "--beat-interval-ms",
                                   std::to_string(o.beat.count()),
                                   "--lease-ms",
                                   std::to_string(o.lease.count()),
                                   "--probe-held",
                                   o.probe_held ? "on" : "off"};
  args.insert(args.end(), o.extra.begin(), o.extra.end());
  return spawn(CASCADE_HUB_PATH, std::move(args), o.id);
}

RunningHub ClusterTest::start_hub(const HubOptions& options) {
  HubOptions o = options;
  if (o.data.empty()) o.data = fresh_path(o.id + "-data");
  const auto endpoint_file = o.data / "hub.endpoint";
  std::error_code ignored;
  std::filesystem::remove(endpoint_file, ignored);  // a restart must not read the old one
  RunningHub hub{&spawn_hub(o), {}, o.data};
  const bool up = poll_until(
      [&] {
        const auto text = read_file(endpoint_file);
        if (!text.empty() && text.back() == '\n') {
          hub.endpoint = text.substr(0, text.size() - 1);
          return true;
        }
        return !hub.process->running();
      },
      kPatience, Millis{5});
  if (!up || hub.endpoint.empty()) {
    ADD_FAILURE() << "hub " << o.id << " did not come up: "
                  << (hub.process->running() ? "no endpoint file after 10 s"
                                             : hub.process->exit_status()->describe())
                  << "\nstderr:\n"
                  << hub.process->err();
    throw std::runtime_error("hub did not start");
  }
  return hub;
}

Process& ClusterTest::start_agent(const std::string& name, std::vector<std::string> args) {
  std::vector<std::string> all = {"--beat-interval-ms", std::to_string(kBeat.count())};
  all.insert(all.end(), args.begin(), args.end());
  return spawn(CASCADE_AGENT_PATH, std::move(all), name);
}

Process& ClusterTest::start_provider(const std::string& hub_endpoint, const std::string& id,
                                     const std::string& registration) {
  return start_agent(id, {"--hub", hub_endpoint, "--id", id, "--register", registration});
}

CtlResult ClusterTest::ctl(std::vector<std::string> args) {
  Process& p = spawn(CASCADECTL_PATH, std::move(args), "cascadectl");
  auto status = p.wait_for(kPatience);
  if (!status) {
    ADD_FAILURE() << "cascadectl did not finish within 10 s: " << p.command_line();
    status = p.kill_and_wait();
  }
  return {*status, p.out(), p.err()};
}

std::optional<std::string> ClusterTest::wait_for_stdout_line(Process& process,
                                                             const std::string& needle,
                                                             Millis timeout) {
  std::optional<std::string> line;
  poll_until(
      [&] {
        auto found = lines_containing(process.out(), needle);
        if (found.empty()) return false;
        line = found.front();
        return true;
      },
      timeout, Millis{5});
  return line;
}

int port_of(const std::string& endpoint) {
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos) return -1;
  return std::stoi(endpoint.substr(colon + 1));
}

}  // namespace cascade::integration
