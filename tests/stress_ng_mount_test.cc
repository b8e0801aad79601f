// Debian's stress-ng filesystem stressors, with their verification, run by three apps at once on
// the Android mount (strict visibility on a tmpfs lower, listing on ext4), each app in a Download
// directory of its own: any stressor failure, verify error, ESTALE or EIO fails the test. stress-ng
// runs as the app (fork + setresuid through the harness), never as root, which it would leave on
// its own. Needs root, /dev/fuse and stress-ng (tools/setup.sh installs it); skips, saying so,
// without them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kStressNg[] = "/usr/bin/stress-ng";
constexpr uid_t kStressApps[] = {kNotes, kFiles, kCamera};
// Each app's stressors run at once for this long; the three apps run side by side.
constexpr int kSeconds = 12;

// The stressors that fit a FUSE mount of Android semantics, one instance each, with their
// verification where they have one. --open-max keeps the open stressor inside the daemon's per-app
// handle budget (security invariant 6: past it the app's other stressors would get EMFILE), and
// --filename-opts posix keeps the filename stressor to names it can make many of in the time.
// Left out: chdir (it returns to the test's cwd by its absolute path, which an app cannot
// traverse), link, symlink (the Android semantics refuse them),
// copy-file (its smallest file is 128 MB; android_locks_mount_test covers copy_file_range),
// xattr (served raw; covered by the xattr tests), flock (ENOSYS on Android semantics), fiemap and
// file-ioctl (no such FUSE ops).
const std::vector<std::string>& Stressors() {
  static const auto* args = new std::vector<std::string>{"--hdd",
                                                         "1",
                                                         "--hdd-bytes",
                                                         "4M",
                                                         "--dir",
                                                         "1",
                                                         "--dentry",
                                                         "1",
                                                         "--dentries",
                                                         "512",
                                                         "--rename",
                                                         "1",
                                                         "--filename",
                                                         "1",
                                                         "--filename-opts",
                                                         "posix",
                                                         "--fallocate",
                                                         "1",
                                                         "--fallocate-bytes",
                                                         "8M",
                                                         "--mmap",
                                                         "1",
                                                         "--mmap-file",
                                                         "--mmap-bytes",
                                                         "4M",
                                                         "--seek",
                                                         "1",
                                                         "--seek-size",
                                                         "4M",
                                                         "--readahead",
                                                         "1",
                                                         "--readahead-bytes",
                                                         "4M",
                                                         "--sync-file",
                                                         "1",
                                                         "--sync-file-bytes",
                                                         "4M",
                                                         "--open",
                                                         "1",
                                                         "--open-max",
                                                         "256",
                                                         "--lockf",
                                                         "1",
                                                         "--utime",
                                                         "1",
                                                         "--verify"};
  return *args;
}

struct Param {
  std::string policy;
  LowerKind lower;
};

class StressNgMountTest : public MountTest, public ::testing::WithParamInterface<Param> {
 protected:
  void SetUp() override {
    if (access(kStressNg, X_OK) != 0) GTEST_SKIP() << kStressNg << " missing (tools/setup.sh)";
    MountTest::SetUp();
  }
  LowerKind Lower() const override { return GetParam().lower; }
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = GetParam().policy;
    return o;
  }
};

TEST_P(StressNgMountTest, StressorsOfThreeAppsAtOnceVerifyAndNeverSeeEstaleOrEio) {
  if (IsSkipped()) return;
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  for (uid_t uid : kStressApps) {
    std::string dir = absl::StrCat("Download/stress-", uid);
    ASSERT_TRUE(Succeeds(As(uid).Mkdir(dir)));
    std::string log = absl::StrCat(storage_.work_dir(), "/stress-ng-", uid, ".log");
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    std::vector<std::string> argv = {
        kStressNg, "--temp-path", dir, "--timeout", absl::StrCat(kSeconds, "s"), "--metrics-brief"};
    argv.insert(argv.end(), Stressors().begin(), Stressors().end());
    pids.push_back(StartAs(
        uid,
        [&argv, fd] {
          dup2(fd, STDOUT_FILENO);
          dup2(fd, STDERR_FILENO);
          std::vector<char*> args;
          for (std::string& a : argv) args.push_back(a.data());
          args.push_back(nullptr);
          execv(args[0], args.data());
          return 127;
        },
        storage_.mountpoint(), absl::Seconds(10 * kSeconds)));
    close(fd);
    logs.push_back(log);
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    int code = WaitChild(pids[i]);
    std::string out = ReadFileOrDie(logs[i]);
    std::string who = absl::StrCat("stress-ng as uid ", kStressApps[i]);
    EXPECT_EQ(code, 0) << who << " exited " << code << ":\n" << out;
    EXPECT_TRUE(absl::StrContains(out, "successful run completed")) << who << ":\n" << out;
    // stress-ng reports a stressor failure or a verify error at its "fail:" level; errno texts
    // can also show in "error:" lines of a stressor that gave up.
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      for (const char* bad :
           {" fail:", " error:", "Stale file handle", "Input/output error", "Transport endpoint"}) {
        EXPECT_FALSE(absl::StrContains(line, bad)) << who << ": " << line;
      }
    }
    std::cerr << who << ":\n" << out;
  }
  // The daemon still serves each app its directory, and new files in it.
  for (uid_t uid : kStressApps) {
    EXPECT_TRUE(Succeeds(As(uid).List(absl::StrCat("Download/stress-", uid))));
    EXPECT_TRUE(Succeeds(As(uid).Create(absl::StrCat("Download/stress-", uid, "/after.txt"), "x")));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, StressNgMountTest,
    ::testing::Values(Param{"policy/configs/android-strict.textproto", LowerKind::kTmpfs},
                      Param{"policy/configs/android.textproto", LowerKind::kExt4}),
    [](const ::testing::TestParamInfo<Param>& info) {
      return absl::StrCat(absl::StrContains(info.param.policy, "strict") ? "strict" : "listing",
                          "_", LowerKindName(info.param.lower));
    });

}  // namespace
}  // namespace scopedfs::tests
