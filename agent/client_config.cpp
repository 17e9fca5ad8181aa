// Client, the config centre: the groups the application follows, the first
// answer it waits for, the callbacks on change, and the levers call() obeys
// (agent/call_levers.hpp), rebuilt whenever a followed group changes.

#include <spdlog/spdlog.h>

#include "cascade/agent/client.hpp"
#include "cascade/common/validate.hpp"

namespace cascade::agent {

namespace {

void require_group(std::string_view group) {
  if (auto error = proto::check_name("config group", group); !error.empty())
    throw std::invalid_argument(error);
}

}  // namespace

bool Client::config_answered(std::string_view group) const {
  const auto* held = core_.configs().find(group);
  return held != nullptr && held->received;
}

std::optional<ConfigSnapshot> Client::config_snapshot(MonoTime now, std::string_view group) const {
  const auto* held = core_.configs().find(group);
  if (held == nullptr || !held->received) return std::nullopt;
  ConfigSnapshot snapshot{std::string(group), held->version, held->entries, held->gone};
  // A group restored from disk and not confirmed since is as old as the
  // wall clock says; a confirmed one as the monotonic clock does.
  snapshot.age = held->snapshot_wall_ms != 0
                     ? Duration{std::max<WallMs>(0, clock_.wall_ms() - held->snapshot_wall_ms)}
                     : now - held->confirmed_at;
  snapshot.stale =
      held->source_stale || !held->version_trusted || snapshot.age > options_.beat_interval * 3;
  return snapshot;
}

void Client::follow_and_wait(std::unique_lock<std::mutex>& lock, std::string_view group) {
  const auto now = clock_.now();
  const bool first = !core_.configs().follows(group);
  core_.use_config(now, group);
  if (first) wake();  // the core beats within change_delay: the loop must look again
  if (config_answered(group)) return;
  // Only a group's first query_timeout is waited for: a group still
  // unanswered after it (no hub, or one waiting for its upper tier) answers
  // at once from then on. The I/O thread, in a callback, cannot wait for
  // itself.
  const auto waited = now - core_.configs().find(group)->followed_since;
  const bool hubs_down = !core_.hub_reachable(now) && core_.failovers() > 0;
  if (hubs_down || waited >= options_.query_timeout || std::this_thread::get_id() == io_.get_id())
    return;
  const auto deadline = std::chrono::steady_clock::now() + (options_.query_timeout - waited);
  cv_.wait_until(lock, deadline, [&] { return config_answered(group) || shut_down_; });
}

std::optional<ConfigSnapshot> Client::config(std::string_view group) {
  require_group(group);
  std::unique_lock lock(mu_);
  follow_and_wait(lock, group);
  return config_snapshot(clock_.now(), group);
}

std::optional<std::string> Client::config_value(std::string_view group, std::string_view key) {
  require_group(group);
  std::unique_lock lock(mu_);
  follow_and_wait(lock, group);
  const auto* held = core_.configs().find(group);
  if (held == nullptr || !held->received) return std::nullopt;
  const auto it = held->entries.find(key);
  return it == held->entries.end() ? std::nullopt : std::optional<std::string>(it->second.value);
}

bool Client::degraded(std::string_view service) {
  if (!levers_.lever(service).degraded) return false;
  levers_.count_degraded();
  return true;
}

void Client::on_config_change(std::string_view group, ConfigCallback callback) {
  require_group(group);
  std::lock_guard lock(mu_);
  config_callbacks_[std::string(group)].push_back(std::move(callback));
  const bool first = !core_.configs().follows(group);
  core_.pin_config(clock_.now(), group);
  if (first) wake();
}

void Client::config_changed(const AgentActions& actions) {
  if (actions.config_changed.empty() && actions.config_dropped.empty()) return;
  std::vector<std::pair<std::vector<ConfigCallback>, ConfigSnapshot>> calls;
  {
    std::lock_guard lock(mu_);
    for (const auto& problem : levers_.update(core_.configs()))
      spdlog::warn("config lever not obeyed: {}", problem);
    for (const auto& group : actions.config_changed) {
      auto callbacks = config_callbacks_.find(group);
      auto snapshot = config_snapshot(clock_.now(), group);
      if (!snapshot) continue;
      std::vector<ConfigCallback> to_call;
      if (callbacks != config_callbacks_.end()) to_call = callbacks->second;
      if (config_listener_) to_call.push_back(config_listener_);
      if (!to_call.empty()) calls.emplace_back(std::move(to_call), std::move(*snapshot));
    }
  }
  cv_.notify_all();  // first config() calls waiting for these groups
  save_config_snapshots(actions.config_changed, actions.config_dropped);
  for (const auto& [callbacks, snapshot] : calls) {
    for (const auto& callback : callbacks) {
      // The application's code must not take the I/O thread down with it.
      try {
        callback(snapshot);
      } catch (const std::exception& e) {
        spdlog::error("on_config_change callback threw for {}: {}", snapshot.group, e.what());
      } catch (...) {
        spdlog::error("on_config_change callback threw for {}", snapshot.group);
      }
    }
  }
}

std::vector<std::string> Client::all_config_groups() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> groups;
  for (const auto& [group, held] : core_.configs().groups())
    groups.push_back(group);
  return groups;
}

void Client::save_config_snapshots(const std::vector<std::string>& keep,
                                   const std::vector<std::string>& drop) {
  if (!store_ || (keep.empty() && drop.empty())) return;
  std::vector<ConfigGroupSnapshot> groups;
  {
    std::lock_guard lock(mu_);
    for (const auto& group : keep)
      if (auto g = core_.config_snapshot_of(group, clock_.wall_ms(), clock_.now()))
        groups.push_back(std::move(*g));
  }
  try {
    store_->save_config_groups(groups, drop);
  } catch (const std::exception& e) {
    spdlog::error("could not save the config snapshot: {}", e.what());
  }
}

// The daemon's HTTP API parks a request for a group not held yet and answers
// it from the listener, so no server thread waits the way config() does.
std::optional<ConfigSnapshot> Client::config_held(std::string_view group) {
  require_group(group);
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  const bool first = !core_.configs().follows(group);
  core_.use_config(now, group);
  if (first) wake();
  return config_snapshot(now, group);
}

void Client::on_any_config_change(ConfigCallback listener) {
  std::lock_guard lock(mu_);
  config_listener_ = std::move(listener);
}

}  // namespace cascade::agent
