// Work handed to a hub's owning thread: run there, in order, between passes;
// a waiter gives up at its deadline when the owner does not get to it.

#include "cascade/hub/owner_mailbox.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace cascade::hub {
namespace {

using namespace std::chrono_literals;

// An owner loop as the hub's: polls the mailbox with the others, runs what came.
class Owner {
 public:
  explicit Owner(OwnerMailbox& mailbox)
      : thread_([this, &mailbox] {
          while (!stop_) {
            auto item = mailbox.poll_item();
            zmq::poll(&item, 1, std::chrono::milliseconds(1000));
            if (item.revents & ZMQ_POLLIN) mailbox.run_pending();
          }
        }) {}
  ~Owner() {
    stop_ = true;
    thread_.join();
  }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(OwnerMailbox, AnIdleOwnerWakesAtOnceAndAnswersOnItsOwnThread) {
  OwnerMailbox mailbox;
  Owner owner(mailbox);
  const auto start = std::chrono::steady_clock::now();
  // The owner polls with a 1 s timeout: only the eventfd can wake it sooner.
  const auto ran_on = ask<std::thread::id>(
      mailbox, [] { return std::this_thread::get_id(); }, 5000ms);
  ASSERT_TRUE(ran_on);
  EXPECT_EQ(*ran_on, owner.id());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
}

TEST(OwnerMailbox, TasksRunInTheOrderTheyWerePosted) {
  OwnerMailbox mailbox;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i)
    mailbox.post([&order, i] { order.push_back(i); });
  EXPECT_EQ(mailbox.run_pending(), 5u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(mailbox.run_pending(), 0u);
}

TEST(OwnerMailbox, AFailingTaskDoesNotKeepTheOthersFromRunning) {
  OwnerMailbox mailbox;
  bool after = false;
  mailbox.post([] { throw std::runtime_error("broken"); });
  mailbox.post([&after] { after = true; });
  EXPECT_EQ(mailbox.run_pending(), 2u);
  EXPECT_TRUE(after);
}

TEST(OwnerMailbox, AWaiterGivesUpWhenNoOwnerRunsTheTaskAndALateRunIsHarmless) {
  OwnerMailbox mailbox;  // nobody runs it
  const auto answer = ask<int>(
      mailbox, [] { return 42; }, 50ms);
  EXPECT_FALSE(answer);
  // The owner gets to it after the waiter left: the task keeps its promise alive.
  EXPECT_EQ(mailbox.run_pending(), 1u);
}

}  // namespace
}  // namespace cascade::hub
