// Writes through a redacted view make the daemon invalidate that view's page cache. With every
// FUSE worker busy (a daemon of two workers, more writers and readers of the view than that),
// the invalidations must never wait on a READ that needs a worker: the apps start together once
// all have opened the file, run until the daemon has counted thousands of their writes and
// reads, and stop; a deadlock shows as counts that stop growing (the test then aborts the
// connection: a failure, not a hang).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
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

bool ReadExactly(int fd, char* out, size_t n) {
  while (n > 0) {
    ssize_t got = read(fd, out, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// Shared with the forked apps: set once the test has seen enough I/O.
struct Shared {
  std::atomic<int> stop{0};
};

class InvalidationMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.extra_flags = {"--threads=2"};
    options.control_socket = true;  // the counts of writes and redacted reads
    return options;
  }
};

// How much I/O through the redacted view the test waits for, as the daemon counts it: thousands
// of writes, each queueing an invalidation of the pages that the readers' thousands of reads
// fill, with two workers for all of them.
constexpr int64_t kWrites = 2000;
constexpr int64_t kReads = 2000;

TEST_F(InvalidationMountTest, RedactedWritesNeverDeadlockWithEveryWorkerBusy) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kShared, Pattern(kSize, 7), kNotes));
  // Its location verdict first, and every app's open before anyone writes: each write makes a
  // new version, and with two workers only one request may wait for its scan; an open meanwhile
  // would be answered "uncertain" (EACCES, scan_queue.h), which is no deadlock but no test either.
  ASSERT_TRUE(Succeeds(As(kFiles).Read(kShared)));
  auto* shared = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  new (shared) Shared;
  int ready[2], go[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
  // Each app opens its descriptor, says so, and starts its I/O when the test closes `go`: all
  // of them at once. 1 for a failed open or I/O; 0 once stopped with some I/O done.
  auto app = [shared, ready, go](bool writes, unsigned seed) {
    return [shared, ready, go, writes, seed] {
      close(ready[0]);
      close(go[1]);
      int fd = open(kShared, (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC);
      if (fd < 0) return 1;
      char c = 'r';
      if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 0) return 1;
      std::vector<char> buf(writes ? kBlock : 64 * 1024, 'w');
      unsigned s = seed;
      int done = 0;
      while (shared->stop.load() == 0) {
        off_t off = static_cast<off_t>((rand_r(&s) % (kSize / kBlock)) * kBlock);
        ssize_t n =
            writes ? pwrite(fd, buf.data(), kBlock, off) : pread(fd, buf.data(), buf.size(), off);
        if (n >= 0 && (!writes || n == static_cast<ssize_t>(kBlock))) {
          ++done;
        } else if (n >= 0 || !Answered(errno)) {
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
  absl::StatusOr<DaemonStats> before = storage_.Stats();
  ASSERT_TRUE(before.ok()) << before.status();
  std::vector<pid_t> apps;
  for (unsigned i = 0; i < 4; ++i) {
    apps.push_back(StartAs(kFiles, app(true, i + 1), storage_.mountpoint(), absl::Seconds(20)));
    apps.push_back(StartAs(kFiles, app(false, i + 11), storage_.mountpoint(), absl::Seconds(20)));
  }
  close(ready[1]);
  close(go[0]);
  char opened[8];
  bool all_opened = ReadExactly(ready[0], opened, sizeof(opened));
  EXPECT_TRUE(all_opened) << "an app could not open the file";
  close(go[1]);  // go
  if (all_opened) {
    absl::StatusOr<DaemonStats> after = storage_.StatsOnce(
        [&](const DaemonStats& s) {
          return s.at("write_requests") - before->at("write_requests") >= kWrites &&
                 s.at("redacted_reads") - before->at("redacted_reads") >= kReads;
        },
        "redacted_reads", absl::Seconds(20));
    EXPECT_TRUE(after.ok()) << after.status() << " (the I/O stopped: a deadlock?)";
  }
  shared->stop.store(1);
  for (pid_t pid : apps) {
    // 128 + SIGALRM: still blocked in the mount 20 s later.
    EXPECT_EQ(WaitChild(pid), 0) << "a writer or reader failed or hung (128+14: hung)";
  }
  finished.Notify();
  watchdog.join();
  close(ready[0]);
  munmap(shared, sizeof(Shared));
  EXPECT_TRUE(Succeeds(As(kMusic).Stat("Download")));
  EXPECT_TRUE(Succeeds(As(kFiles).Read(kShared)));
}

}  // namespace
}  // namespace scopedfs::tests
