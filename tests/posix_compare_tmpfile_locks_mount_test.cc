// POSIX conformance of the permissive mount (issue 11): O_TMPFILE, and fcntl, OFD and flock locks,
// also against locks taken on the lower file directly. The framework is in posix_compare.h.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/posix_compare.h"

namespace scopedfs::tests::posix_compare {
namespace {

// --- O_TMPFILE and locks ----------------------------------------------------------------------

void LinkTmpfile(Ctx& c, int fd, const char* name) {
  std::string proc = absl::StrCat("/proc/self/fd/", fd);
  c.Do(absl::StrCat("linkat /proc fd ", name),
       linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name, AT_SYMLINK_FOLLOW));
}

TEST_F(PosixCompareTest, Tmpfile) {
  // clang-format off
  std::vector<Case> cases = {
    {"O_TMPFILE by 1234, written and linked", {}, kUser, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_RDWR, 0640);
       if (fd < 0) return;
       c.Fstat(fd, "tmpfile");
       c.Do("write", write(fd, "abc", 3));
       LinkTmpfile(c, fd, "t");
       c.Fstat(fd, "linked");
       close(fd);
       c.Read("t");
     }, {"t", "."}},
    {"O_TMPFILE|O_EXCL cannot be linked", {}, kUser, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_EXCL | O_RDWR, 0600);
       if (fd < 0) return;
       LinkTmpfile(c, fd, "t");
       close(fd);
     }, {"t"}},
    {"O_TMPFILE linked with AT_EMPTY_PATH by root", {}, kRootCred, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_WRONLY, 0600);
       if (fd < 0) return;
       c.Do("linkat AT_EMPTY_PATH", linkat(fd, "", AT_FDCWD, "t", AT_EMPTY_PATH));
       close(fd);
     }, {"t"}},
    {"O_TMPFILE linked with AT_EMPTY_PATH by 1234", {}, kUser, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_WRONLY, 0600);
       if (fd < 0) return;
       c.Do("linkat AT_EMPTY_PATH", linkat(fd, "", AT_FDCWD, "t", AT_EMPTY_PATH));
       close(fd);
     }, {"t"}},
    {"O_TMPFILE in a 0755 root dir by 65534", {D("d", 0755)}, kNobody,
     [](Ctx& c) { c.Open("d", O_TMPFILE | O_RDWR, 0600); }},
    {"O_TMPFILE O_RDONLY", {}, kUser, [](Ctx& c) { c.Open(".", O_TMPFILE | O_RDONLY, 0600); }},
    {"O_TMPFILE on a file", {F("f", 0666)}, kUser, [](Ctx& c) { c.Open("f", O_TMPFILE | O_RDWR, 0600); }},
    {"O_TMPFILE in a set-gid dir, umask 077", {D("g", 02777, 0, kShared)}, kUser077, [](Ctx& c) {
       int fd = c.OpenFd("g", O_TMPFILE | O_RDWR, 0666);
       if (fd < 0) return;
       c.Fstat(fd, "tmpfile");
       LinkTmpfile(c, fd, "g/t");
       close(fd);
     }, {"g/t"}},
  };
  // clang-format on
  RunGroup("Tmpfile", cases);
}

// A second process (same credentials) opens `path` and tries a lock; returns 0 or the errno.
int TryFlock(const char* path, int op) {
  int fd = open(path, O_RDWR);
  if (fd < 0) return errno;
  return flock(fd, op | LOCK_NB) == 0 ? 0 : errno;
}
int TryPosix(const char* path, short type, off_t start, off_t len, int cmd = F_SETLK) {
  int fd = open(path, O_RDWR);
  if (fd < 0) return errno;
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  return fcntl(fd, cmd, &fl) == 0 ? 0 : errno;
}

// The same through the lower tree: a lock on the mount and one on the file below are one lock.
int TryPosixAt(int dirfd, short type) {
  int fd = openat(dirfd, "f", O_RDWR);
  if (fd < 0) return errno;
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  return fcntl(fd, F_SETLK, &fl) == 0 ? 0 : errno;
}
int TryFlockAt(int dirfd, int op) {
  int fd = openat(dirfd, "f", O_RDWR);
  if (fd < 0) return errno;
  return flock(fd, op | LOCK_NB) == 0 ? 0 : errno;
}

