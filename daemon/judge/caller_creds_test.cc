// ActingAsCaller: an object made while acting as a caller is the caller's, with the caller's
// umask, and the thread is the daemon's own again afterwards (ids, umask, capabilities), for a
// caller with the daemon's ids (no switch) and one with other ids.
#include "daemon/judge/caller_creds.h"

#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

struct Made {
  int err = 0;
  struct stat st {};
  mode_t umask_after = 0777;
  uid_t fsuid_after = 1;
  gid_t fsgid_after = 1;
  struct stat st_after {};  // a file made after the switch back
};

// On a thread of its own, as the daemon's workers do (the umask is per thread).
Made MakeAs(const std::string& dir, uid_t uid, gid_t gid, mode_t mask) {
  Made m;
  std::thread t([&] {
    std::string path = dir + "/made";
    {
      ActingAsCaller acting(uid, gid, mask);
      if ((m.err = acting.error()) != 0) return;
      int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
      if (fd < 0) {
        m.err = errno;
        return;
      }
      fstat(fd, &m.st);
      close(fd);
    }
    m.umask_after = umask(0);
    m.fsuid_after = static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1)));
    m.fsgid_after = static_cast<gid_t>(setfsgid(static_cast<gid_t>(-1)));
    std::string after = dir + "/after";
    int fd = open(after.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0) {
      fstat(fd, &m.st_after);
      close(fd);
    }
  });
  t.join();
  return m;
}

std::string NewDir(const char* name) {
  std::string dir = ::testing::TempDir() + "/" + name + std::to_string(getpid());
  mkdir(dir.c_str(), 0777);
  chmod(dir.c_str(), 0777);
  return dir;
}

TEST(ActingAsCallerTest, TheDaemonsOwnIdsNeedNoSwitchAndGetTheCallersUmask) {
  std::string dir = NewDir("own");
  Made m = MakeAs(dir, geteuid(), getegid(), 027);
  ASSERT_EQ(m.err, 0) << strerror(m.err);
  EXPECT_EQ(m.st.st_mode & 0777, 0640u);
  EXPECT_EQ(m.st.st_uid, geteuid());
  EXPECT_EQ(m.umask_after, 0u) << "the thread's umask is 0 again";
  EXPECT_EQ(m.fsuid_after, geteuid());
  EXPECT_EQ(m.fsgid_after, getegid());
  EXPECT_EQ(m.st_after.st_mode & 0777, 0666u);
}

TEST(ActingAsCallerTest, AnotherCallersObjectIsItsOwnAndTheThreadComesBack) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to act as another uid)";
  std::string dir = NewDir("other");
  Made m = MakeAs(dir, 10065, 10066, 022);
  ASSERT_EQ(m.err, 0) << strerror(m.err);
  EXPECT_EQ(m.st.st_uid, 10065u);
  EXPECT_EQ(m.st.st_gid, 10066u);
  EXPECT_EQ(m.st.st_mode & 0777, 0644u);
  EXPECT_EQ(m.umask_after, 0u);
  EXPECT_EQ(m.fsuid_after, 0u);
  EXPECT_EQ(m.fsgid_after, 0u);
  EXPECT_EQ(m.st_after.st_uid, 0u) << "the thread made a file as the caller after the switch back";
  EXPECT_EQ(m.st_after.st_gid, 0u);
}

// Only the group differs (a root caller in another group): the object gets that group, and the
// thread its own again.
TEST(ActingAsCallerTest, OnlyTheGroupSwitched) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to act as another gid)";
  std::string dir = NewDir("group");
  Made m = MakeAs(dir, 0, 10066, 0);
  ASSERT_EQ(m.err, 0) << strerror(m.err);
  EXPECT_EQ(m.st.st_uid, 0u);
  EXPECT_EQ(m.st.st_gid, 10066u);
  EXPECT_EQ(m.st.st_mode & 0777, 0666u);
  EXPECT_EQ(m.fsgid_after, 0u);
  EXPECT_EQ(m.st_after.st_gid, 0u);
}

}  // namespace
}  // namespace scopedfs::daemon
