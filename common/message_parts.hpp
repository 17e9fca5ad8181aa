#pragma once
// Lists larger than a frame travel in parts (schemas/protocol-v1.md, section
// 5.13). The sender splits with split_into_parts(); the receiver puts the
// parts back together with PartAssembler before it applies anything, so a
// service of any size reaches its consumers while every frame stays far
// below the receiver's limit.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::proto {

// `message` as it goes out: itself when it encodes within `max_bytes`;
// otherwise, for a DownBeat, the reply (its header, its stale lists and the
// updates that fit) followed by pushes carrying the rest, service updates
// before config updates, an update too large for one part split into
// consecutive updates with `more` (a service's by its instances and removed
// ids, a config group's by its entries and removed keys); for a QueryReply,
// replies with the same request id, all but the last with `more`; for a
// ConfigReply the same, its entries, group summaries and history spread over
// them. A part holds at least one instance (entry, summary, change), so one
// larger than `max_bytes` still goes. Other messages are never split.
std::vector<Message> split_into_parts(Message message, std::size_t max_bytes = kMaxPartBytes);

// Collects the parts of split updates and replies until the last one came.
// A part that does not continue what is held (another version or kind, or a
// new first part) drops it: a lost part leaves the receiver on its old
// version, which its next beat declares, and the hub sends the list again.
class PartAssembler {
 public:
  // What to apply now: the update itself when it came whole, the assembled
  // update when `part` was the last of its parts, nothing while parts are
  // missing. The reference is valid until the next call.
  const ServiceUpdate* add(const ServiceUpdate& part);
  // The same for config groups' updates (matched by group, revision 6).
  const ConfigUpdate* add(const ConfigUpdate& part);
  // The same for query and config replies (matched by request id).
  const QueryReply* add(const QueryReply& part);
  const ConfigReply* add(const ConfigReply& part);
  // Forgets the parts of a request whose reply ended without them (timed out).
  void forget_reply(std::uint64_t request_id);
  // Forgets everything (the receiver moved to another hub).
  void clear();

  // Parts dropped because what followed did not continue them, or because
  // they grew beyond the bounds below.
  std::uint64_t dropped() const { return dropped_; }

  // A bound on what a sender can make a receiver hold: a million instances
  // (or items of a config reply).
  static constexpr std::size_t kMaxAssembledInstances = 1'000'000;
  // Entries and removed keys of one config update: a served group holds at
  // most kMaxConfigKeysPerGroup keys of each of kMaxConfigTiers tiers, and a
  // delta may remove all of them and set as many.
  static constexpr std::size_t kMaxAssembledConfigItems =
      2 * kMaxConfigKeysPerGroup * kMaxConfigTiers;

 private:
  // Parts on their way and the last whole put together. Allocated with the
  // first part that needs it: most receivers never see a list in parts, and
  // an agent core (a million of them in a simulation) should not carry ~900
  // bytes for it.
  struct Held {
    std::map<ServiceKey, ServiceUpdate> updates;
    std::map<std::uint64_t, QueryReply> replies;
    std::map<std::string, ConfigUpdate> config_updates;
    std::map<std::uint64_t, ConfigReply> config_replies;
    ServiceUpdate assembled_update;
    QueryReply assembled_reply;
    ConfigUpdate assembled_config_update;
    ConfigReply assembled_config_reply;
  };
  template <typename Key, typename M, typename Append>
  const M* add_part(std::map<Key, M> Held::*parts, M Held::*assembled, const Key& key,
                    const M& part, Append&& append_items);

  std::unique_ptr<Held> held_;
  std::uint64_t dropped_ = 0;
};

}  // namespace cascade::proto
