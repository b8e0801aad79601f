// Writes through a redacted view make the daemon invalidate that view's page cache. With every
// FUSE worker busy (a daemon of two workers, more writers and readers of the view than that),
// the invalidations must never wait on a READ that needs a worker: everything finishes, and the
// daemon still answers afterwards.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kShared[] = "Download/shared.bin";  // notes'; files reads it redacted
constexpr size_t kSize = 1 << 20;
constexpr size_t kBlock = 4096;

// A daemon deadlocked this way cannot even be killed (its workers wait in the kernel), so the
// test ends it: it aborts the mount's FUSE connection through fusectl (mounted in the test's
// private mount namespace if need be), and the deadlock shows as a failure, not a hang.
void AbortConnection(dev_t dev) {
  const char* dir = "/sys/fs/fuse/connections";
  std::string abort_file = absl::StrCat(dir, "/", minor(dev), "/abort");
  if (access(abort_file.c_str(), F_OK) != 0) mount("none", dir, "fusectl", 0, nullptr);
  int fd = open(abort_file.c_str(), O_WRONLY | O_CLOEXEC);
  ADD_FAILURE() << "the daemon hung; aborting its connection: " << (fd >= 0 ? "done" : "failed");
  if (fd >= 0) {
    (void)!write(fd, "1", 1);
    close(fd);
  }
}

// An I/O the daemon answered with an error: each write makes a new version of the file, and with
// two workers only one request may wait for that version's location scan, so a request meanwhile
// is answered "uncertain" (EACCES, scan_queue.h) or, for a read whose plan cannot be made, EIO.
// That is an answer, not the hang this test looks for; every process must still get some I/O
// through.
bool Answered(int err) { return err == EACCES || err == EIO || err == ENOMEM; }

class InvalidationMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.extra_flags = {"--threads=2"};
    return options;
  }
};

TEST_F(InvalidationMountTest, RedactedWritesNeverDeadlockWithEveryWorkerBusy) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kShared, Pattern(kSize, 7), kNotes));
  // Its location verdict first, and every app's open before anyone writes: each write makes a
  // new version, and with two workers only one request may wait for its scan; an open meanwhile
  // would be answered "uncertain" (EACCES, scan_queue.h), which is no deadlock but no test either.
  ASSERT_TRUE(Succeeds(As(kFiles).Read(kShared)));
  const absl::Time start = absl::Now() + absl::Seconds(2);
  constexpr absl::Duration kRun = absl::Seconds(3);
  // 1 for a failed open or I/O; 0 after kRun of writes (or reads) at random block offsets.
  auto writer = [kRun, start](unsigned seed) {
    return [kRun, start, seed] {
      int fd = open(kShared, O_RDWR | O_CLOEXEC);
      if (fd < 0) return 1;
      std::string block(kBlock, 'w');
      unsigned s = seed;
      int done = 0;
      absl::SleepFor(start - absl::Now());
      for (absl::Time end = start + kRun; absl::Now() < end;) {
        off_t off = static_cast<off_t>((rand_r(&s) % (kSize / kBlock)) * kBlock);
        ssize_t n = pwrite(fd, block.data(), block.size(), off);
        if (n == static_cast<ssize_t>(block.size())) {
          ++done;
        } else if (n >= 0 || !Answered(errno)) {
          return 1;
        }
      }
      return close(fd) == 0 && done > 0 ? 0 : 1;
    };
  };
  auto reader = [kRun, start](unsigned seed) {
    return [kRun, start, seed] {
      int fd = open(kShared, O_RDONLY | O_CLOEXEC);
      if (fd < 0) return 1;
      std::vector<char> buf(64 * 1024);
      unsigned s = seed;
      int done = 0;
      absl::SleepFor(start - absl::Now());
      for (absl::Time end = start + kRun; absl::Now() < end;) {
        off_t off = static_cast<off_t>((rand_r(&s) % (kSize / kBlock)) * kBlock);
        if (pread(fd, buf.data(), buf.size(), off) >= 0) {
          ++done;
        } else if (!Answered(errno)) {
          return 1;
        }
      }
      return close(fd) == 0 && done > 0 ? 0 : 1;
    };
  };
  struct stat mount_st;
  ASSERT_EQ(stat(storage_.mountpoint().c_str(), &mount_st), 0);
  absl::Notification finished;
  std::thread watchdog([&] {
    if (!finished.WaitForNotificationWithTimeout(absl::Seconds(25))) {
      AbortConnection(mount_st.st_dev);
    }
  });
  std::vector<pid_t> apps;
  for (unsigned i = 0; i < 4; ++i) {
    apps.push_back(StartAs(kFiles, writer(i + 1), storage_.mountpoint(), absl::Seconds(20)));
    apps.push_back(StartAs(kFiles, reader(i + 11), storage_.mountpoint(), absl::Seconds(20)));
  }
  for (pid_t pid : apps) {
    // 128 + SIGALRM: still blocked in the mount 20 s later.
    EXPECT_EQ(WaitChild(pid), 0) << "a writer or reader failed or hung (128+14: hung)";
  }
  finished.Notify();
  watchdog.join();
  EXPECT_TRUE(Succeeds(As(kMusic).Stat("Download")));
  EXPECT_TRUE(Succeeds(As(kFiles).Read(kShared)));
}

}  // namespace
}  // namespace scopedfs::tests
