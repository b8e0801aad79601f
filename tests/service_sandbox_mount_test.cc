// The shipped systemd unit works: scopedfsd runs under the unit's own sandbox (its system-call
// allow-list as `systemd-analyze syscall-filter` expands it, its capability bounding set and
// NoNewPrivileges, applied by tests/service_sandbox before exec as systemd would) and serves both
// shipped policies to apps acting as their own uids. A unit without the file-handle calls is
// shown to break it, so the test can tell a working unit from a broken one.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kUnit[] = "tools/service/scopedfsd@.service";
constexpr char kSandbox[] = "tests/service_sandbox";

class SandboxedDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    // Under AddressSanitizer (--config=asan), LeakSanitizer's exit check ptraces the process,
    // which the unit's system-call filter refuses: it would fail every clean exit here. The
    // daemon's leaks are checked by every other mount test, outside the unit's sandbox.
    if (const char* asan = getenv("ASAN_OPTIONS"); asan != nullptr) {
      setenv("ASAN_OPTIONS", absl::StrCat(asan, ":detect_leaks=0").c_str(), 1);
    }
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
  }
  absl::Status Start(const std::string& policy, const std::string& unit = kUnit) {
    DaemonOptions o;
    o.policy = policy;
    o.control_socket = true;
    o.exec_prefix = {kSandbox, unit};
    return storage_.StartDaemon(o);
  }
  void ExpectSandboxed() {
    EXPECT_TRUE(absl::StrContains(storage_.DaemonLog(),
                                  "system calls allowed, 7 capabilities kept, "
                                  "no new privileges"))
        << storage_.DaemonLog();
  }
  void TearDown() override {
    if (storage_.daemon_started()) {
      EXPECT_TRUE(storage_.StopDaemon().clean()) << storage_.DaemonLog();
    }
    storage_.Teardown();
  }
  ScopedStorage storage_;
};

TEST_F(SandboxedDaemonTest, AndroidPolicyServesAppsBelowTheRoot) {
  SCOPEDFS_ASSERT_OK(
      storage_.WriteLower("DCIM/Camera/IMG_1.jpg", ReadFileOrDie("tests/media/gps.jpg"), kCamera));
  SCOPEDFS_ASSERT_OK(Start("policy/configs/android.textproto"));
  ExpectSandboxed();
  // What `ls -la DCIM/Camera` does: list, then stat each entry.
  AppResult listing = storage_.As(kGallery).List("DCIM/Camera");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_TRUE(Contains(listing.names, "IMG_1.jpg"));
  AppResult st = storage_.As(kGallery).Stat("DCIM/Camera/IMG_1.jpg");
  ASSERT_TRUE(Succeeds(st));
  EXPECT_TRUE(S_ISREG(st.mode));
  EXPECT_TRUE(Succeeds(storage_.As(kSocial).Read("DCIM/Camera/IMG_1.jpg")));  // redacted view
  EXPECT_TRUE(Succeeds(storage_.As(kNotes).Create("Download/note.txt", "hello")));
  EXPECT_EQ(storage_.As(kNotes).Read("Download/note.txt").data, "hello");
  EXPECT_EQ(storage_.LowerOwner("Download/note.txt"), std::optional<std::string>("10067"));
  EXPECT_TRUE(Succeeds(storage_.As(kNotes).Rename("Download/note.txt", "Documents/note.txt")));
  EXPECT_TRUE(Succeeds(storage_.As(kNotes).Unlink("Documents/note.txt")));
  // A reload over the control socket, as `systemctl reload` would ask for one with SIGHUP.
  absl::StatusOr<std::string> reloaded = storage_.Ctl({"reload"});
  EXPECT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE(Succeeds(storage_.As(kGallery).Stat("DCIM/Camera/IMG_1.jpg")));
}

