// Who keeps POSIX locks (--posix_locks, docs/requests.md, "FLUSH"): with `kernel` the kernel keeps
// them for the mount, so the daemon answers FLUSH ENOSYS and the kernel sends no FLUSH after the
// first; with `lower` (the default) every close sends one. Either way a closing process's locks go
// at its close of any fd of the file, as POSIX says: under the permissive policy with both, and
// under the Android policy, which refuses `kernel` (a redacted view is a kernel inode of its own,
// whose locks the kernel would keep apart from the raw view's). As app processes, with real
// syscalls; the FLUSH requests are the daemon's own counts (scopedfsctl stats: requests_flush).
// Needs root and /dev/fuse (tags in tests/BUILD).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

struct Param {
  const char* name;
  const char* policy;
  const char* locks;
};

class KernelLocksMountTest : public MountTest, public ::testing::WithParamInterface<Param> {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = GetParam().policy;
    o.control_socket = true;
    o.extra_flags = {absl::StrCat("--posix_locks=", GetParam().locks)};
    return o;
  }
  bool kernel_locks() const { return std::string(GetParam().locks) == "kernel"; }
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

// With kernel locks the first close's FLUSH is answered ENOSYS and no close after it sends one;
// with the daemon's, each of the six closes sends one.
TEST_P(KernelLocksMountTest, FlushOnlyWhereTheDaemonKeepsLocks) {
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
  if (kernel_locks()) {
    EXPECT_EQ(Flushes() - before, 0);
  } else {
    EXPECT_GE(Flushes() - before, 6);
  }
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

INSTANTIATE_TEST_SUITE_P(
    Locks, KernelLocksMountTest,
    ::testing::Values(Param{"PermissiveKernel", "policy/configs/permissive.textproto", "kernel"},
                      Param{"PermissiveLower", "policy/configs/permissive.textproto", "lower"},
                      Param{"AndroidLower", "policy/configs/android.textproto", "lower"}),
    [](const ::testing::TestParamInfo<Param>& info) { return std::string(info.param.name); });

// The daemon's exit code for `flags` (64: a usage error; 78: the configuration cannot be served as
// asked), started on a mount point of its own.
int DaemonExitFor(const std::string& lower, const std::vector<std::string>& flags) {
  std::string mnt = absl::StrCat(::testing::TempDir(), "/posix_locks_flag_mnt");
  mkdir(mnt.c_str(), 0755);
  std::vector<std::string> args = {"daemon/scopedfsd", "--source=" + lower, "--mountpoint=" + mnt,
                                   "--apps=policy/configs/apps.textproto"};
  args.insert(args.end(), flags.begin(), flags.end());
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    alarm(10);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// A policy that may redact (Android's) is refused `kernel` before anything is mounted; an unknown
// value is a usage error.
class PosixLocksFlagTest : public MountTest {};

TEST_F(PosixLocksFlagTest, KernelIsRefusedWherePoliciesRedact) {
  EXPECT_EQ(DaemonExitFor(storage_.Lower(""),
                          {"--policy=policy/configs/android.textproto", "--posix_locks=kernel"}),
            78);
  EXPECT_EQ(DaemonExitFor(storage_.Lower(""), {"--policy=policy/configs/permissive.textproto",
                                               "--posix_locks=sometimes"}),
            64);
}

}  // namespace
}  // namespace scopedfs::tests
