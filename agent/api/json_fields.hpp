#pragma once
// The agent's APIs read request bodies with the strict reader every cascade
// HTTP API shares (http/json_fields.hpp); these are its names here.

#include "cascade/http/json_fields.hpp"

namespace cascade::agent::api {

using http::BodyError;
using http::JsonFields;
using http::KeyMatch;
using http::parse_object;

}  // namespace cascade::agent::api
