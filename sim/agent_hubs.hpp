#pragma once
// An agent's hubs in failover order, by hub index, held inline: 16 bytes, four
// agents' lists to a cache line, instead of a std::vector's 24 bytes and its
// heap block (~40 MB less at a million agents). Every message to or from an
// agent looks its list up: which hub is at a place, at which place a hub is.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace cascade::sim {

class AgentHubs {
 public:
  static constexpr std::size_t kMaxHubs = 7;
  static constexpr std::size_t kMaxHubIndex = UINT16_MAX;

  AgentHubs() = default;
  // Throws std::invalid_argument beyond kMaxHubs hubs or a hub index beyond kMaxHubIndex.
  explicit AgentHubs(std::span<const std::size_t> hubs) {
    if (hubs.size() > kMaxHubs)
      throw std::invalid_argument("an agent beats to at most " + std::to_string(kMaxHubs) +
                                  " hubs");
    for (const auto hub : hubs) {
      if (hub > kMaxHubIndex) throw std::invalid_argument("hub index beyond an agent's list");
      hubs_[count_++] = static_cast<std::uint16_t>(hub);
    }
  }

  std::size_t size() const { return count_; }
  std::size_t front() const { return at(0); }
  std::size_t at(std::size_t place) const {
    if (place >= count_) throw std::out_of_range("no hub at this place in the agent's list");
    return hubs_[place];
  }
  std::optional<std::size_t> place_of(std::size_t hub) const {
    for (std::size_t place = 0; place < count_; ++place)
      if (hubs_[place] == hub) return place;
    return std::nullopt;
  }

 private:
  std::array<std::uint16_t, kMaxHubs> hubs_{};
  std::uint8_t count_ = 0;
};
static_assert(sizeof(AgentHubs) == 16, "four agents' lists to a cache line");

}  // namespace cascade::sim