// The permissive policy has POSIX semantics: the daemon acts as the caller (setfsuid, setfsgid,
// setgroups), which needs CAP_SETUID and CAP_SETGID.
TEST_F(SandboxedDaemonTest, PermissivePolicyCreatesAsTheCaller) {
  ASSERT_EQ(chmod(storage_.Lower("Download").c_str(), 0777), 0);
  SCOPEDFS_ASSERT_OK(Start("policy/configs/permissive.textproto"));
  ExpectSandboxed();
  EXPECT_TRUE(Succeeds(storage_.As(1234).Create("Download/touched", "")));
  struct stat st;
  ASSERT_EQ(stat(storage_.Lower("Download/touched").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1234u);
  AppResult listing = storage_.As(1234).List("Download");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_TRUE(Contains(listing.names, "touched"));
  EXPECT_TRUE(Succeeds(storage_.As(1234).Stat("Download/touched")));
}

// The same unit without the file-handle calls (as it shipped before): every node below the root
// is reached through open_by_handle_at, so nothing below the root can be served. This is what the
// two tests above would see if the unit lost them again.
TEST_F(SandboxedDaemonTest, AUnitWithoutFileHandleCallsCannotServeBelowTheRoot) {
  std::string unit = ReadFileOrDie(kUnit);
  ASSERT_TRUE(absl::StrContains(unit, " open_by_handle_at name_to_handle_at"));
  absl::StrReplaceAll({{" open_by_handle_at name_to_handle_at", ""}}, &unit);
  std::string broken = absl::StrCat(storage_.work_dir(), "/broken.service");
  std::ofstream(broken) << unit;
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/a.txt", "a", kNotes));
  SCOPEDFS_ASSERT_OK(Start("policy/configs/android.textproto", broken));
  EXPECT_FALSE(storage_.As(kNotes).Read("Download/a.txt").ok());
}

// A NOTIFY_SOCKET as systemd gives a Type=notify service: the messages the daemon sends to it.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    unlink(path.c_str());
    ok_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    setenv("NOTIFY_SOCKET", path.c_str(), 1);
  }
  ~NotifySocket() {
    unsetenv("NOTIFY_SOCKET");
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  bool ok() const { return ok_; }
  // The next message, or "" after 10 s.
  std::string Next() {
    pollfd p = {fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return "";
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool ok_ = false;
};

// Under the unit's sandbox: READY (with a STATUS naming what is served) once the mount serves,
// RELOADING then READY around a SIGHUP reload, STOPPING on SIGTERM.
TEST_F(SandboxedDaemonTest, NotifiesReadyReloadingAndStopping) {
  NotifySocket notify(absl::StrCat("/tmp/scopedfs-notify-", getpid()));
  ASSERT_TRUE(notify.ok()) << strerror(errno);
  SCOPEDFS_ASSERT_OK(Start("policy/configs/android.textproto"));
  std::string ready = notify.Next();
  EXPECT_TRUE(absl::StartsWith(ready, "READY=1\nSTATUS=serving ")) << ready;
  EXPECT_TRUE(absl::StrContains(ready, "with policy \"android\"")) << ready;
  ASSERT_EQ(kill(storage_.daemon_pid(), SIGHUP), 0);
  std::string reloading = notify.Next();
  EXPECT_TRUE(absl::StartsWith(reloading, "RELOADING=1\nSTATUS=reloading (SIGHUP")) << reloading;
  std::string reloaded = notify.Next();
  EXPECT_TRUE(absl::StartsWith(reloaded, "READY=1\nSTATUS=")) << reloaded;
  EXPECT_TRUE(storage_.StopDaemon().clean()) << storage_.DaemonLog();
  std::string stopping = notify.Next();
  EXPECT_TRUE(absl::StartsWith(stopping, "STOPPING=1")) << stopping;
}

// What a service manager needs to tell apart: a restart cannot fix a bad command line (64) or
// configuration (78), and may fix a missing lower tree (71).
int RunDaemon(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    std::vector<char*> argv = {const_cast<char*>("daemon/scopedfsd")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(DaemonExitCodes, TellWhatARestartCanFix) {
  std::string dir = ::testing::TempDir();
  std::string bad_policy = dir + "/bad.textproto";
  std::ofstream(bad_policy) << "rule { op: OP_NOPE }\n";
  std::vector<std::string> ok = {"--source=" + dir, "--mountpoint=" + dir,
                                 "--apps=policy/configs/apps.textproto"};
  EXPECT_EQ(RunDaemon({"--help"}), 0);
  EXPECT_EQ(RunDaemon({"--version"}), 0);
  EXPECT_EQ(RunDaemon({"--no_such_flag"}), 64);
  EXPECT_EQ(RunDaemon({"--threads=many"}), 64);
  EXPECT_EQ(RunDaemon({"--source=" + dir}), 64) << "required flags missing";
  std::vector<std::string> config = ok;
  config.push_back("--policy=" + bad_policy);
  EXPECT_EQ(RunDaemon(config), 78);
  EXPECT_EQ(RunDaemon({"--source=" + dir + "/missing", "--mountpoint=" + dir,
                       "--policy=policy/configs/android.textproto",
                       "--apps=policy/configs/apps.textproto"}),
            71);
}

}  // namespace
}  // namespace scopedfs::tests
