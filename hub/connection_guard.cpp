#include "cascade/hub/connection_guard.hpp"

#include <algorithm>

namespace cascade::hub {

std::string check_connection_guard_config(const ConnectionGuardConfig& config) {
  if (config.idle_timeout.count() < 0) return "the idle timeout must not be negative";
  if (config.max_idle_closes_per_tick == 0)
    return "at least one idle connection must be closed per tick";
  return {};
}

std::size_t effective_connection_limit(std::size_t configured, std::uint64_t open_file_limit,
                                       std::size_t reserve) {
  const std::uint64_t room = open_file_limit > reserve ? open_file_limit - reserve : 1;
  if (configured == 0) return static_cast<std::size_t>(room);
  return static_cast<std::size_t>(std::min<std::uint64_t>(configured, room));
}

std::vector<std::pair<std::string, std::uint64_t>> ConnectionCounters::list() const {
  std::vector<std::pair<std::string, std::uint64_t>> out;
#define CASCADE_LIST_COUNTER(name) out.emplace_back(#name, name);
  CASCADE_CONNECTION_COUNTERS(CASCADE_LIST_COUNTER)
#undef CASCADE_LIST_COUNTER
  return out;
}

bool ConnectionGuard::accepted(int fd, MonoTime now) {
  ++counters_.connections_accepted;
  if (auto it = connections_.find(fd); it != connections_.end()) forget(it);
  if (config_.max_connections != 0 && connections_.size() >= config_.max_connections) {
    ++counters_.connections_refused;
    return false;
  }
  Connection& c = connections_.try_emplace(fd, fd).first->second;
  if (config_.idle_timeout.count() > 0) idle_.add(c, now + config_.idle_timeout);
  return true;
}

void ConnectionGuard::valid_message(int fd, MonoTime now, PeerKind kind) {
  auto it = connections_.find(fd);
  if (it == connections_.end() || it->second.trusted) return;
  auto& c = it->second;
  if (kind == PeerKind::kTrusted) {
    idle_.remove(c);
    c.trusted = true;
    ++trusted_;
  } else if (c.queued()) {
    idle_.renew(c, now + config_.idle_timeout);
  }
}

void ConnectionGuard::closed(int fd) {
  ++counters_.connections_closed;
  if (auto it = connections_.find(fd); it != connections_.end()) forget(it);
}

std::vector<int> ConnectionGuard::tick(MonoTime now) {
  std::vector<int> out;
  idle_.expire(now, config_.max_idle_closes_per_tick, [&](Connection& c) {
    const int fd = c.fd;
    connections_.erase(fd);  // `c` is gone after this line
    out.push_back(fd);
  });
  counters_.connections_idle_closed += out.size();
  if (auto next = idle_.next_deadline(); next && *next <= now) ++counters_.idle_closes_deferred;
  return out;
}

void ConnectionGuard::forget(std::unordered_map<int, Connection>::iterator it) {
  idle_.remove(it->second);
  if (it->second.trusted) --trusted_;
  connections_.erase(it);
}

}  // namespace cascade::hub
