#pragma once
// Time as data. Cores never read a clock: adapters pass `now` in. Intervals,
// leases and TTLs use MonoTime (steady, never jumps); wall time is only for
// display and for ages shown to humans.

#include <chrono>
#include <cstdint>

namespace cascade {

using Duration = std::chrono::milliseconds;
using MonoTime = std::chrono::time_point<std::chrono::steady_clock, Duration>;

// Milliseconds since the Unix epoch; display and persisted "fetched at" stamps only.
using WallMs = std::int64_t;

inline std::int64_t to_ms(MonoTime t) {
  return t.time_since_epoch().count();
}
inline MonoTime mono_from_ms(std::int64_t ms) {
  return MonoTime{Duration{ms}};
}

// The one place that reads real clocks. Adapters hold a Clock&; tests hold a FakeClock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime now() const = 0;
  virtual WallMs wall_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  MonoTime now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
  }
  WallMs wall_ms() const override {
    return std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to. Wall time advances in step with it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(MonoTime start = mono_from_ms(1'000'000), WallMs wall = 1'700'000'000'000)
      : now_(start), wall_offset_(wall - to_ms(start)) {}
  MonoTime now() const override { return now_; }
  WallMs wall_ms() const override { return to_ms(now_) + wall_offset_; }
  void advance(Duration d) { now_ += d; }
  void set(MonoTime t) { now_ = t; }

 private:
  MonoTime now_;
  std::int64_t wall_offset_;
};

}  // namespace cascade
