// Set-id bits, case by case where one part of the daemon alone clears them: under ANDROID
// semantics a system uid's new files (not an app's, whose execute bits go too and take the set-id
// bits with them) lose S_ISUID and S_ISGID while root's keep them; under POSIX semantics a write
// open clears set-gid where group execute is set even for a caller in the file's group, and a
// truncate by path clears them as natively (the kernel's FATTR_KILL_SUIDGID).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr mode_t kSetId = S_ISUID | S_ISGID;

// The lower file's mode bits, or all ones (no mode expects that) if it cannot be read.
mode_t LowerMode(const ScopedStorage& storage, const std::string& rel) {
  struct stat st;
  if (stat(storage.Lower(rel).c_str(), &st) != 0) return 07777;
  return st.st_mode & 07777;
}

AppResult CreateThenChmod(const App& app, const std::string& created, const std::string& chmodded,
                          mode_t mode) {
  return app.Run("create and chmod with set-id bits", [&] {
    AppResult r;
    int fd = open(created.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
      r.err = errno;
      return r;
    }
    close(fd);
    if (chmod(chmodded.c_str(), mode) != 0) r.err = errno;
    return r;
  });
}

using AndroidSetIdTest = MountTest;

// The system uid is no app and no root: its set-id bits go at create, root's stay, so the
// difference is the daemon's doing. The other bits are Android's 0664 for both. A chmod succeeds
// and changes nothing, for root as for the system uid (MediaProvider's pf_setattr).
TEST_F(AndroidSetIdTest, SystemUidModesLoseSetIdBitsRootModesKeepThem) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/sys-chmod", "x", kSystem));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/root-chmod", "x", kRoot));
  mode_t sys_before = LowerMode(storage_, "Download/sys-chmod");
  mode_t root_before = LowerMode(storage_, "Download/root-chmod");
  ASSERT_TRUE(Succeeds(
      CreateThenChmod(As(kSystem), "Download/sys-created", "Download/sys-chmod", kSetId | 0755)));
  ASSERT_TRUE(Succeeds(
      CreateThenChmod(As(kRoot), "Download/root-created", "Download/root-chmod", kSetId | 0755)));
  EXPECT_EQ(LowerMode(storage_, "Download/sys-created"), 0664u);
  EXPECT_EQ(LowerMode(storage_, "Download/root-created"), kSetId | 0664);
  EXPECT_EQ(LowerMode(storage_, "Download/sys-chmod"), sys_before);
  EXPECT_EQ(LowerMode(storage_, "Download/root-chmod"), root_before);
}

class PosixSetIdTest : public MountTest {
 protected:
  static constexpr uid_t kUser = 10123;
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = "policy/configs/permissive.textproto";
    return o;
  }
  // A file of kUser's (its group kUser's too) with `mode`.
  void Put(const std::string& rel, mode_t mode) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(rel, "0123456789"));
    ASSERT_EQ(chown(storage_.Lower(rel).c_str(), kUser, kUser), 0);
    ASSERT_EQ(chmod(storage_.Lower(rel).c_str(), mode), 0);
    ASSERT_EQ(LowerMode(storage_, rel), mode);
  }
};

// Set-gid with group execute goes at a write open even though the writer is in the file's group
// (it is the file's owner); set-gid without group execute stays for a writer in the group.
TEST_F(PosixSetIdTest, AWriteOpenClearsSetGidWhereGroupExecuteIsSet) {
  Put("gx", S_ISGID | 0775);
  Put("g", S_ISGID | 0765);
  for (const char* name : {"gx", "g"}) {
    EXPECT_EQ(RunAs(
                  kUser,
                  [name] {
                    int fd = open(name, O_WRONLY | O_CLOEXEC);
                    return fd >= 0 ? (close(fd), 0) : 1;
                  },
                  storage_.mountpoint()),
              0)
        << name;
  }
  EXPECT_EQ(LowerMode(storage_, "gx"), 0775u);
  EXPECT_EQ(LowerMode(storage_, "g"), S_ISGID | 0765);
}

// truncate(2) by path, no open: the daemon gets a SETATTR asking it to kill the set-id bits.
TEST_F(PosixSetIdTest, ATruncateByPathClearsSetIdBits) {
  Put("f", kSetId | 0775);
  EXPECT_EQ(RunAs(
                kUser, [] { return truncate("f", 1) == 0 ? 0 : 1; }, storage_.mountpoint()),
            0);
  EXPECT_EQ(LowerMode(storage_, "f"), 0775u);
  absl::StatusOr<std::string> content = storage_.ReadLower("f");
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, "0");
}

}  // namespace
}  // namespace scopedfs::tests
