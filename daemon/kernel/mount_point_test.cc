// IsMountRoot: "/" is a mount root, a plain directory is not, and a directory with a space in its
// name that something is mounted on is busy. DetachDeadFuseMount: a FUSE mount whose /dev/fuse fd
// was closed (what a SIGKILLed daemon leaves) is detached, also stacked twice, under a name with a
// space and through a symlink; live mounts, plain and missing directories are left alone. Tests
// that mount need root (and /dev/fuse) and skip, saying so, without them; they mount in a private
// mount namespace, so nothing outlives the test.
#include "daemon/kernel/mount_point.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

std::string FreshDir(const std::string& name) {
  std::string path = testing::TempDir() + "/" + name;
  rmdir(path.c_str());
  EXPECT_EQ(mkdir(path.c_str(), 0755), 0) << path << ": " << std::strerror(errno);
  return path;
}

TEST(IsMountRootTest, RootDirectoryIsAMountRoot) {
  absl::StatusOr<bool> root = IsMountRoot("/");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_TRUE(*root);
}

TEST(IsMountRootTest, PlainDirectoryIsNot) {
  std::string dir = FreshDir("plain dir");
  absl::StatusOr<bool> plain = IsMountRoot(dir);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(*plain);
}

TEST(IsMountRootTest, MissingPathIsNotFound) {
  absl::StatusOr<bool> missing = IsMountRoot(testing::TempDir() + "/no such dir");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(IsMountRootTest, MountedDirectoryWithSpaceInNameIsBusy) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to mount a tmpfs (runs as uid " << geteuid() << ")";
  std::string dir = FreshDir("busy dir");
  ASSERT_EQ(mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k"), 0)
      << "mount tmpfs on " << dir << ": " << std::strerror(errno);
  absl::StatusOr<bool> busy = IsMountRoot(dir);
  // Through a symlink too: scopedfsd's --mountpoint may be one, and mount(2) follows it.
  std::string link = testing::TempDir() + "/link to busy dir";
  unlink(link.c_str());
  ASSERT_EQ(symlink(dir.c_str(), link.c_str()), 0) << std::strerror(errno);
  absl::StatusOr<bool> via_link = IsMountRoot(link);
  ASSERT_EQ(umount2(dir.c_str(), MNT_DETACH), 0) << std::strerror(errno);
  absl::StatusOr<bool> after = IsMountRoot(dir);

  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_TRUE(*busy);
  ASSERT_TRUE(via_link.ok()) << via_link.status();
  EXPECT_TRUE(*via_link);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_FALSE(*after);
}

TEST(ParseMountInfoTest, UnescapesPathsAndSkipsOptionalFields) {
  std::vector<MountInfoEntry> entries = ParseMountInfo(
      "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
      "not a mountinfo line\n"
      "731 29 0:88 / /tmp/a\\040b\\134c rw,nosuid shared:7 master:1 - fuse.scopedfs "
      "scopedfs rw,user_id=0\n");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].mount_id, 22);
  EXPECT_EQ(entries[0].mount_point, "/proc");
  EXPECT_EQ(entries[1].mount_id, 731);
  EXPECT_EQ(entries[1].mount_point, "/tmp/a b\\c");
  EXPECT_EQ(entries[1].fstype, "fuse.scopedfs");
  EXPECT_EQ(entries[1].source, "scopedfs");
}

TEST(DetachDeadFuseMountTest, PlainAndMissingDirectoriesAreLeftAlone) {
  std::string dir = FreshDir("plain for detach");
  absl::StatusOr<std::string> plain = DetachDeadFuseMount(dir);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*plain, "");
  absl::StatusOr<std::string> missing = DetachDeadFuseMount(testing::TempDir() + "/no such dir");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(*missing, "");
}

