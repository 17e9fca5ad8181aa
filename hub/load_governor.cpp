#include "cascade/hub/load_governor.hpp"

#include <algorithm>

namespace cascade::hub {

namespace {
// Weight of the latest saturated window in the capacity estimate.
constexpr double kSmoothing = 0.3;
}  // namespace

LoadGovernor::LoadGovernor(const LoadGovernorConfig& config, Duration beat_interval)
    : config_(config), beat_interval_(beat_interval) {
  config_.max_stretch = std::max<std::uint32_t>(config_.max_stretch, 1);
}

Duration LoadGovernor::granted_interval() const {
  return stretch_ > 1 ? interval_at(stretch_) : Duration{0};
}

void LoadGovernor::resume(MonoTime now, std::uint32_t stretch) {
  stretch_ = std::clamp<std::uint32_t>(stretch, 1, config_.max_stretch);
  // Nodes beat within the interval they hold: judged only after one.
  settled_at_ = now + interval_at(stretch_);
  calm_since_.reset();
}

void LoadGovernor::on_pass(MonoTime now, std::chrono::microseconds busy, bool backlog,
                           std::uint64_t beats, std::uint64_t shed) {
  if (!started_) {
    started_ = true;
    window_start_ = now - std::chrono::duration_cast<Duration>(busy);
    beats_at_window_ = beats;
    shed_at_window_ = shed;
  }
  beats_ = beats;
  shed_ = shed;
  busy_ += busy;
  ++passes_;
  backlogged_ += backlog ? 1 : 0;
  if (now - window_start_ >= config_.window) close_window(now);
}

bool LoadGovernor::saturated(Duration length) const {
  return shed_ > shed_at_window_ || backlogged_ >= config_.saturated_backlog_share * passes_ ||
         busy_ >= length * config_.saturated_busy;
}

bool LoadGovernor::calm(Duration length, double beats_per_second) const {
  if (backlogged_ != 0) return false;
  if (busy_ <= length * config_.idle_busy) return true;
  if (capacity_ > 0) return beats_per_second <= capacity_ * config_.calm_share;
  return busy_ <= length * config_.calm_share;
}

void LoadGovernor::close_window(MonoTime now) {
  const auto length = now - window_start_;
  const double rate = static_cast<double>(beats_ - beats_at_window_) /
                      std::chrono::duration<double>(length).count();
  const bool is_saturated = saturated(length);
  if (is_saturated)
    capacity_ = capacity_ > 0 ? kSmoothing * rate + (1 - kSmoothing) * capacity_ : rate;
  const bool is_calm = !is_saturated && calm(length, rate);
  saturated_in_a_row_ = is_saturated ? saturated_in_a_row_ + 1 : 0;
  if (!is_calm || now < settled_at_)
    calm_since_.reset();
  else if (!calm_since_)
    calm_since_ = now;  // counted from the first whole calm window

  // Doubling again waits for the last doubling's effect; undoing a halving
  // (back to a stretch the load was fine at) does not.
  const bool doubling =
      saturated_in_a_row_ >= config_.saturated_windows &&
      (now >= settled_at_ || (relax_watched_until_ && now <= *relax_watched_until_)) &&
      stretch_ < config_.max_stretch;
  watch_last_halving(now, doubling);
  if (doubling) {
    change_stretch(now, std::min(stretch_ * 2, config_.max_stretch));
  } else if (calm_since_ && stretch_ > 1 &&
             now - *calm_since_ >= std::max(interval_at(stretch_), relax_hold_)) {
    relax_watched_until_ = now + 2 * interval_at(stretch_);
    change_stretch(now, stretch_ / 2);
  }
  window_start_ = now;
  busy_ = std::chrono::microseconds{0};
  beats_at_window_ = beats_;
  shed_at_window_ = shed_;
  passes_ = 0;
  backlogged_ = 0;
}

void LoadGovernor::watch_last_halving(MonoTime now, bool doubling) {
  if (!relax_watched_until_) return;
  if (doubling) {
    relax_hold_ = std::min(std::max(2 * relax_hold_, 4 * interval_at(stretch_)),
                           std::max(config_.max_relax_hold, Duration{1}));
  } else if (now <= *relax_watched_until_) {
    return;
  } else {
    relax_hold_ /= 2;  // it held: the next one comes sooner
  }
  relax_watched_until_.reset();
}

void LoadGovernor::change_stretch(MonoTime now, std::uint32_t to) {
  // Nodes take the new grant at their next beat, which comes at the interval
  // they hold now; from then on the load is the new one.
  settled_at_ = now + interval_at(stretch_);
  ++(to > stretch_ ? counters_.stretched : counters_.relaxed);
  stretch_ = to;
  saturated_in_a_row_ = 0;
  calm_since_.reset();
}

}  // namespace cascade::hub
