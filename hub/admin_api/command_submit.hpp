#pragma once
// How every operator command of the HTTP admin API reaches the hub: refused
// without a named operator (a bearer token), checked with the core's own
// checks (hub/admin_checks.hpp), handed to the owning thread, where
// HubCore::handle carries it out and audits it as "http:NAME", and answered
// once the commit that holds it was tried: 200 when durable, 503 when not.

#include <atomic>
#include <functional>
#include <optional>

#include "cascade/http/router.hpp"
#include "cascade/hub/admin_api/owner_port.hpp"

namespace cascade::hub::admin_api {

// The HTTP answer to the core's reply, built on the owning thread right
// after it (so it may read the hub's state to say why).
using CommandAnswer = std::function<http::Response(
    const HubCore& core, const proto::AdminRequest& request, const proto::Message& reply)>;

class CommandSubmitter {
 public:
  explicit CommandSubmitter(OwnerPort& owner) : owner_(owner) {}

  // Commands need a named operator: the server refused a request without a
  // token already (401) when tokens are configured; without any, none may.
  static std::optional<http::Response> refuse_operator(const http::Request& request);
  // "http:NAME": who the audit log records.
  static std::string actor_of(const http::Request& request);

  // `command` with its actor and request id set here; `invalid` answers what
  // the checks refuse (400 by default).
  http::Reply submit(const http::Request& request, proto::AdminRequest command,
                     const http::ResponderPtr& later, const CommandAnswer& answer,
                     const std::function<http::Response(const std::string& why)>& invalid = {});

  std::uint64_t next_request_id() { return ++next_request_id_; }

 private:
  OwnerPort& owner_;
  std::atomic<std::uint64_t> next_request_id_{0};
};

// The answer for most commands: 200 with {"op", "ok", "message"}; a refusal
// 409, a key's refusal 403.
http::Response default_command_answer(const HubCore& core, const proto::AdminRequest& request,
                                      const proto::Message& reply);

}  // namespace cascade::hub::admin_api