// Empty if this test may mount FUSE, else why not. Enters a private mount namespace once.
std::string WhyNoFuse() {
  if (geteuid() != 0) return absl::StrCat("needs root to mount FUSE (runs as uid ", geteuid(), ")");
  if (access("/dev/fuse", R_OK | W_OK) != 0) {
    return absl::StrCat("needs /dev/fuse: ", std::strerror(errno));
  }
  static const bool private_ns =
      unshare(CLONE_NEWNS) == 0 && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
  if (!private_ns) return absl::StrCat("no private mount namespace: ", std::strerror(errno));
  return "";
}

// Mounts FUSE on `dir` as scopedfsd does, then closes the /dev/fuse fd without serving anything:
// the kernel aborts the connection, exactly as when a daemon is SIGKILLed.
void MountDeadFuse(const std::string& dir) {
  int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::string data = absl::StrCat("fd=", fd, ",rootmode=40000,user_id=0,group_id=0,allow_other");
  int rc = mount("scopedfs", dir.c_str(), "fuse.scopedfs", MS_NOSUID | MS_NODEV, data.c_str());
  int err = errno;
  close(fd);
  ASSERT_EQ(rc, 0) << "mount fuse on " << dir << ": " << std::strerror(err);
}

// The canonical path (the temp dir's path may hold a doubled slash or a symlink), once `path`
// can be resolved again.
std::string Canonical(const std::string& path) {
  char real[PATH_MAX];
  return realpath(path.c_str(), real) == nullptr ? "(unresolvable " + path + ")" : real;
}

int StatErrno(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? 0 : errno;
}

TEST(DetachDeadFuseMountTest, DetachesADeadFuseMountAndSaysWhatItFound) {
  if (std::string why = WhyNoFuse(); !why.empty()) GTEST_SKIP() << why;
  std::string dir = FreshDir("dead mount");
  MountDeadFuse(dir);
  ASSERT_EQ(StatErrno(dir), ENOTCONN) << "a dead FUSE mount should answer ENOTCONN";

  absl::StatusOr<std::string> found = DetachDeadFuseMount(dir);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(StatErrno(dir), 0);
  EXPECT_TRUE(
      absl::StrContains(*found, absl::StrCat("found a dead FUSE mount at ", Canonical(dir), " (")))
      << *found;
  EXPECT_TRUE(absl::StrContains(*found, "fuse.scopedfs")) << *found;
  absl::StatusOr<bool> busy = IsMountRoot(dir);
  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_FALSE(*busy);
}

TEST(DetachDeadFuseMountTest, DetachesStackedDeadMountsThroughASymlink) {
  if (std::string why = WhyNoFuse(); !why.empty()) GTEST_SKIP() << why;
  std::string dir = FreshDir("twice dead");
  MountDeadFuse(dir);
  // Mounting on the dead mount's root stacks a second one (a crash loop with no recovery would).
  MountDeadFuse(dir);
  std::string link = testing::TempDir() + "/link to twice dead";
  unlink(link.c_str());
  ASSERT_EQ(symlink(dir.c_str(), link.c_str()), 0) << std::strerror(errno);

  absl::StatusOr<std::string> found = DetachDeadFuseMount(link);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(StatErrno(dir), 0);
  std::string line = absl::StrCat("found a dead FUSE mount at ", Canonical(dir), " (");
  size_t first = found->find(line);
  ASSERT_NE(first, std::string::npos) << *found;
  EXPECT_NE(found->find(line, first + 1), std::string::npos) << "two mounts, two lines: " << *found;
}

TEST(DetachDeadFuseMountTest, LiveMountIsLeftAlone) {
  if (std::string why = WhyNoFuse(); !why.empty()) GTEST_SKIP() << why;
  std::string dir = FreshDir("live mount");
  ASSERT_EQ(mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k"), 0) << std::strerror(errno);
  absl::StatusOr<std::string> found = DetachDeadFuseMount(dir);
  absl::StatusOr<bool> busy = IsMountRoot(dir);
  umount2(dir.c_str(), MNT_DETACH);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, "");
  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_TRUE(*busy) << "the live tmpfs must still be mounted";
}

}  // namespace
}  // namespace scopedfs::daemon
