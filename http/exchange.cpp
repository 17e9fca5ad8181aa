#include "cascade/http/exchange.hpp"

#include <nlohmann/json.hpp>

#include "cascade/http/response_head.hpp"

namespace cascade::http {

std::string_view Request::header(std::string_view lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string_view{} : std::string_view(it->second);
}

std::optional<std::string_view> Request::arg(std::string_view name) const {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return std::string_view(it->second);
}

const std::string& SharedResponse::wire(bool keep_alive) const {
  const auto i = keep_alive ? 1 : 0;
  std::call_once(once_[i],
                 [&] { wire_[i] = response_head(response_, keep_alive) + response_.body; });
  return wire_[i];
}

Response Response::json(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::error(int status, std::string_view code, std::string_view message) {
  const nlohmann::json body = {{"error", {{"code", code}, {"message", message}}}};
  // Replace, not throw, on bytes that are not UTF-8: a message may quote bad input.
  return json(status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace cascade::http
