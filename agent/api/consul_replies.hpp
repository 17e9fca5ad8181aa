#pragma once
// What every route of the Consul-compatible subset answers the way Consul
// does (docs/consul-compat.md): plain-text errors, the index headers beside a
// listing, and ?index=/&wait= read as Consul reads them. Shared by the
// catalog and health routes (consul_api.cpp) and the KV store (consul_kv.cpp).

#include <cstdint>
#include <string>

#include "cascade/agent/api/query_args.hpp"
#include "cascade/http/exchange.hpp"

namespace cascade::agent::api {

// Consul's errors are plain text, and so are these.
http::Response text_response(int status, std::string body);

// Consul acknowledges a change with 200 and no body.
http::Response done();

// What Consul clients read beside a listing: the index to block on, and how
// current the answer is.
void add_index_headers(http::Response& response, std::uint64_t index, bool known_leader,
                       Duration last_contact);

// ?index= and ?wait= as Consul reads them: index 0 does not block.
Parsed<BlockingArgs> blocking_of(const http::Request& request);

}  // namespace cascade::agent::api
