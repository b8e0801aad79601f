// Policy changes on a running daemon (issue 13): the file watch and SIGHUP both reload; a broken
// edit keeps the working policy and the log names file:line:col; a revocation decides every
// later open, while a file already open keeps the access it was opened with.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kCameraEntry[] = "app { package: \"com.example.camera\" uid: 10065 target_sdk: 34 }";
constexpr char kCameraWithAudio[] =
    "app { package: \"com.example.camera\" uid: 10065 target_sdk: 34\n"
    "      permission: \"android.permission.READ_MEDIA_AUDIO\" }";
constexpr char kMusicEntry[] =
    "app { package: \"com.example.music\" uid: 10063 target_sdk: 34\n"
    "      permission: \"android.permission.READ_MEDIA_AUDIO\" }";
constexpr char kGalleryEntry[] =
    "app { package: \"com.example.gallery\" uid: 10061 target_sdk: 34\n"
    "      permission: \"android.permission.READ_MEDIA_IMAGES\"\n"
    "      permission: \"android.permission.READ_MEDIA_VIDEO\"\n"
    "      permission: \"android.permission.ACCESS_MEDIA_LOCATION\" }";
constexpr char kSocialEntry[] =
    "app { package: \"com.example.social\" uid: 10062 target_sdk: 34\n"
    "      permission: \"android.permission.READ_MEDIA_IMAGES\"\n"
    "      permission: \"android.permission.READ_MEDIA_VIDEO\" }";
// How long a reload may take to show: the watch debounces for 200 ms.
constexpr absl::Duration kReloadWait = absl::Seconds(10);

int CountOf(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

class ReloadMountTest : public MountTest {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
    config_dir_ = storage_.work_dir() + "/config";
    ASSERT_EQ(mkdir(config_dir_.c_str(), 0755), 0) << strerror(errno);
    apps_path_ = config_dir_ + "/apps.textproto";
    shipped_apps_ = ReadFileOrDie("policy/configs/apps.textproto");
    ASSERT_TRUE(absl::StrContains(shipped_apps_, kCameraEntry));
    ASSERT_TRUE(absl::StrContains(shipped_apps_, kMusicEntry));
    ASSERT_TRUE(absl::StrContains(shipped_apps_, kSocialEntry));
    ReplaceApps(shipped_apps_);
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Music/song.mp3", Mp3Bytes(), kNotes));
    SCOPEDFS_ASSERT_OK(storage_.StartDaemon(Options()));
  }
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.apps = apps_path_;
    o.control_socket = true;
    o.extra_flags = extra_flags_;
    return o;
  }
  // As a package manager does: a new file renamed over the old one.
  void ReplaceApps(const std::string& text) {
    std::string tmp = apps_path_ + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << text;
    }
    ASSERT_EQ(rename(tmp.c_str(), apps_path_.c_str()), 0) << strerror(errno);
  }
  std::string AppsWith(absl::string_view entry, absl::string_view replacement) {
    return absl::StrReplaceAll(shipped_apps_, {{entry, replacement}});
  }
  // Polls until `uid` can (want_ok) or cannot read `path`, up to kReloadWait.
  bool WaitUntilReadable(uid_t uid, const std::string& path, bool want_ok) {
    absl::Time deadline = absl::Now() + kReloadWait;
    do {
      if (As(uid).Read(path).ok() == want_ok) return true;
      absl::SleepFor(absl::Milliseconds(50));
    } while (absl::Now() < deadline);
    return false;
  }
  bool WaitForLog(const std::string& needle, int count) {
    absl::Time deadline = absl::Now() + kReloadWait;
    do {
      if (CountOf(storage_.DaemonLog(), needle) >= count) return true;
      absl::SleepFor(absl::Milliseconds(50));
    } while (absl::Now() < deadline);
    return false;
  }

  std::vector<std::string> extra_flags_;
  std::string config_dir_;
  std::string apps_path_;
  std::string shipped_apps_;
};

