// cascadectl: the operator's command line for a cascade hub. Only argument
// parsing lives here (CLI11 is costly to compile: keep it in this one file);
// the work is in tools/ctl/.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <zmq.hpp>

#include "tools/ctl/commands.hpp"
#include "tools/ctl/hub_client.hpp"

namespace {

using cascade::ctl::Command;
using cascade::ctl::CommandSpec;
using cascade::ctl::ExitCode;

constexpr const char* kExitCodes =
    "Exit codes:\n"
    "  0  ok (resolve: the service has at least one instance)\n"
    "  1  resolve: the service is unknown or has no instances (the empty result is printed)\n"
    "  2  usage error: bad flags, missing command, malformed --hub endpoint\n"
    "  3  hub unreachable: no reply within --timeout-ms\n"
    "  4  the hub replied with an error (printed to stderr) or an unexpected reply";

int code(ExitCode c) {
  return static_cast<int>(c);
}

std::uint64_t fresh_request_id() {
  std::random_device entropy;
  const std::uint64_t id = (std::uint64_t{entropy()} << 32) | entropy();
  return id == 0 ? 1 : id;  // 0 means "unknown" in an ErrorReply
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cascadectl: ask a cascade hub about its state and its services."};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.fallthrough();  // global flags may also follow the command

  std::string hub;
  std::int64_t timeout_ms = cascade::ctl::kDefaultTimeout.count();
  bool json = false;
  app.add_option("--hub", hub, "Hub endpoint, e.g. tcp://hub.example:7400")
      ->envname("CASCADE_HUB")
      ->required();
  app.add_option("--timeout-ms", timeout_ms, "How long to wait for the reply, in milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3'600'000}));
  app.add_flag("--json", json, "Print JSON instead of a table");

  CommandSpec spec;
  auto* status = app.add_subcommand("status", "Hub identity, uptime, sizes and counters");
  auto* services = app.add_subcommand("services", "Every service the hub knows, with counts");
  auto* topology = app.add_subcommand(
      "topology", "The hub's tier and zone, its children and its upstreams with their state");
  auto* resolve = app.add_subcommand("resolve", "The instances of one service");
  resolve->add_option("SERVICE", spec.service.name, "Service name")->required();
  resolve->add_option("--group", spec.service.group, "Service group")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints usage and exits 0; every real parse error is a usage error.
    return app.exit(e) == 0 ? code(ExitCode::kOk) : code(ExitCode::kUsage);
  }

  if (status->parsed()) spec.command = Command::kStatus;
  if (services->parsed()) spec.command = Command::kServices;
  if (resolve->parsed()) spec.command = Command::kResolve;
  if (topology->parsed()) spec.command = Command::kTopology;
  spec.format = json ? cascade::ctl::OutputFormat::kJson : cascade::ctl::OutputFormat::kTable;
  spec.timeout = cascade::Duration{timeout_ms};
  spec.request_id = fresh_request_id();

  zmq::context_t context;
  std::optional<cascade::ctl::HubClient> client;
  try {
    client.emplace(context, hub);
  } catch (const zmq::error_t& e) {
    std::cerr << "cascadectl: --hub " << hub << ": not a usable endpoint (" << e.what()
              << "); expected e.g. tcp://host:port\n";
    return code(ExitCode::kUsage);
  }

  cascade::ctl::CommandResult result;
  try {
    result = cascade::ctl::run_command(*client, spec);
  } catch (const zmq::error_t& e) {
    std::cerr << "cascadectl: hub unreachable: " << e.what() << "\n";
    return code(ExitCode::kUnreachable);
  }
  std::cout << result.out << std::flush;
  std::cerr << result.err;
  return code(result.code);
}
