#include "cascade/common/digest.hpp"

#include <algorithm>
#include <tuple>

namespace cascade::proto {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

class Fnv {
 public:
  void bytes(std::string_view s) {
    u64(s.size());  // length prefix keeps ("ab","c") apart from ("a","bc")
    for (unsigned char c : s)
      mix(c);
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
      mix(static_cast<unsigned char>(v >> (8 * i)));
  }
  std::uint64_t value() const { return h_; }

 private:
  void mix(unsigned char c) {
    h_ ^= c;
    h_ *= kFnvPrime;
  }
  std::uint64_t h_ = kFnvOffset;
};

// splitmix64 finaliser: FNV's low bits mix poorly, and the digests add hashes.
std::uint64_t finish(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

auto sort_key(const Registration& r) {
  return std::tie(r.service, r.instance.id);
}
bool key_less(const Registration& a, const Registration& b) {
  return sort_key(a) < sort_key(b);
}

}  // namespace

void canonicalize(std::vector<Registration>& regs) {
  std::sort(regs.begin(), regs.end(), key_less);
  regs.erase(std::unique(regs.begin(), regs.end()), regs.end());
}

// std::sort takes the same steps for the same comparisons, so members equal
// by key but not in content end in the order canonicalize() leaves them.
std::vector<const Registration*> canonical_order(const std::vector<Registration>& regs) {
  std::vector<const Registration*> order;
  order.reserve(regs.size());
  for (const auto& r : regs)
    order.push_back(&r);
  std::sort(order.begin(), order.end(),
            [](const Registration* a, const Registration* b) { return key_less(*a, *b); });
  order.erase(std::unique(order.begin(), order.end(),
                          [](const Registration* a, const Registration* b) { return *a == *b; }),
              order.end());
  return order;
}

std::uint64_t registration_hash(const Registration& r) {
  Fnv h;
  h.bytes(r.service.name);
  h.bytes(r.service.group);
  const auto& in = r.instance;
  h.bytes(in.id);
  h.bytes(in.address);
  h.u64(in.weight);
  h.bytes(in.zone);
  h.u64(static_cast<std::uint64_t>(in.status));
  h.u64(in.metadata.size());
  for (const auto& [k, v] : in.metadata) {
    h.bytes(k);
    h.bytes(v);
  }
  // Only when set (by a hub), so digests of agents' sets never change.
  if (in.health != Health::kOk || !in.health_reason.empty()) {
    h.u64(static_cast<std::uint64_t>(in.health));
    h.bytes(in.health_reason);
  }
  return finish(h.value());
}

std::uint64_t digest_of(const std::vector<Registration>& regs) {
  SetDigest d;
  for (const auto& r : regs)
    d.add(r);
  return d.value();
}

std::uint64_t config_uses_digest(const std::vector<ConfigUse>& uses) {
  SetDigest d;
  for (const auto& use : uses) {
    Fnv h;
    h.bytes(use.group);
    h.u64(use.version);
    d.add_hash(finish(h.value()));
  }
  return d.value();
}

}  // namespace cascade::proto
