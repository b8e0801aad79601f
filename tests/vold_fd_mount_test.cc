// scopedfsd serving a mount made as vold makes it (--fuse_fd): the test mounts /dev/fuse with
// vold's data and flags, apps use the mount under the Android policy as real uids, and the daemon
// neither mounts nor unmounts. A bad, foreign or dead fd, or a policy the mount cannot enforce, is
// refused before anything is served, with its exit code.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"
#include "tests/vold_mount.h"

namespace scopedfs::tests {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kDaemon[] = "daemon/scopedfsd";
constexpr char kAndroidPolicy[] = "policy/configs/android.textproto";
constexpr char kPermissivePolicy[] = "policy/configs/permissive.textproto";
constexpr char kApps[] = "policy/configs/apps.textproto";

// The mountinfo line of `path`, split: per-mount options, type, source, super options.
struct MountLine {
  bool found = false;
  std::vector<std::string> mount_options, super_options;
  std::string fstype, source;
};

MountLine MountAt(const std::string& path) {
  MountLine out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    auto sep = std::find(f.begin(), f.end(), "-");
    if (f.size() < 6 || f[4] != path || sep == f.end() || f.end() - sep < 4) continue;
    out.found = true;
    out.mount_options = absl::StrSplit(f[5], ',');
    out.fstype = *(sep + 1);
    out.source = *(sep + 2);
    out.super_options = absl::StrSplit(*(sep + 3), ',');
  }
  return out;
}

bool Has(const std::vector<std::string>& options, const std::string& option) {
  return std::find(options.begin(), options.end(), option) != options.end();
}

// --- Serving a vold-style mount ---------------------------------------------------------------

class VoldFdMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.vold_mount = true;
    options.control_socket = true;
    return options;
  }
};

TEST_F(VoldFdMountTest, TheMountIsVoldsOwn) {
  MountLine m = MountAt(storage_.mountpoint());
  ASSERT_TRUE(m.found);
  EXPECT_EQ(m.fstype, "fuse");
  EXPECT_EQ(m.source, "/dev/fuse");
  for (const char* option : {"nosuid", "nodev", "noexec", "noatime"}) {
    EXPECT_TRUE(Has(m.mount_options, option)) << option;
  }
  for (const char* option : {"lazytime", "allow_other", "user_id=0", "group_id=0"}) {
    EXPECT_TRUE(Has(m.super_options, option)) << option;
  }
  EXPECT_FALSE(Has(m.super_options, "default_permissions"));
  EXPECT_THAT(storage_.DaemonLog(), HasSubstr(absl::StrCat("--fuse_fd=")));
}

TEST_F(VoldFdMountTest, AppsUseItUnderTheAndroidPolicy) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/IMG_1.jpg", JpegBytes(), kCamera));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/todo.txt", "buy milk\n", kNotes));

  // The camera's own photo, read back raw; the gallery (images + location) too.
  AppResult own = As(kCamera).Read("DCIM/Camera/IMG_1.jpg");
  ASSERT_TRUE(Succeeds(own));
  EXPECT_TRUE(SameBytes(own.data, JpegBytes()));
  AppResult gallery = As(kGallery).Read("DCIM/Camera/IMG_1.jpg");
  ASSERT_TRUE(Succeeds(gallery));
  EXPECT_TRUE(SameBytes(gallery.data, JpegBytes()));
  // Another app's document is not in the music app's listing, nor readable by it.
  AppResult listing = As(kMusic).List("Documents");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_FALSE(Contains(listing.names, "todo.txt"));
  EXPECT_FALSE(As(kMusic).Read("Documents/todo.txt").ok());
  // Creates: anything in Download, recorded as the creator's; no text file among photos.
  EXPECT_TRUE(Succeeds(As(kNotes).Create("Download/n.txt", "note")));
  EXPECT_EQ(storage_.LowerOwner("Download/n.txt"), absl::StrCat(kNotes));
  EXPECT_EQ(storage_.ReadLower("Download/n.txt").value_or(""), "note");
  EXPECT_TRUE(FailsWith(As(kNotes).Create("DCIM/n.txt", "note"), EPERM));
  // The adopted fd negotiated passthrough like a mount of the daemon's own: cleared opens bypass
  // the daemon.
  absl::StatusOr<DaemonStats> stats = storage_.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ((*stats)["passthrough_enabled"], 1);
  EXPECT_GT((*stats)["open_passthrough"], 0);
}

TEST_F(VoldFdMountTest, StoppedDaemonLeavesTheMountToItsOwner) {
  DaemonExit e = storage_.StopDaemon();
  EXPECT_TRUE(e.clean()) << e.ToString();
  // The daemon did not unmount: the harness found the mount there, and unmounted it as vold does.
  EXPECT_TRUE(e.left_vold_mount);
  EXPECT_FALSE(storage_.IsMounted());
  EXPECT_THAT(storage_.DaemonLog(), HasSubstr("left to whoever mounted it"));
  EXPECT_THAT(storage_.DaemonLog(), Not(HasSubstr("scopedfsd: unmounted")));
}

