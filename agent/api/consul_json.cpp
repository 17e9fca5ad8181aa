#include "cascade/agent/api/consul_json.hpp"

#include <algorithm>
#include <charconv>

#include "cascade/agent/api/consul_registration.hpp"

namespace cascade::agent::api {

namespace {

std::vector<std::string> tags_of(const std::map<std::string, std::string>& metadata) {
  auto it = metadata.find(std::string(kTagsKey));
  if (it == metadata.end()) return {};
  const auto parsed = nlohmann::json::parse(it->second, nullptr, false);
  std::vector<std::string> tags;
  if (!parsed.is_array()) return tags;
  for (const auto& tag : parsed)
    if (tag.is_string()) tags.push_back(tag.get<std::string>());
  return tags;
}

std::string value_or(const std::map<std::string, std::string>& metadata, std::string_view key,
                     const std::string& fallback) {
  auto it = metadata.find(std::string(key));
  return it == metadata.end() ? fallback : it->second;
}

// Why the instance's check says what it says.
void judge_service(const proto::Instance& in, ConsulInstance& out) {
  if (in.health == proto::Health::kIsolated) {
    out.service_status = CheckStatus::kCritical;
    out.service_output = in.health_reason.empty() ? "isolated by the hub" : in.health_reason;
    return;
  }
  if (in.status != proto::InstanceStatus::kUp) {
    out.service_status = CheckStatus::kCritical;
    out.service_output = std::string("status ") + proto::to_string(in.status);
    return;
  }
  const auto checks = parse_check_status(value_or(in.metadata, kCheckKey, ""));
  out.service_status = checks.value_or(CheckStatus::kPassing);
  out.service_output = checks ? "TTL checks " + std::string(to_string(*checks)) : "status UP";
}

void judge_node(const proto::Instance& in, ConsulInstance& out) {
  if (in.health == proto::Health::kUnconfirmed) {
    out.node_status = CheckStatus::kWarning;
    out.node_output = in.health_reason.empty()
                          ? "lease ran out; held by eviction protection (unconfirmed)"
                          : in.health_reason;
    return;
  }
  out.node_output = "Agent alive and reachable";
}

Json weights_json(std::uint32_t passing, std::uint32_t warning) {
  return {{"Passing", passing}, {"Warning", warning}};
}

Json string_map(const std::map<std::string, std::string>& map) {
  Json json = Json::object();
  for (const auto& [key, value] : map)
    json[key] = value;
  return json;
}

Json node_meta(const ConsulInstance& in) {
  return {{"cascade-tier", std::to_string(in.tier)}, {"cascade-health", in.health}};
}

Json tagged_addresses(const std::string& host) {
  return {{"lan", host}, {"wan", host}};
}

Json node_json(const ConsulInstance& in, std::uint64_t index) {
  return {{"ID", ""},
          {"Node", in.node},
          {"Address", in.host},
          {"Datacenter", in.datacenter},
          {"TaggedAddresses", tagged_addresses(in.host)},
          {"Meta", node_meta(in)},
          {"CreateIndex", index},
          {"ModifyIndex", index}};
}

Json check_json(const ConsulInstance& in, bool service_check, std::uint64_t index) {
  return {{"Node", in.node},
          {"CheckID", service_check ? "service:" + in.id : "serfHealth"},
          {"Name", service_check ? "Service '" + in.service + "' check" : "Serf Health Status"},
          {"Status", to_string(service_check ? in.service_status : in.node_status)},
          {"Notes", ""},
          {"Output", service_check ? in.service_output : in.node_output},
          {"ServiceID", service_check ? in.id : ""},
          {"ServiceName", service_check ? in.service : ""},
          {"ServiceTags", service_check ? in.tags : std::vector<std::string>{}},
          {"Type", service_check ? "ttl" : ""},
          {"CreateIndex", index},
          {"ModifyIndex", index}};
}

template <typename Entry>
Json entries(const Resolution& r, const ConsulFilter& filter, Entry entry) {
  Json list = Json::array();
  const auto index = consul_index(r.version);
  for (const auto& instance : r.instances) {
    const auto in = consul_instance(r.service.name, instance);
    if (filter.admits(in)) list.push_back(entry(in, index));
  }
  return list;
}

}  // namespace

std::pair<std::string, std::uint16_t> split_host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return {address, 0};
  std::uint16_t port = 0;
  const char* first = address.data() + colon + 1;
  const char* last = address.data() + address.size();
  const auto [end, error] = std::from_chars(first, last, port);
  if (first == last || error != std::errc() || end != last) return {address, 0};
  auto host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos)
    return {address, 0};  // a bare IPv6 address, no port
  return {host, port};
}

