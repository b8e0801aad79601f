// Mount harness for scopedfs integration tests: a private tmpfs lower tree, one scopedfsd started
// from runfiles, and forked "apps" that act on the mount under real app uids. The API is this
// header; it is implemented by process control (harness_process.cc), apps (app_actions.cc), the
// storage and its daemon (scoped_storage.cc) and test content (test_content.cc).
#ifndef SCOPEDFS_TESTS_MOUNT_HARNESS_H_
#define SCOPEDFS_TESTS_MOUNT_HARNESS_H_

#include <fcntl.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace scopedfs::tests {

// Sample apps of policy/configs/apps.textproto.
inline constexpr uid_t kRoot = 0;
inline constexpr uid_t kSystem = 1000;
inline constexpr uid_t kGallery = 10061;  // images + video + ACCESS_MEDIA_LOCATION
inline constexpr uid_t kSocial = 10062;   // images + video, location redacted
inline constexpr uid_t kMusic = 10063;    // audio
inline constexpr uid_t kFiles = 10064;    // MANAGE_EXTERNAL_STORAGE
inline constexpr uid_t kCamera = 10065;   // no permissions
inline constexpr uid_t kLegacy = 10066;   // READ_EXTERNAL_STORAGE
inline constexpr uid_t kNotes = 10067;    // no permissions
inline constexpr uid_t kSuite = 10070;    // shared uid: images
inline constexpr uid_t kUser10 = 10 * 100000;

// Empty if this process may mount FUSE (root and /dev/fuse), else why not.
std::string WhyNotMountable();

// Skips the current test, visibly, where mounting is impossible. Use in a test body or SetUp.
#define SCOPEDFS_SKIP_UNLESS_MOUNTABLE()                                     \
  do {                                                                       \
    std::string scopedfs_skip_reason = ::scopedfs::tests::WhyNotMountable(); \
    if (!scopedfs_skip_reason.empty()) GTEST_SKIP() << scopedfs_skip_reason; \
  } while (0)

#define SCOPEDFS_ASSERT_OK(expr)                          \
  do {                                                    \
    const ::absl::Status scopedfs_status = (expr);        \
    ASSERT_TRUE(scopedfs_status.ok()) << scopedfs_status; \
  } while (0)

// Content whose magic bytes make the engine sniff the named format; `size` pads it with a
// position-dependent pattern so that any misplaced byte shows.
std::string JpegBytes(size_t size = 4096);
std::string Mp4Bytes(size_t size = 4096);
std::string Mp3Bytes(size_t size = 4096);
std::string PdfBytes(size_t size = 1024);
std::string Pattern(size_t size, uint32_t seed);

// The Android rules (policy/configs/android-strict.textproto) under POSIX semantics, written once
// per test process to a file under the test's temp dir; returns its path, or empty (with a test
// failure) if the shipped policy no longer names its semantics.
std::string AndroidRulesUnderPosixSemantics();

// The top-level directories of the Android layout, as the default policy declares them.
const std::vector<std::string>& DefaultTopLevelDirs();

// What a forked app saw. err is 0 on success, the errno of the failing call, or kChildDied.
struct AppResult {
  static constexpr int kChildDied = -1;
  std::string what;  // "uid 10062: open DCIM/a.jpg"
  int err = 0;
  int64_t value = 0;               // call-specific: bytes, size, ...
  uint32_t mode = 0;               // stat: st_mode
  uint64_t dev = 0;                // stat: st_dev
  std::string data;                // read: the bytes; readlink: the target; getxattr: the value
  std::vector<std::string> names;  // readdir (sorted, without . and ..), listxattr
  bool ok() const { return err == 0; }
};
std::string ErrnoName(int err);
std::ostream& operator<<(std::ostream& os, const AppResult& r);

