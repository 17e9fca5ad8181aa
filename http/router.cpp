#include "cascade/http/router.hpp"

#include <stdexcept>

namespace cascade::http {

namespace {

// "/a/b/" -> {"a", "b"}; empty segments (doubled or trailing slashes) dropped.
std::vector<std::string_view> split_path(std::string_view path) {
  return split_nonempty(path, '/');
}

bool is_capture(std::string_view segment) {
  return segment.size() >= 2 && segment.front() == '{' && segment.back() == '}';
}

bool is_rest_capture(std::string_view segment) {
  return is_capture(segment) && segment[segment.size() - 2] == '*';
}

}  // namespace

std::vector<std::string_view> split_nonempty(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(separator, start), text.size());
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

void Router::add(std::string method, std::string_view pattern, RouteFn fn) {
  if (!pattern.starts_with('/'))
    throw std::invalid_argument("route pattern must start with '/': " + std::string(pattern));
  Route route{std::move(method), {}, std::move(fn)};
  for (auto segment : split_path(pattern))
    route.segments.emplace_back(segment);
  for (std::size_t i = 0; i + 1 < route.segments.size(); ++i)
    if (is_rest_capture(route.segments[i]))
      throw std::invalid_argument("{name*} must be the last segment: " + std::string(pattern));
  routes_.push_back(std::move(route));
}

bool Router::match(const Route& route, const std::vector<std::string_view>& path,
                   PathParams& params) {
  params.clear();
  const auto& want = route.segments;
  const bool rest = !want.empty() && is_rest_capture(want.back());
  const auto fixed = rest ? want.size() - 1 : want.size();
  if (rest ? path.size() <= fixed : path.size() != fixed) return false;
  for (std::size_t i = 0; i < fixed; ++i) {
    if (is_capture(want[i]))
      params.emplace(want[i].substr(1, want[i].size() - 2), path[i]);
    else if (want[i] != path[i])
      return false;
  }
  if (rest) {
    std::string tail;
    for (auto i = fixed; i < path.size(); ++i)
      tail.append(i == fixed ? "" : "/").append(path[i]);
    params.emplace(want.back().substr(1, want.back().size() - 3), std::move(tail));
  }
  return true;
}

Reply Router::handle(const Request& request, const ResponderPtr& later) {
  const auto path = split_path(request.path);
  PathParams params;
  std::string allowed;
  for (const auto& route : routes_) {
    if (!match(route, path, params)) continue;
    if (route.method == request.method) return route.fn(request, params, later);
    if (allowed.find(route.method) == std::string::npos)
      allowed += (allowed.empty() ? "" : ", ") + route.method;
  }
  if (allowed.empty()) return Response::error(404, "no_route", "no such endpoint: " + request.path);
  auto response = Response::error(
      405, "method_not_allowed",
      request.method + " is not allowed on " + request.path + " (allowed: " + allowed + ")");
  response.headers.emplace_back("Allow", allowed);
  return response;
}

}  // namespace cascade::http
