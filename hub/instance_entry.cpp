#include "cascade/hub/instance_entry.hpp"

#include <algorithm>
#include <utility>

namespace cascade::hub {

namespace {
const Verdict kNoVerdict{};
}  // namespace

std::size_t MetadataHash::operator()(const Metadata& metadata) const {
  std::size_t h = metadata.size();
  for (const auto& [key, value] : metadata) {
    h = h * 31 + std::hash<std::string>{}(key);
    h = h * 31 + std::hash<std::string>{}(value);
  }
  return h;
}

proto::Instance InstanceEntry::report(std::string_view id) const {
  proto::Instance in;
  in.id = id;
  in.address = address_.view();
  in.weight = weight_;
  in.zone = zone_.str();
  in.status = status_;
  if (metadata_) in.metadata = *metadata_;
  in.tier = tier_;
  in.health = health_;
  if (extra_) in.health_reason = extra_->health_reason;
  return in;
}

InstanceFields InstanceEntry::stored_fields(std::string_view id) const {
  InstanceFields fields;
  fields.id = id;
  fields.owner = owner.view();
  fields.address = address_.view();
  fields.zone = zone_.str();
  fields.metadata = metadata_ ? &*metadata_ : nullptr;
  fields.weight = weight_;
  fields.status = status_;
  return fields;
}

proto::Instance InstanceEntry::served(std::string_view id) const {
  proto::Instance in = report(id);
  if (out_of_service) in.status = proto::InstanceStatus::kOutOfService;
  if (const Verdict& v = verdict(); v.health != proto::Health::kOk) {
    in.health = v.health;
    in.health_reason = v.reason;
  }
  return in;
}

bool InstanceEntry::reports(const proto::Instance& in) const {
  static const Metadata kNoMetadata;
  const std::string& reason = extra_ ? extra_->health_reason : SharedText::empty_text();
  return address_ == in.address && weight_ == in.weight && zone_ == in.zone &&
         status_ == in.status && tier_ == in.tier && health_ == in.health &&
         reason == in.health_reason && (metadata_ ? *metadata_ : kNoMetadata) == in.metadata;
}

void InstanceEntry::set_report(const proto::Instance& in, InstanceInterner& interner) {
  address_ = in.address;
  zone_ = SharedText(in.zone, interner.zones);
  metadata_ = in.metadata.empty() ? nullptr : interner.metadata.intern(in.metadata);
  weight_ = in.weight;
  tier_ = in.tier;
  status_ = in.status;
  health_ = in.health;
  if (!in.health_reason.empty() || extra_) {
    extra().health_reason = in.health_reason;
    drop_extra_if_empty();
  }
}

const Verdict& InstanceEntry::verdict() const {
  return extra_ ? extra_->verdict : kNoVerdict;
}

void InstanceEntry::set_verdict(Verdict verdict) {
  extra().verdict = std::move(verdict);
  drop_extra_if_empty();
}

std::span<const Claim> InstanceEntry::claimants() const {
  if (!extra_) return {};
  return extra_->claimants;
}

void InstanceEntry::add_claim(std::string node, bool same_content) {
  extra().claimants.push_back({std::move(node), same_content});
}

void InstanceEntry::drop_claim(std::string_view node) {
  if (!extra_) return;
  std::erase_if(extra_->claimants, [&](const Claim& c) { return c.node == node; });
  drop_extra_if_empty();
}

Claim InstanceEntry::take_first_claim() {
  auto& claims = extra().claimants;
  Claim first = std::move(claims.front());
  claims.erase(claims.begin());
  drop_extra_if_empty();
  return first;
}

void InstanceEntry::claims_differ() {
  if (!extra_) return;
  for (auto& claim : extra_->claimants)
    claim.same_content = false;
}

InstanceEntry::Extra& InstanceEntry::extra() {
  if (!extra_) extra_ = std::make_unique<Extra>();
  return *extra_;
}

void InstanceEntry::drop_extra_if_empty() {
  if (extra_ && extra_->empty()) extra_.reset();
}

}  // namespace cascade::hub
