#include "cascade/http/instance_fields.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace cascade::http {

void read_instance_fields(JsonFields& fields, proto::Instance& out) {
  out.address = fields.text("address", true).value_or("");
  out.weight = static_cast<std::uint32_t>(fields.number("weight", UINT32_MAX).value_or(100));
  out.zone = fields.text("zone").value_or("");
  if (auto status = fields.text("status")) {
    std::transform(status->begin(), status->end(), status->begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (auto parsed_status = proto::parse_status(*status))
      out.status = *parsed_status;
    else
      fields.fail("status", "must be UP, DOWN, OUT_OF_SERVICE or STARTING");
  }
  out.metadata = fields.text_map("metadata").value_or(std::map<std::string, std::string>{});
}

}  // namespace cascade::http
