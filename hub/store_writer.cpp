#include "cascade/hub/store_writer.hpp"

#include <pthread.h>

#include <utility>

namespace cascade::hub {

StoreWriter::StoreWriter(HubStore& store) : store_(store) {
  thread_ = std::thread([this] { serve(); });
}

StoreWriter::~StoreWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

std::uint64_t StoreWriter::submit(PersistBatch batch) {
  busy_ = true;
  {
    std::lock_guard lock(mutex_);
    submitted_ = Outcome{++last_ticket_, std::move(batch), std::nullopt, {}};
  }
  wake_.notify_one();
  return last_ticket_;
}

std::optional<StoreWriter::Outcome> StoreWriter::take_outcome() {
  // Reset before looking: a commit finishing meanwhile wakes the next poll.
  done_signal_.reset();
  std::lock_guard lock(mutex_);
  if (!finished_) return std::nullopt;
  busy_ = false;
  return std::exchange(finished_, std::nullopt);
}

StoreWriter::Outcome StoreWriter::wait() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_.has_value(); });
  busy_ = false;
  return *std::exchange(finished_, std::nullopt);
}

void StoreWriter::serve() {
  pthread_setname_np(pthread_self(), "store-writer");  // found by name in a profile
  std::unique_lock lock(mutex_);
  for (;;) {
    // A batch in hand is committed even when stopping: its replies wait.
    wake_.wait(lock, [&] { return submitted_.has_value() || stopping_; });
    if (!submitted_) return;
    auto job = *std::exchange(submitted_, std::nullopt);
    lock.unlock();
    auto outcome = commit(job.ticket, std::move(job.batch));
    lock.lock();
    finished_ = std::move(outcome);
    done_.notify_one();
    done_signal_.raise();
  }
}

StoreWriter::Outcome StoreWriter::commit(std::uint64_t ticket, PersistBatch batch) {
  Outcome outcome{ticket, std::move(batch), std::nullopt, {}};
  const auto started = std::chrono::steady_clock::now();
  try {
    store_.apply(outcome.batch);
  } catch (const std::exception& e) {
    outcome.error = e.what();
  }
  outcome.took = std::chrono::steady_clock::now() - started;
  return outcome;
}

}  // namespace cascade::hub
