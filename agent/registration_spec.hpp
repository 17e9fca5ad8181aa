#pragma once
// Parsing of the daemon's --register value:
//   SERVICE=ADDRESS[,weight=N][,zone=Z][,id=ID][,group=G][,status=UP|DOWN|OUT_OF_SERVICE|STARTING][,meta.KEY=VALUE]
// e.g. "orders=10.0.0.7:8080,weight=50,zone=dc1-a".

#include <string>
#include <string_view>
#include <variant>

#include "cascade/common/protocol.hpp"

namespace cascade::agent {

// The registration, or a message saying what is wrong with the text. The
// instance id defaults to the address, so an agent restarted under another
// node id takes its instance over instead of listing it twice.
std::variant<proto::Registration, std::string> parse_registration(std::string_view spec);

// "SERVICE" or "SERVICE@GROUP" (the --use value).
proto::ServiceKey parse_service_key(std::string_view text);

}  // namespace cascade::agent
