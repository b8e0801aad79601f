// The mount helper (tools/service/scopedfs) through mount(8) itself: `mount -t fuse.scopedfs
// SOURCE DIR -o policy=...,apps=...` and an fstab line (mount -T FILE DIR) start scopedfsd, which
// then serves apps; `umount DIR` stops it; unknown options are refused with a clear message and
// nothing is mounted. mount(8) runs fuse3's mount.fuse3, which runs `scopedfs` from sh's default
// PATH (mount(8) clears PATH), so the test installs the helper and the daemon on a tmpfs mounted
// over /usr/local/sbin in its private mount namespace: nothing is installed on the machine.
// After a SIGKILL of the daemon, `mount -a` leaves the dead mount and `scopedfsctl repair` makes
// the fstab line serve again with nothing acknowledged lost; a remount while the old daemon is
// still stopping leaves the new one's socket and pid file; scopedfsctl reaches the daemons the
// helper and the systemd unit's command line start without being told their socket (a tmpfs over
// /run/scopedfs in the test's namespace holds only this test's sockets).
// Needs root, /dev/fuse, mount(8) and mount.fuse3; skips, saying which is missing, without them.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

using ::testing::HasSubstr;

constexpr char kHelper[] = "tools/service/scopedfs";
constexpr char kInstallDir[] = "/usr/local/sbin";  // first in sh's default PATH
constexpr char kCtl[] = "tools/scopedfsctl";
constexpr char kUnit[] = "tools/service/scopedfsd@.service";
constexpr char kRunDir[] = "/run/scopedfs";  // where daemons put their sockets by default

std::string Absolute(const std::string& path) {
  char real[PATH_MAX];
  return realpath(path.c_str(), real) == nullptr ? path : real;
}

// The pid of the scopedfsd the helper started for `mountpoint` (the daemon is not our child:
// the helper detached it), found by its --mountpoint argument; -1 if none runs.
pid_t DaemonServing(const std::string& mountpoint) {
  std::string wanted = "--mountpoint=" + mountpoint;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  pid_t found = -1;
  while (dirent* e = readdir(proc)) {
    pid_t pid = atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"), std::ios::binary);
    std::string arg;
    bool ours = false;
    while (std::getline(in, arg, '\0')) ours = ours || arg == wanted;
    // The process itself, not the shell that stamps its log lines (whose arguments name it too).
    std::ifstream comm_in(absl::StrCat("/proc/", pid, "/comm"));
    std::string comm;
    std::getline(comm_in, comm);
    bool daemon = comm == "scopedfsd";
    if (daemon && ours) found = pid;
  }
  closedir(proc);
  return found;
}

// Whether `pid` has ended (gone, or a zombie nobody reaped yet).
bool Ended(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  size_t paren = stat.rfind(')');
  return stat.empty() || (paren != std::string::npos && stat.substr(paren + 2, 1) == "Z");
}

