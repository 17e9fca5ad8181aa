#pragma once
// Options of the cascade-agent daemon (flags or a TOML file via --config).

#include <spdlog/common.h>

#include <optional>
#include <string>
#include <vector>

#include "cascade/agent/client.hpp"
#include "cascade/agent/local_interfaces.hpp"
#include "cascade/common/log_event.hpp"
#include "cascade/common/options.hpp"

namespace cascade::agent {

struct DaemonConfig {
  ClientOptions client;
  std::vector<proto::Registration> registrations;
  std::vector<proto::ServiceKey> uses;
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;  // --log-format text|json
  bool insecure = false;                    // --insecure without keys: said in the log at start
  HttpApiOptions http;
  DnsOptions dns;
  MetricsOptions metrics;
};

using ParsedAgentOptions = ParsedOptions<DaemonConfig>;

ParsedAgentOptions parse_agent_options(int argc, const char* const* argv);

}  // namespace cascade::agent
