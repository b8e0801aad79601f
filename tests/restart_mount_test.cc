// Restart after a crash: scopedfsd is SIGKILLed while an app writes and fsyncs files, which leaves
// a dead FUSE mount (ENOTCONN) on the mount point. A new scopedfsd on the same mount point must
// recognise it, say what it found, replace it, and serve again; every write the app had seen
// acknowledged (write and fsync returned) must be in the lower tree, whole, and readable through
// the new mount. Needs root and /dev/fuse; skips, saying so, without them.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

using ::testing::HasSubstr;

constexpr size_t kFileSize = 64 * 1024;
constexpr int kAcksBeforeKill = 25;
constexpr int kMaxFiles = 100000;  // the writer stops long before: the daemon is killed

std::string FileName(int i) { return absl::StrFormat("Download/ack_%05d.bin", i); }

// Writes, fsyncs and closes one file after another as the app; after each one that fully
// succeeded, reports its index on `acks`. Returns when a call fails (the daemon is gone).
int WriteUntilFailure(int acks) {
  for (int i = 0; i < kMaxFiles; ++i) {
    std::string content = Pattern(kFileSize, i);
    int fd = open(FileName(i).c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return 0;
    size_t done = 0;
    while (done < content.size()) {
      ssize_t n = write(fd, content.data() + done, content.size() - done);
      if (n <= 0) break;
      done += n;
    }
    bool acknowledged = done == content.size() && fsync(fd) == 0;
    acknowledged = close(fd) == 0 && acknowledged;
    if (!acknowledged) return 0;
    if (write(acks, &i, sizeof(i)) != sizeof(i)) return 1;
  }
  return 2;  // never killed
}

TEST(RestartMountTest, SigkillDuringWritesThenRestartKeepsEveryAcknowledgedWrite) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  ScopedStorage storage;
  SCOPEDFS_ASSERT_OK(storage.Prepare());
  SCOPEDFS_ASSERT_OK(storage.CreateDefaultLayout());
  SCOPEDFS_ASSERT_OK(storage.StartDaemon());

  int acks[2];
  ASSERT_EQ(pipe2(acks, O_CLOEXEC), 0);
  pid_t writer = StartAs(
      kNotes,
      [&] {
        close(acks[0]);
        return WriteUntilFailure(acks[1]);
      },
      storage.mountpoint());
  close(acks[1]);
  std::vector<int> acknowledged;
  bool killed = false;
  int i;
  while (read(acks[0], &i, sizeof(i)) == sizeof(i)) {
    acknowledged.push_back(i);
    if (!killed && acknowledged.size() == kAcksBeforeKill) {
      ASSERT_EQ(kill(storage.daemon_pid(), SIGKILL), 0) << strerror(errno);
      killed = true;
    }
  }
  close(acks[0]);
  EXPECT_EQ(WaitChild(writer), 0) << "the writer should stop at the first failed call";
  ASSERT_TRUE(killed) << "the writer stopped after " << acknowledged.size() << " files";
  DaemonExit dead = storage.WaitDaemonExit(absl::Seconds(30));
  ASSERT_FALSE(dead.exited) << dead.ToString();
  EXPECT_EQ(dead.signal, SIGKILL);
  // What a service manager restarting it finds: a FUSE mount that answers ENOTCONN, or, while
  // the kernel still tears down the io_uring queues of a daemon that served over io_uring,
  // ECONNABORTED (the restarted daemon must recognise both).
  struct stat st;
  ASSERT_NE(stat(storage.mountpoint().c_str(), &st), 0);
  ASSERT_TRUE(errno == ENOTCONN || errno == ECONNABORTED) << strerror(errno);

  SCOPEDFS_ASSERT_OK(storage.StartDaemon());
  EXPECT_THAT(storage.DaemonLog(),
              HasSubstr(absl::StrCat("found a dead FUSE mount at ", storage.mountpoint())));
  std::cerr << "restarted after " << acknowledged.size()
            << " acknowledged writes; the new daemon's log:\n"
            << storage.DaemonLog();

  // Every acknowledged write is there, whole, recorded as the app's, and served again.
  App notes = storage.As(kNotes);
  for (int n : acknowledged) {
    absl::StatusOr<std::string> lower = storage.ReadLower(FileName(n));
    ASSERT_TRUE(lower.ok()) << FileName(n) << ": " << lower.status();
    EXPECT_TRUE(SameBytes(*lower, Pattern(kFileSize, n))) << FileName(n);
    EXPECT_EQ(storage.LowerOwner(FileName(n)), absl::StrCat(kNotes)) << FileName(n);
  }
  AppResult first = notes.Read(FileName(acknowledged.front()));
  ASSERT_TRUE(Succeeds(first));
  EXPECT_TRUE(SameBytes(first.data, Pattern(kFileSize, acknowledged.front())));
  AppResult last = notes.Read(FileName(acknowledged.back()));
  ASSERT_TRUE(Succeeds(last));
  EXPECT_TRUE(SameBytes(last.data, Pattern(kFileSize, acknowledged.back())));
  AppResult listing = notes.List("Download");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_GE(listing.names.size(), acknowledged.size());
  // The policy is in force again: another app sees none of them, and new writes work.
  EXPECT_TRUE(FailsWith(storage.As(kGallery).Read(FileName(acknowledged.front())), ENOENT));
  EXPECT_TRUE(Succeeds(notes.Create("Download/after_restart.txt", "again")));
  EXPECT_EQ(storage.ReadLower("Download/after_restart.txt").value_or(""), "again");

  DaemonExit e = storage.StopDaemon();
  EXPECT_TRUE(e.clean()) << e.ToString();
  EXPECT_FALSE(storage.IsMounted());
}

}  // namespace
}  // namespace scopedfs::tests