TEST_F(ReloadMountTest, AnAppsFileEditGrantsWithoutACommand) {
  EXPECT_TRUE(FailsWith(As(kCamera).Read("Music/song.mp3"), ENOENT));
  ReplaceApps(AppsWith(kCameraEntry, kCameraWithAudio));
  EXPECT_TRUE(WaitUntilReadable(kCamera, "Music/song.mp3", true))
      << "the grant did not take effect within " << kReloadWait;
  EXPECT_TRUE(SameBytes(As(kCamera).Read("Music/song.mp3").data, Mp3Bytes()));
  EXPECT_TRUE(absl::StrContains(storage_.DaemonLog(), "(change of " + apps_path_ + ")"));
}

TEST_F(ReloadMountTest, ABrokenEditKeepsTheWorkingPolicyAndNamesLineAndColumn) {
  ReplaceApps(AppsWith(kCameraEntry, kCameraWithAudio));
  ASSERT_TRUE(WaitUntilReadable(kCamera, "Music/song.mp3", true));
  // A half-finished edit: the camera entry loses its closing brace, and a permission is misspelt.
  std::string broken = AppsWith(kCameraEntry, "app { package: \"com.example.camera\" uid: ");
  ReplaceApps(broken);
  ASSERT_TRUE(WaitForLog("rejected, previous policy stays in force", 1)) << storage_.DaemonLog();
  std::string log = storage_.DaemonLog();
  EXPECT_TRUE(absl::StrContains(log, apps_path_ + ":")) << log;
  // file:line:col: a line and a column number follow the file name.
  size_t at = log.find(apps_path_ + ":", log.find("rejected"));
  ASSERT_NE(at, std::string::npos) << log;
  int line = 0, col = 0;
  EXPECT_EQ(sscanf(log.c_str() + at + apps_path_.size(), ":%d:%d", &line, &col), 2) << log;
  EXPECT_GT(line, 0);
  EXPECT_GT(col, 0);
  // The policy in force is still the one with the grant, for every app.
  EXPECT_TRUE(Succeeds(As(kCamera).Read("Music/song.mp3")));
  EXPECT_TRUE(Succeeds(As(kMusic).Read("Music/song.mp3")));
  EXPECT_TRUE(FailsWith(As(kSocial).Read("Music/song.mp3"), ENOENT));
  // Fixing the file is picked up again.
  ReplaceApps(shipped_apps_);
  EXPECT_TRUE(WaitUntilReadable(kCamera, "Music/song.mp3", false));
}

class SighupMountTest : public ReloadMountTest {
 protected:
  SighupMountTest() { extra_flags_ = {"--watch_config=false"}; }
};

