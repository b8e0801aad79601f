// Locks and copy_file_range under ANDROID semantics, as on a device, whose MediaProvider
// implements neither: fcntl and OFD record locks of two apps exclude each other, whichever view
// each reads; flock() fails ENOSYS (MediaProvider asks the kernel for FUSE_FLOCK_LOCKS and has no
// flock op); and copy_file_range is the kernel's copy through reads and writes, which give a
// redacted reader redacted bytes. Waiting, bounds and POSIX semantics are lock_mount_test's,
// budget_mount_test's and posix_compare's.
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kShared[] = "Download/shared.txt";
constexpr int kOk = 0;
constexpr int kNoFile = 200, kGranted = 201, kNotReported = 202, kWrongPid = 203;

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (pipe(fds) == 0) r = fds[0], w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

bool Readable(int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, ms) == 1;
}

struct flock WholeFile(short type) {
  struct flock l = {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  return l;
}

class AndroidLocksTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.control_socket = true;
    return o;
  }
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kShared, "shared", kSocial));
  }
};

// Two app processes: the owner holds a write lock, another app is refused it and told who holds
// it, and gets it once the owner lets go, as on a device. The other app (all-files access, no
// ACCESS_MEDIA_LOCATION) reads a file of unknown format through the redacted view, another kernel
// inode than the owner's: locks held by the kernel on each inode would not meet (this test failed
// so, with FUSE_POSIX_LOCKS left out of the INIT reply), so the daemon keeps record locks.
TEST_F(AndroidLocksTest, FcntlLocksMeetBetweenAppsAndViews) {
  for (int set : {F_SETLK, F_OFD_SETLK}) {
    SCOPED_TRACE(set == F_SETLK ? "F_SETLK" : "F_OFD_SETLK");
    int get = set == F_SETLK ? F_GETLK : F_OFD_GETLK;
    Pipe locked, release;
    pid_t holder = StartAs(
        kSocial,
        [&] {
          int fd = open(kShared, O_RDWR);
          if (fd < 0) return kNoFile;
          struct flock l = WholeFile(F_WRLCK);
          if (fcntl(fd, set, &l) != 0) return errno;
          (void)!write(locked.w, "L", 1);
          char c;
          (void)!read(release.r, &c, 1);
          return kOk;
        },
        storage_.mountpoint());
    ASSERT_TRUE(Readable(locked.r, 10000)) << "the holder never locked";
    // Another app is refused, and told the holder's pid (for a process lock).
    int other = RunAs(
        kFiles,
        [&] {
          int fd = open(kShared, O_RDWR);
          if (fd < 0) return kNoFile;
          struct flock l = WholeFile(F_WRLCK);
          if (fcntl(fd, set, &l) == 0) return kGranted;
          if (errno != EAGAIN && errno != EACCES) return errno;
          struct flock q = WholeFile(F_WRLCK);
          if (fcntl(fd, get, &q) != 0) return errno;
          if (q.l_type != F_WRLCK) return kNotReported;
          if (set == F_SETLK && q.l_pid != holder) return kWrongPid;
          return kOk;
        },
        storage_.mountpoint());
    EXPECT_EQ(other, kOk);
    ASSERT_EQ(write(release.w, "R", 1), 1);
    EXPECT_EQ(WaitChild(holder), kOk);
    int after = RunAs(
        kFiles,
        [&] {
          int fd = open(kShared, O_RDWR);
          if (fd < 0) return kNoFile;
          struct flock l = WholeFile(F_WRLCK);
          return fcntl(fd, F_SETLKW, &l) == 0 ? kOk : errno;
        },
        storage_.mountpoint());
    EXPECT_EQ(after, kOk);
  }
}

// A device's shared storage answers flock() with ENOSYS, in every mode.
TEST_F(AndroidLocksTest, FlockFailsEnosysAsOnADevice) {
  for (int op : {LOCK_EX | LOCK_NB, LOCK_SH | LOCK_NB, LOCK_EX, LOCK_UN}) {
    SCOPED_TRACE(op);
    int rc = RunAs(
        kSocial,
        [&] {
          int fd = open(kShared, O_RDWR);
          if (fd < 0) return kNoFile;
          return flock(fd, op) == 0 ? kOk : errno;
        },
        storage_.mountpoint());
    EXPECT_EQ(rc, ENOSYS) << ErrnoName(rc);
  }
}

// copy_file_range is not the daemon's: the kernel copies with reads and writes instead, so the
// daemon sees no copy request, and a copy between two files the app reads raw takes none of its
// writes (both are passthrough).
TEST_F(AndroidLocksTest, CopyFileRangeIsTheKernelsCopy) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/src.txt", std::string(100000, 's'), kSocial));
  absl::StatusOr<DaemonStats> before = storage_.Stats();
  ASSERT_TRUE(before.ok()) << before.status();
  AppResult r = As(kSocial).Run("copy_file_range", [] {
    AppResult r;
    int in = open("Download/src.txt", O_RDONLY);
    int out = open("Download/dst.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (in < 0 || out < 0) return r.err = errno, r;
    while (true) {
      ssize_t n = copy_file_range(in, nullptr, out, nullptr, 1 << 20, 0);
      if (n < 0) return r.err = errno, r;
      if (n == 0) break;
      r.value += n;
    }
    close(in);
    close(out);
    return r;
  });
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.value, 100000);
  EXPECT_EQ(*storage_.ReadLower("Download/dst.txt"), std::string(100000, 's'));
  absl::StatusOr<DaemonStats> after = storage_.Stats();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)["write_requests"], (*before)["write_requests"])
      << "the daemon served writes of a copy between passthrough files";
}

// The kernel's copy reads a redacted source through the daemon: the copy holds the bytes the
// reader may read (location filled), never the lower file's.
TEST_F(AndroidLocksTest, CopyFileRangeFromARedactedSourceCopiesRedactedBytes) {
  const std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/gps.jpg", photo, kCamera));
  App social = As(kSocial);  // images without ACCESS_MEDIA_LOCATION: redacted
  AppResult seen = social.Read("DCIM/Camera/gps.jpg");
  ASSERT_TRUE(Succeeds(seen));
  ASSERT_EQ(seen.data.size(), photo.size());
  ASSERT_NE(seen.data, photo) << "the sample is not redacted for this app";
  const std::string copy = "Pictures/copy.jpg";
  AppResult r = social.Run("copy_file_range", [&] {
    AppResult r;
    int in = open("DCIM/Camera/gps.jpg", O_RDONLY);
    int out = open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (in < 0 || out < 0) return r.err = errno, r;
    loff_t off_in = 0;
    while (true) {
      ssize_t n = copy_file_range(in, &off_in, out, nullptr, 1 << 20, 0);
      if (n < 0) return r.err = errno, r;
      if (n == 0) break;
      r.value += n;
    }
    close(in);
    close(out);
    return r;
  });
  ASSERT_TRUE(Succeeds(r));
  absl::StatusOr<std::string> copied = storage_.ReadLower(copy);
  ASSERT_TRUE(copied.ok());
  EXPECT_TRUE(SameBytes(*copied, seen.data));
}

}  // namespace
}  // namespace scopedfs::tests
