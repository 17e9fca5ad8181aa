#include "cascade/hub/owner_mailbox.hpp"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace cascade::hub {

OwnerMailbox::OwnerMailbox() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

OwnerMailbox::~OwnerMailbox() {
  ::close(fd_);
}

void OwnerMailbox::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  const std::uint64_t one = 1;
  // Only EAGAIN can fail here (the counter at its maximum): the owner is
  // awake already, with tasks to run.
  [[maybe_unused]] const auto written = ::write(fd_, &one, sizeof one);
}

std::size_t OwnerMailbox::run_pending() {
  std::uint64_t wakes = 0;
  // Reset before taking the tasks: a post racing with us wakes the next poll.
  [[maybe_unused]] const auto read = ::read(fd_, &wakes, sizeof wakes);
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(mutex_);
    tasks.swap(tasks_);
  }
  for (auto& task : tasks) {
    try {
      task();
    } catch (const std::exception& e) {
      spdlog::error("a task for the owning thread failed: {}", e.what());
    }
  }
  return tasks.size();
}

}  // namespace cascade::hub
