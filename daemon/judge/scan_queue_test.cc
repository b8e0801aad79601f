// The scan queue's promises: apps take turns, one scan per app at a time, a version is scanned
// once however many ask, and the bounds on queued scans and waiting workers hold.
#include "daemon/judge/scan_queue.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

ScanQueue::Key KeyOf(ino_t ino) { return {1, ino, 0, 0, 0}; }

// Scans that record the order they ran in; a gated one says it has started (a scan thread took
// it, so it is no longer queued) and waits for `gate`.
struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> order;
  absl::Notification started;
  absl::Notification gate;
  std::function<ScanQueue::Scan()> Scan(std::string name, bool gated = false) {
    return [this, name, gated] {
      if (gated) {
        started.Notify();
        gate.WaitForNotification();
      }
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
  r.started.WaitForNotification();
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

// The attack as found: an app queues sweeps of its own files, then asks for the scan of another
// app's new photo first; the photo's owner then asks for the same scan. The owner's request waits
// for its own turn, not behind the sweeps queued ahead of the photo in the first app's line.
TEST(ScanQueueTest, AJoinedScanRunsAtTheJoinersTurn) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto a1 = q.Submit(100, KeyOf(1), r.Scan("a1", /*gated=*/true));
  r.started.WaitForNotification();
  auto a2 = q.Submit(100, KeyOf(2), r.Scan("a2"));
  auto a3 = q.Submit(100, KeyOf(3), r.Scan("a3"));
  auto a4 = q.Submit(100, KeyOf(4), r.Scan("a4"));
  auto photo = q.Submit(100, KeyOf(5), r.Scan("photo"));
  auto joined = q.Submit(200, KeyOf(5), r.Scan("photo again"));
  ASSERT_EQ(photo, joined);
  r.gate.Notify();
  for (auto& job : {a1, a2, a3, a4, photo}) WaitDone(q, job);
  EXPECT_EQ(r.order, (std::vector<std::string>{"a1", "photo", "a2", "a3", "a4"}));
}

// The same, with the owner's request waiting (a handshake: it is counted as waiting before the
// sweeps may run): no scan another app queued starts ahead of the one it waits for.
TEST(ScanQueueTest, AWaitingRequestIsNeverPassedOverByAnotherAppsQueue) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto a1 = q.Submit(100, KeyOf(1), r.Scan("a1", /*gated=*/true));
  r.started.WaitForNotification();
  std::vector<std::shared_ptr<ScanQueue::Job>> sweeps;
  for (int i = 2; i <= 4; ++i) sweeps.push_back(q.Submit(100, KeyOf(i), r.Scan("sweep")));
  auto photo = q.Submit(100, KeyOf(5), r.Scan("photo"));
  std::thread owner([&] {
    auto job = q.Submit(200, KeyOf(5), r.Scan("photo again"));
    ScanQueue::Scan out;
    EXPECT_TRUE(q.Wait(200, job.get(), absl::Now() + absl::Seconds(60), &out));
  });
  while (q.waiting() < 1) std::this_thread::yield();
  r.gate.Notify();
  owner.join();
  for (auto& job : sweeps) WaitDone(q, job);
  auto at = std::find(r.order.begin(), r.order.end(), "photo");
  EXPECT_EQ(at - r.order.begin(), 1) << "only the scan already running went first";
  EXPECT_EQ(q.passed_over(), 0u);
}

// A joined scan run at the joiner's turn is the joiner's: its own next scan waits for the other
// app's turn, as after any scan of its own.
TEST(ScanQueueTest, AJoinedScanIsChargedToTheAppWhoseTurnRunsIt) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto a1 = q.Submit(100, KeyOf(1), r.Scan("a1", /*gated=*/true));
  r.started.WaitForNotification();
  auto a2 = q.Submit(100, KeyOf(2), r.Scan("a2"));
  auto a3 = q.Submit(100, KeyOf(3), r.Scan("a3"));
  auto shared = q.Submit(100, KeyOf(5), r.Scan("shared"));
  q.Submit(200, KeyOf(5), r.Scan("shared again"));
  auto b1 = q.Submit(200, KeyOf(6), r.Scan("b1"));
  r.gate.Notify();
  for (auto& job : {a1, a2, a3, shared, b1}) WaitDone(q, job);
  EXPECT_EQ(r.order, (std::vector<std::string>{"a1", "shared", "a2", "b1", "a3"}));
}

