#include "cascade/hub/push_gate.hpp"

#include <algorithm>
#include <string>

namespace cascade::hub {

std::string check_push_config(const PushConfig& config) {
  if (config.delay.count() < 0 || config.delay > Duration{1000})
    return "push delay must be within 0..1000 ms";
  if (config.repeat_gap.count() < 0 || config.repeat_gap > Duration{10'000})
    return "push repeat gap must be within 0..10000 ms";
  if (config.share_percent == 0 || config.share_percent > 100)
    return "notify share must be within 1..100 percent";
  return "";
}

void PushBudget::refill(MonoTime now) {
  const double rate = static_cast<double>(config_.max_per_second);
  if (last_refill_) {
    const auto elapsed = static_cast<double>((now - *last_refill_).count()) / 1000.0;
    tokens_ = std::min(rate, tokens_ + elapsed * rate);
  } else {
    tokens_ = rate;
  }
  last_refill_ = now;
}

PushBudget::Verdict PushBudget::admit(std::size_t ordinal, std::uint64_t rotation) {
  if (config_.notify_switch && (ordinal + rotation) % 100 >= config_.share_percent)
    return Verdict::kBySwitch;
  if (tokens_ < 1.0) return Verdict::kOverRate;
  tokens_ -= 1.0;
  return Verdict::kPush;
}

}  // namespace cascade::hub
