#pragma once
// Follows every change of the scale scenario (an instance added or removed)
// until every consumer of its service holds it. A consumer's cache changes
// only when it takes a DownBeat's update (a reply or a push) or a
// QueryReply, so those are the moments checked, by asking the cache through
// `Holds` (nothing is copied). Keeps the fault windows that stretch a
// change's deadline, and the removed instances the audits look for at the
// hubs.
//
// An addition whose instance is removed again, within its deadline, before
// every consumer saw it is `undone`: those consumers never will, nor need to
// (the churn draws among all running providers, a new one included: at a
// million agents one removal in a few thousand overtakes its own addition).
//
// Thread-safety: one thread (in threaded lock step, the agents' partition's,
// which also runs what comes between windows).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/sim/tiered_observer.hpp"

namespace cascade::sim {

class ChangeTracker final : public TieredObserver {
 public:
  struct Change {
    std::uint32_t service = 0;
    std::string instance_id;
    bool added = false;
    MonoTime at;
    std::size_t phase = 0;
    std::vector<std::uint32_t> waiting;  // consumers that have not seen it yet
    std::optional<MonoTime> seen_by_all;
    bool undone = false;  // an addition its removal overtook (above)
  };
  struct Removed {
    std::uint32_t service = 0;
    std::string instance_id;
    MonoTime at;
  };
  using Clock = std::function<MonoTime()>;
  // Whether the agent's cache lists the instance (nullopt: it holds no list).
  using Holds = std::function<std::optional<bool>(std::size_t agent, const proto::ServiceKey&,
                                                  const std::string& instance_id)>;

  // `index`: the services by name; their indexes are those of every other
  // argument. `bound`: a change's time to reach every consumer; `recovery`:
  // added to a fault's end before its bound starts again.
  ChangeTracker(Clock now, Holds holds, const std::unordered_map<std::string, std::uint32_t>& index,
                Duration bound, Duration recovery);

  void add_consumer(std::size_t agent, const std::vector<proto::ServiceKey>& uses);
  const std::vector<std::uint32_t>& consumers_of(std::uint32_t service) const {
    return consumers_of_[service];
  }

  void note_change(std::uint32_t service, std::string id, bool added, std::size_t phase);

  // Changes whose bound overlaps [from, to] get until `to` plus one
  // recovery and one bound.
  void fault(MonoTime from, MonoTime to) { faults_.emplace_back(from, to); }
  MonoTime deadline(MonoTime at) const;

  void on_agent_received(MonoTime now, std::size_t agent, const proto::Message& m) override;

  const std::vector<Change>& changes() const { return changes_; }
  std::vector<Removed>& removed() { return removed_; }

 private:
  void recheck(MonoTime now, std::size_t agent, const proto::ServiceKey& key);
  void undo_addition(std::uint32_t service, const std::string& id);

  Clock now_;
  Holds holds_;
  const std::unordered_map<std::string, std::uint32_t>& index_;  // service name -> index
  Duration bound_;
  Duration recovery_;
  std::vector<std::vector<std::uint32_t>> consumers_of_;  // by service
  std::vector<bool> is_consumer_;                         // by agent
  std::vector<Change> changes_;
  std::vector<std::vector<std::size_t>> pending_;  // by service: changes not seen by all
  std::vector<Removed> removed_;                   // not yet checked gone from every hub
  std::vector<std::pair<MonoTime, MonoTime>> faults_;
};

}  // namespace cascade::sim
