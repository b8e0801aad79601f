// The scan queue's promises: apps take turns, one scan per app at a time, a version is scanned
// once however many ask, and the bounds on queued scans and waiting workers hold.
#include "daemon/scan_queue.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

ScanQueue::Key KeyOf(ino_t ino) { return {1, ino, 0, 0, 0}; }

// Scans that record the order they ran in; the first one waits for `gate`.
struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> order;
  absl::Notification gate;
  std::function<ScanQueue::Scan()> Scan(std::string name, bool gated = false) {
    return [this, name, gated] {
      if (gated) gate.WaitForNotification();
      absl::MutexLock lock(&mu);
      order.push_back(name);
      return std::make_shared<const media::LocationScan>();
    };
  }
};

ScanQueue::Scan WaitDone(ScanQueue& q, const std::shared_ptr<ScanQueue::Job>& job) {
  ScanQueue::Scan out;
  EXPECT_TRUE(q.Wait(0, job.get(), absl::Now() + absl::Seconds(10), &out));
  return out;
}

TEST(ScanQueueTest, AppsTakeTurns) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  // The single thread is held by a's first scan while everything else is queued.
  auto a1 = q.Submit(100, KeyOf(1), r.Scan("a1", /*gated=*/true));
  absl::SleepFor(absl::Milliseconds(20));
  auto a2 = q.Submit(100, KeyOf(2), r.Scan("a2"));
  auto a3 = q.Submit(100, KeyOf(3), r.Scan("a3"));
  auto b1 = q.Submit(200, KeyOf(4), r.Scan("b1"));
  r.gate.Notify();
  for (auto& job : {a1, a2, a3, b1}) WaitDone(q, job);
  // b's only scan does not wait behind all of a's.
  ASSERT_EQ(r.order.size(), 4u);
  EXPECT_EQ(r.order[0], "a1");
  EXPECT_EQ(r.order[1], "b1");
}

TEST(ScanQueueTest, OneScanPerVersionHoweverManyAsk) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto first = q.Submit(100, KeyOf(1), r.Scan("x", /*gated=*/true));
  auto again = q.Submit(200, KeyOf(1), r.Scan("y"));
  EXPECT_EQ(first, again);
  r.gate.Notify();
  EXPECT_NE(WaitDone(q, first), nullptr);
  EXPECT_EQ(r.order, std::vector<std::string>{"x"});
}

TEST(ScanQueueTest, QueuedScansPerAppAreBounded) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto held = q.Submit(100, KeyOf(0), r.Scan("held", /*gated=*/true));
  absl::SleepFor(absl::Milliseconds(20));  // let the thread take it: it is no longer queued
  std::vector<std::shared_ptr<ScanQueue::Job>> jobs;
  for (size_t i = 1; i <= ScanQueue::kMaxQueuedPerApp; ++i) {
    jobs.push_back(q.Submit(100, KeyOf(i), r.Scan("q")));
    ASSERT_NE(jobs.back(), nullptr) << i;
  }
  EXPECT_EQ(q.Submit(100, KeyOf(1000), r.Scan("over")), nullptr);
  EXPECT_NE(q.Submit(200, KeyOf(1001), r.Scan("other app")), nullptr);
  r.gate.Notify();
}

TEST(ScanQueueTest, WaitingWorkersPerAppAreBounded) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto held = q.Submit(100, KeyOf(0), r.Scan("held", /*gated=*/true));
  std::atomic<int> waiting{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < ScanQueue::kMaxWaitersPerApp; ++i) {
    waiters.emplace_back([&] {
      ++waiting;
      ScanQueue::Scan out;
      q.Wait(100, held.get(), absl::Now() + absl::Seconds(10), &out);
    });
  }
  while (waiting.load() < ScanQueue::kMaxWaitersPerApp) absl::SleepFor(absl::Milliseconds(1));
  absl::SleepFor(absl::Milliseconds(50));
  // One more of the same app's workers does not wait: it gets the uncertain answer at once.
  absl::Time start = absl::Now();
  ScanQueue::Scan out;
  EXPECT_FALSE(q.Wait(100, held.get(), absl::Now() + absl::Seconds(10), &out));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  r.gate.Notify();
  for (std::thread& t : waiters) t.join();
}

TEST(ScanWaitTest, NoScanWaitEndsWaitingAndRecordsMisses) {
  ScanWait wait(100, absl::Seconds(30));
  absl::Time before = wait.deadline();
  {
    NoScanWait none;
    EXPECT_LE(ScanWait::Current()->deadline(), absl::Now());
    EXPECT_FALSE(none.missed());
    ScanWait::Current()->NoteMissed();
    EXPECT_TRUE(none.missed());
  }
  EXPECT_EQ(ScanWait::Current()->deadline(), before);
  EXPECT_TRUE(wait.missed());
}

}  // namespace
}  // namespace scopedfs::daemon
