#pragma once
// One registered instance as the hub's registry holds it: its owner's report
// in a compact form, who else reports it, and this hub's verdict about it.
//
// Why not a proto::Instance: that is ~200 bytes of inline strings and a map
// before any of their heap blocks, and a hub of a million instances holds a
// million of them. Here the id is not stored at all (its InstanceSlot holds
// it and passes it in), the owner and address are inline short strings
// (CompactText, AddressText), the zone and the metadata set are shared with
// every instance that has the same ones (InternPool), and what few instances
// have (claimants, a verdict, a lower tier's health reason) lives in one
// out-of-line block, absent for the usual instance. A proto::Instance is
// built only when one is sent or written.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/protocol.hpp"
#include "cascade/hub/compact_text.hpp"
#include "cascade/hub/instance_rows.hpp"
#include "cascade/hub/intern_pool.hpp"

namespace cascade::hub {

// A node other than the owner whose set holds the instance too: the hubs of
// a multi-homed tier all report their agents upstream, or an instance moved
// between agents. One of them takes over when the owner drops it.
struct Claim {
  std::string node;
  bool same_content = true;  // reported exactly what the entry holds now
};

// This hub's own verdicts about an instance, kept apart from what its owner
// reports (so digests and claims compare reports only) and laid over it in
// every list the hub serves.
struct Verdict {
  proto::Health health = proto::Health::kOk;  // isolated / unconfirmed by this hub
  std::string reason{};
  bool operator==(const Verdict&) const = default;
};

using Metadata = std::map<std::string, std::string>;

struct MetadataHash {
  std::size_t operator()(const Metadata& metadata) const;
};

// The registry's shared copies of the values instances repeat.
struct InstanceInterner {
  InternPool<std::string> zones;
  InternPool<Metadata, MetadataHash> metadata;
};

class InstanceEntry {
 public:
  CompactText owner;  // node id of the registering agent (kStaticOwner: add-static)

  // The report as its owner made it (what its set digest and the store
  // hold), and what consumers get: the report with this hub's verdict and
  // the operator's mark over it.
  proto::Instance report(std::string_view id) const;
  proto::Instance served(std::string_view id) const;
  // What the store keeps of the report, as views into this entry (valid
  // while it is unchanged); the caller adds the row and the service.
  InstanceFields stored_fields(std::string_view id) const;
  // The report has exactly this content (the id aside: the caller's key).
  bool reports(const proto::Instance& in) const;
  void set_report(const proto::Instance& in, InstanceInterner& interner);

  std::string_view address() const { return address_; }
  proto::InstanceStatus status() const { return status_; }  // as reported
  // As reported: set by a lower-tier hub in what it sends up.
  proto::Health reported_health() const { return health_; }
  // The health consumers see: this hub's verdict, else what a lower tier reported.
  proto::Health health() const {
    return verdict().health != proto::Health::kOk ? verdict().health : health_;
  }

  const Verdict& verdict() const;
  void set_verdict(Verdict verdict);

  std::span<const Claim> claimants() const;
  void add_claim(std::string node, bool same_content);
  void drop_claim(std::string_view node);
  // The oldest claim, taken out (the registry hands the instance to it).
  Claim take_first_claim();
  // The report changed: no claimant is known to report the same any more.
  void claims_differ();

 private:
  // What few instances have; absent while all of it is empty.
  struct Extra {
    std::vector<Claim> claimants;
    Verdict verdict;
    std::string health_reason;  // with the reported health, from a lower tier
    bool empty() const {
      return claimants.empty() && verdict == Verdict{} && health_reason.empty();
    }
  };
  Extra& extra();
  void drop_extra_if_empty();

  AddressText address_;
  SharedText zone_;
  InternPool<Metadata, MetadataHash>::Ref metadata_;  // nullptr: none
  std::unique_ptr<Extra> extra_;
  std::uint32_t weight_ = 100;
  std::uint32_t tier_ = 0;
  proto::InstanceStatus status_ = proto::InstanceStatus::kUp;
  proto::Health health_ = proto::Health::kOk;

 public:
  // An operator's mark (cascadectl mark-out-of-service): served with status
  // OUT_OF_SERVICE whatever its owner reports. Kept by Registry from its
  // overrides, which outlive the entry. (Last, beside the small fields.)
  bool out_of_service = false;
};

}  // namespace cascade::hub
