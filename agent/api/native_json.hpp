#pragma once
// The JSON of the agent's native API (schemas/http-api.md): a service as the
// agent holds it (the fields of `cascadectl resolve --json`), an instance, a
// registration, the agent's status.

#include <nlohmann/json.hpp>
#include <string_view>
#include <variant>

#include "cascade/agent/agent_core.hpp"
#include "cascade/agent/api/json_fields.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/common/instance_json.hpp"

namespace cascade::agent::api {

using Json = nlohmann::ordered_json;

using cascade::instance_json;  // common/instance_json.hpp
Json resolution_json(const Resolution& resolution);
Json registration_json(const proto::Registration& registration);
Json status_json(const ClientStatus& status, const ClientOptions& options,
                 const std::vector<proto::Registration>& registrations,
                 const std::vector<proto::ServiceKey>& uses);

// A registration from a request body: {"service", "id", "address", and
// optionally "group", "weight", "zone", "status", "metadata"}. The id
// defaults to the address. Checked as a hub checks it.
std::variant<proto::Registration, BodyError> registration_from_json(std::string_view body);

// A JSON document as a response body (one line, invalid UTF-8 replaced).
std::string dump(const Json& json);

}  // namespace cascade::agent::api
