#pragma once
// The rules the hub's decoder enforces on names, ids and registrations,
// checked before anything is sent. An agent that sent one bad registration
// would have every later beat refused, lose its lease and all its valid
// instances with it; so the library refuses the bad value at the call instead.
// Each function returns "" when the value is acceptable, else what is wrong.

#include <string>
#include <string_view>

#include "cascade/common/protocol.hpp"

namespace cascade::proto {

// Non-empty, at most kMaxServiceNameBytes, no control characters.
std::string check_name(std::string_view what, std::string_view value);
std::string check_service_key(const ServiceKey& key);
std::string check_registration(const Registration& registration);

}  // namespace cascade::proto
