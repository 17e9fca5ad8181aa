#include "cascade/agent/registration_spec.hpp"

#include <charconv>
#include <vector>

#include "cascade/common/validate.hpp"

namespace cascade::agent {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// Applies one "key=value" option; returns an error text or "".
std::string apply_option(proto::Registration& r, std::string_view option) {
  const auto eq = option.find('=');
  if (eq == std::string_view::npos) return "option '" + std::string(option) + "' is not KEY=VALUE";
  const auto key = option.substr(0, eq);
  const auto value = option.substr(eq + 1);
  if (key == "weight") {
    std::uint32_t w = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), w);
    if (ec != std::errc{} || ptr != value.data() + value.size() || w > 1'000'000)
      return "weight must be an integer between 0 and 1000000";
    r.instance.weight = w;
  } else if (key == "zone") {
    r.instance.zone = value;
  } else if (key == "id") {
    r.instance.id = value;
  } else if (key == "group") {
    r.service.group = value;
  } else if (key == "status") {
    auto status = proto::parse_status(value);
    if (!status) return "status must be UP, DOWN, OUT_OF_SERVICE or STARTING";
    r.instance.status = *status;
  } else if (key.starts_with("meta.") && key.size() > 5) {
    r.instance.metadata.insert_or_assign(std::string(key.substr(5)), std::string(value));
  } else {
    return "unknown option '" + std::string(key) + "'";
  }
  return {};
}

}  // namespace

std::variant<proto::Registration, std::string> parse_registration(std::string_view spec) {
  const auto eq = spec.find('=');
  if (eq == std::string_view::npos)
    return "expected SERVICE=ADDRESS[,weight=N][,zone=Z], got '" + std::string(spec) + "'";
  proto::Registration r;
  r.service.name = spec.substr(0, eq);
  auto fields = split(spec.substr(eq + 1), ',');
  r.instance.address = fields.front();
  for (std::size_t i = 1; i < fields.size(); ++i)
    if (auto error = apply_option(r, fields[i]); !error.empty()) return error;
  if (r.instance.id.empty()) r.instance.id = r.instance.address;
  if (auto error = proto::check_registration(r); !error.empty()) return error;
  return r;
}

proto::ServiceKey parse_service_key(std::string_view text) {
  proto::ServiceKey key;
  const auto at = text.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size()) {
    key.name = text;
  } else {
    key.name = text.substr(0, at);
    key.group = text.substr(at + 1);
  }
  return key;
}

}  // namespace cascade::agent
