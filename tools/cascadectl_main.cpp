// cascadectl: the operator's command line for a cascade hub. Only argument
// parsing lives here (CLI11 is costly to compile: keep it in this one file);
// the work is in tools/ctl/.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "cascade/tools/ctl/commands.hpp"
#include "cascade/tools/ctl/hub_client.hpp"
#include "cascade/tools/ctl/keygen.hpp"

namespace {

using cascade::ctl::Command;
using cascade::ctl::CommandSpec;
using cascade::ctl::ExitCode;
namespace proto = cascade::proto;

constexpr const char* kExitCodes =
    "Exit codes:\n"
    "  0  ok (resolve: at least one instance shown; report-failure: the hub accepted or\n"
    "     forwarded the report; operator commands: done; keygen: keys written)\n"
    "  1  resolve: the service is unknown, has no instances, or all are isolated (hidden);\n"
    "     report-failure: the hub knows no such address (the result is printed either way);\n"
    "     keygen: a key file of that name exists (never overwritten) or cannot be written\n"
    "  2  usage error: bad flags or values, missing command, malformed --hub endpoint,\n"
    "     unusable key files\n"
    "  3  hub unreachable: no reply within --timeout-ms\n"
    "  4  the hub replied with an error (printed to stderr), refused an operator command,\n"
    "     or sent an unexpected reply\n"
    "  5  unauthenticated: the hub refused this key (unknown to it, or removed since)\n"
    "  6  forbidden: the hub knows this key, but its role or scope does not allow the command";

int code(ExitCode c) {
  return static_cast<int>(c);
}

std::uint64_t fresh_request_id() {
  std::random_device entropy;
  const std::uint64_t id = (std::uint64_t{entropy()} << 32) | entropy();
  return id == 0 ? 1 : id;  // 0 means "unknown" in an ErrorReply (and "no ack" in a report)
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string user_name() {
  for (const char* variable : {"USER", "LOGNAME"}) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') return value;
  }
  return {};
}

template <typename Enum>
std::vector<std::string> names_of(std::uint8_t first, std::uint8_t last) {
  std::vector<std::string> names;
  for (std::uint8_t i = first; i <= last; ++i)
    names.emplace_back(proto::to_string(static_cast<Enum>(i)));
  return names;
}

int usage_error(const std::string& message) {
  std::cerr << "cascadectl: " << message << "\nRun with --help for more information.\n";
  return code(ExitCode::kUsage);
}

// One operator subcommand and the AdminOp it sends.
struct AdminCommand {
  CLI::App* app;
  proto::AdminOp op;
};

// cascadectl config ...: the config centre's commands (docs/design-config.md).
struct ConfigCommands {
  CLI::App* set = nullptr;
  CLI::App* rm = nullptr;
  CLI::App* rollback = nullptr;
  CLI::App* get = nullptr;
  CLI::App* list = nullptr;
  CLI::App* history = nullptr;
  std::string group;
  std::string key;
  std::string value;
  CLI::Option* value_given = nullptr;
  std::string file;
  std::vector<std::string> removed_keys;
  std::uint64_t version = 0;
};

void add_config_commands(CLI::App& app, ConfigCommands& c,
                         const std::function<void(CLI::App*)>& add_actor) {
  auto* config = app.add_subcommand(
      "config",
      "The config centre: groups of keys and values the hub serves to the instances that follow "
      "them (set here, overridden per tier)");
  config->require_subcommand(1);
  const auto add_group = [&](CLI::App* sub) {
    sub->add_option("GROUP", c.group, "Config group, e.g. orders.limits")->required();
  };
  c.set = config->add_subcommand("set", "Set one key of a group at this hub (a new version)");
  add_group(c.set);
  c.set->add_option("KEY", c.key, "Key")->required();
  c.value_given = c.set->add_option("VALUE", c.value, "Value (or --file)");
  c.set->add_option("--file", c.file, "Read the value from this file ('-': standard input)")
      ->excludes(c.value_given);
  add_actor(c.set);
  c.rm = config->add_subcommand("rm",
                                "Remove keys of a group at this hub (a tier above may "
                                "still set them)");
  add_group(c.rm);
  c.rm->add_option("KEY", c.removed_keys, "Keys to remove")->required();
  add_actor(c.rm);
  c.rollback = config->add_subcommand(
      "rollback", "Put this hub's keys of a group back as they were at a version (a new version)");
  add_group(c.rollback);
  c.rollback->add_option("VERSION", c.version, "The version to go back to (from config history)")
      ->required();
  add_actor(c.rollback);
  c.get = config->add_subcommand(
      "get", "A group as this hub serves it, each value with where it was set; or one key's value");
  add_group(c.get);
  c.get->add_option("KEY", c.key, "Only this key (prints its value)");
  c.list = config->add_subcommand("list", "The groups this hub serves, with their sizes");
  c.history = config->add_subcommand(
      "history", "The changes of this hub's keys of a group, newest first, with who and when");
  add_group(c.history);
}

// The whole of a file or of standard input ("-"); nullopt when unreadable.
std::optional<std::string> read_value_file(const std::string& path) {
  std::ifstream file_stream;
  std::istream* in = &std::cin;
  if (path != "-") {
    file_stream.open(path, std::ios::binary);
    if (!file_stream) return std::nullopt;
    in = &file_stream;
  }
  std::ostringstream bytes;
  bytes << in->rdbuf();
  if (in->bad()) return std::nullopt;
  return std::move(bytes).str();
}

// Fills `spec` from the config command that was given; "" or a usage error.
std::string apply_config(const ConfigCommands& c, CommandSpec& spec) {
  const auto read = [&](proto::ConfigView view) {
    spec.command = Command::kConfig;
    spec.config = {view, c.group, c.key};
  };
  const auto edit = [&](proto::AdminOp op) {
    spec.command = Command::kAdmin;
    spec.admin.op = op;
    spec.admin.config_group = c.group;
  };
  if (c.get->parsed()) read(proto::ConfigView::kGet);
  if (c.list->parsed()) read(proto::ConfigView::kList);
  if (c.history->parsed()) read(proto::ConfigView::kHistory);
  if (c.rollback->parsed()) {
    edit(proto::AdminOp::kConfigRollback);
    spec.admin.config_version = c.version;
  }
  if (c.rm->parsed()) {
    edit(proto::AdminOp::kConfigEdit);
    for (const auto& key : c.removed_keys)
      spec.admin.config_edits.push_back({key, std::nullopt});
  }
  if (c.set->parsed()) {
    edit(proto::AdminOp::kConfigEdit);
    std::optional<std::string> value;
    if (c.value_given->count() > 0) value = c.value;
    if (!c.file.empty()) {
      value = read_value_file(c.file);
      if (!value) return "config set: cannot read --file " + c.file;
    }
    if (!value) return "config set needs a VALUE or --file";
    spec.admin.config_edits.push_back({c.key, std::move(value)});
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "cascadectl: ask a cascade hub about its state and its services, report failed calls, "
      "and operate it."};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.fallthrough();  // global flags may also follow the command

  std::string hub;
  std::int64_t timeout_ms = cascade::ctl::kDefaultTimeout.count();
  bool json = false;
  app.add_option("--hub", hub,
                 "Hub endpoint, e.g. tcp://hub.example:7400 (every command but keygen)")
      ->envname("CASCADE_HUB");
  std::string secret_key_file;
  std::string hub_public_key_file;
  app.add_option("--secret-key", secret_key_file,
                 "This operator's CurveZMQ secret key file (NAME.key from keygen); with "
                 "--hub-public-key, for a hub that runs with keys")
      ->envname("CASCADE_SECRET_KEY");
  app.add_option("--hub-public-key", hub_public_key_file, "The hub's public key file (NAME.pub)")
      ->envname("CASCADE_HUB_PUBLIC_KEY");
  app.add_option("--timeout-ms", timeout_ms, "How long to wait for the reply, in milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3'600'000}));
  app.add_flag("--json", json, "Print JSON instead of a table");

  std::string keygen_name;
  std::string keygen_dir = ".";
  auto* keygen = app.add_subcommand(
      "keygen",
      "Make a CurveZMQ key pair: NAME.key (secret, mode 0600) and NAME.pub (no hub needed)");
  keygen->add_option("NAME", keygen_name, "Name of the key (and of its files)")->required();
  keygen->add_option("--dir", keygen_dir, "Directory to write the two files into")
      ->capture_default_str();

  const std::string host = host_name();
  CommandSpec spec;
  spec.failure.reporter = cascade::ctl::default_reporter(host);
  spec.admin.actor = cascade::ctl::default_actor(user_name(), host);

  auto* status = app.add_subcommand(
      "status", "Hub identity, uptime, sizes, isolation and protection state, counters");
  auto* services = app.add_subcommand("services", "Every service the hub knows, with counts");
  auto* topology = app.add_subcommand(
      "topology", "The hub's tier and zone, its children and its upstreams with their state");
  auto* resolve =
      app.add_subcommand("resolve", "The instances of one service (isolated ones only with --all)");
  resolve->add_option("SERVICE", spec.service.name, "Service name")->required();
  resolve->add_option("--group", spec.service.group, "Service group")->capture_default_str();
  resolve->add_flag("--all", spec.show_all,
                    "Also show isolated instances, with a HEALTH column and the reason");

  auto* report = app.add_subcommand(
      "report-failure",
      "Report failed calls to a provider address, as a caller would (the hub acknowledges)");
  report->add_option("SERVICE", spec.service.name, "Service name")->required();
  report
      ->add_option("ADDRESS", spec.failure.address,
                   "The provider address the calls went to, e.g. 10.0.0.1:8080")
      ->required();
  std::string kind;
  report
      ->add_option("--kind", kind,
                   "What the caller saw: timeout, refused, reset, system, business or "
                   "breaker_open")
      ->required()
      ->check(CLI::IsMember(names_of<proto::FailureKind>(0, proto::kMaxFailureKind)));
  report->add_option("--group", spec.service.group, "Service group")->capture_default_str();
  report
      ->add_option("--reporter", spec.failure.reporter,
                   "Node id of the caller that saw the failures (default: this tool's own node "
                   "id, cascadectl@<hostname>)")
      ->capture_default_str();
  report->add_option("--count", spec.failure.count, "Failures folded into this report, at least 1")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{1}, std::numeric_limits<std::uint32_t>::max()));

