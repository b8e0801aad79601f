// What one caller's request leaves in the kernel's caches, read by another caller without a
// request: statx with AT_STATX_DONT_SYNC returns the attributes cached in the inode, whoever
// asks. Directories' attributes are the same for every caller, a caller of another Android user
// cannot walk through names a caller of the storage's user had cached, and a redacted reader's
// zero-filled pages do not outlive the open that was served them. Needs root and /dev/fuse.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

// statx of `path` as the app, with `flags` (AT_STATX_DONT_SYNC: whatever the kernel holds);
// data: "nlink size mtime", so that two answers compare as strings.
AppResult Statx(const App& app, const std::string& path, int flags) {
  return app.Run(absl::StrCat("statx ", path, " flags ", flags), [&] {
    AppResult out;
    struct statx stx;
    if (statx(AT_FDCWD, path.c_str(), flags | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) != 0) {
      out.err = errno;
      return out;
    }
    out.data = absl::StrCat("nlink ", stx.stx_nlink, " size ", stx.stx_size, " mtime ",
                            stx.stx_mtime.tv_sec, ".", stx.stx_mtime.tv_nsec);
    return out;
  });
}
AppResult Synced(const App& app, const std::string& path) {
  return Statx(app, path, AT_STATX_FORCE_SYNC);
}
AppResult Cached(const App& app, const std::string& path) {
  return Statx(app, path, AT_STATX_DONT_SYNC);
}

class KernelCacheTest : public MountTest, public testing::WithParamInterface<const char*> {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = GetParam();
    return o;
  }
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // Android/data holds other apps' package directories; Documents an app's own file, hidden
    // from others under STRICT, with a time of its own far from the daemon's start.
    for (const char* pkg : {"com.example.gallery", "com.example.notes", "com.example.music"}) {
      SCOPEDFS_ASSERT_OK(storage_.MkdirLower(absl::StrCat("Android/data/", pkg)));
    }
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/private.txt", "mine", kNotes));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/u0.jpg", JpegBytes(), kCamera));
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    for (const char* dir : {"Documents", "Android/data", "DCIM/Camera"}) {
      ASSERT_EQ(utimensat(AT_FDCWD, storage_.Lower(dir).c_str(), old, AT_SYMLINK_NOFOLLOW), 0);
    }
  }
};

// An app's own stat of a directory and what it reads from the kernel after a privileged caller's
// stat are the same: the link count, the size and the times of a directory never count or date
// entries hidden from the app.
TEST_P(KernelCacheTest, ADirectorysAttributesAreTheSameForEveryCaller) {
  for (const char* dir : {"Android/data", "Documents", "DCIM/Camera", "DCIM"}) {
    SCOPED_TRACE(dir);
    AppResult own = Synced(As(kCamera), dir);
    ASSERT_TRUE(Succeeds(own));
    for (uid_t privileged : {kRoot, kSystem, kFiles}) {
      SCOPED_TRACE(absl::StrCat("after a stat by uid ", privileged));
      AppResult theirs = Synced(As(privileged), dir);
      ASSERT_TRUE(Succeeds(theirs));
      AppResult cached = Cached(As(kCamera), dir);
      ASSERT_TRUE(Succeeds(cached));
      EXPECT_EQ(cached.data, own.data);
      EXPECT_EQ(theirs.data, own.data);
    }
  }
}

// A caller of another Android user is refused every name of this user's storage; after a caller
// of this user walked to a photo (and the kernel cached the names on its way), the other user's
// app still learns nothing of the photo or the directories above it from the kernel's caches.
TEST_P(KernelCacheTest, AnotherUsersAppReadsNothingCachedForThisUser) {
  for (const char* path : {"DCIM/Camera/u0.jpg", "DCIM/Camera", "DCIM", "Documents"}) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(Succeeds(Synced(As(kGallery), path)));
    ASSERT_TRUE(Succeeds(Synced(As(kRoot), path)));
    EXPECT_TRUE(FailsWith(Synced(As(kUser10 + kGallery), path), ENOENT));
    ASSERT_TRUE(Succeeds(Synced(As(kGallery), path)));
    EXPECT_TRUE(FailsWith(Cached(As(kUser10 + kGallery), path), ENOENT));
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, KernelCacheTest,
                         testing::Values("policy/configs/android-strict.textproto",
                                         "policy/configs/android.textproto"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.index == 0 ? "Strict" : "Listing");
                         });

}  // namespace
}  // namespace scopedfs::tests
