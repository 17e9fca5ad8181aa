#include "cascade/agent/dns/dns_order.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "cascade/agent/picker.hpp"

namespace cascade::agent::dns {

std::vector<proto::Instance> dns_order(const std::vector<proto::Instance>& instances, Rng& rng) {
  auto served = eligible_instances(instances);
  // Weighted random order without replacement (Efraimidis and Spirakis): each
  // instance draws -ln(u)/weight, an exponential variable of rate `weight`,
  // and the smallest comes first; the chance of coming first is then
  // proportional to the weight, and so on down the list.
  struct Keyed {
    std::uint32_t tier;
    bool unconfirmed;
    double draw;
    std::size_t index;
  };
  std::vector<Keyed> keys;
  keys.reserve(served.size());
  for (std::size_t i = 0; i < served.size(); ++i) {
    const auto& in = served[i];
    const double u = 1.0 - rng.unit();  // (0, 1]: the logarithm stays finite
    keys.push_back({in.tier, in.health == proto::Health::kUnconfirmed,
                    -std::log(u) / static_cast<double>(in.weight), i});
  }
  std::sort(keys.begin(), keys.end(), [](const Keyed& a, const Keyed& b) {
    return std::tie(a.tier, a.unconfirmed, a.draw, a.index) <
           std::tie(b.tier, b.unconfirmed, b.draw, b.index);
  });
  std::vector<proto::Instance> ordered;
  ordered.reserve(served.size());
  for (const auto& key : keys)
    ordered.push_back(std::move(served[key.index]));
  return ordered;
}

}  // namespace cascade::agent::dns
