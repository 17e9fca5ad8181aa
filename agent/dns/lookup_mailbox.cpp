#include "cascade/agent/dns/lookup_mailbox.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace cascade::agent::dns {

LookupMailbox::LookupMailbox() {
  fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "DNS: eventfd");
}

LookupMailbox::~LookupMailbox() {
  ::close(fd_);
}

void LookupMailbox::post(std::uint64_t ticket, std::optional<Resolution> answer) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    deliveries_.emplace_back(ticket, std::move(answer));
  }
  if (std::this_thread::get_id() != owner_.load()) wake();
}

void LookupMailbox::wake() {
  const std::uint64_t one = 1;
  // Fails only when the counter is about to overflow: it is readable then anyway.
  [[maybe_unused]] const auto written = ::write(fd_, &one, sizeof one);
}

std::vector<LookupMailbox::Delivery> LookupMailbox::take() {
  std::lock_guard lock(mu_);
  return std::exchange(deliveries_, {});
}

void LookupMailbox::clear_wake() {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto read = ::read(fd_, &count, sizeof count);  // EAGAIN: already clear
}

void LookupMailbox::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  deliveries_.clear();
}

}  // namespace cascade::agent::dns
