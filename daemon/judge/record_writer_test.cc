#include "daemon/judge/record_writer.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

TEST(RecordWriterTest, RunsEachWriteOnItsOwnThreadInOrder) {
  RecordWriter writer;
  std::vector<int> order;
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> on_caller{false};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(writer.Queue(absl::InfinitePast(), [&order, &on_caller, caller, i] {
      if (std::this_thread::get_id() == caller) on_caller = true;
      order.push_back(i);
    }));
  }
  writer.Drain();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(on_caller.load());
  EXPECT_EQ(writer.completed(), 5u);
}

TEST(RecordWriterTest, AWriteWaitsUntilItsTime) {
  RecordWriter writer;
  absl::Time due = absl::Now() + absl::Milliseconds(30);
  absl::Time ran;
  ASSERT_TRUE(writer.Queue(due, [&ran] { ran = absl::Now(); }));
  writer.Drain();
  EXPECT_GE(ran, due);
}

TEST(RecordWriterTest, RefusesPastItsBoundAndLosesNothingQueued) {
  RecordWriter writer;
  absl::Notification release;
  std::atomic<int> ran{0};
  // The first write holds the thread, so the rest stay queued.
  ASSERT_TRUE(writer.Queue(absl::InfinitePast(), [&release, &ran] {
    release.WaitForNotification();
    ++ran;
  }));
  // Until the thread has taken the first write off the queue (the queue is then empty).
  absl::SleepFor(absl::Milliseconds(50));
  size_t accepted = 0;
  for (size_t i = 0; i < RecordWriter::kMaxQueued + 10; ++i) {
    if (writer.Queue(absl::InfinitePast(), [&ran] { ++ran; })) ++accepted;
  }
  EXPECT_EQ(accepted, RecordWriter::kMaxQueued);
  EXPECT_FALSE(writer.Queue(absl::InfinitePast(), [] {}));
  release.Notify();
  writer.Drain();
  EXPECT_EQ(ran.load(), static_cast<int>(RecordWriter::kMaxQueued) + 1);
}

TEST(RecordWriterTest, StoppingDropsWhatWaitsAndReleasesWhatItKept) {
  auto kept = std::make_shared<int>(7);
  std::weak_ptr<int> watch = kept;
  std::atomic<bool> ran{false};
  {
    RecordWriter writer;
    ASSERT_TRUE(writer.Queue(absl::Now() + absl::Hours(1), [kept, &ran] { ran = true; }));
    kept.reset();
  }
  EXPECT_FALSE(ran.load());
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace scopedfs::daemon
