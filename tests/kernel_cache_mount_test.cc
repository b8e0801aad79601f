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

// A redacted reader is served zeros while the file's version has not settled (a ctime in the
// future: the daemon makes no plan from bytes a same-version rewrite could still replace). The
// lower tree is a loop-mounted ext4 image, where debugfs can set a ctime; the photo keeps one
// version throughout, so nothing but the daemon tells the kernel its pages are not the file's.
class DegradedReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
    image_ = storage_.work_dir() + "/ext4.img";
    lower_ = storage_.work_dir() + "/ext4";
    SCOPEDFS_ASSERT_OK(MakeExt4(image_, lower_, 32, {"-I", "128"}));
    mounted_ = true;
    std::string copy = absl::StrCat("cp -a ", storage_.lower(), "/. ", lower_, "/");
    ASSERT_EQ(system(copy.c_str()), 0) << copy;
  }
  void TearDown() override {
    if (storage_.daemon_running()) storage_.StopDaemon();
    if (HasFailure()) std::cerr << "--- scopedfsd log ---\n" << storage_.DaemonLog() << "---\n";
    if (mounted_) {
      EXPECT_EQ(umount2(lower_.c_str(), MNT_DETACH), 0) << strerror(errno);
    }
    storage_.Teardown();
  }
  void WriteOwned(const std::string& rel, const std::string& bytes, uid_t owner) {
    std::string path = lower_ + "/" + rel;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    std::string value = std::to_string(owner);
    ASSERT_EQ(setxattr(path.c_str(), "trusted.scopedfs.owner", value.data(), value.size(), 0), 0);
  }

  ScopedStorage storage_;
  std::string image_, lower_;
  bool mounted_ = false;
};

bool AllZero(absl::string_view bytes) {
  return bytes.find_first_not_of('\0') == absl::string_view::npos;
}

// The social app reads a photo with GPS whose version has not settled and is served zeros; once
// it settles (same version), a second read through the same open and a read through a new open
// both get the redacted bytes, as a copy of the photo gives them: the zeros did not stay in the
// inode's page cache (before: keep_cache at the next open of the same version kept them, and the
// held open read them from the cache).
TEST_F(DegradedReadTest, ZerosServedForAnUnsettledVersionDoNotStayInThePageCache) {
  const std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  WriteOwned("DCIM/Camera/settled.jpg", photo, kCamera);
  WriteOwned("DCIM/Camera/unsettled.jpg", photo, kCamera);
  ASSERT_EQ(umount2(lower_.c_str(), 0), 0) << strerror(errno);
  mounted_ = false;
  // Far enough ahead that the daemon's start and the first read come before it.
  int64_t ctime_s = absl::ToUnixSeconds(absl::Now()) + 6;
  std::string set =
      absl::StrCat("debugfs -w -R 'set_inode_field /DCIM/Camera/unsettled.jpg ctime @", ctime_s,
                   "' ", image_, " >/dev/null 2>&1");
  ASSERT_EQ(system(set.c_str()), 0) << set;
  SCOPEDFS_ASSERT_OK(MountExt4(image_, lower_));
  mounted_ = true;
  struct stat st;
  ASSERT_EQ(stat((lower_ + "/DCIM/Camera/unsettled.jpg").c_str(), &st), 0);
  ASSERT_EQ(st.st_ctim.tv_sec, ctime_s) << "debugfs did not set the ctime";
  DaemonOptions options;
  options.source = lower_;
  SCOPEDFS_ASSERT_OK(storage_.StartDaemon(options));

  AppResult expected = storage_.As(kSocial).Read("DCIM/Camera/settled.jpg");
  ASSERT_TRUE(Succeeds(expected));
  ASSERT_EQ(expected.data.size(), photo.size());
  ASSERT_NE(expected.data, photo) << "the social app's reads are not redacted";

  int ready[2], go[2], result[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(result, O_CLOEXEC), 0);
  size_t size = photo.size();
  pid_t reader = StartAs(
      kSocial,
      [&] {
        close(ready[0]);
        close(go[1]);
        close(result[0]);
        std::string buf(size, '?');
        auto read_all = [&](int fd) {
          ssize_t n = pread(fd, buf.data(), size, 0);
          return n == static_cast<ssize_t>(size) ? buf : std::string("short read");
        };
        int held = open("DCIM/Camera/unsettled.jpg", O_RDONLY);
        if (held < 0) return 2;
        std::string first = read_all(held);
        char c = AllZero(first) ? 'Z' : 'N';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) return 3;
        std::string again = read_all(held);
        int fresh = open("DCIM/Camera/unsettled.jpg", O_RDONLY);
        if (fresh < 0) return 4;
        std::string reopened = read_all(fresh);
        std::string out = again + reopened;
        if (write(result[1], out.data(), out.size()) != static_cast<ssize_t>(out.size())) return 5;
        return 0;
      },
      storage_.mountpoint());
  close(ready[1]);
  close(go[0]);
  close(result[1]);
  char first = '?';
  ASSERT_EQ(read(ready[0], &first, 1), 1);
  close(ready[0]);
  // The precondition: the first read was served zeros (the version had not settled yet).
  EXPECT_EQ(first, 'Z') << "the first read was not zero-filled; the daemon started too late?";
  // Until the ctime is past, the daemon keeps answering zeros; then it waits out the rest.
  while (absl::ToUnixSeconds(absl::Now()) <= ctime_s) absl::SleepFor(absl::Milliseconds(100));
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  std::string out;
  char chunk[65536];
  for (ssize_t n; (n = read(result[0], chunk, sizeof(chunk))) > 0;) out.append(chunk, n);
  close(result[0]);
  EXPECT_EQ(WaitChild(reader), 0);
  ASSERT_EQ(out.size(), 2 * size);
  absl::string_view again = absl::string_view(out).substr(0, size);
  absl::string_view reopened = absl::string_view(out).substr(size);
  EXPECT_TRUE(SameBytes(again, expected.data)) << "a second read through the open served zeros";
  EXPECT_TRUE(SameBytes(reopened, expected.data)) << "a new open of the same version kept zeros";
}

INSTANTIATE_TEST_SUITE_P(Policies, KernelCacheTest,
                         testing::Values("policy/configs/android-strict.textproto",
                                         "policy/configs/android.textproto"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.index == 0 ? "Strict" : "Listing");
                         });

}  // namespace
}  // namespace scopedfs::tests
