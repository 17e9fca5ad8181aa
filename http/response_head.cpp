#include "cascade/http/response_head.hpp"

#include <boost/beast/http/status.hpp>
#include <stdexcept>

namespace cascade::http {

namespace {

void append_header(std::string& head, std::string_view name, std::string_view value) {
  if (name.find_first_of("\r\n:") != std::string_view::npos ||
      value.find_first_of("\r\n") != std::string_view::npos)
    throw std::invalid_argument("a response header holds a line break: " + std::string(name));
  head.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

std::string response_head(const Response& response, bool keep_alive) {
  namespace beast_http = boost::beast::http;
  const auto reason = beast_http::obsolete_reason(
      beast_http::int_to_status(static_cast<unsigned>(response.status)));
  std::string head;
  head.reserve(128);
  head.append("HTTP/1.1 ").append(std::to_string(response.status)).append(" ");
  head.append(reason.data(), reason.size()).append("\r\n");
  if (!response.content_type.empty()) append_header(head, "Content-Type", response.content_type);
  for (const auto& [name, value] : response.headers)
    append_header(head, name, value);
  append_header(head, "Content-Length", std::to_string(response.body.size()));
  if (!keep_alive) append_header(head, "Connection", "close");
  head.append("\r\n");
  return head;
}

}  // namespace cascade::http
