// FileLocks on a real file: owners conflict as processes do, with each other and with a process
// locking the file directly; waits are answered when granted, interrupted or stopped; bounds
// give ENOLCK.
#include "daemon/tables/file_locks.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

struct flock Range(short type, off_t start, off_t len) {
  struct flock l = {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = start;
  l.l_len = len;
  return l;
}

class FileLocksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/locked." + std::to_string(getpid());
    fd_.reset(open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd_.valid());
    struct stat st;
    ASSERT_EQ(fstat(fd_.get(), &st), 0);
    key_ = {st.st_dev, st.st_ino};
  }
  void TearDown() override { unlink(path_.c_str()); }

  // Whether a separate process (a plain F_SETLK on its own open of the file) can lock the range.
  bool ProcessCanLock(short type, off_t start, off_t len) {
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(path_.c_str(), O_RDWR);
      struct flock l = Range(type, start, len);
      _exit(fd >= 0 && fcntl(fd, F_SETLK, &l) == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  std::string path_;
  base::UniqueFd fd_;
  FileLocks::FileKey key_;
  // A budget of a 1,024-fd daemon, as under systemd's default limit.
  AppBudget budget_{AppBudget::ForFdLimit(1024)};
  FileLocks locks_{&budget_};
};

TEST_F(FileLocksTest, OwnersConflictAsProcessesDo) {
  EXPECT_EQ(locks_.SetLock(key_, 1, fd_.get(), Range(F_WRLCK, 0, 10), 111, 10061u), 0);
  EXPECT_EQ(locks_.SetLock(key_, 2, fd_.get(), Range(F_WRLCK, 5, 10), 222, 10062u), EAGAIN);
  EXPECT_EQ(locks_.SetLock(key_, 2, fd_.get(), Range(F_WRLCK, 10, 10), 222, 10062u), 0);
  // The same owner converts its own lock without conflict, as one process does.
  EXPECT_EQ(locks_.SetLock(key_, 1, fd_.get(), Range(F_RDLCK, 0, 10), 111, 10061u), 0);
  EXPECT_EQ(locks_.SetLock(key_, 2, fd_.get(), Range(F_RDLCK, 0, 5), 222, 10062u), 0);
  EXPECT_EQ(locks_.owners(), 2u);
  // A close by owner 1 releases its locks.
  locks_.ReleaseOwner(key_, 1);
  EXPECT_EQ(locks_.owners(), 1u);
  EXPECT_EQ(locks_.SetLock(key_, 3, fd_.get(), Range(F_WRLCK, 5, 5), 333, std::nullopt), 0);
}

TEST_F(FileLocksTest, LocksMeetAProcessUsingTheFileDirectly) {
  EXPECT_TRUE(ProcessCanLock(F_WRLCK, 0, 0));
  ASSERT_EQ(locks_.SetLock(key_, 1, fd_.get(), Range(F_RDLCK, 100, 1), 111, std::nullopt), 0);
  EXPECT_FALSE(ProcessCanLock(F_WRLCK, 100, 1));
  EXPECT_TRUE(ProcessCanLock(F_RDLCK, 100, 1));
  EXPECT_TRUE(ProcessCanLock(F_WRLCK, 101, 1));
  locks_.ReleaseOwner(key_, 1);
  EXPECT_TRUE(ProcessCanLock(F_WRLCK, 100, 1));
}

TEST_F(FileLocksTest, GetLockNamesTheHolder) {
  ASSERT_EQ(locks_.SetLock(key_, 1, fd_.get(), Range(F_WRLCK, 0, 10), 4242, std::nullopt), 0);
  ASSERT_EQ(locks_.SetLock(key_, 2, fd_.get(), Range(F_WRLCK, 20, 0), 4343, std::nullopt), 0);
  struct flock q = Range(F_RDLCK, 5, 1);
  ASSERT_EQ(locks_.GetLock(key_, 3, fd_.get(), &q), 0);
  EXPECT_EQ(q.l_type, F_WRLCK);
  EXPECT_EQ(q.l_start, 0);
  EXPECT_EQ(q.l_len, 10);
  EXPECT_EQ(q.l_pid, 4242);
  q = Range(F_RDLCK, 30, 1);
  ASSERT_EQ(locks_.GetLock(key_, 1, fd_.get(), &q), 0);
  EXPECT_EQ(q.l_pid, 4343);
  // An owner does not see its own lock.
  q = Range(F_WRLCK, 0, 10);
  ASSERT_EQ(locks_.GetLock(key_, 1, fd_.get(), &q), 0);
  EXPECT_EQ(q.l_type, F_UNLCK);
}

TEST_F(FileLocksTest, QueuedWaitIsAnsweredWhenGranted) {
  ASSERT_EQ(locks_.SetLock(key_, 1, fd_.get(), Range(F_WRLCK, 0, 0), 1, std::nullopt), 0);
  std::atomic<int> result{-1};
  absl::Notification done;
  ASSERT_EQ(locks_.Wait(
                10062u, [] { return false; },
                [&] { return locks_.SetLock(key_, 2, fd_.get(), Range(F_WRLCK, 0, 0), 2, 10062u); },
                [&](int r) {
                  result = r;
                  done.Notify();
                }),
            0);
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  EXPECT_EQ(locks_.waiting(), 1u);
  locks_.ReleaseOwner(key_, 1);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(result.load(), 0);
  EXPECT_FALSE(ProcessCanLock(F_RDLCK, 0, 1)) << "owner 2 holds the lock now";
}

TEST_F(FileLocksTest, InterruptedWaitEndsWithEintr) {
  ASSERT_EQ(locks_.SetLock(key_, 1, fd_.get(), Range(F_WRLCK, 0, 0), 1, std::nullopt), 0);
  std::atomic<bool> interrupt{false};
  std::atomic<int> result{-1};
  absl::Notification done;
  ASSERT_EQ(locks_.Wait(
                std::nullopt, [&] { return interrupt.load(); }, [] { return EAGAIN; },
                [&](int r) {
                  result = r;
                  done.Notify();
                }),
            0);
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(30)));
  interrupt = true;
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(result.load(), EINTR);
}

