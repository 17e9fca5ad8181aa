#include "cascade/hub/owner_mailbox.hpp"

#include <spdlog/spdlog.h>

namespace cascade::hub {

void OwnerMailbox::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.raise();
}

std::size_t OwnerMailbox::run_pending() {
  // Reset before taking the tasks: a post racing with us wakes the next poll.
  wake_.reset();
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
