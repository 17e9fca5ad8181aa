#include "cascade/common/validate.hpp"

namespace cascade::proto {

namespace {

std::string check_text(std::string_view what, std::string_view value, std::size_t max_bytes,
                       bool may_be_empty) {
  if (value.empty() && !may_be_empty) return std::string(what) + " is empty";
  if (value.size() > max_bytes)
    return std::string(what) + " is longer than " + std::to_string(max_bytes) + " bytes";
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f) return std::string(what) + " has a control character";
  return {};
}

std::string check_metadata(const std::map<std::string, std::string>& metadata) {
  if (metadata.size() > kMaxMetadataEntries)
    return "more than " + std::to_string(kMaxMetadataEntries) + " metadata entries";
  for (const auto& [key, value] : metadata) {
    if (key.size() > kMaxMetadataKeyBytes)
      return "metadata key '" + key.substr(0, 32) + "…' is too long";
    if (value.size() > kMaxMetadataValueBytes) return "metadata value of '" + key + "' is too long";
  }
  return {};
}

}  // namespace

std::string check_name(std::string_view what, std::string_view value) {
  return check_text(what, value, kMaxServiceNameBytes, false);
}

std::string check_service_key(const ServiceKey& key) {
  if (auto e = check_name("service name", key.name); !e.empty()) return e;
  return check_name("group", key.group);
}

std::string check_registration(const Registration& r) {
  for (const auto& error : {check_service_key(r.service),
                            check_text("address", r.instance.address, kMaxAddressBytes, false),
                            check_text("instance id", r.instance.id, kMaxIdBytes, false),
                            check_text("zone", r.instance.zone, kMaxServiceNameBytes, true),
                            r.instance.status > static_cast<InstanceStatus>(kMaxInstanceStatus)
                                ? std::string("unknown status")
                                : std::string(),
                            check_metadata(r.instance.metadata)})
    if (!error.empty()) return error;
  return {};
}

}  // namespace cascade::proto
