#pragma once
// The thread that commits the hub's write-behind batches, so that the
// serving thread never waits for SQLite.
//
// Why: in a registration storm the commit was most of the serving thread's
// time (at 300k realistic instances: 42% in SqliteHubStore::apply, 24% in
// serving the frames; docs/benchmarks.md), and every beat queued behind it.
// Now the serving thread hands one batch over (submit) and goes on serving;
// the changes it makes meanwhile stay marked in the core and go in the next
// batch, so batches grow while a commit is slow (group commit that adapts to
// the disk). When the commit has been tried, the writer makes poll_item()
// readable; the serving thread takes the outcome and releases the replies
// that waited for that batch, or requeues the batch when it failed.
//
//   writer.submit(core.take_persist_batch(wall));     // serving thread
//   ... poll(..., writer.poll_item(), ...) ...
//   if (auto done = writer.take_outcome()) release(*done);
//
// One batch at a time: the next is submitted only after the outcome of the
// last was taken, so batches commit in the order they were taken.
// Thread-safety: the store belongs to the writer's thread from construction
// to destruction (nothing else may touch it meanwhile); every member function
// is for the one thread that owns the writer.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "cascade/hub/store.hpp"
#include "cascade/hub/wake_signal.hpp"

namespace cascade::hub {

class StoreWriter {
 public:
  struct Outcome {
    std::uint64_t ticket = 0;
    PersistBatch batch;                // as submitted: to requeue when it failed
    std::optional<std::string> error;  // nullopt: committed
    std::chrono::nanoseconds took{};   // the commit's duration
  };

  // Throws std::system_error when the kernel refuses an eventfd.
  explicit StoreWriter(HubStore& store);
  // Waits for the batch in hand to commit, then stops the thread.
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Hands `batch` to the writer's thread; returns its ticket (1, 2, ...).
  // Only when !busy().
  std::uint64_t submit(PersistBatch batch);
  // A batch was submitted and its outcome not taken yet.
  bool busy() const { return busy_; }
  // For the owner's zmq::poll: readable once the submitted batch's commit
  // was tried.
  zmq::pollitem_t poll_item() const { return done_signal_.poll_item(); }
  // The submitted batch's outcome; nullopt while its commit is under way.
  std::optional<Outcome> take_outcome();
  // Blocks until the submitted batch's commit was tried and returns its
  // outcome (at shutdown). Only when busy().
  Outcome wait();

 private:
  void serve();
  Outcome commit(std::uint64_t ticket, PersistBatch batch);

  HubStore& store_;
  WakeSignal done_signal_;
  bool busy_ = false;  // the owner's view
  std::uint64_t last_ticket_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;      // the writer's: a batch or stop
  std::condition_variable done_;      // the owner's, in wait()
  std::optional<Outcome> submitted_;  // ticket and batch to commit
  std::optional<Outcome> finished_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace cascade::hub