// EXPECT_TRUE(Succeeds(app.Stat("DCIM"))); EXPECT_TRUE(FailsWith(app.Stat("x"), ENOENT));
::testing::AssertionResult Succeeds(const AppResult& r);
::testing::AssertionResult FailsWith(const AppResult& r, int err);
// Whether a listing (AppResult::names) holds `name`.
bool Contains(const std::vector<std::string>& names, absl::string_view name);
// Byte-exact comparison that reports sizes and the first difference instead of dumping binaries.
::testing::AssertionResult SameBytes(absl::string_view actual, absl::string_view expected);

// Runs `body` in a forked child that first enters `cwd` (as root), then drops to uid/gid `uid`
// with no supplementary groups, and _exits with body's result. Returns the exit code, or
// 128 + signal if the child was killed; a child still running after `timeout` is killed (SIGALRM).
int RunAs(uid_t uid, const std::function<int()>& body, const std::string& cwd = "/",
          absl::Duration timeout = absl::Seconds(120));

// The same, without waiting: returns the child's pid for WaitChild.
pid_t StartAs(uid_t uid, const std::function<int()>& body, const std::string& cwd = "/",
              absl::Duration timeout = absl::Seconds(120));
// Exit code (or 128 + signal) of a child started by StartAs.
int WaitChild(pid_t pid);

// Stops threads of another process, by name, until Thaw() or destruction, with ptrace
// (PTRACE_SEIZE and PTRACE_INTERRUPT act on one thread: the rest of the process runs on). The
// daemon names its location scan threads "sfs-scan": a test that freezes them holds every scan
// unfinished for exactly as long as it needs (a request's wait for one can then end only at its
// deadline), instead of hoping that a slow file takes long enough. Only threads that are idle
// (sleeping) are frozen: one stopped while it holds a lock would stop others too. Use it from one
// thread of the test (ptrace binds the tracee to the thread that attached).
class FrozenThreads {
 public:
  FrozenThreads() = default;
  ~FrozenThreads() { Thaw(); }
  FrozenThreads(const FrozenThreads&) = delete;
  FrozenThreads& operator=(const FrozenThreads&) = delete;
  // Freezes every thread of `pid` named `name`; an error (and nothing frozen) if there is none,
  // if one is not asleep, or if ptrace refuses.
  absl::Status Freeze(pid_t pid, absl::string_view name);
  void Thaw();
  size_t frozen() const { return tids_.size(); }

 private:
  std::vector<pid_t> tids_;
};

// Runs `argv` (argv[0] found on PATH) to completion as this process; *output gets what it wrote
// to stdout and stderr. Returns its exit code, 128 + signal, or -1 if it could not be started.
int RunCommand(const std::vector<std::string>& argv, std::string* output);
// Makes `image` a sparse ext4 image of `size_mib` MiB (mke2fs with `mkfs_options` too, such as
// {"-I", "128"}) and mounts it at `dir` (made if missing) with MountExt4.
absl::Status MakeExt4(const std::string& image, const std::string& dir, int size_mib,
                      const std::vector<std::string>& mkfs_options = {});
// Mounts the ext4 image at `dir`, nosuid and nodev, through a loop device that frees itself at
// the last unmount (mount(8) sets LO_FLAGS_AUTOCLEAR), so a killed test leaves none behind.
absl::Status MountExt4(const std::string& image, const std::string& dir);
// The bytes of the file at `path` (a runfiles path or any other); fails the test if it cannot be
// read.
std::string ReadFileOrDie(const std::string& path);
// The same, empty and no failure if it cannot be read (a log not written yet).
std::string ReadFileOrEmpty(const std::string& path);

// One app acting on the mount. Paths are relative to the mount root (the child's cwd), so apps
// never need to traverse the test's private temp directory.
class App {
 public:
  App(std::string mountpoint, uid_t uid) : mountpoint_(std::move(mountpoint)), uid_(uid) {}
  uid_t uid() const { return uid_; }

  // Runs `body` as this app; body returns an AppResult that is shipped back through a pipe.
  AppResult Run(absl::string_view what, const std::function<AppResult()>& body) const;