bool AwaitEnd(pid_t pid, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (!Ended(pid)) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

class MountHelperTest : public testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    for (const char* tool : {"/usr/bin/mount", "/usr/bin/umount", "/sbin/mount.fuse3"}) {
      if (access(tool, X_OK) != 0) GTEST_SKIP() << "needs " << tool << ": " << strerror(errno);
    }
    SCOPEDFS_ASSERT_OK(storage_.Prepare());  // private mount namespace from here on
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/a.jpg", JpegBytes(), kCamera));
    ASSERT_EQ(mount("tmpfs", kInstallDir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), 0)
        << "tmpfs on " << kInstallDir << ": " << strerror(errno);
    install_mounted_ = true;
    // The daemons' default sockets and pid files, this test's only: a tmpfs in its namespace.
    ASSERT_TRUE(mkdir(kRunDir, 0755) == 0 || errno == EEXIST) << kRunDir << ": " << strerror(errno);
    ASSERT_EQ(mount("tmpfs", kRunDir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), 0)
        << "tmpfs on " << kRunDir << ": " << strerror(errno);
    run_mounted_ = true;
    std::string out;
    ASSERT_EQ(RunCommand({"install", "-m", "0755", kHelper, absl::StrCat(kInstallDir, "/scopedfs")},
                         &out),
              0)
        << out;
    ASSERT_EQ(symlink(Absolute("daemon/scopedfsd").c_str(),
                      absl::StrCat(kInstallDir, "/scopedfsd").c_str()),
              0)
        << strerror(errno);
    log_ = storage_.work_dir() + "/helper.log";
    options_ = absl::StrCat("policy=", Absolute("policy/configs/android.textproto"),
                            ",apps=", Absolute("policy/configs/apps.textproto"), ",log=", log_);
    // The suite's transport reaches the daemon as the helper's transport= option.
    if (std::string transport = TestTransport(); !transport.empty()) {
      absl::StrAppend(&options_, ",transport=", transport);
    }
  }

  void TearDown() override {
    if (HasFailure()) std::cerr << "daemon log (" << log_ << "):\n" << Log();
    if (!storage_.mountpoint().empty()) {
      // The daemon is not our child; it is ours by its --mountpoint. Unmounting ends it.
      pid_t pid = DaemonServing(storage_.mountpoint());
      if (storage_.IsMounted()) umount2(storage_.mountpoint().c_str(), MNT_DETACH);
      if (pid > 0 && !AwaitEnd(pid, absl::Seconds(10))) {
        ADD_FAILURE() << "scopedfsd pid " << pid << " still runs after the unmount; SIGKILL";
        kill(pid, SIGKILL);
      }
    }
    if (install_mounted_) umount2(kInstallDir, MNT_DETACH);
    if (run_mounted_) umount2(kRunDir, MNT_DETACH);
    storage_.Teardown();
  }

  std::string Log() const { return ReadFileOrEmpty(log_); }

  // Checks that apps are served under the default policy, then unmounts with umount(8) and
  // expects the daemon to end cleanly.
  void ExpectServedThenUmount() {
    ASSERT_TRUE(storage_.IsMounted());
    pid_t pid = DaemonServing(storage_.mountpoint());
    ASSERT_GT(pid, 0) << "no scopedfsd serves " << storage_.mountpoint();
    AppResult camera = storage_.As(kCamera).Read("DCIM/Camera/a.jpg");
    ASSERT_TRUE(Succeeds(camera));
    EXPECT_TRUE(SameBytes(camera.data, JpegBytes()));
    // The shipped policy's LISTING visibility: the photo is found, and its open refused.
    EXPECT_TRUE(FailsWith(storage_.As(kMusic).Read("DCIM/Camera/a.jpg"), EACCES));
    std::string out;
    EXPECT_EQ(RunCommand({"umount", storage_.mountpoint()}, &out), 0) << out;
    EXPECT_TRUE(AwaitEnd(pid, absl::Seconds(10))) << "scopedfsd " << pid << " after umount";
    EXPECT_FALSE(storage_.IsMounted());
    // The daemon's last line passes through the loop that stamps it, which may still be writing.
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!absl::StrContains(Log(), "scopedfsd: unmounted") && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    EXPECT_THAT(Log(), HasSubstr("scopedfsd: unmounted"));
  }

  ScopedStorage storage_;
  bool install_mounted_ = false;
  bool run_mounted_ = false;
  std::string log_;
  std::string options_;
};

TEST_F(MountHelperTest, MountTypeFuseScopedfs) {
  std::string out;
  ASSERT_EQ(RunCommand({"mount", "-t", "fuse.scopedfs", storage_.lower(), storage_.mountpoint(),
                        "-o", options_ + ",nosuid,nodev"},
                       &out),
            0)
      << out;
  ExpectServedThenUmount();
}

TEST_F(MountHelperTest, FstabLine) {
  std::string fstab = storage_.work_dir() + "/fstab";
  std::ofstream(fstab) << "# <source> <mount point> <type> <options> <dump> <pass>\n"
                       << storage_.lower() << " " << storage_.mountpoint() << " fuse.scopedfs "
                       << options_ << ",user_id=0,nofail 0 0\n";
  std::string out;
  ASSERT_EQ(RunCommand({"mount", "-T", fstab, storage_.mountpoint()}, &out), 0) << out;
  ExpectServedThenUmount();
}

