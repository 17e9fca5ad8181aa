#pragma once
// Protocol builders shared by the hub, agent and simulation tests: the fields a
// test cares about, defaults for the rest (group "default", weight 100, UP).

#include <string>
#include <utility>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::test_support {

inline proto::ServiceKey key(const std::string& service) {
  return proto::ServiceKey{service, std::string(proto::kDefaultGroup)};
}

inline proto::Instance inst(const std::string& id, const std::string& address) {
  proto::Instance i;
  i.id = id;
  i.address = address;
  return i;
}

// `service` (default group) offered by instance `id` at `address`.
inline proto::Registration reg(const std::string& service, const std::string& id,
                               const std::string& address) {
  proto::Registration r;
  r.service = key(service);
  r.instance = inst(id, address);
  return r;
}

// An operator's edit of a config group's keys (what `cascadectl config set`
// and `config rm` send); request id and actor are the sender's.
inline proto::AdminRequest config_edit(const std::string& group,
                                       std::vector<proto::ConfigEdit> edits) {
  proto::AdminRequest r;
  r.op = proto::AdminOp::kConfigEdit;
  r.service = proto::ServiceKey{"", ""};
  r.config_group = group;
  r.config_edits = std::move(edits);
  return r;
}

}  // namespace cascade::test_support
