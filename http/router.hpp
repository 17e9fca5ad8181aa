#pragma once
// Routes requests by method and path pattern to handlers. Patterns are
// segments, "{name}" capturing one segment and a last "{name*}" the rest:
//   router.add("GET", "/api/v1/services/{service}", resolve);
// A path no pattern matches is 404 (code "no_route"); a path some pattern
// matches under other methods is 405 (code "method_not_allowed", with Allow).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/http/exchange.hpp"

namespace cascade::http {

// The non-empty parts of `text` between separators ("a,,b," -> {"a", "b"}).
std::vector<std::string_view> split_nonempty(std::string_view text, char separator);

using PathParams = std::map<std::string, std::string, std::less<>>;
using RouteFn = std::function<Reply(const Request&, const PathParams&, const ResponderPtr&)>;

class Router : public Handler {
 public:
  // Patterns are matched in the order added. Throws std::invalid_argument for
  // a pattern that does not start with '/' or has "{x*}" before its end.
  void add(std::string method, std::string_view pattern, RouteFn fn);
  // A route to a member function of `api`, which the route keeps alive (the
  // endpoints of one API share its state):
  //   router.add("GET", "/api/v1/status", api, &NativeApi::status);
  template <typename Api>
  void add(std::string method, std::string_view pattern, std::shared_ptr<Api> api,
           Reply (Api::*member)(const Request&, const PathParams&, const ResponderPtr&)) {
    add(std::move(method), pattern,
        [api = std::move(api), member](const Request& r, const PathParams& p,
                                       const ResponderPtr& later) {
          return ((*api).*member)(r, p, later);
        });
  }
  Reply handle(const Request& request, const ResponderPtr& later) override;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    RouteFn fn;
  };
  static bool match(const Route& route, const std::vector<std::string_view>& path,
                    PathParams& params);
  std::vector<Route> routes_;
};

}  // namespace cascade::http
