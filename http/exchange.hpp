#pragma once
// One HTTP request and its response, as the handlers of cascade's HTTP
// interfaces see them: plain values, no library types, so handlers are
// tested without a server. Every error body is JSON with a stable code:
//   {"error": {"code": "unknown_service", "message": "no service 'orders'"}}

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/common/net_address.hpp"

namespace cascade::http {

struct Request {
  std::string method;                                       // "GET", "PUT", ...
  std::string path;                                         // decoded, without the query string
  std::map<std::string, std::string, std::less<>> query;    // decoded arguments
  std::map<std::string, std::string, std::less<>> headers;  // names lower-cased
  std::string body;
  SocketAddress peer;
  std::string token_name;  // the name of the bearer token it carried ("" when none needed)

  // "" when absent. Names are case-insensitive (give them lower-case).
  std::string_view header(std::string_view lower_name) const;
  std::optional<std::string_view> arg(std::string_view name) const;
  bool has_arg(std::string_view name) const { return query.contains(name); }
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;

  static Response json(int status, std::string body);
  // The error body above; `code` is stable (clients branch on it), the
  // message is for humans and says what is wrong.
  static Response error(int status, std::string_view code, std::string_view message);
};

// One response given to many requests at once (every watch of a service that
// a change wakes): the server writes its bytes once and sends those same
// bytes to each, where a Response would be copied and written per request.
class SharedResponse {
 public:
  explicit SharedResponse(Response response) : response_(std::move(response)) {}
  const Response& response() const { return response_; }
  // Status line, headers and body as sent, with "Connection: close" or not;
  // written on first use (any thread).
  const std::string& wire(bool keep_alive) const;

 private:
  Response response_;
  mutable std::once_flag once_[2];
  mutable std::string wire_[2];  // [keep_alive]
};

// A response given later, from any thread: a handler that cannot answer at
// once (a watch, a first lookup) keeps it and calls respond() once. Later
// calls are ignored, and so are calls after the server stopped (it answers
// whatever is still pending with 503 first).
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void respond(Response response) = 0;
  // The same, for a response many requests get (see SharedResponse).
  virtual void respond_shared(const std::shared_ptr<const SharedResponse>& response) {
    respond(response->response());
  }
};
using ResponderPtr = std::shared_ptr<Responder>;

// What a handler returns: the response now, or nothing when it kept the
// Responder to answer later.
using Reply = std::optional<Response>;

class Handler {
 public:
  virtual ~Handler() = default;
  // Called on a server thread, which serves other connections meanwhile:
  // never block here (no hub query, no sleep).
  virtual Reply handle(const Request& request, const ResponderPtr& later) = 0;
};

}  // namespace cascade::http