  AppResult Stat(const std::string& path) const;  // value = st_size, mode, dev
  // `times` stats of `path` in one process, one after the other, as a caching test needs them
  // (the kernel may answer all but the first from its caches); err: the first failure's errno.
  AppResult StatRepeatedly(const std::string& path, int times) const;
  AppResult Lstat(const std::string& path) const;  // same, without following a symlink
  AppResult Read(const std::string& path) const;   // open O_RDONLY, read everything into data
  AppResult Open(const std::string& path, int flags, mode_t mode = 0644) const;  // then close
  AppResult Write(const std::string& path, const std::string& content,
                  int flags = O_WRONLY | O_TRUNC) const;
  AppResult Create(const std::string& path, const std::string& content = "") const;  // O_EXCL
  AppResult List(const std::string& dir) const;
  AppResult Mkdir(const std::string& path, mode_t mode = 0755) const;
  AppResult Rmdir(const std::string& path) const;
  AppResult Unlink(const std::string& path) const;
  AppResult Rename(const std::string& from, const std::string& to, unsigned flags = 0) const;
  AppResult Link(const std::string& from, const std::string& to) const;
  AppResult Symlink(const std::string& target, const std::string& path) const;
  AppResult Readlink(const std::string& path) const;
  AppResult Chmod(const std::string& path, mode_t mode) const;
  AppResult Chown(const std::string& path, uid_t owner, gid_t group) const;
  AppResult Truncate(const std::string& path, off_t size) const;
  AppResult GetXattr(const std::string& path, const std::string& name) const;
  AppResult SetXattr(const std::string& path, const std::string& name,
                     const std::string& value) const;
  AppResult ListXattr(const std::string& path) const;

 private:
  std::string mountpoint_;
  uid_t uid_;
};

struct DaemonOptions {
  // The Android rules with strict visibility, which most tests were written for;
  // visibility_mount_test runs android.textproto's LISTING beside it.
  std::string policy = "policy/configs/android-strict.textproto";
  std::string apps = "policy/configs/apps.textproto";
  bool passthrough = true;
  bool control_socket = false;  // --control_socket=ScopedStorage::control_socket()
  std::string source;           // empty: the storage's lower tree
  std::string mountpoint;       // empty: the storage's mount point
  std::vector<std::string> extra_flags;
  // Resource limits the daemon starts under, soft and hard alike (so it cannot raise them), as a
  // service manager would impose them; 0: the test process's own.
  uint64_t fd_limit = 0;             // RLIMIT_NOFILE
  uint64_t address_space_limit = 0;  // RLIMIT_AS, in bytes
  // Run the daemon as `exec_prefix... scopedfsd FLAGS...` (e.g. a sandbox that execs it).
  std::vector<std::string> exec_prefix;
  // Mount as vold does (tests/vold_mount.h): the harness mounts the mount point itself and starts
  // the daemon with --fuse_fd (and --mountpoint, for its messages only); once the daemon has
  // exited, the harness unmounts, as vold does.
  bool vold_mount = false;
};

// The transport the suite's daemons are started with (--transport), from the environment
// variable SCOPEDFS_TEST_TRANSPORT (auto, uring or dev); empty: the daemon's default.
std::string TestTransport();

// How the daemon ended.
struct DaemonExit {
  bool exited = false;  // false: killed by `signal`
  int code = -1;
  int signal = 0;
  // A vold-style mount was still mounted when the daemon had exited (the harness unmounted it).
  bool left_vold_mount = false;
  bool clean() const { return exited && code == 0; }
  std::string ToString() const;
};

// Counters from `scopedfsctl stats --json`.
using DaemonStats = std::map<std::string, int64_t>;

// The filesystem of a storage's lower tree. tmpfs never hands a freed inode number out again;
// ext4 (a loop-mounted image of 256 MiB in the work dir) does at once, so tests of node identity
// and of anything keyed by inode numbers run on it.
enum class LowerKind { kTmpfs, kExt4 };
std::string LowerKindName(LowerKind kind);
// The suite's default: ext4 when the environment variable SCOPEDFS_TEST_LOWER is "ext4" (the
// pass of tools/test.sh that runs the tests whose behaviour depends on the lower filesystem
// again), tmpfs otherwise. An unknown value fails the test that asks.
LowerKind DefaultLowerKind();

