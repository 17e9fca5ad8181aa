#pragma once
// The groups a hub serves to its subscribers, versioned like service lists
// (hub/registry.hpp): a version is (hub_epoch << 40) | counter, and a bounded
// log of what each version changed turns "I hold version v" into a delta.
//
// What is served is decided elsewhere (hub/config_groups.hpp merges a hub's
// own keys over the upper tier's); publish() takes the whole group as it
// should now be served and records the difference as one new version.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "cascade/common/protocol.hpp"

namespace cascade::hub {

using ConfigEntries = std::map<std::string, proto::ConfigEntry, std::less<>>;

// The version of a group no tier ever served: issued versions are
// (epoch << 40) | counter with an epoch of at least 1, so never 1.
inline constexpr std::uint64_t kNeverServedVersion = 1;

class ServedConfig {
 public:
  struct Group {
    std::uint64_t version = 0;
    ConfigEntries entries;
    // The keys each version changed, ascending; versions up to log_floor are
    // no longer in it (a holder of an older version gets the whole group).
    struct Change {
      std::uint64_t version;
      std::set<std::string, std::less<>> keys;
    };
    std::deque<Change> log;
    std::uint64_t log_floor = 0;
  };

  ServedConfig(std::uint64_t hub_epoch, std::size_t log_capacity);

  // A version no group has had: the one the next change publishes with.
  std::uint64_t issue() { return (epoch_ << 40) | ++counter_; }

  // Serves `entries` as the group from now on when they differ from what is
  // served, under `version` (from issue()), or under a version issued only
  // then (nullopt); returns whether they differed.
  bool publish(std::string_view group, ConfigEntries entries,
               std::optional<std::uint64_t> version = std::nullopt);

  // What a holder of `held` needs; nullopt when it is current. A group never
  // served, or served empty, is `gone` (a group never served has version
  // kNeverServedVersion, so a subscriber declaring 0 hears of it once).
  std::optional<proto::ConfigUpdate> update_for(std::string_view group, std::uint64_t held) const;

  const Group* find(std::string_view group) const;
  const std::map<std::string, Group, std::less<>>& groups() const { return groups_; }

 private:
  static std::set<std::string, std::less<>> changed_keys(const ConfigEntries& before,
                                                         const ConfigEntries& after);
  bool can_delta_from(const Group& g, std::uint64_t held) const;

  std::uint64_t epoch_;
  std::uint64_t counter_ = 0;
  std::size_t log_capacity_;
  std::map<std::string, Group, std::less<>> groups_;
};

}  // namespace cascade::hub
