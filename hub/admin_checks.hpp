#pragma once
// The checks an operator command passes before a hub carries it out, apart
// from the registry's state: names, ids, the instance add-static defines,
// routing rules (with the agents' own parser, so a refusal names the rule and
// the column), the notify share. Pure: the hub's HTTP admin API runs them on
// its own threads to refuse a bad request (and to validate a rule set without
// setting it) with the very messages the core would answer.
// Defined with the operations, in hub/hub_core_admin.cpp.

#include <string>

#include "cascade/common/protocol.hpp"

namespace cascade::hub {

// "" when `request` can be carried out, else why not (the AdminReply's message).
std::string check_admin_request(const proto::AdminRequest& request);
// The part for the config operations (hub/hub_core_config.cpp); the limits
// on keys and values are the config centre's (hub/config_groups.hpp).
std::string check_config_request(const proto::AdminRequest& request);

}  // namespace cascade::hub
