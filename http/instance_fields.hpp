#pragma once
// An instance's fields in a request body, read the same way by every cascade
// API that takes one (the agent's registrations, the hub's static
// instances): "address" (required), "weight" (default 100), "zone", "status"
// (UP, DOWN, OUT_OF_SERVICE or STARTING, any case; default UP) and
// "metadata" (an object of strings). The caller reads the fields that name
// the instance (service, id) itself and finishes `fields`.

#include "cascade/common/protocol.hpp"
#include "cascade/http/json_fields.hpp"

namespace cascade::http {

void read_instance_fields(JsonFields& fields, proto::Instance& out);

}  // namespace cascade::http