  std::vector<AdminCommand> admin_commands;
  const auto add_admin = [&](const char* name, const char* help, proto::AdminOp op) {
    auto* sub = app.add_subcommand(name, help);
    admin_commands.push_back({sub, op});
    return sub;
  };
  const auto add_actor = [&](CLI::App* sub) {
    sub->add_option("--actor", spec.admin.actor,
                    "Who asks, for the hub's audit log (default: $USER@<hostname>)")
        ->capture_default_str();
  };
  const auto add_instance_op = [&](const char* name, const char* help, proto::AdminOp op) {
    auto* sub = add_admin(name, help, op);
    sub->add_option("SERVICE", spec.service.name, "Service name")->required();
    sub->add_option("INSTANCE_ID", spec.admin.instance_id, "Instance id within the service")
        ->required();
    sub->add_option("--group", spec.service.group, "Service group")->capture_default_str();
    add_actor(sub);
    return sub;
  };
  add_instance_op("mark-out-of-service",
                  "Serve an instance as OUT_OF_SERVICE until mark-in-service, whatever its agent "
                  "says",
                  proto::AdminOp::kMarkOutOfService);
  add_instance_op("mark-in-service", "Undo mark-out-of-service", proto::AdminOp::kMarkInService);
  auto* add_static = add_instance_op(
      "add-static", "Register an instance that has no agent and no lease (until remove-static)",
      proto::AdminOp::kAddStatic);
  add_static->add_option("ADDRESS", spec.admin.instance.address, "Its address, e.g. 10.0.0.9:8080")
      ->required();
  add_static->add_option("--weight", spec.admin.instance.weight, "Load-balancing weight")
      ->capture_default_str();
  add_static->add_option("--zone", spec.admin.instance.zone, "Its zone or datacenter label");
  std::vector<std::string> metadata;
  add_static->add_option("--metadata", metadata, "Metadata entries key=value (repeatable)");
  std::string instance_status = proto::to_string(proto::InstanceStatus::kUp);
  add_static
      ->add_option("--status", instance_status, "Its status: UP, DOWN, OUT_OF_SERVICE or STARTING")
      ->capture_default_str()
      ->check(CLI::IsMember(names_of<proto::InstanceStatus>(0, proto::kMaxInstanceStatus)));
  add_instance_op("remove-static", "Remove an instance added by add-static",
                  proto::AdminOp::kRemoveStatic);
  add_instance_op("readmit", "Lift an instance's isolation now (instead of when it runs out)",
                  proto::AdminOp::kReadmit);