// An fstab line as FUSE filesystems' lines usually read (allow_other, default_permissions), mounted
// by `mount -a` twice: the second run finds it mounted (the source in /proc/mounts is the line's)
// and says nothing. The daemon's log lines carry their time.
TEST_F(MountHelperTest, MountAllTwiceIsQuiet) {
  std::string fstab = storage_.work_dir() + "/fstab";
  std::ofstream(fstab) << storage_.lower() << " " << storage_.mountpoint() << " fuse.scopedfs "
                       << options_
                       << ",allow_other,default_permissions,entry_cache_seconds=5,"
                          "watch_config=false,audit_log=stderr 0 0\n";
  std::string out;
  ASSERT_EQ(RunCommand({"mount", "-a", "-T", fstab}, &out), 0) << out;
  pid_t first = DaemonServing(storage_.mountpoint());
  ASSERT_GT(first, 0);
  std::string again;
  EXPECT_EQ(RunCommand({"mount", "-a", "-T", fstab}, &again), 0) << again;
  EXPECT_EQ(again, "") << "the second mount -a";
  EXPECT_EQ(DaemonServing(storage_.mountpoint()), first) << "one daemon, the first";
  std::ifstream mounts("/proc/self/mounts");
  std::string line;
  int ours = 0;
  while (std::getline(mounts, line)) {
    if (absl::StrContains(line, " " + storage_.mountpoint() + " ")) {
      ++ours;
      EXPECT_TRUE(absl::StartsWith(line, storage_.lower() + " ")) << line;
      EXPECT_THAT(line, HasSubstr(" fuse.scopedfs "));
    }
  }
  EXPECT_EQ(ours, 1);
  EXPECT_THAT(Log(), testing::ContainsRegex("(^|\n)[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z "
                                            "scopedfsd: serving "));
  ExpectServedThenUmount();
}

TEST_F(MountHelperTest, UnknownOptionIsRefusedAndNothingIsMounted) {
  std::string out;
  EXPECT_NE(RunCommand({"mount", "-t", "fuse.scopedfs", storage_.lower(), storage_.mountpoint(),
                        "-o", options_ + ",polcy=/etc/x"},
                       &out),
            0);
  EXPECT_THAT(out, HasSubstr("scopedfs: unknown mount option \"polcy=/etc/x\""));
  EXPECT_FALSE(storage_.IsMounted());
  EXPECT_EQ(DaemonServing(storage_.mountpoint()), -1);
}

TEST_F(MountHelperTest, MissingPolicyIsRefused) {
  std::string out;
  EXPECT_NE(RunCommand({"mount", "-t", "fuse.scopedfs", storage_.lower(), storage_.mountpoint(),
                        "-o", "apps=" + Absolute("policy/configs/apps.textproto")},
                       &out),
            0);
  EXPECT_THAT(out, HasSubstr("scopedfs: option policy=FILE is required"));
  EXPECT_FALSE(storage_.IsMounted());
}

TEST_F(MountHelperTest, DaemonRefusalReachesTheUser) {
  std::string out;
  EXPECT_NE(RunCommand({"mount", "-t", "fuse.scopedfs", storage_.lower() + "/no such dir",
                        storage_.mountpoint(), "-o", options_},
                       &out),
            0);
  EXPECT_THAT(out, HasSubstr("is not a directory")) << "scopedfsd's own message";
  EXPECT_THAT(out, HasSubstr("exited without mounting"));
  EXPECT_FALSE(storage_.IsMounted());
}