TEST_F(VoldFdMountTest, UnmountByItsOwnerEndsTheDaemonCleanly) {
  ASSERT_EQ(umount2(storage_.mountpoint().c_str(), 0), 0) << strerror(errno);
  DaemonExit e = storage_.WaitDaemonExit(absl::Seconds(30));
  EXPECT_TRUE(e.clean()) << e.ToString();
  EXPECT_FALSE(e.left_vold_mount);
}

// --- Refusals ---------------------------------------------------------------------------------

struct Ended {
  int code = -1;  // exit code, or -1 if killed
  std::string log;
};

class VoldFdRefusalTest : public testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
  }
  void TearDown() override {
    if (mounted_) umount2(storage_.mountpoint().c_str(), MNT_DETACH);
    storage_.Teardown();
  }

  // Runs scopedfsd --fuse_fd=`fd` (`fd` stays open across exec; the test's copy is closed) with
  // `policy` and no --mountpoint; bounded, killed if it does not end.
  Ended RunDaemon(int fd, const std::string& policy = kAndroidPolicy) {
    std::string log_path = storage_.work_dir() + "/refusal.log";
    std::vector<std::string> argv = {
        kDaemon, absl::StrCat("--source=", storage_.lower()), absl::StrCat("--policy=", policy),
        absl::StrCat("--apps=", kApps), absl::StrCat("--fuse_fd=", fd)};
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(log, 0);
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(log, STDERR_FILENO);
      fcntl(fd, F_SETFD, 0);  // fails harmlessly for a number that is not open
      execv(args[0], args.data());
      _exit(127);
    }
    close(log);
    if (fd > STDERR_FILENO) close(fd);
    Ended ended;
    int status = 0;
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (absl::Now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (WIFEXITED(status)) ended.code = WEXITSTATUS(status);
    ended.log = ReadFileOrEmpty(log_path);
    return ended;
  }

  // Mounts as vold does and returns the fd; the test unmounts at TearDown.
  int MountAsVold() {
    absl::StatusOr<int> fd = MountLikeVold(storage_.mountpoint());
    EXPECT_TRUE(fd.ok()) << fd.status();
    mounted_ = fd.ok();
    return fd.ok() ? *fd : -1;
  }

  ScopedStorage storage_;
  bool mounted_ = false;
};

TEST_F(VoldFdRefusalTest, FdThatIsNotOpenIsAUsageError) {
  // A number that names nothing in this process, so nothing in the daemon either.
  constexpr int kClosed = 900;
  ASSERT_EQ(fcntl(kClosed, F_GETFD), -1);
  Ended e = RunDaemon(kClosed);
  EXPECT_EQ(e.code, 64) << e.log;
  EXPECT_THAT(e.log, HasSubstr(absl::StrCat("fd ", kClosed, " is not an open file descriptor")));
  EXPECT_THAT(e.log, Not(HasSubstr("serving")));
}

TEST_F(VoldFdRefusalTest, FdThatIsNotDevFuseIsAUsageError) {
  int fd = open(storage_.Lower("").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Ended e = RunDaemon(fd);
  EXPECT_EQ(e.code, 64) << e.log;
  EXPECT_THAT(e.log, HasSubstr("is not /dev/fuse (it is " + storage_.lower() + ")"));
}

TEST_F(VoldFdRefusalTest, DevFuseNeverMountedIsAMountError) {
  int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Ended e = RunDaemon(fd);
  EXPECT_EQ(e.code, 71) << e.log;
  EXPECT_THAT(e.log, HasSubstr("no mount is connected to it"));
}

TEST_F(VoldFdRefusalTest, FdWhoseMountIsGoneIsAMountError) {
  int fd = MountAsVold();
  ASSERT_GE(fd, 0);
  ASSERT_EQ(umount2(storage_.mountpoint().c_str(), 0), 0) << strerror(errno);
  mounted_ = false;
  Ended e = RunDaemon(fd);
  EXPECT_EQ(e.code, 71) << e.log;
  EXPECT_THAT(e.log, HasSubstr("no mount is connected to it"));
}

// Another process already took the mount's FUSE_INIT (here: the test itself reads it), so that
// process serves, or served, the connection; a second server would answer nothing but EIO.
TEST_F(VoldFdRefusalTest, FdWhoseInitWasTakenIsAMountError) {
  int fd = MountAsVold();
  ASSERT_GE(fd, 0);
  std::string request(1 << 20, '\0');
  ASSERT_GT(read(fd, request.data(), request.size()), 0) << strerror(errno);
  Ended e = RunDaemon(fd);
  EXPECT_EQ(e.code, 71) << e.log;
  EXPECT_THAT(e.log, HasSubstr("already read"));
}

TEST_F(VoldFdRefusalTest, PosixPolicyIsAConfigErrorAndTheMountIsLeftAlone) {
  int fd = MountAsVold();
  ASSERT_GE(fd, 0);
  Ended e = RunDaemon(fd, kPermissivePolicy);
  EXPECT_EQ(e.code, 78) << e.log;
  EXPECT_THAT(e.log, HasSubstr("POSIX semantics, which need a mount with default_permissions"));
  EXPECT_TRUE(MountAt(storage_.mountpoint()).found) << "the daemon must not unmount";
}

}  // namespace
}  // namespace scopedfs::tests