ConsulInstance consul_instance(const std::string& service, const proto::Instance& instance) {
  ConsulInstance out;
  out.service = service;
  out.id = instance.id;
  std::tie(out.host, out.port) = split_host_port(instance.address);
  out.tags = tags_of(instance.metadata);
  for (const auto& [key, value] : instance.metadata)
    if (!key.starts_with(kConsulKeyPrefix)) out.meta.emplace(key, value);
  out.node = value_or(instance.metadata, kNodeKey, out.host);
  out.datacenter = datacenter_of(instance.zone);
  out.weight = instance.weight;
  out.tier = instance.tier;
  out.health = proto::to_string(instance.health);
  judge_node(instance, out);
  judge_service(instance, out);
  return out;
}

bool ConsulFilter::admits(const ConsulInstance& in) const {
  if (passing && in.status() != CheckStatus::kPassing) return false;
  if (tag && std::find(in.tags.begin(), in.tags.end(), *tag) == in.tags.end()) return false;
  return !datacenter || *datacenter == in.datacenter;
}

Json health_json(const Resolution& r, const ConsulFilter& filter) {
  return entries(r, filter, [](const ConsulInstance& in, std::uint64_t index) {
    Json service = {{"ID", in.id},
                    {"Service", in.service},
                    {"Tags", in.tags},
                    {"Address", in.host},
                    {"Meta", string_map(in.meta)},
                    {"Port", in.port},
                    {"Weights", weights_json(in.weight, in.weight)},
                    {"EnableTagOverride", false},
                    {"Datacenter", in.datacenter},
                    {"CreateIndex", index},
                    {"ModifyIndex", index}};
    return Json{
        {"Node", node_json(in, index)},
        {"Service", std::move(service)},
        {"Checks", Json::array({check_json(in, false, index), check_json(in, true, index)})}};
  });
}

Json catalog_service_json(const Resolution& r, const ConsulFilter& filter) {
  return entries(r, filter, [](const ConsulInstance& in, std::uint64_t index) {
    return Json{{"ID", ""},
                {"Node", in.node},
                {"Address", in.host},
                {"Datacenter", in.datacenter},
                {"TaggedAddresses", tagged_addresses(in.host)},
                {"NodeMeta", node_meta(in)},
                {"ServiceKind", ""},
                {"ServiceID", in.id},
                {"ServiceName", in.service},
                {"ServiceTags", in.tags},
                {"ServiceAddress", in.host},
                {"ServiceWeights", weights_json(in.weight, in.weight)},
                {"ServiceMeta", string_map(in.meta)},
                {"ServicePort", in.port},
                {"ServiceEnableTagOverride", false},
                {"CreateIndex", index},
                {"ModifyIndex", index}};
  });
}

Json agent_service_json(const ConsulInstance& in, std::uint32_t passing_weight,
                        std::uint32_t warning_weight) {
  return {{"ID", in.id},
          {"Service", in.service},
          {"Tags", in.tags},
          {"Meta", string_map(in.meta)},
          {"Port", in.port},
          {"Address", in.host},
          {"Weights", weights_json(passing_weight, warning_weight)},
          {"EnableTagOverride", false},
          {"Datacenter", in.datacenter}};
}

Json agent_check_json(const TtlCheck& check, const std::string& node, const std::string& service,
                      const std::vector<std::string>& tags) {
  return {{"Node", node},
          {"CheckID", check.spec.id},
          {"Name", check.spec.name},
          {"Status", to_string(check.status)},
          {"Notes", check.spec.notes},
          {"Output", check.output},
          {"ServiceID", check.service_id},
          {"ServiceName", service},
          {"ServiceTags", tags},
          {"Type", "ttl"},
          {"Definition", Json::object()}};
}

Json kv_entry_json(const std::string& path, std::string_view value, std::uint64_t index) {
  return {{"LockIndex", 0},         {"Key", path},          {"Flags", 0},
          {"Value", base64(value)}, {"CreateIndex", index}, {"ModifyIndex", index}};
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U) |
                   static_cast<unsigned char>(bytes[i + 2]);
    for (const unsigned shift : {18U, 12U, 6U, 0U})
      out += kAlphabet[(n >> shift) & 0x3FU];
  }
  if (const auto rest = bytes.size() - i; rest > 0) {
    std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U;
    if (rest == 2) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
    out += kAlphabet[(n >> 18U) & 0x3FU];
    out += kAlphabet[(n >> 12U) & 0x3FU];
    out += rest == 2 ? kAlphabet[(n >> 6U) & 0x3FU] : '=';
    out += '=';
  }
  return out;
}

}  // namespace cascade::agent::api
