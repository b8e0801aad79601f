// Files that stay open after their name is gone, as stress-ng's stressors (and many programs'
// temporary files) use them: an app that opened a file and unlinked it keeps a working fd:
// ftruncate, fallocate, fstat and I/O through it behave as on the lower filesystem. Found by
// stress_ng_mount_test. Needs root and /dev/fuse; skips, saying so, without them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr off_t kBig = 1 << 20;

// Exit codes name the first call that went wrong: 10 + its index, or 0.
// `reopen`: the fd is an OPEN's of a file made before, else the CREATE's own.
int TruncateAndAllocate(bool unlink_first, bool reopen) {
  int fd = open("Download/tmpfile.bin", O_CREAT | O_RDWR | O_EXCL, 0644);
  if (fd < 0) return 10;
  if (reopen) {
    close(fd);
    fd = open("Download/tmpfile.bin", O_RDWR);
    if (fd < 0) return 12;
  }
  if (unlink_first && unlink("Download/tmpfile.bin") != 0) return 11;
  struct stat st;
  if (fallocate(fd, 0, 0, kBig) != 0) return 20 + (errno & 0x3f);
  if (fstat(fd, &st) != 0 || st.st_size != kBig) return 13;
  if (ftruncate(fd, 0) != 0) return 30 + (errno & 0x3f);
  if (fstat(fd, &st) != 0) return 15;
  if (st.st_size != 0) return 16;
  if (ftruncate(fd, 4096) != 0) return 40 + (errno & 0x3f);
  if (fstat(fd, &st) != 0 || st.st_size != 4096) return 18;
  char byte = 'x';
  if (pwrite(fd, &byte, 1, 8191) != 1) return 19;
  if (fstat(fd, &st) != 0 || st.st_size != 8192) return 50;
  return close(fd) == 0 ? 0 : 51;
}

class OpenUnlinkedMountTest : public MountTest {};

TEST_F(OpenUnlinkedMountTest, TruncateAndAllocateThroughAnFdWhoseNameStays) {
  EXPECT_EQ(RunAs(
                kNotes, [] { return TruncateAndAllocate(false, false); }, storage_.mountpoint()),
            0);
}

TEST_F(OpenUnlinkedMountTest, TruncateAndAllocateThroughACreatedFdWhoseNameIsGone) {
  EXPECT_EQ(RunAs(
                kNotes, [] { return TruncateAndAllocate(true, false); }, storage_.mountpoint()),
            0);
}

TEST_F(OpenUnlinkedMountTest, TruncateAndAllocateThroughAnOpenedFdWhoseNameIsGone) {
  EXPECT_EQ(RunAs(
                kNotes, [] { return TruncateAndAllocate(true, true); }, storage_.mountpoint()),
            0);
}

// The name is gone, but the fd was opened only to read: the kernel refuses the ftruncate itself.
TEST_F(OpenUnlinkedMountTest, AReadOnlyFdWhoseNameIsGoneStillCannotTruncate) {
  int code = RunAs(
      kNotes,
      [] {
        int fd = open("Download/ro.bin", O_CREAT | O_RDONLY | O_EXCL, 0644);
        if (fd < 0) return 10;
        if (unlink("Download/ro.bin") != 0) return 11;
        if (ftruncate(fd, 100) == 0) return 12;
        return errno == EINVAL || errno == EBADF ? 0 : 13;
      },
      storage_.mountpoint());
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace scopedfs::tests