// A throwaway storage: work dir under testing::TempDir(), a lower tree on a filesystem of its own
// (tmpfs, or ext4 on a loop device; so trusted.* xattrs work and nothing leaks), a mount point,
// and at most one daemon. Everything it
// started or mounted is undone by Teardown(), which the destructor calls too.
//
// The first Prepare() moves the test process into a private mount namespace, so even a test
// killed outright leaves no mount behind on the machine.
class ScopedStorage {
 public:
  ScopedStorage() = default;
  ScopedStorage(const ScopedStorage&) = delete;
  ScopedStorage& operator=(const ScopedStorage&) = delete;
  ~ScopedStorage() { Teardown(); }

  absl::Status Prepare(LowerKind lower = DefaultLowerKind());
  // Creates the default top-level directories, Android/{data,obb,media} and DCIM/Camera.
  absl::Status CreateDefaultLayout();

  // Starts the daemon and waits (bounded) until it serves the mount.
  absl::Status StartDaemon(const DaemonOptions& options = {});
  // Whether the daemon this object started is still alive (not a zombie): a daemon that has
  // exited is reaped here, and its exit kept for the StopDaemon or WaitDaemonExit that follows.
  bool daemon_running();
  // A daemon was started and its exit not yet returned by StopDaemon or WaitDaemonExit, whether
  // it still runs or not: what a TearDown checks, so that a daemon that died is reported.
  bool daemon_started() const { return daemon_pid_ > 0 || exit_unreported_; }
  pid_t daemon_pid() const { return daemon_pid_; }
  // SIGTERM to the daemon this object started, then SIGKILL if it has not exited in time.
  DaemonExit StopDaemon();
  // Waits (bounded) for the daemon to exit on its own; SIGKILLs it if it does not.
  DaemonExit WaitDaemonExit(absl::Duration timeout);
  // How the last daemon ended (also when StartDaemon failed because it exited early).
  const DaemonExit& last_exit() const { return last_exit_; }
  // The daemon's log (stderr) as it stands once the audit lines queued so far have been written:
  // the daemon writes them from a thread of its own (audit_log.h). With a control socket that is
  // its stats' audit_lines_waiting reaching 0; without, the log not growing for 50 ms.
  std::string DaemonLog() const;
  bool IsMounted() const;        // a FUSE file system is mounted at mountpoint()
  static int CountFuseMounts();  // in this process's mount namespace
  void Teardown();

  const std::string& work_dir() const { return work_dir_; }
  const std::string& lower() const { return lower_; }
  const std::string& mountpoint() const { return mountpoint_; }
  // In a short-named directory of its own under /tmp: the temp dir's path is longer than a unix
  // socket address can hold. Empty until a daemon was started with a control socket.
  std::string control_socket() const { return socket_dir_.empty() ? "" : socket_dir_ + "/ctl"; }
  std::string Lower(absl::string_view rel) const;
  App As(uid_t uid) const { return App(mountpoint_, uid); }

  // Lower-tree setup, as root, bypassing the daemon. Parent directories are created as needed.
  absl::Status WriteLower(absl::string_view rel, absl::string_view content,
                          std::optional<uid_t> owner = std::nullopt);
  absl::Status MkdirLower(absl::string_view rel, std::optional<uid_t> owner = std::nullopt);
  absl::Status SymlinkLower(absl::string_view target, absl::string_view rel);
  absl::StatusOr<std::string> ReadLower(absl::string_view rel) const;
  bool LowerExists(absl::string_view rel) const;  // without following a final symlink
  // The creator recorded in trusted.scopedfs.owner, or nullopt if there is none.
  std::optional<std::string> LowerOwner(absl::string_view rel) const;

