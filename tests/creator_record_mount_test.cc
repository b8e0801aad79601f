// Under ANDROID semantics every object an app makes records its creator, or is not made: over a
// lower filesystem that cannot store the record (ramfs has no xattrs), create and mkdir fail and
// leave nothing behind, and symlinks are never made. Under POSIX semantics the record is the lower
// owner: a symlink is made as its caller and owned by it.
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
    // Writable by apps under POSIX semantics too, where the lower modes decide (not the umask).
    ASSERT_EQ(mkdir((lower_ + "/Download").c_str(), 0777), 0);
    ASSERT_EQ(chmod((lower_ + "/Download").c_str(), 0777), 0);
    DaemonOptions options;
    options.source = lower_;
    if (posix_) {
      options.policy = AndroidRulesUnderPosixSemantics();
      ASSERT_FALSE(options.policy.empty());
    }
    SCOPEDFS_ASSERT_OK(storage_.StartDaemon(options));
  }
  void TearDown() override {
    if (storage_.daemon_started()) {
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
  bool posix_ = false;  // the Android rules under POSIX semantics instead of ANDROID
};

// Under ANDROID semantics no symlink exists to carry a creator: the daemon answers ENOSYS, as a
// device does, before making anything.
TEST_F(CreatorRecordMountTest, NoSymlinkIsMadeUnderAndroidSemantics) {
  EXPECT_TRUE(FailsWith(storage_.As(kNotes).Symlink("target", "Download/link"), ENOSYS));
  EXPECT_FALSE(InLower("Download/link"));
}

class PosixCreatorRecordMountTest : public CreatorRecordMountTest {
 protected:
  void SetUp() override {
    posix_ = true;
    CreatorRecordMountTest::SetUp();
  }
};

// Under POSIX semantics no xattr is needed: the symlink is made as the app, so the lower tree
// itself names its creator, on a lower filesystem with no xattrs at all.
TEST_F(PosixCreatorRecordMountTest, SymlinkIsOwnedByItsCreator) {
  ASSERT_TRUE(Succeeds(storage_.As(kNotes).Symlink("target", "Download/link")))
      << storage_.DaemonLog();
  struct stat st;
  ASSERT_EQ(lstat((lower_ + "/Download/link").c_str(), &st), 0) << strerror(errno);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(st.st_uid, kNotes) << "a symlink its creator does not own";
  AppResult target = storage_.As(kNotes).Readlink("Download/link");
  ASSERT_TRUE(Succeeds(target));
  EXPECT_EQ(target.data, "target");
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
