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
  snapshot.age = now - held->confirmed_at;
  snapshot.stale = !held->version_trusted || snapshot.age > options_.beat_interval * 3;
  return snapshot;
}

std::optional<ConfigSnapshot> Client::config(std::string_view group) {
  require_group(group);
  std::unique_lock lock(mu_);
  const auto now = clock_.now();
  const bool first = !core_.configs().follows(group);
  core_.use_config(now, group);
  if (first) wake();  // the core beats within change_delay: the loop must look again
  const bool hubs_down = !core_.hub_reachable(now) && core_.failovers() > 0;
  if (!config_answered(group) && !hubs_down) {
    // The core has no deadline of its own for a config answer: the wait ends
    // at query_timeout, like a first lookup's.
    const auto deadline = std::chrono::steady_clock::now() + options_.query_timeout;
    cv_.wait_until(lock, deadline, [&] { return config_answered(group) || shut_down_; });
  }
  return config_snapshot(clock_.now(), group);
}

std::optional<std::string> Client::config_value(std::string_view group, std::string_view key) {
  auto snapshot = config(group);
  return snapshot ? snapshot->value(key) : std::nullopt;
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
    levers_.update(core_.configs());
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
