// Under ANDROID semantics every object an app makes records its creator, or is not made: over a
// lower filesystem that cannot store the record (ramfs has no xattrs), create, mkdir and symlink
// all fail and leave nothing behind.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class CreatorRecordMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    lower_ = storage_.work_dir() + "/ramfs";
    ASSERT_EQ(mkdir(lower_.c_str(), 0755), 0);
    ASSERT_EQ(mount("none", lower_.c_str(), "ramfs", 0, "mode=0755"), 0) << strerror(errno);
    ramfs_mounted_ = true;
    ASSERT_EQ(mkdir((lower_ + "/Download").c_str(), 0777), 0);
    DaemonOptions options;
    options.source = lower_;
    SCOPEDFS_ASSERT_OK(storage_.StartDaemon(options));
  }
  void TearDown() override {
    if (storage_.daemon_running()) {
      DaemonExit exit = storage_.StopDaemon();
      EXPECT_TRUE(exit.clean()) << exit.ToString() << "\n" << storage_.DaemonLog();
    }
    if (ramfs_mounted_) {
      EXPECT_EQ(umount2(lower_.c_str(), MNT_DETACH), 0) << strerror(errno);
    }
    storage_.Teardown();
  }
  bool InLower(const std::string& rel) const {
    struct stat st;
    return lstat((lower_ + "/" + rel).c_str(), &st) == 0;
  }

  ScopedStorage storage_;
  std::string lower_;
  bool ramfs_mounted_ = false;
};

TEST_F(CreatorRecordMountTest, SymlinkWithoutItsCreatorIsUndone) {
  AppResult r = storage_.As(kNotes).Symlink("target", "Download/link");
  EXPECT_FALSE(r.ok()) << r;
  EXPECT_FALSE(InLower("Download/link")) << "a symlink nobody owns was kept";
}

// The same rule for the ops that already kept it.
TEST_F(CreatorRecordMountTest, CreateAndMkdirWithoutTheirCreatorAreUndone) {
  EXPECT_FALSE(storage_.As(kNotes).Create("Download/file.txt", "x").ok());
  EXPECT_FALSE(InLower("Download/file.txt"));
  EXPECT_FALSE(storage_.As(kNotes).Mkdir("Download/dir").ok());
  EXPECT_FALSE(InLower("Download/dir"));
}

}  // namespace
}  // namespace scopedfs::tests
