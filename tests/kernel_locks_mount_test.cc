// --posix_locks=kernel (docs/requests.md, "FLUSH"): the kernel keeps POSIX record locks for the
// mount, so the daemon answers FLUSH ENOSYS and the kernel sends no FLUSH after the first; a
// closing process's locks are still released at its close of any fd of the file, as POSIX says,
// under the permissive and the Android policy. As app processes, with real syscalls; the FLUSH
// requests are the daemon's own counts (scopedfsctl stats: requests_flush).
// Needs root and /dev/fuse (tags in tests/BUILD).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kFile[] = "Documents/locked.txt";
constexpr int kNoFile = 200, kNotGranted = 201, kNotRefused = 202;

int WholeFile(int fd, short type) {
  struct flock l = {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  return fcntl(fd, F_SETLK, &l);
}

// Another process of the app (a child of the caller, so the same uid and cwd) tries the whole
// file's write lock: 0 if granted, else the errno.
int OtherTries() {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(kFile, O_RDWR);
    if (fd < 0) _exit(kNoFile);
    _exit(WholeFile(fd, F_WRLCK) == 0 ? 0 : errno);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

class KernelLocksMountTest : public MountTest, public ::testing::WithParamInterface<const char*> {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = GetParam();
    o.control_socket = true;
    o.extra_flags = {"--posix_locks=kernel"};
    return o;
  }
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kFile, "locked", kNotes));
    ASSERT_EQ(chown(storage_.Lower(kFile).c_str(), kNotes, kNotes), 0);
  }
  int64_t Flushes() {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (!stats.ok()) return -1;
    auto it = stats->find("requests_flush");
    EXPECT_NE(it, stats->end()) << "no requests_flush in the daemon's stats";
    return it == stats->end() ? -1 : it->second;
  }
};

// The first close's FLUSH is answered ENOSYS; no close after it sends one.
TEST_P(KernelLocksMountTest, NoFlushAfterTheFirstClose) {
  ASSERT_TRUE(As(kNotes).Read(kFile).ok());
  int64_t before = Flushes();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(As(kNotes).Read(kFile).ok());
  pid_t writer = StartAs(
      kNotes,
      [] {
        int fd = open(kFile, O_RDWR | O_APPEND);
        if (fd < 0) return kNoFile;
        int rc = write(fd, "x", 1) == 1 ? 0 : errno;
        close(fd);
        return rc;
      },
      storage_.mountpoint());
  EXPECT_EQ(WaitChild(writer), 0);
  EXPECT_EQ(Flushes() - before, 0);
}

// A lock is held against another process until its holder closes an fd of the file: the one it
// locked through, or any other (the POSIX rule FLUSH carries when the daemon keeps the locks).
TEST_P(KernelLocksMountTest, LocksGoAtTheHoldersCloseOfAnyFd) {
  std::string mnt = storage_.mountpoint();
  pid_t holder = StartAs(
      kNotes,
      [] {
        int fd = open(kFile, O_RDWR);
        if (fd < 0) return kNoFile;
        if (WholeFile(fd, F_WRLCK) != 0) return kNotGranted;
        if (OtherTries() != EAGAIN) return kNotRefused;
        int fd2 = open(kFile, O_RDONLY);  // a second fd, closed: the lock goes
        if (fd2 < 0) return kNoFile;
        close(fd2);
        if (int rc = OtherTries(); rc != 0) return 10 + rc;
        if (WholeFile(fd, F_WRLCK) != 0) return kNotGranted;  // again, then the fd it locked
        if (OtherTries() != EAGAIN) return kNotRefused;
        close(fd);
        if (int rc = OtherTries(); rc != 0) return 100 + rc;
        return 0;
      },
      mnt);
  EXPECT_EQ(WaitChild(holder), 0) << "10 + errno: held after closing a second fd; 100 + errno: "
                                     "held after closing the fd it was taken through";
}

INSTANTIATE_TEST_SUITE_P(Policies, KernelLocksMountTest,
                         ::testing::Values("policy/configs/permissive.textproto",
                                           "policy/configs/android.textproto"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(absl::StrContains(info.param, "permissive")
                                                  ? "Permissive"
                                                  : "Android");
                         });

}  // namespace
}  // namespace scopedfs::tests