// Joining costs no fd and is never refused, even with the joiner's own line full; the job still
// runs once, and leaves every line when it starts (the first app may queue as many again).
TEST(ScanQueueTest, JoiningIsNeverRefusedAndRunsOnce) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto held = q.Submit(100, KeyOf(0), r.Scan("held", /*gated=*/true));
  r.started.WaitForNotification();
  std::vector<std::shared_ptr<ScanQueue::Job>> jobs;
  for (size_t i = 1; i <= ScanQueue::kMaxQueuedPerApp; ++i) {
    jobs.push_back(q.Submit(200, KeyOf(i), r.Scan(absl::StrCat("b", i))));
    ASSERT_NE(jobs.back(), nullptr);
  }
  auto mine = q.Submit(100, KeyOf(100), r.Scan("a"));
  auto joined = q.Submit(200, KeyOf(100), r.Scan("a again"));
  EXPECT_EQ(mine, joined);
  r.gate.Notify();
  for (auto& job : jobs) WaitDone(q, job);
  WaitDone(q, mine);
  EXPECT_EQ(std::count(r.order.begin(), r.order.end(), "a"), 1);
  EXPECT_EQ(q.completed(), ScanQueue::kMaxQueuedPerApp + 2);
}

TEST(ScanQueueTest, QueuedScansPerAppAreBounded) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto held = q.Submit(100, KeyOf(0), r.Scan("held", /*gated=*/true));
  r.started.WaitForNotification();  // the thread took it: it is no longer queued
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
  std::vector<std::thread> waiters;
  for (int i = 0; i < ScanQueue::kMaxWaitersPerApp; ++i) {
    waiters.emplace_back([&] {
      ScanQueue::Scan out;
      q.Wait(100, held.get(), absl::Now() + absl::Seconds(10), &out);
    });
  }
  while (q.waiting() < ScanQueue::kMaxWaitersPerApp) std::this_thread::yield();
  // One more of the same app's workers does not wait, however long it may: it returns before the
  // scan is done, with the uncertain answer. Past the bound it would be counted as waiting and
  // return only once the gate opens, done.
  std::atomic<bool> returned{false};
  bool done = true;
  ScanQueue::WaitOutcome how;
  std::thread over([&] {
    ScanQueue::Scan out;
    done = q.Wait(100, held.get(), absl::InfiniteFuture(), &out, &how);
    returned = true;
  });
  int most = 0;
  while (!returned.load() && most <= ScanQueue::kMaxWaitersPerApp) {
    most = std::max(most, q.waiting());
    std::this_thread::yield();
  }
  r.gate.Notify();
  over.join();
  EXPECT_FALSE(done) << "the worker past the bound waited for the scan";
  EXPECT_LE(most, ScanQueue::kMaxWaitersPerApp);
  // What the stats show: it did not wait, because of the bound; the most that waited at once.
  EXPECT_FALSE(how.waited);
  EXPECT_TRUE(how.over_bounds);
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(q.most_waiting(), ScanQueue::kMaxWaitersPerApp);
  EXPECT_EQ(q.pending(), 0u);
}

TEST(ScanQueueTest, WaitOutcomesTellAWaitThatEndedBeforeItsScan) {
  Recorder r;  // outlives the queue, whose threads run its scans
  ScanQueue q(1);
  auto held = q.Submit(100, KeyOf(0), r.Scan("held", /*gated=*/true));
  r.started.WaitForNotification();
  EXPECT_EQ(q.pending(), 1u) << "a running scan is pending";
  ScanQueue::Scan out;
  ScanQueue::WaitOutcome how;
  // A deadline already past: no wait at all, and not for a bound.
  EXPECT_FALSE(q.Wait(100, held.get(), absl::InfinitePast(), &out, &how));
  EXPECT_FALSE(how.waited);
  EXPECT_FALSE(how.over_bounds);
  // A deadline that comes before the gate opens: waited, not done.
  EXPECT_FALSE(q.Wait(100, held.get(), absl::Now() + absl::Milliseconds(1), &out, &how));
  EXPECT_TRUE(how.waited);
  r.gate.Notify();
  EXPECT_TRUE(q.Wait(100, held.get(), absl::InfiniteFuture(), &out, &how));
  EXPECT_NE(out, nullptr);
  EXPECT_EQ(q.pending(), 0u);
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