  // Number of open fds of the daemon (entries of /proc/<pid>/fd).
  absl::StatusOr<int> DaemonFdCount() const;
  // Runs tools/scopedfsctl --socket=<control socket> stats --json and parses its integers.
  absl::StatusOr<DaemonStats> Stats() const;
  // The daemon's stats once `ready` holds for them: a handshake on what the daemon counts, asked
  // again every 10 ms. After `hang_guard` (for a daemon that never gets there), an error that
  // shows the last stats' `shown` counter.
  absl::StatusOr<DaemonStats> StatsOnce(const std::function<bool(const DaemonStats&)>& ready,
                                        const std::string& shown,
                                        absl::Duration hang_guard = absl::Seconds(15)) const;
  // StatsOnce the daemon reports `gauge` (scans_pending, facts_records_waiting, ...) and it is 0:
  // once the work it counts is done.
  absl::StatusOr<DaemonStats> StatsOnceZero(const std::string& gauge) const;
  // Runs tools/scopedfsctl --socket=<control socket> <args...> and returns what it printed.
  absl::StatusOr<std::string> Ctl(const std::vector<std::string>& args) const;
  // How many requests of one op family (e.g. "lookup") the daemon has served.
  absl::StatusOr<int64_t> OpCount(absl::string_view op) const;

 private:
  // Unmounts a vold-style mount once its daemon is gone; notes in last_exit_ that it was there.
  void UnmountVoldMount();

  std::string work_dir_;
  std::string lower_;
  std::string mountpoint_;
  std::string log_path_;
  bool control_socket_used_ = false;  // the running daemon has --control_socket
  std::string socket_dir_;
  bool lower_mounted_ = false;
  std::string vold_mountpoint_;  // where the harness mounted as vold (DaemonOptions::vold_mount)
  pid_t daemon_pid_ = -1;
  DaemonExit last_exit_;
  bool exit_unreported_ = false;  // daemon_running reaped it; StopDaemon has not returned it yet
};

// Base fixture: a prepared storage with the default layout and a running daemon. Tests populate
// the lower tree and act through storage_.As(uid). TearDown stops the daemon and expects a clean
// exit (status 0), prints the daemon's log if the test failed, and removes everything.
class MountTest : public ::testing::Test {
 protected:
  virtual DaemonOptions Options() const { return {}; }
  // The lower tree's filesystem; tests whose behaviour depends on it run on both.
  virtual LowerKind Lower() const { return DefaultLowerKind(); }
  void SetUp() override;
  void TearDown() override;
  App As(uid_t uid) const { return storage_.As(uid); }
  // The daemon's count of LOOKUP requests (the daemon needs DaemonOptions::control_socket); -1,
  // with a test failure, when it cannot be read.
  int64_t Lookups();
  // The same for any op family the daemon counts (e.g. "getattr").
  int64_t Served(const std::string& op);
  // The LOOKUPs three stats of `path` by `uid`, in one process, cost: 0 where the kernel answers
  // from names it cached. The walks start in the path's top-level directory (entered before the
  // count), as names in the mount's root are cached only on a mount one user's apps reach.
  int64_t LookupsForThreeStats(uid_t uid, const std::string& path);

  ScopedStorage storage_;
};

// A MountTest under policy/configs/android.textproto with a control socket, run with
// --mount_reached_by_one_user (the parameter true: a device's per-user mount, where names and
// attributes every app of the user finds alike are cached) and without it (false, the default).
class OneUserParamMountTest : public MountTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool cached() const { return GetParam(); }
  DaemonOptions Options() const override;
  // LOOKUPs and GETATTRs the daemon served.
  int64_t Asked() { return Served("lookup") + Served("getattr"); }
};

// What exiftool finds as GPS in `bytes` ("latitude longitude", "" for none), reading a copy
// written to `copy_path`.
std::string GpsExiftoolFinds(const std::string& bytes, const std::string& copy_path);

}  // namespace scopedfs::tests

#endif  // SCOPEDFS_TESTS_MOUNT_HARNESS_H_