// The bound holds while the waiter thread is trying the waits it took: the replies the daemon
// defers (one per unanswered wait) never outnumber what FUSE over io_uring sized its queues for.
TEST_F(FileLocksTest, GlobalBoundCountsWaitsBeingTried) {
  absl::Notification trying, release;
  std::atomic<int> ended{0};
  ASSERT_EQ(locks_.Wait(
                std::nullopt, [] { return false; },
                [&] {
                  if (!trying.HasBeenNotified()) trying.Notify();
                  release.WaitForNotification();
                  return EAGAIN;
                },
                [&](int r) { ended += r == ENOLCK; }),
            0);
  ASSERT_TRUE(trying.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // The waiter thread holds the first wait now, outside the queue.
  for (size_t i = 1; i < FileLocks::kMaxWaiters; ++i) {
    ASSERT_EQ(locks_.Wait(
                  std::nullopt, [] { return false; }, [] { return EAGAIN; },
                  [&](int r) { ended += r == ENOLCK; }),
              0)
        << i;
  }
  EXPECT_EQ(locks_.waiting(), FileLocks::kMaxWaiters);
  bool called = false;
  EXPECT_EQ(
      locks_.Wait(
          std::nullopt, [] { return false; }, [] { return EAGAIN; }, [&](int) { called = true; }),
      ENOLCK);
  EXPECT_FALSE(called);
  release.Notify();
  locks_.Stop();
  EXPECT_EQ(ended.load(), static_cast<int>(FileLocks::kMaxWaiters));
  EXPECT_EQ(locks_.waiting(), 0u);
}

TEST_F(FileLocksTest, WaitsAreBoundedAndStopEndsThem) {
  std::atomic<int> ended{0};
  const size_t per_app = std::min(budget_.limits().fds.per_app, FileLocks::kMaxWaitsPerApp);
  for (size_t i = 0; i < per_app; ++i) {
    ASSERT_EQ(locks_.Wait(
                  10062u, [] { return false; }, [] { return EAGAIN; },
                  [&](int r) { ended += r == ENOLCK; }),
              0);
  }
  bool called = false;
  EXPECT_EQ(locks_.Wait(
                10062u, [] { return false; }, [] { return EAGAIN; }, [&](int) { called = true; }),
            ENOLCK);
  EXPECT_FALSE(called);
  // Another app still gets its place.
  EXPECT_EQ(locks_.Wait(
                10063u, [] { return false; }, [] { return EAGAIN; },
                [&](int r) { ended += r == ENOLCK; }),
            0);
  locks_.Stop();
  EXPECT_EQ(ended.load(), static_cast<int>(per_app) + 1);
  EXPECT_EQ(budget_.held(AppBudget::kFds), 0u) << "stopped waits give their units back";
  EXPECT_EQ(locks_.waiting(), 0u);
  EXPECT_EQ(locks_.Wait(
                std::nullopt, [] { return false; }, [] { return EAGAIN; }, [](int) {}),
            ENOLCK);
}

// Four apps each asking for as many waits as one app may queue cannot take the whole pool: the
// fourth gets only the floor, a fifth app with none queued still gets one, and once enough apps
// hold the floor each, the pool's true end answers ENOLCK to everyone, giving back no unit.
TEST_F(FileLocksTest, FewAppsCannotTakeEveryWait) {
  auto queue = [&](uid_t uid) {
    return locks_.Wait(
        uid, [] { return false; }, [] { return EAGAIN; }, [](int) {});
  };
  std::vector<int> queued;
  for (uid_t app = 10060; app < 10064; ++app) {
    int n = 0;
    for (size_t i = 0; i < FileLocks::kMaxWaitsPerApp; ++i) n += queue(app) == 0;
    queued.push_back(n);
  }
  EXPECT_EQ(queued, (std::vector<int>{16, 16, 16, 2}));
  EXPECT_EQ(locks_.waiting(), 50u);
  EXPECT_EQ(queue(10064), 0) << "a fifth app's first wait was refused";
  EXPECT_EQ(queue(10064), 0);
  EXPECT_EQ(queue(10064), ENOLCK) << "past the floor while the pool is low";
  // Six more apps take two each: the pool's 64 are all queued, by eleven apps.
  for (uid_t app = 10065; app < 10071; ++app) {
    EXPECT_EQ(queue(app), 0) << app;
    EXPECT_EQ(queue(app), 0) << app;
  }
  EXPECT_EQ(locks_.waiting(), FileLocks::kMaxWaiters);
  EXPECT_EQ(budget_.held(AppBudget::kLockWaits), FileLocks::kMaxWaiters);
  EXPECT_EQ(queue(10071), ENOLCK) << "the true end of the pool";
  AppBudget::Use use = budget_.use(AppBudget::kLockWaits);
  EXPECT_EQ(use.held, FileLocks::kMaxWaiters);
  EXPECT_EQ(use.most_by_one_app, FileLocks::kMaxWaitsPerApp);
  EXPECT_EQ(use.apps, 11u);
  locks_.Stop();
  EXPECT_EQ(budget_.held(AppBudget::kLockWaits), 0u);
  EXPECT_EQ(budget_.held(AppBudget::kFds), 0u);
}

// Lock descriptions come out of the app's budget, with its handles: one app's owners stop at its
// share, another app still gets its own, and a released owner gives its unit back.
TEST_F(FileLocksTest, OwnersComeOutOfTheAppsBudget) {
  for (uint64_t owner = 1; owner <= budget_.limits().fds.per_app; ++owner) {
    ASSERT_EQ(locks_.SetLock(key_, owner, fd_.get(), Range(F_RDLCK, 0, 1), 1, 10062u), 0);
  }
  EXPECT_EQ(locks_.SetLock(key_, 100000, fd_.get(), Range(F_RDLCK, 0, 1), 1, 10062u), ENOLCK);
  EXPECT_EQ(locks_.SetLock(key_, 100001, fd_.get(), Range(F_RDLCK, 0, 1), 1, 10063u), 0);
  EXPECT_EQ(budget_.held(AppBudget::kFds, 10062u), budget_.limits().fds.per_app);
  locks_.ReleaseOwner(key_, 1);
  EXPECT_EQ(locks_.SetLock(key_, 100000, fd_.get(), Range(F_RDLCK, 0, 1), 1, 10062u), 0);
  // Handles already held count too: an app at its budget in open files takes no description.
  ASSERT_TRUE(budget_.Take(AppBudget::kFds, 10064u, budget_.limits().fds.per_app));
  EXPECT_EQ(locks_.SetLock(key_, 200000, fd_.get(), Range(F_RDLCK, 0, 1), 1, 10064u), ENOLCK);
}

}  // namespace
}  // namespace scopedfs::daemon