TEST_F(SighupMountTest, SighupReloadsAndKeepsServing) {
  ReplaceApps(AppsWith(kCameraEntry, kCameraWithAudio));
  // The watch is off: nothing changes until the signal.
  absl::SleepFor(absl::Milliseconds(800));
  EXPECT_TRUE(FailsWith(As(kCamera).Read("Music/song.mp3"), ENOENT));
  ASSERT_EQ(kill(storage_.daemon_pid(), SIGHUP), 0);
  EXPECT_TRUE(WaitUntilReadable(kCamera, "Music/song.mp3", true));
  EXPECT_TRUE(storage_.daemon_running());
  EXPECT_TRUE(storage_.IsMounted());
  // The log line follows the new policy's use, so it is waited for too.
  EXPECT_TRUE(WaitForLog("(SIGHUP)", 1)) << storage_.DaemonLog();
  absl::StatusOr<DaemonStats> stats = storage_.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ((*stats)["reloads"], 1);
  // A second SIGHUP with a broken file keeps the grant and the daemon.
  ReplaceApps("app { package: ");
  ASSERT_EQ(kill(storage_.daemon_pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitForLog("reload (SIGHUP) rejected", 1)) << storage_.DaemonLog();
  EXPECT_TRUE(Succeeds(As(kCamera).Read("Music/song.mp3")));
  EXPECT_TRUE(storage_.IsMounted());
}

// Holds `path` open as `uid` across a revocation. The child opens it, tells the parent, waits for
// the parent's go (sent once the reload is in force), then reads through the fd it holds and
// tries a new open. Exit codes: 0 as documented (the held fd reads `expected`, the new open is
// ENOENT), 10 open failed, 11 read through the held fd failed, 12 wrong bytes, 13 the new open
// succeeded, 14 it failed with another errno, 15 the parent never said go.
int HoldAcrossRevocation(ReloadMountTest* test, uid_t uid, const std::string& path,
                         const std::string& expected, const std::function<void()>& revoke,
                         const std::string& mountpoint) {
  int opened[2], go[2];
  if (pipe(opened) != 0 || pipe(go) != 0) return -1;
  pid_t child = StartAs(
      uid,
      [&]() -> int {
        close(opened[0]);
        close(go[1]);
        int fd = open(path.c_str(), O_RDONLY);
        if (fd < 0) return 10;
        char byte = 1;
        if (write(opened[1], &byte, 1) != 1) return 10;
        pollfd p = {go[0], POLLIN, 0};
        if (poll(&p, 1, 30000) != 1 || read(go[0], &byte, 1) != 1) return 15;
        std::string got(expected.size() + 16, '\0');
        ssize_t n = pread(fd, got.data(), got.size(), 0);
        if (n < 0) return 11;
        got.resize(static_cast<size_t>(n));
        if (got != expected) return 12;
        int again = open(path.c_str(), O_RDONLY);
        if (again >= 0) return 13;
        if (errno != ENOENT) return 14;
        close(fd);
        return 0;
      },
      mountpoint);
  close(opened[1]);
  close(go[0]);
  char byte = 0;
  pollfd p = {opened[0], POLLIN, 0};
  bool child_opened = poll(&p, 1, 30000) == 1 && read(opened[0], &byte, 1) == 1;
  if (child_opened) revoke();
  (void)!write(go[1], &byte, 1);
  close(opened[0]);
  close(go[1]);
  (void)test;
  return WaitChild(child);
}

// The gallery holds ACCESS_MEDIA_LOCATION, so it reads another app's photo through passthrough
// (a reader owed redaction reads every location carrier, recordings included, mediated).
TEST_F(ReloadMountTest, ARevocationDecidesNewOpensButNotFilesAlreadyOpen) {
  ASSERT_TRUE(absl::StrContains(shipped_apps_, kGalleryEntry));
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/gps.jpg", photo, kCamera));
  absl::StatusOr<DaemonStats> before = storage_.Stats();
  ASSERT_TRUE(before.ok()) << before.status();
  int rc = HoldAcrossRevocation(
      this, kGallery, "DCIM/Camera/gps.jpg", photo,
      [&] {
        ReplaceApps(AppsWith(kGalleryEntry, "app { package: \"com.example.gallery\" uid: 10061 }"));
        // In force once another of the gallery's processes is refused.
        EXPECT_TRUE(WaitUntilReadable(kGallery, "DCIM/Camera/gps.jpg", false));
      },
      storage_.mountpoint());
  EXPECT_EQ(rc, 0) << "see HoldAcrossRevocation for the exit codes";
  absl::StatusOr<DaemonStats> after = storage_.Stats();
  ASSERT_TRUE(after.ok()) << after.status();
  // The held open was a passthrough one: its reads never reached the daemon.
  EXPECT_GE((*after)["open_passthrough"] - (*before)["open_passthrough"], 1);
}

TEST_F(ReloadMountTest, AMediatedOpenKeepsReadingAfterARevocationToo) {
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/gps.jpg", photo, kCamera));
  // social reads it redacted (through the daemon); what it reads is not the raw file.
  AppResult redacted = As(kSocial).Read("DCIM/Camera/gps.jpg");
  ASSERT_TRUE(Succeeds(redacted));
  ASSERT_NE(redacted.data, photo);
  int rc = HoldAcrossRevocation(
      this, kSocial, "DCIM/Camera/gps.jpg", redacted.data,
      [&] {
        ReplaceApps(AppsWith(kSocialEntry, "app { package: \"com.example.social\" uid: 10062 }"));
        EXPECT_TRUE(WaitUntilReadable(kSocial, "DCIM/Camera/gps.jpg", false));
      },
      storage_.mountpoint());
  EXPECT_EQ(rc, 0) << "see HoldAcrossRevocation for the exit codes";
}

}  // namespace
}  // namespace scopedfs::tests
