#pragma once
// What a request's Host header says about how its sender reached us.
//
// Reads open to loopback peers without a token are open to the browsers on
// this machine too, and so to any web page they show: a page of another site
// can point its own DNS name at 127.0.0.1 (DNS rebinding) and read the answers
// as same-origin. Such a request still carries the page's name in its Host
// header, so a loopback read is served without a token only when the Host
// names loopback: "localhost", "127.0.0.1:7480", "[::1]:7480".

#include <string_view>

namespace cascade::http {

// True for "localhost", a 127.0.0.0/8 dotted quad or "[::1]", each with an
// optional ":PORT"; false for anything else, an empty header included.
bool host_names_loopback(std::string_view host_header);

}  // namespace cascade::http
