#pragma once
// The two classes of a service list's versions (protocol section 5.8). A hub
// issues versions for its own registry's lists below 2^63 and sets the top
// bit on those of lists it composes with an upper tier's answer, so the two
// never equal each other: a consumer that held one gets the whole list when a
// service turns local or cross-tier, and versions compare only within a class.

#include <cstdint>

namespace cascade::proto {

inline constexpr std::uint64_t kCrossTierVersionBit = std::uint64_t{1} << 63;

}  // namespace cascade::proto
