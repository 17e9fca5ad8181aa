#pragma once
// The status line and header block of a Response, as sent before its body:
//   HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n...Content-Length: N\r\n\r\n
// Written here rather than by a serializer: the head is a few lines the
// server sends next to the body with one sendmsg (see connection.hpp), and
// every value in it comes from cascade's handlers, not from a peer.

#include <string>

#include "cascade/http/exchange.hpp"

namespace cascade::http {

// `keep_alive` false adds "Connection: close". Throws std::invalid_argument
// for a header name or value holding CR or LF (it would split the response).
std::string response_head(const Response& response, bool keep_alive);

// The interim answer to "Expect: 100-continue".
inline constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace cascade::http
