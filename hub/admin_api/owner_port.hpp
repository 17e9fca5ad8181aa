#pragma once
// What the hub's HTTP admin API needs of the thread that owns the hub's
// state (hub/hub_server.hpp), as an interface.
//
// The API's handlers run on the HTTP server's thread: they must never read
// the core there, nor block waiting for the owner. A handler hands the owner
// a task (OwnerPort::run) that keeps the request's Responder; the task runs
// between two passes of the owner's loop, reads or changes the hub through
// Owner, and answers from there, so no HTTP thread ever waits. An operator
// command's answer waits on the owning thread for the commit that holds its
// change, as a cascadectl reply does.

#include <functional>
#include <string_view>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_core.hpp"

namespace cascade::hub::admin_api {

// The hub as a task running on its owning thread sees it. Valid only during
// that task; nothing here may be kept or used from another thread.
class Owner {
 public:
  virtual ~Owner() = default;

  virtual const HubCore& core() const = 0;
  virtual MonoTime now() const = 0;
  // What `cascadectl status` shows: the core's status with the shell's part
  // (security mode, connection and key counters).
  virtual proto::StatusReply status() const = 0;
  // Handles an operator command as cascadectl's is handled (HubCore::handle:
  // validation, role, audit record), sent by `request.actor`, which the
  // caller authenticated, from `peer_address`. Returns the reply; `then` runs
  // on the owning thread once the reply may be given: after the commit that
  // holds the change and its audit record (committed true), or after that
  // commit failed (false; the hub retries it, the change is not yet durable).
  virtual proto::Message command(const proto::AdminRequest& request, std::string_view peer_address,
                                 std::function<void(bool committed)> then) = 0;
};

// Thread-safety: run() from any thread.
class OwnerPort {
 public:
  virtual ~OwnerPort() = default;
  // Runs `task` soon on the owning thread, between two passes of its loop;
  // never on the caller's thread. A task handed over while the hub stops may
  // never run (the HTTP server answers its request 503 when it stops).
  virtual void run(std::function<void(Owner&)> task) = 0;
};

}  // namespace cascade::hub::admin_api