// The names in /run/scopedfs (this test's tmpfs), sorted.
std::vector<std::string> RunDirNames() {
  std::vector<std::string> names;
  if (DIR* d = opendir(kRunDir); d != nullptr) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The one pid file in /run/scopedfs and the pid in it; -1 if there is not exactly one.
pid_t PidFromPidFile() {
  pid_t pid = -1;
  int files = 0;
  for (const std::string& name : RunDirNames()) {
    if (!absl::EndsWith(name, ".pid")) continue;
    ++files;
    pid = atoi(ReadFileOrEmpty(absl::StrCat(kRunDir, "/", name)).c_str());
  }
  return files == 1 ? pid : -1;
}

// What an fstab user meets after `kill -KILL` of the daemon: the dead mount stays in the mount
// table (ENOTCONN), so `mount -a` says nothing and mounts nothing. `scopedfsctl repair` detaches it
// and mounts the line again; a photo the app wrote and fsynced before the kill is there, the
// policy is enforced again, and scopedfsctl reaches the new daemon without --socket.
TEST_F(MountHelperTest, RepairMakesAnFstabLineWholeAfterTheDaemonIsKilled) {
  std::string fstab = storage_.work_dir() + "/fstab";
  std::ofstream(fstab) << storage_.lower() << " " << storage_.mountpoint() << " fuse.scopedfs "
                       << options_ << " 0 0\n";
  std::string out;
  ASSERT_EQ(RunCommand({"mount", "-a", "-T", fstab}, &out), 0) << out;
  pid_t first = DaemonServing(storage_.mountpoint());
  ASSERT_GT(first, 0);
  // The default socket and pid file, named after the mount point, and nothing else.
  std::vector<std::string> names = RunDirNames();
  ASSERT_EQ(names.size(), 2u) << absl::StrJoin(names, " ");
  EXPECT_TRUE(absl::EndsWith(names[0], ".pid") && absl::EndsWith(names[1], ".sock"));
  EXPECT_EQ(names[0].substr(0, names[0].size() - 4), names[1].substr(0, names[1].size() - 5));
  EXPECT_EQ(PidFromPidFile(), first);
  ASSERT_EQ(RunCommand({kCtl, "stats"}, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("policy:")) << "the one daemon found without --socket";
  ASSERT_EQ(RunCommand({kCtl, "stats", "--mount=" + storage_.mountpoint()}, &out), 0) << out;

  // Acknowledged: written, fsynced and closed without an error before the kill.
  const std::string photo = JpegBytes() + "kept across the kill";
  AppResult wrote = storage_.As(kCamera).Run("write+fsync DCIM/Camera/kept.jpg", [&] {
    AppResult r;
    int fd = open("DCIM/Camera/kept.jpg", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      r.err = errno;
      return r;
    }
    if (write(fd, photo.data(), photo.size()) != static_cast<ssize_t>(photo.size())) r.err = errno;
    if (r.err == 0 && fsync(fd) != 0) r.err = errno;
    if (close(fd) != 0 && r.err == 0) r.err = errno;
    return r;
  });
  ASSERT_TRUE(Succeeds(wrote));

  ASSERT_EQ(kill(first, SIGKILL), 0) << strerror(errno);
  ASSERT_TRUE(AwaitEnd(first, absl::Seconds(10)));
  // ENOTCONN; over FUSE over io_uring also ECONNABORTED or ECANCELED while the kernel tears the
  // killed daemon's rings down (daemon/kernel/mount_point.h).
  auto dead = [&] {
    struct stat st;
    if (stat(storage_.mountpoint().c_str(), &st) == 0) return std::string("it answers");
    int err = errno;
    return err == ENOTCONN || err == ECONNABORTED || err == ECANCELED ? std::string("dead")
                                                                      : std::string(strerror(err));
  };
  ASSERT_EQ(dead(), "dead");
  // The problem: mount -a sees the line mounted and leaves the dead mount as it is.
  EXPECT_EQ(RunCommand({"mount", "-a", "-T", fstab}, &out), 0) << out;
  EXPECT_EQ(DaemonServing(storage_.mountpoint()), -1) << "mount -a started no daemon";
  EXPECT_EQ(dead(), "dead");
  EXPECT_EQ(RunCommand({kCtl, "stats"}, &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("no scopedfsd answers in /run/scopedfs")) << "the killed one's socket";

  // The repair, of this mount point only: the machine may hold other runs' dead mounts, which
  // the test's mount namespace copied.
  const std::string only = "--mount=" + storage_.mountpoint();
  ASSERT_EQ(RunCommand({kCtl, "repair", only, "--fstab=" + fstab}, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("dead"));
  EXPECT_THAT(out, HasSubstr(storage_.mountpoint() + ": mounted again"));
  pid_t second = DaemonServing(storage_.mountpoint());
  ASSERT_GT(second, 0) << "no daemon serves after the repair";
  EXPECT_NE(second, first);
  EXPECT_EQ(PidFromPidFile(), second) << "the pid file names the new daemon";
  AppResult kept = storage_.As(kCamera).Read("DCIM/Camera/kept.jpg");
  ASSERT_TRUE(Succeeds(kept));
  EXPECT_TRUE(SameBytes(kept.data, photo)) << "the acknowledged write survived";
  EXPECT_TRUE(FailsWith(storage_.As(kMusic).Read("DCIM/Camera/kept.jpg"), EACCES));
  EXPECT_EQ(RunCommand({kCtl, "stats", "--json"}, &out), 0) << out;
  // Nothing left to repair, and a second repair says so.
  EXPECT_EQ(RunCommand({kCtl, "repair", only, "--fstab=" + fstab}, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("no dead scopedfs mount at " + storage_.mountpoint()));
  EXPECT_EQ(DaemonServing(storage_.mountpoint()), second);
  ExpectServedThenUmount();
  EXPECT_EQ(RunDirNames(), std::vector<std::string>{}) << "socket and pid file go at the stop";
}

// `umount DIR && mount DIR` while the old daemon is still stopping: the new one takes the
// control socket over and says so, and the old one, when it ends, removes neither the socket nor
// the pid file of its successor. The old daemon is held stopped (SIGSTOP) across the remount so
// that it finishes last.
TEST_F(MountHelperTest, RemountWhileTheOldDaemonStopsKeepsTheNewOnesSocket) {
  std::string fstab = storage_.work_dir() + "/fstab";
  std::ofstream(fstab) << storage_.lower() << " " << storage_.mountpoint() << " fuse.scopedfs "
                       << options_ << " 0 0\n";
  std::string out;
  ASSERT_EQ(RunCommand({"mount", "-T", fstab, storage_.mountpoint()}, &out), 0) << out;
  pid_t old = DaemonServing(storage_.mountpoint());
  ASSERT_GT(old, 0);
  ASSERT_EQ(kill(old, SIGSTOP), 0);
  // Lazily: a stopped daemon would hold a plain umount up.
  bool stopped_old = RunCommand({"umount", "-l", storage_.mountpoint()}, &out) == 0;
  EXPECT_TRUE(stopped_old) << out;
  EXPECT_EQ(RunCommand({"mount", "-T", fstab, storage_.mountpoint()}, &out), 0) << out;
  pid_t fresh = DaemonServing(storage_.mountpoint());
  EXPECT_EQ(kill(old, SIGCONT), 0);
  ASSERT_GT(fresh, 0);
  ASSERT_NE(fresh, old);
  ASSERT_TRUE(AwaitEnd(old, absl::Seconds(10))) << "the old daemon after its mount was detached";
  EXPECT_THAT(Log(), HasSubstr("another process still answered on it"));
  EXPECT_EQ(PidFromPidFile(), fresh) << "the old daemon removed its successor's pid file";
  EXPECT_EQ(RunCommand({kCtl, "stats", "--mount=" + storage_.mountpoint()}, &out), 0) << out;
  ExpectServedThenUmount();
}

// The systemd unit's ExecStart= as written (its paths pointed at this test's lower tree, mount
// point and configs) names no socket, and scopedfsctl reaches the daemon it starts by --mount and
// as the one daemon running; a clean stop takes the socket and pid file with it.
TEST_F(MountHelperTest, TheUnitsDaemonIsReachedWithoutNamingItsSocket) {
  std::string unit = ReadFileOrDie(kUnit);
  size_t at = unit.find("\nExecStart=");
  ASSERT_NE(at, std::string::npos);
  std::string line;
  for (size_t i = at + strlen("\nExecStart="); i < unit.size(); ++i) {
    if (unit.compare(i, 2, "\\\n") == 0) {  // a continued line
      ++i;
      line += ' ';
      continue;
    }
    if (unit[i] == '\n') break;
    line += unit[i];
  }
  std::string configs = Absolute("policy/configs");
  line = absl::StrReplaceAll(line, {{"/usr/local/sbin/scopedfsd", Absolute("daemon/scopedfsd")},
                                    {"/data/media/%i", storage_.lower()},
                                    {"/storage/emulated/%i", storage_.mountpoint()},
                                    {"/etc/scopedfs", configs},
                                    {"$SCOPEDFSD_ARGS", ""},
                                    {"%i", "0"}});
  std::vector<std::string> argv = absl::StrSplit(line, ' ', absl::SkipWhitespace());
  if (std::string transport = TestTransport(); !transport.empty()) {
    argv.push_back("--transport=" + transport);
  }
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::string daemon_log = storage_.work_dir() + "/unit.log";
  fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int log = open(daemon_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!absl::StrContains(ReadFileOrEmpty(daemon_log), "scopedfsd: serving ") && !Ended(pid) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::string out;
  int by_mount = RunCommand({kCtl, "stats", "--mount=" + storage_.mountpoint()}, &out);
  EXPECT_EQ(by_mount, 0) << out << "\ndaemon: " << absl::StrJoin(argv, " ") << "\n"
                         << ReadFileOrEmpty(daemon_log);
  EXPECT_EQ(RunCommand({kCtl, "stats"}, &out), 0) << out;
  EXPECT_EQ(PidFromPidFile(), pid);
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFileOrEmpty(daemon_log);
  EXPECT_FALSE(storage_.IsMounted());
  EXPECT_EQ(RunDirNames(), std::vector<std::string>{}) << "socket and pid file go at the stop";
}

}  // namespace
}  // namespace scopedfs::tests
