#include "cascade/agent/api/consul_registration.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <set>
#include <span>

#include "cascade/agent/api/query_args.hpp"
#include "cascade/common/validate.hpp"

namespace cascade::agent::api {

namespace {

// Check fields that ask for a kind of check cascade cannot run.
constexpr std::string_view kUnsupportedCheckKinds[] = {
    "HTTP",      "TCP",          "GRPC",   "Script", "ScriptArgs", "Args",
    "AliasNode", "AliasService", "H2PING", "UDP",    "OSService",  "DockerContainerID"};
// Check fields Consul has that cascade accepts and ignores: they tune the
// kinds above, or are Consul's bookkeeping.
constexpr std::string_view kIgnoredCheckFields[] = {"Interval",
                                                    "Timeout",
                                                    "Header",
                                                    "Method",
                                                    "Body",
                                                    "TLSSkipVerify",
                                                    "TLSServerName",
                                                    "GRPCUseTLS",
                                                    "H2PingUseTLS",
                                                    "Shell",
                                                    "OutputMaxSize",
                                                    "SuccessBeforePassing",
                                                    "FailuresBeforeWarning",
                                                    "FailuresBeforeCritical",
                                                    "DisableRedirects",
                                                    "ServiceID",
                                                    "Namespace",
                                                    "Partition",
                                                    "Type"};
// Service fields Consul has that cascade accepts and ignores.
constexpr std::string_view kIgnoredServiceFields[] = {
    "Kind",      "EnableTagOverride", "TaggedAddresses", "Proxy",     "Connect",
    "Namespace", "Partition",         "Locality",        "SocketPath"};

BodyError invalid(std::string message) {
  return {"invalid_field", std::move(message)};
}

void ignore_all(JsonFields& fields, std::span<const std::string_view> keys) {
  for (const auto key : keys)
    fields.ignore(key);
}

// A duration field in Go's format (nullopt when absent or malformed, the latter recorded).
std::optional<Duration> duration(JsonFields& fields, std::string_view key) {
  const auto text = fields.text(key);
  if (!text) return std::nullopt;
  const auto parsed = parse_go_duration(*text);
  if (!parsed) fields.fail(key, "must be a duration such as 10s, 1m30s or 500ms");
  return parsed;
}

// One check definition, its id left empty unless it gives CheckID; nullopt
// for an empty definition (Consul skips those too).
std::variant<std::optional<TtlCheckSpec>, BodyError> read_check(const nlohmann::json& object,
                                                                std::string_view where) {
  auto in_check = [where](const BodyError& e) {
    return BodyError{e.code, "in " + std::string(where) + ": " + e.message};
  };
  if (std::all_of(object.begin(), object.end(), [](const auto& v) { return v.is_null(); }))
    return std::optional<TtlCheckSpec>{};
  JsonFields fields(object, KeyMatch::kFolded);
  for (const auto kind : kUnsupportedCheckKinds)
    if (fields.any(kind))
      fields.fail(kind,
                  "asks for a check cascade cannot run: cascade runs TTL checks only (give the "
                  "check a TTL and report with PUT /v1/agent/check/pass/CHECK_ID)");
  ignore_all(fields, kIgnoredCheckFields);
  TtlCheckSpec spec;
  spec.id = fields.text("CheckID").value_or("");
  spec.name = fields.text("Name").value_or("");
  spec.notes = fields.text("Notes").value_or("");
  const auto ttl = duration(fields, "TTL");
  if (auto status = fields.text("Status")) {
    spec.initial = parse_check_status(*status);
    if (!spec.initial) fields.fail("Status", "must be passing, warning or critical");
  }
  spec.deregister_after = duration(fields, "DeregisterCriticalServiceAfter");
  if (auto error = fields.finish()) return in_check(*error);
  if (!ttl || ttl->count() <= 0)
    return in_check(
        {"missing_field", "a check needs a TTL greater than 0 (cascade runs TTL checks only)"});
  spec.ttl = *ttl;
  return std::optional<TtlCheckSpec>{std::move(spec)};
}

// The checks of the body's Check and Checks, named as Consul names them:
// CheckID if given, else "service:ID", with ":N" (from 1) when there are several.
std::variant<std::vector<TtlCheckSpec>, BodyError> read_checks(
    const nlohmann::json* check, const std::optional<std::vector<const nlohmann::json*>>& more,
    const ConsulService& service) {
  std::vector<std::pair<const nlohmann::json*, std::string>> definitions;
  if (check) definitions.emplace_back(check, "Check");
  for (std::size_t i = 0; more && i < more->size(); ++i)
    definitions.emplace_back((*more)[i], "Checks[" + std::to_string(i) + "]");
  std::vector<TtlCheckSpec> specs;
  for (const auto& [object, where] : definitions) {
    auto read = read_check(*object, where);
    if (auto* error = std::get_if<BodyError>(&read)) return *error;
    if (auto& spec = std::get<std::optional<TtlCheckSpec>>(read)) specs.push_back(std::move(*spec));
  }
  std::set<std::string> ids;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto& spec = specs[i];
    if (spec.id.empty()) {
      spec.id = "service:" + service.id;
      if (specs.size() > 1) spec.id += ":" + std::to_string(i + 1);
    }
    if (spec.name.empty()) spec.name = "Service '" + service.name + "' check";
    if (!ids.insert(spec.id).second)
      return invalid("Invalid check: check ID '" + spec.id + "' is given twice");
  }
  return specs;
}

std::optional<BodyError> check_meta(const std::map<std::string, std::string>& meta) {
  constexpr auto kMaxEntries = proto::kMaxMetadataEntries - kReservedMetadataEntries;
  if (meta.size() > kMaxEntries)
    return invalid("Invalid Service Meta: at most " + std::to_string(kMaxEntries) +
                   " entries (cascade keeps " + std::to_string(kReservedMetadataEntries) +
                   " of an instance's " + std::to_string(proto::kMaxMetadataEntries) +
                   " for Consul's fields)");
  for (const auto& [key, value] : meta)
    if (key.starts_with(kConsulKeyPrefix))
      return invalid("Invalid Service Meta: key '" + key +
                     "': the prefix 'consul-' is reserved for internal use");
  return std::nullopt;
}

bool is_any_address(std::string_view host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::string tags_json(const std::vector<std::string>& tags) {
  return nlohmann::json(tags).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string join_host_port(std::string_view host, std::uint16_t port) {
  in6_addr v6{};
  const bool bracket = inet_pton(AF_INET6, std::string(host).c_str(), &v6) == 1;
  return (bracket ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

std::variant<ConsulService, BodyError> consul_service_from_json(std::string_view body,
                                                                const AgentIdentity& agent) {
  auto parsed = parse_object(body);
  if (auto* error = std::get_if<BodyError>(&parsed)) return *error;
  JsonFields fields(std::get<nlohmann::json>(parsed), KeyMatch::kFolded);
  ignore_all(fields, kIgnoredServiceFields);
  ConsulService s;
  s.name = fields.text("Name").value_or("");
  s.id = fields.text("ID").value_or("");
  if (s.id.empty()) s.id = s.name;
  s.host = fields.text("Address").value_or("");
  s.port = static_cast<std::uint16_t>(fields.number("Port", UINT16_MAX).value_or(0));
  s.tags = fields.texts("Tags").value_or(std::vector<std::string>{});
  s.meta = fields.text_map("Meta").value_or(std::map<std::string, std::string>{});
  const auto* weights = fields.object("Weights");
  const auto* check = fields.object("Check");
  const auto checks = fields.objects("Checks");
  if (auto error = fields.finish()) return BodyError{error->code, error->message};
  if (s.name.empty()) return BodyError{"missing_field", "Missing service name"};
  if (is_any_address(s.host)) return invalid("Invalid service address");
  if (s.host.empty()) s.host = agent.host;
  if (weights) {
    JsonFields w(*weights, KeyMatch::kFolded);
    const auto passing = w.number("Passing", UINT32_MAX).value_or(0);
    s.warning_weight = static_cast<std::uint32_t>(w.number("Warning", UINT32_MAX).value_or(0));
    if (auto error = w.finish()) return invalid("Invalid Weights: " + error->message);
    if (passing == 0) return invalid("Invalid Weights: Passing must be greater than 0");
    s.passing_weight = static_cast<std::uint32_t>(passing);
  }
  if (auto error = check_meta(s.meta)) return *error;
  if (!s.tags.empty() && tags_json(s.tags).size() > proto::kMaxMetadataValueBytes)
    return invalid("Tags take " + std::to_string(tags_json(s.tags).size()) +
                   " bytes as JSON; cascade keeps at most " +
                   std::to_string(proto::kMaxMetadataValueBytes));
  auto specs = read_checks(check, checks, s);
  if (auto* error = std::get_if<BodyError>(&specs)) return *error;
  s.checks = std::get<std::vector<TtlCheckSpec>>(std::move(specs));
  if (auto error = proto::check_registration(registration_of(s, CheckStatus::kPassing, agent));
      !error.empty())
    return invalid("Invalid service: " + error);
  return s;
}

proto::Registration registration_of(const ConsulService& service, CheckStatus status,
                                    const AgentIdentity& agent) {
  proto::Registration r;
  r.service = {service.name, std::string(proto::kDefaultGroup)};
  r.instance.id = service.id;
  r.instance.address = join_host_port(service.host, service.port);
  r.instance.zone = agent.zone;
  r.instance.status =
      status == CheckStatus::kCritical ? proto::InstanceStatus::kDown : proto::InstanceStatus::kUp;
  r.instance.weight =
      status == CheckStatus::kWarning ? service.warning_weight : service.passing_weight;
  r.instance.metadata = service.meta;
  r.instance.metadata.emplace(kNodeKey, agent.node);
  if (!service.tags.empty()) r.instance.metadata.emplace(kTagsKey, tags_json(service.tags));
  if (!service.checks.empty()) r.instance.metadata.emplace(kCheckKey, to_string(status));
  return r;
}

}  // namespace cascade::agent::api
