// HubCore, part five: the config centre's operator side (docs/design-config.md).
// (Followers and pushes are in hub/config_centre.cpp; the beat path calls it.)
//
// - config_edit: sets and removes keys of one group at once, all or nothing
//   (hub/config_groups.hpp checks the limits); the change is a new version of
//   the group, pushed to its followers, and its history records are persisted
//   in the same batch as the audit record, so the reply is durable. The core
//   reads no clock: the records get their wall time when that batch is taken
//   for its commit (take_persist_batch), in memory as in the store.
// - config_rollback: this hub's keys of a group as they were at a version, as
//   a new change (recorded and pushed like any edit).
// - ConfigRequest: reads of what the hub serves, its groups and the history
//   it keeps in memory (ConfigLimits::history_per_group records per group,
//   restored from the store at a restart).

#include <fmt/format.h>

#include "cascade/common/validate.hpp"
#include "cascade/hub/admin_checks.hpp"
#include "cascade/hub/hub_core.hpp"

namespace cascade::hub {

namespace {

proto::AdminReply answer(bool ok, std::string message) {
  return {0, ok, proto::clip_message(std::move(message))};
}

// "set timeout, retries; removed degrade.orders": what the records changed.
std::string describe_changes(const std::vector<ConfigHistoryRecord>& records) {
  std::vector<std::string_view> set, removed;
  for (const auto& r : records)
    (r.new_value ? set : removed).push_back(r.key);
  std::string out;
  if (!set.empty()) out += fmt::format("set {}", fmt::join(set, ", "));
  if (!removed.empty())
    out += fmt::format("{}removed {}", out.empty() ? "" : "; ", fmt::join(removed, ", "));
  return out;
}

proto::AdminReply reply_to_change(std::string_view group, const ConfigGroups::Outcome& outcome,
                                  const ConfigGroups& groups) {
  if (const auto* why = std::get_if<std::string>(&outcome))
    return answer(false, fmt::format("group {}: {}", group, *why));
  const auto& records = std::get<std::vector<ConfigHistoryRecord>>(outcome);
  if (records.empty()) return answer(true, fmt::format("group {}: nothing changed", group));
  const auto* served = groups.served(group);
  return answer(true, fmt::format("group {}: {}; version {}", group, describe_changes(records),
                                  served ? served->version : 0));
}

proto::ConfigChange to_change(const ConfigHistoryRecord& r) {
  return {r.version, r.key, r.old_value, r.new_value, r.author, r.wall_ms};
}

}  // namespace

std::string check_config_request(const proto::AdminRequest& request) {
  if (auto e = proto::check_name("config group", request.config_group); !e.empty()) return e;
  if (request.op == proto::AdminOp::kConfigEdit && request.config_edits.empty())
    return "config_edit names no key to set or remove";
  if (request.op == proto::AdminOp::kConfigRollback && request.config_version == 0)
    return "config_rollback needs the version to go back to";
  return {};
}

proto::AdminReply HubCore::config_edit(MonoTime now, const proto::AdminRequest& request) {
  auto outcome = config_centre_.edit(now, request.config_group, request.config_edits, request.actor,
                                     /*wall_ms=*/0);
  return reply_to_change(request.config_group, outcome, config_centre_.groups());
}

proto::AdminReply HubCore::config_rollback(MonoTime now, const proto::AdminRequest& request) {
  auto outcome = config_centre_.rollback(now, request.config_group, request.config_version,
                                         request.actor, /*wall_ms=*/0);
  auto reply = reply_to_change(request.config_group, outcome, config_centre_.groups());
  if (reply.ok)
    reply.message = proto::clip_message(
        fmt::format("rolled back to version {}: {}", request.config_version, reply.message));
  return reply;
}

proto::ConfigReply HubCore::config_view(const proto::ConfigRequest& request) const {
  proto::ConfigReply reply;
  reply.request_id = request.request_id;
  reply.group = request.group;
  const auto& groups = config_centre_.groups();
  switch (request.view) {
    case proto::ConfigView::kList:
      for (const auto& [name, group] : groups.served().groups())
        reply.groups.push_back(summary_of(name, group));
      reply.ok = true;
      return reply;
    case proto::ConfigView::kHistory: {
      const auto& history = groups.history(request.group);
      for (auto it = history.rbegin(); it != history.rend(); ++it)
        reply.history.push_back(to_change(*it));
      reply.ok = true;
      return reply;
    }
    case proto::ConfigView::kGet:
      return config_get(request, std::move(reply));
  }
  return reply;
}

proto::ConfigReply HubCore::config_get(const proto::ConfigRequest& request,
                                       proto::ConfigReply reply) const {
  const auto* served = config_centre_.groups().served(request.group);
  if (served == nullptr || served->entries.empty()) {
    reply.message = fmt::format("no group {} at hub {}", request.group, config_.hub_id);
    return reply;
  }
  reply.version = served->version;
  if (request.key.empty()) {
    for (const auto& [key, entry] : served->entries)
      reply.entries.push_back(entry);
  } else if (auto it = served->entries.find(request.key); it != served->entries.end()) {
    reply.entries.push_back(it->second);
  } else {
    reply.message = fmt::format("group {} has no key {}", request.group, request.key);
    return reply;
  }
  reply.ok = true;
  return reply;
}

proto::ConfigGroupSummary HubCore::summary_of(const std::string& name,
                                              const ServedConfig::Group& group) const {
  proto::ConfigGroupSummary summary{name, group.version};
  summary.keys = static_cast<std::uint32_t>(group.entries.size());
  for (const auto& [key, entry] : group.entries) {
    summary.bytes += key.size() + entry.value.size();
    if (entry.origin.hub == config_.hub_id) ++summary.own_keys;
  }
  summary.followers = static_cast<std::uint32_t>(config_centre_.followers(name));
  return summary;
}

}  // namespace cascade::hub
