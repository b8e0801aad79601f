// The mount harness's storage (see mount_harness.h): a tmpfs lower tree and mount point, the
// scopedfsd it starts and stops (its own mount, or a vold-style one), the lower tree seen from
// outside the mount, the daemon's control socket, and the MountTest fixture.
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/harness_internal.h"
#include "tests/mount_harness.h"
#include "tests/vold_mount.h"

namespace scopedfs::tests {
namespace {

using internal::DecodeStatus;
using internal::EnterPrivateMountNamespace;
using internal::ErrnoStatus;
using internal::MountedAt;
using internal::MountTable;
using internal::ReadAllFrom;
using internal::RunTool;
using internal::WriteAll;

constexpr char kDaemonBinary[] = "daemon/scopedfsd";
constexpr char kCtlBinary[] = "tools/scopedfsctl";
constexpr char kOwnerXattr[] = "trusted.scopedfs.owner";
constexpr char kServingLine[] = "scopedfsd: serving ";
constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr absl::Duration kStopTimeout = absl::Seconds(30);
constexpr absl::Duration kPoll = absl::Milliseconds(5);

}  // namespace

// --- The storage and its daemon ---------------------------------------------------------------

std::string DaemonExit::ToString() const {
  if (exited) return absl::StrCat("exit status ", code);
  return absl::StrCat("killed by signal ", signal, " (", strsignal(signal), ")");
}

std::string LowerKindName(LowerKind kind) { return kind == LowerKind::kExt4 ? "ext4" : "tmpfs"; }

LowerKind DefaultLowerKind() {
  const char* env = getenv("SCOPEDFS_TEST_LOWER");
  std::string value = env == nullptr ? "" : env;
  if (value == "ext4") return LowerKind::kExt4;
  EXPECT_TRUE(value.empty() || value == "tmpfs")
      << "SCOPEDFS_TEST_LOWER is \"" << value << "\": tmpfs or ext4";
  return LowerKind::kTmpfs;
}

absl::Status ScopedStorage::Prepare(LowerKind lower) {
  if (!work_dir_.empty()) return absl::FailedPreconditionError("already prepared");
  EnterPrivateMountNamespace();
  std::string tmpl = absl::StrCat(::testing::TempDir(), "scopedfs.XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return ErrnoStatus(absl::StrCat("mkdtemp ", tmpl), errno);
  char real[PATH_MAX];
  if (realpath(tmpl.c_str(), real) == nullptr) return ErrnoStatus("realpath", errno);
  work_dir_ = real;
  lower_ = work_dir_ + "/lower";
  mountpoint_ = work_dir_ + "/mnt";
  log_path_ = work_dir_ + "/scopedfsd.log";
  if (mkdir(lower_.c_str(), 0755) != 0) return ErrnoStatus("mkdir lower", errno);
  if (mkdir(mountpoint_.c_str(), 0755) != 0) return ErrnoStatus("mkdir mountpoint", errno);
  if (lower == LowerKind::kTmpfs) {
    if (mount("tmpfs", lower_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=512m,mode=0755") != 0) {
      return ErrnoStatus(absl::StrCat("mount tmpfs on ", lower_), errno);
    }
    lower_mounted_ = true;
    return absl::OkStatus();
  }
  if (absl::Status made = MakeExt4(work_dir_ + "/lower.ext4", lower_, 256); !made.ok()) {
    return made;
  }
  lower_mounted_ = true;
  // mke2fs's lost+found would be a name in the storage's root that no test expects.
  if (rmdir((lower_ + "/lost+found").c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus("rmdir lost+found", errno);
  }
  if (chmod(lower_.c_str(), 0755) != 0) return ErrnoStatus("chmod lower", errno);
  return absl::OkStatus();
}

absl::Status MakeExt4(const std::string& image, const std::string& dir, int size_mib,
                      const std::vector<std::string>& mkfs_options) {
  int img = open(image.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (img < 0) return ErrnoStatus(absl::StrCat("create ", image), errno);
  int grown = ftruncate(img, static_cast<off_t>(size_mib) << 20) == 0 ? 0 : errno;
  close(img);
  if (grown != 0) return ErrnoStatus("ftruncate image", grown);
  std::vector<std::string> argv = {"mke2fs", "-q", "-F", "-t", "ext4", "-m", "0"};
  argv.insert(argv.end(), mkfs_options.begin(), mkfs_options.end());
  argv.push_back(image);
  std::string out;
  if (int rc = RunCommand(argv, &out); rc != 0) {
    return absl::InternalError(absl::StrCat("mke2fs exited ", rc, ": ", out));
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(absl::StrCat("mkdir ", dir), errno);
  }
  return MountExt4(image, dir);
}

absl::Status MountExt4(const std::string& image, const std::string& dir) {
  std::string out;
  if (int rc = RunCommand({"mount", "-t", "ext4", "-o", "loop,nosuid,nodev", image, dir}, &out);
      rc != 0) {
    return absl::InternalError(absl::StrCat("mount -o loop ", image, " exited ", rc, ": ", out));
  }
  return absl::OkStatus();
}

absl::Status ScopedStorage::CreateDefaultLayout() {
  for (const std::string& dir : DefaultTopLevelDirs()) {
    if (absl::Status s = MkdirLower(dir); !s.ok()) return s;
  }
  for (const char* dir : {"Android/data", "Android/obb", "Android/media", "DCIM/Camera"}) {
    if (absl::Status s = MkdirLower(dir); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string ScopedStorage::Lower(absl::string_view rel) const {
  return rel.empty() ? lower_ : absl::StrCat(lower_, "/", rel);
}

std::string TestTransport() {
  const char* transport = getenv("SCOPEDFS_TEST_TRANSPORT");
  return transport == nullptr ? std::string() : std::string(transport);
}

absl::Status ScopedStorage::StartDaemon(const DaemonOptions& options) {
  if (daemon_pid_ > 0) return absl::FailedPreconditionError("daemon already running");
  if (access(kDaemonBinary, X_OK) != 0) {
    return ErrnoStatus(absl::StrCat(kDaemonBinary, " (runfiles path: run under bazel test)"),
                       errno);
  }
  std::string source = options.source.empty() ? lower_ : options.source;
  std::string mountpoint = options.mountpoint.empty() ? mountpoint_ : options.mountpoint;
  std::vector<std::string> argv = {kDaemonBinary,
                                   absl::StrCat("--source=", source),
                                   absl::StrCat("--mountpoint=", mountpoint),
                                   absl::StrCat("--policy=", options.policy),
                                   absl::StrCat("--apps=", options.apps),
                                   absl::StrCat("--passthrough=", options.passthrough)};
  int fuse_fd = -1;
  if (options.vold_mount) {
    absl::StatusOr<int> mounted = MountLikeVold(mountpoint);
    if (!mounted.ok()) return mounted.status();
    fuse_fd = *mounted;
    vold_mountpoint_ = mountpoint;
    argv.push_back(absl::StrCat("--fuse_fd=", fuse_fd));
  }
  control_socket_used_ = options.control_socket;
  if (options.control_socket) {
    if (socket_dir_.empty()) {
      char dir[] = "/tmp/scopedfs-ctl.XXXXXX";
      if (mkdtemp(dir) == nullptr) return ErrnoStatus("mkdtemp /tmp/scopedfs-ctl.XXXXXX", errno);
      socket_dir_ = dir;
    }
    argv.push_back(absl::StrCat("--control_socket=", control_socket()));
  } else {
    // Not the default in /run/scopedfs, which the machine shares with every other run.
    argv.push_back("--control_socket=none");
  }
  // The transport every test's daemon uses: `bazel test --test_env=SCOPEDFS_TEST_TRANSPORT=uring`
  // runs the suite over io_uring (tools/test.sh's second pass). A test that names one keeps it.
  if (std::string transport = TestTransport(); !transport.empty()) {
    bool named = false;
    for (const std::string& flag : options.extra_flags) {
      named = named || absl::StartsWith(flag, "--transport=");
    }
    if (!named) argv.push_back(absl::StrCat("--transport=", transport));
  }
  argv.insert(argv.end(), options.extra_flags.begin(), options.extra_flags.end());
  argv.insert(argv.begin(), options.exec_prefix.begin(), options.exec_prefix.end());
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  pid_t parent = getpid();
  fflush(nullptr);
  pid_t pid = log < 0 ? -1 : fork();
  if (pid < 0) {
    int err = errno;
    if (log >= 0) close(log);
    if (fuse_fd >= 0) close(fuse_fd);
    UnmountVoldMount();
    return ErrnoStatus(log < 0 ? "open daemon log" : "fork", err);
  }
  if (pid == 0) {
    // If the test process dies, the daemon unmounts and goes too.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(126);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    // The one fd the daemon inherits on purpose, as MediaProvider gets vold's.
    if (fuse_fd >= 0 && fcntl(fuse_fd, F_SETFD, 0) != 0) _exit(125);
    if (options.fd_limit > 0) {
      struct rlimit l = {options.fd_limit, options.fd_limit};
      if (setrlimit(RLIMIT_NOFILE, &l) != 0) _exit(125);
    }
    if (options.address_space_limit > 0) {
      struct rlimit l = {options.address_space_limit, options.address_space_limit};
      if (setrlimit(RLIMIT_AS, &l) != 0) _exit(125);
    }
    execv(args[0], args.data());
    fprintf(stderr, "exec %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  close(log);
  // Like vold, the harness keeps no copy: the daemon's end of the connection is then the last,
  // and the connection ends with the daemon.
  if (fuse_fd >= 0) close(fuse_fd);
  daemon_pid_ = pid;
  exit_unreported_ = false;

  absl::Time deadline = absl::Now() + kStartTimeout;
  for (;;) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      daemon_pid_ = -1;
      last_exit_ = DecodeStatus(status);
      UnmountVoldMount();
      return absl::FailedPreconditionError(absl::StrCat(
          "scopedfsd ended (", last_exit_.ToString(), ") before serving; its log:\n", DaemonLog()));
    }
    if (MountedAt(mountpoint, "fuse") && absl::StrContains(DaemonLog(), kServingLine)) break;
    if (absl::Now() > deadline) {
      DaemonExit e = StopDaemon();
      return absl::DeadlineExceededError(absl::StrCat("scopedfsd did not serve ", mountpoint,
                                                      " in time (", e.ToString(), "); its log:\n",
                                                      DaemonLog()));
    }
    absl::SleepFor(kPoll);
  }
  return absl::OkStatus();
}

bool ScopedStorage::daemon_running() {
  if (daemon_pid_ <= 0) return false;
  int status;
  if (waitpid(daemon_pid_, &status, WNOHANG) != daemon_pid_) return true;
  daemon_pid_ = -1;
  last_exit_ = DecodeStatus(status);
  exit_unreported_ = true;
  UnmountVoldMount();
  return false;
}

DaemonExit ScopedStorage::StopDaemon() {
  exit_unreported_ = false;
  if (daemon_pid_ <= 0) return last_exit_;
  kill(daemon_pid_, SIGTERM);
  return WaitDaemonExit(kStopTimeout);
}

DaemonExit ScopedStorage::WaitDaemonExit(absl::Duration timeout) {
  exit_unreported_ = false;
  if (daemon_pid_ <= 0) return last_exit_;
  absl::Time deadline = absl::Now() + timeout;
  int status;
  for (;;) {
    pid_t r = waitpid(daemon_pid_, &status, WNOHANG);
    if (r == daemon_pid_) break;
    if (r < 0 && errno != EINTR) {
      daemon_pid_ = -1;
      return last_exit_ = DaemonExit{};
    }
    if (absl::Now() > deadline) {
      std::cerr << "mount_harness: scopedfsd pid " << daemon_pid_ << " did not exit; SIGKILL\n";
      // Where it is stuck, for the test log, when gdb is there to say.
      if (access("/usr/bin/gdb", X_OK) == 0) {
        std::string cmd = absl::StrCat("/usr/bin/gdb -p ", daemon_pid_,
                                       " -batch -ex 'thread apply all bt' 2>/dev/null | "
                                       "grep -E '^(#|Thread)' >&2; grep -H -E '^(Name|Sig|ShdPnd)' "
                                       "/proc/",
                                       daemon_pid_, "/task/*/status >&2");
        (void)!system(cmd.c_str());
      }
      kill(daemon_pid_, SIGKILL);
      waitpid(daemon_pid_, &status, 0);
      break;
    }
    absl::SleepFor(kPoll);
  }
  daemon_pid_ = -1;
  last_exit_ = DecodeStatus(status);
  UnmountVoldMount();
  return last_exit_;
}

void ScopedStorage::UnmountVoldMount() {
  if (vold_mountpoint_.empty()) return;
  last_exit_.left_vold_mount = MountedAt(vold_mountpoint_, "fuse");
  // vold's UnmountUserFuse falls back to MNT_DETACH too: a dead FUSE mount may answer EBUSY.
  if (last_exit_.left_vold_mount) umount2(vold_mountpoint_.c_str(), MNT_DETACH);
  vold_mountpoint_.clear();
}

std::string ScopedStorage::DaemonLog() const {
  if (log_path_.empty()) return "";
  if (daemon_pid_ > 0 && control_socket_used_) {
    absl::StatusOr<DaemonStats> flushed = StatsOnce(
        [](const DaemonStats& s) {
          auto it = s.find("audit_lines_waiting");
          return it == s.end() || it->second == 0;
        },
        "audit_lines_waiting", absl::Seconds(5));
    if (flushed.ok()) return ReadFileOrEmpty(log_path_);
  }
  std::string log = ReadFileOrEmpty(log_path_);
  if (daemon_pid_ <= 0) return log;
  for (int round = 0; round < 40; ++round) {
    absl::SleepFor(absl::Milliseconds(50));
    std::string again = ReadFileOrEmpty(log_path_);
    if (again == log) break;
    log = std::move(again);
  }
  return log;
}

bool ScopedStorage::IsMounted() const {
  return !mountpoint_.empty() && MountedAt(mountpoint_, "fuse");
}

int ScopedStorage::CountFuseMounts() {
  int n = 0;
  for (const auto& [point, type] : MountTable()) n += absl::StartsWith(type, "fuse") ? 1 : 0;
  return n;
}

void ScopedStorage::Teardown() {
  if (daemon_pid_ > 0) StopDaemon();
  UnmountVoldMount();
  if (IsMounted()) umount2(mountpoint_.c_str(), MNT_DETACH);
  if (lower_mounted_) {
    umount2(lower_.c_str(), MNT_DETACH);
    lower_mounted_ = false;
  }
  if (!work_dir_.empty()) {
    // FTW_MOUNT: never descend into anything still mounted below the work dir.
    nftw(
        work_dir_.c_str(),
        [](const char* path, const struct stat*, int, FTW*) {
          remove(path);
          return 0;
        },
        16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    work_dir_.clear();
  }
  if (!socket_dir_.empty()) {
    unlink(control_socket().c_str());
    rmdir(socket_dir_.c_str());
    socket_dir_.clear();
  }
}

absl::Status ScopedStorage::MkdirLower(absl::string_view rel, std::optional<uid_t> owner) {
  std::string path = lower_;
  for (absl::string_view part : absl::StrSplit(rel, '/', absl::SkipEmpty())) {
    absl::StrAppend(&path, "/", part);
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(absl::StrCat("mkdir ", path), errno);
    }
  }
  if (owner.has_value()) {
    std::string value = absl::StrCat(*owner);
    if (lsetxattr(path.c_str(), kOwnerXattr, value.data(), value.size(), 0) != 0) {
      return ErrnoStatus(absl::StrCat("setxattr ", path), errno);
    }
  }
  return absl::OkStatus();
}

absl::Status ScopedStorage::WriteLower(absl::string_view rel, absl::string_view content,
                                       std::optional<uid_t> owner) {
  size_t slash = rel.rfind('/');
  if (slash != absl::string_view::npos) {
    if (absl::Status s = MkdirLower(rel.substr(0, slash)); !s.ok()) return s;
  }
  std::string path = Lower(rel);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(absl::StrCat("create ", path), errno);
  bool ok = WriteAll(fd, content.data(), content.size());
  int err = errno;
  close(fd);
  if (!ok) return ErrnoStatus(absl::StrCat("write ", path), err);
  if (owner.has_value()) {
    std::string value = absl::StrCat(*owner);
    if (lsetxattr(path.c_str(), kOwnerXattr, value.data(), value.size(), 0) != 0) {
      return ErrnoStatus(absl::StrCat("setxattr ", path), errno);
    }
  }
  return absl::OkStatus();
}

absl::Status ScopedStorage::SymlinkLower(absl::string_view target, absl::string_view rel) {
  std::string path = Lower(rel);
  if (symlink(std::string(target).c_str(), path.c_str()) != 0) {
    return ErrnoStatus(absl::StrCat("symlink ", path), errno);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ScopedStorage::ReadLower(absl::string_view rel) const {
  std::string path = Lower(rel);
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(absl::StrCat("open ", path), errno);
  std::string data = ReadAllFrom(fd);
  close(fd);
  return data;
}

bool ScopedStorage::LowerExists(absl::string_view rel) const {
  struct stat st;
  return lstat(Lower(rel).c_str(), &st) == 0;
}

std::optional<std::string> ScopedStorage::LowerOwner(absl::string_view rel) const {
  char buf[64];
  ssize_t n = lgetxattr(Lower(rel).c_str(), kOwnerXattr, buf, sizeof(buf));
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

absl::StatusOr<int> ScopedStorage::DaemonFdCount() const {
  if (daemon_pid_ <= 0) return absl::FailedPreconditionError("no daemon running");
  std::string dir = absl::StrCat("/proc/", daemon_pid_, "/fd");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus(absl::StrCat("opendir ", dir), errno);
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

absl::StatusOr<std::string> ScopedStorage::Ctl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {kCtlBinary, absl::StrCat("--socket=", control_socket())};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunTool(argv);
}

absl::StatusOr<int64_t> ScopedStorage::OpCount(absl::string_view op) const {
  absl::StatusOr<std::string> json = Ctl({"stats", "--json"});
  if (!json.ok()) return json.status();
  std::string key = absl::StrCat("{\"op\":\"", op, "\",\"count\":");
  size_t at = json->find(key);
  if (at == std::string::npos)
    return absl::NotFoundError(absl::StrCat("no op ", op, " in ", *json));
  absl::string_view rest = absl::string_view(*json).substr(at + key.size());
  int64_t count;
  if (!absl::SimpleAtoi(rest.substr(0, rest.find_first_of(",}")), &count)) {
    return absl::DataLossError(absl::StrCat("unreadable count of ", op));
  }
  return count;
}

absl::StatusOr<DaemonStats> ScopedStorage::StatsOnce(
    const std::function<bool(const DaemonStats&)>& ready, const std::string& shown,
    absl::Duration hang_guard) const {
  absl::StatusOr<DaemonStats> stats;
  for (absl::Time end = absl::Now() + hang_guard;;) {
    stats = Stats();
    if (!stats.ok() || ready(*stats)) return stats;
    if (absl::Now() >= end) break;
    usleep(10 * 1000);
  }
  auto it = stats->find(shown);
  return absl::DeadlineExceededError(
      absl::StrCat("the daemon's stats never came to what the test waits for; ", shown, " is ",
                   it == stats->end() ? "absent" : absl::StrCat(it->second)));
}

absl::StatusOr<DaemonStats> ScopedStorage::StatsOnceZero(const std::string& gauge) const {
  return StatsOnce(
      [&gauge](const DaemonStats& s) {
        auto it = s.find(gauge);
        return it != s.end() && it->second == 0;
      },
      gauge);
}

absl::StatusOr<DaemonStats> ScopedStorage::Stats() const {
  absl::StatusOr<std::string> json =
      RunTool({kCtlBinary, absl::StrCat("--socket=", control_socket()), "stats", "--json"});
  if (!json.ok()) return json.status();
  // The top-level "name": <integer or boolean> pairs of the object; nested ones (per-op
  // latencies) are skipped.
  DaemonStats stats;
  const std::string& text = *json;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c != '"') continue;
    size_t close = text.find('"', i + 1);
    if (close == std::string::npos) break;
    std::string key = text.substr(i + 1, close - i - 1);
    i = close;
    if (depth != 1 || close + 1 >= text.size() || text[close + 1] != ':') continue;
    absl::string_view value = absl::string_view(text).substr(close + 2);
    value = value.substr(0, value.find_first_of(",}"));
    int64_t number;
    if (absl::SimpleAtoi(value, &number)) {
      stats[key] = number;
    } else if (value == "true" || value == "false") {
      stats[key] = value == "true" ? 1 : 0;
    }
  }
  if (stats.empty()) return absl::InternalError(absl::StrCat("no counters in: ", *json));
  return stats;
}

// --- Fixture ----------------------------------------------------------------------------------

void MountTest::SetUp() {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  SCOPEDFS_ASSERT_OK(storage_.Prepare(Lower()));
  SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
  SCOPEDFS_ASSERT_OK(storage_.StartDaemon(Options()));
}

int64_t MountTest::Lookups() { return Served("lookup"); }

int64_t MountTest::Served(const std::string& op) {
  absl::StatusOr<int64_t> n = storage_.OpCount(op);
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *n : -1;
}

DaemonOptions OneUserParamMountTest::Options() const {
  DaemonOptions o;
  o.policy = "policy/configs/android.textproto";
  o.control_socket = true;
  o.extra_flags.push_back(
      absl::StrCat("--mount_reached_by_one_user=", cached() ? "true" : "false"));
  return o;
}

int64_t MountTest::LookupsForThreeStats(uid_t uid, const std::string& path) {
  // The walks start in the path's top-level directory (the app's cwd, entered before counting):
  // names in the mount's root are never cached while another user's apps may reach the mount.
  size_t slash = path.find('/');
  if (slash == std::string::npos) {
    ADD_FAILURE() << "LookupsForThreeStats needs a path below a top-level directory: " << path;
    return -1;
  }
  std::string rest = path.substr(slash + 1);
  int ready[2], go[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << strerror(errno);
    return -1;
  }
  pid_t pid = StartAs(
      uid,
      [&] {
        close(ready[0]);
        close(go[1]);
        char c = 0;
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) return 2;
        struct stat st;
        for (int i = 0; i < 3; ++i) {
          if (stat(rest.c_str(), &st) != 0) return 3;
        }
        return 0;
      },
      absl::StrCat(storage_.mountpoint(), "/", path.substr(0, slash)));
  close(ready[1]);
  close(go[0]);
  char c = 0;
  bool started = read(ready[0], &c, 1) == 1;
  int64_t before = Lookups();
  EXPECT_EQ(write(go[1], &c, 1), 1);
  close(go[1]);
  close(ready[0]);
  int code = WaitChild(pid);
  EXPECT_TRUE(started && code == 0)
      << "uid " << uid << ": three stats of " << path << " (exit code " << code << ")";
  return Lookups() - before;
}

void MountTest::TearDown() {
  if (storage_.daemon_started()) {
    DaemonExit e = storage_.StopDaemon();
    EXPECT_TRUE(e.clean()) << "scopedfsd did not exit cleanly on SIGTERM: " << e.ToString();
    EXPECT_FALSE(storage_.IsMounted()) << "scopedfsd exited but left its mount behind";
  }
  if (HasFailure()) std::cerr << "--- scopedfsd log ---\n" << storage_.DaemonLog() << "---\n";
  storage_.Teardown();
}

}  // namespace scopedfs::tests