TEST_F(PosixCompareTest, Locks) {
  std::vector<Obj> file = {F("f", 0666, 1234, 1234)};
  // clang-format off
  std::vector<Case> cases = {
    {"flock exclusive against a second process", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       c.Do("flock EX", flock(fd, LOCK_EX));
       c.InChild("other: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       c.InChild("other: flock SH|NB", [] { return TryFlock("f", LOCK_SH); });
       c.Do("flock UN", flock(fd, LOCK_UN));
       c.InChild("other after unlock: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       close(fd);
     }},
    {"flock shared twice", file, kNobody, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDONLY);
       c.Do("flock SH", flock(fd, LOCK_SH));
       c.InChild("other: flock SH|NB", [] { return TryFlock("f", LOCK_SH); });
       c.InChild("other: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       close(fd);
       c.InChild("other after close: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
     }},
    {"fcntl write lock against a second process", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET; fl.l_start = 0; fl.l_len = 10;
       c.Do("F_SETLK WR 0-10", fcntl(fd, F_SETLK, &fl));
       c.InChild("other: F_SETLK WR 5-15", [] { return TryPosix("f", F_WRLCK, 5, 10); });
       c.InChild("other: F_SETLK RD 0-1", [] { return TryPosix("f", F_RDLCK, 0, 1); });
       c.InChild("other: F_SETLK WR 10-20 (no overlap)", [] { return TryPosix("f", F_WRLCK, 10, 10); });
       pid_t holder = getpid();
       c.InChild("other: F_GETLK sees the holder", [holder] {
         int fd2 = open("f", O_RDWR);
         struct flock q{};
         q.l_type = F_WRLCK; q.l_whence = SEEK_SET; q.l_start = 0; q.l_len = 0;
         if (fcntl(fd2, F_GETLK, &q) != 0) return errno;
         if (q.l_type != F_WRLCK) return 101;
         if (q.l_pid != holder) return 102;
         if (q.l_start != 0 || q.l_len != 10) return 103;
         return 0;
       });
       close(fd);
       c.InChild("other after close: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 10); });
     }},
    {"fcntl lock released when any fd of the file closes", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR whole", fcntl(fd, F_SETLK, &fl));
       int fd2 = c.OpenFd("f", O_RDONLY);
       close(fd2);
       c.InChild("other after closing a second fd: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"fcntl read locks shared, write refused", file, kNobody, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_RDLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK RD whole", fcntl(fd, F_SETLK, &fl));
       c.InChild("other: F_SETLK RD", [] { return TryPosix("f", F_RDLCK, 0, 0); });
       c.InChild("other: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"OFD lock against a second process", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_OFD_SETLK WR", fcntl(fd, F_OFD_SETLK, &fl));
       c.InChild("other: F_OFD_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0, F_OFD_SETLK); });
       c.InChild("other: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"flock and fcntl locks are independent", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       c.Do("flock EX", flock(fd, LOCK_EX));
       c.InChild("other: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"fcntl lock here, a second process locks the file below", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR", fcntl(fd, F_SETLK, &fl));
       int lower = c.lower;
       c.InChild("below: F_SETLK WR", [lower] { return TryPosixAt(lower, F_WRLCK); });
       close(fd);
     }},
    {"fcntl lock below, a second process locks here", file, kUser, [](Ctx& c) {
       int fd = static_cast<int>(c.Do("open below", openat(c.lower, "f", O_RDWR)));
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR below", fcntl(fd, F_SETLK, &fl));
       c.InChild("here: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       if (fd >= 0) close(fd);
     }},
    {"flock here, a second process flocks the file below", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       c.Do("flock EX", flock(fd, LOCK_EX));
       int lower = c.lower;
       c.InChild("below: flock EX|NB", [lower] { return TryFlockAt(lower, LOCK_EX); });
       close(fd);
     }},
    {"flock below, a second process flocks here", file, kUser, [](Ctx& c) {
       int fd = static_cast<int>(c.Do("open below", openat(c.lower, "f", O_RDWR)));
       c.Do("flock EX below", flock(fd, LOCK_EX));
       c.InChild("here: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       if (fd >= 0) close(fd);
     }},
    {"F_SETLK WR on an O_RDONLY fd", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDONLY);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR", fcntl(fd, F_SETLK, &fl));
       close(fd);
     }},
  };
  // clang-format on
  RunGroup("Locks", cases);
}

}  // namespace
}  // namespace scopedfs::tests::posix_compare
