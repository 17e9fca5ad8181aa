#include "cascade/hub/granted_stretch.hpp"

#include <algorithm>

namespace cascade::hub {

std::optional<std::uint32_t> GrantedStretch::on_pass(MonoTime now, std::uint32_t stretch) {
  stretch = std::max<std::uint32_t>(stretch, 1);
  if (stretch >= held_) {
    lower_at_.reset();
    if (stretch == held_) return std::nullopt;
    held_ = stretch;
    return held_;
  }
  if (!lower_at_) {
    lower_at_ = now + lease_ * held_;
    granted_while_waiting_ = stretch;
    return std::nullopt;
  }
  granted_while_waiting_ = std::max(granted_while_waiting_, stretch);
  if (now < *lower_at_) return std::nullopt;
  // Every grant of held_ has run a lease; what was granted since still may
  // be held, for one lease of its own from now.
  held_ = granted_while_waiting_;
  lower_at_.reset();
  if (stretch < held_) {
    lower_at_ = now + lease_ * held_;
    granted_while_waiting_ = stretch;
  }
  return held_;
}

void GrantedStretch::restore(std::uint32_t stored) {
  held_ = std::max<std::uint32_t>(stored, 1);
  lower_at_.reset();
}

}  // namespace cascade::hub
