#include "cascade/hub/push_gate.hpp"

#include <string>

namespace cascade::hub {

std::string check_push_config(const PushConfig& config) {
  if (config.delay.count() < 0 || config.delay > Duration{1000})
    return "push delay must be within 0..1000 ms";
  if (config.share_percent == 0 || config.share_percent > 100)
    return "notify share must be within 1..100 percent";
  return "";
}

}  // namespace cascade::hub
