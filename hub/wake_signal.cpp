#include "cascade/hub/wake_signal.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace cascade::hub {

WakeSignal::WakeSignal() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

WakeSignal::~WakeSignal() {
  ::close(fd_);
}

void WakeSignal::raise() {
  const std::uint64_t one = 1;
  // Only EAGAIN can fail here (the counter at its maximum): the waiting
  // thread has a wake-up pending already.
  [[maybe_unused]] const auto written = ::write(fd_, &one, sizeof one);
}

void WakeSignal::reset() {
  std::uint64_t raises = 0;
  // EAGAIN when nothing was raised: nothing to reset.
  [[maybe_unused]] const auto read = ::read(fd_, &raises, sizeof raises);
}

}  // namespace cascade::hub
