// IsMountRoot: "/" is a mount root, a plain directory is not, and a directory with a space in its
// name that something is mounted on is busy (the mountinfo parser this replaced missed it). That
// last test mounts a tmpfs, so it needs root and skips, saying so, without it.
#include "daemon/mount_point.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
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

}  // namespace
}  // namespace scopedfs::daemon