  const std::vector<std::string> on_off = {"on", "off"};
  std::string protection_state;
  auto* protection = add_admin(
      "eviction-protection",
      "Switch eviction protection: hold back mass lease expiry, keeping instances as unconfirmed",
      proto::AdminOp::kEvictionProtection);
  protection->add_option("STATE", protection_state, "on or off")
      ->required()
      ->check(CLI::IsMember(on_off));
  add_actor(protection);
  std::string notify_state;
  auto* notify = add_admin(
      "notify-switch",
      "Switch the notify cap: push isolations to only a share of a service's consumers at once "
      "(the rest learn at their next beat)",
      proto::AdminOp::kNotifySwitch);
  notify->add_option("STATE", notify_state, "on or off")->required()->check(CLI::IsMember(on_off));
  std::uint32_t share = cascade::ctl::kDefaultNotifySharePercent;
  auto* share_option =
      notify
          ->add_option("--share", share,
                       "With on: the share of a service's consumers pushed to per flush, in "
                       "percent, 1..100")
          ->capture_default_str()
          ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{100}));
  add_actor(notify);

  auto* set_routes = add_admin(
      "set-routes",
      "Set a service's routing rules at the hub, replacing all it had; every consumer of the "
      "service gets them with its beats",
      proto::AdminOp::kSetRoutes);
  set_routes->add_option("SERVICE", spec.service.name, "Service name")->required();
  set_routes->add_option("--group", spec.service.group, "Service group")->capture_default_str();
  std::vector<std::string> rules;
  auto* rule_option = set_routes->add_option(
      "--rule", rules,
      "A rule 'CONSUMER-MATCH => PROVIDER-FILTER' (repeatable, in order), e.g. '=> zone = dc1'. "
      "Prefix 'N:' for priority N (higher first, default 0), 'force:' or 'N,force:' to keep "
      "an empty result instead of falling back, e.g. '10,force:zone = dc3 =>'");
  bool force_all = false;
  set_routes->add_flag("--force", force_all, "Force every rule given");
  auto* clear_flag = set_routes->add_flag("--clear", spec.admin.clear_routes,
                                          "Remove every routing rule of the service");
  clear_flag->excludes(rule_option);
  add_actor(set_routes);
  ConfigCommands config_commands;
  add_config_commands(app, config_commands, add_actor);
  add_actor(add_admin("reload-keys",
                      "Make the hub re-read its authorised-keys file now (as SIGHUP does); no "
                      "connection is dropped, a bad file keeps the keys in use",
                      proto::AdminOp::kReloadKeys));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints usage and exits 0; every real parse error is a usage error.
    return app.exit(e) == 0 ? code(ExitCode::kOk) : code(ExitCode::kUsage);
  }

  if (keygen->parsed()) {
    const auto result = cascade::ctl::run_keygen(keygen_dir, keygen_name);
    std::cout << result.out << std::flush;
    std::cerr << result.err;
    return code(result.code);
  }
  if (hub.empty()) return usage_error("--hub is required (or CASCADE_HUB)");
  std::optional<cascade::ctl::CurveCredentials> curve;
  if (secret_key_file.empty() != hub_public_key_file.empty())
    return usage_error("--secret-key and --hub-public-key go together");
  if (!secret_key_file.empty()) {
    try {
      curve =
          cascade::ctl::CurveCredentials{cascade::curve::read_secret_key_file(secret_key_file),
                                         cascade::curve::read_public_key_file(hub_public_key_file)};
    } catch (const cascade::curve::KeyError& e) {
      return usage_error(e.what());
    }
  }

  if (status->parsed()) spec.command = Command::kStatus;
  if (services->parsed()) spec.command = Command::kServices;
  if (resolve->parsed()) spec.command = Command::kResolve;
  if (topology->parsed()) spec.command = Command::kTopology;
  if (report->parsed()) {
    spec.command = Command::kReportFailure;
    spec.failure.kind = *proto::parse_failure_kind(kind);  // IsMember let only known names in
  }
  for (const auto& admin : admin_commands) {
    if (!admin.app->parsed()) continue;
    spec.command = Command::kAdmin;
    spec.admin.op = admin.op;
  }
  if (add_static->parsed()) {
    spec.admin.instance.status = *proto::parse_status(instance_status);
    if (auto e = cascade::ctl::parse_metadata(metadata, spec.admin.instance.metadata); !e.empty())
      return usage_error(e);
  }
  if (protection->parsed()) spec.admin.enabled = protection_state == "on";
  if (notify->parsed()) {
    spec.admin.enabled = notify_state == "on";
    if (!spec.admin.enabled && share_option->count() > 0)
      return usage_error("notify-switch: --share applies only with on");
    if (spec.admin.enabled) spec.admin.share_percent = share;
  }
  if (set_routes->parsed()) {
    for (const auto& arg : rules) {
      auto& rule = spec.admin.routes.emplace_back();
      if (auto e = cascade::ctl::parse_rule(arg, force_all, rule); !e.empty())
        return usage_error(e);
    }
  }
  if (auto e = apply_config(config_commands, spec); !e.empty()) return usage_error(e);
  if (auto e = cascade::ctl::check_spec(spec); !e.empty()) return usage_error(e);

  spec.format = json ? cascade::ctl::OutputFormat::kJson : cascade::ctl::OutputFormat::kTable;
  spec.timeout = cascade::Duration{timeout_ms};
  spec.request_id = fresh_request_id();

  zmq::context_t context;
  std::optional<cascade::ctl::HubClient> client;
  try {
    client.emplace(context, hub, curve);
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
