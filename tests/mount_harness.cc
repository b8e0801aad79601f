// Mount harness (see mount_harness.h): tmpfs lower tree, scopedfsd lifecycle, and forked apps that
// report what they saw through a pipe.
#include "tests/mount_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
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
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/vold_mount.h"

namespace scopedfs::tests {
namespace {

constexpr char kDaemonBinary[] = "daemon/scopedfsd";
constexpr char kCtlBinary[] = "tools/scopedfsctl";
constexpr char kOwnerXattr[] = "trusted.scopedfs.owner";
constexpr char kServingLine[] = "scopedfsd: serving ";
constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr absl::Duration kStopTimeout = absl::Seconds(30);
constexpr absl::Duration kPoll = absl::Milliseconds(5);

absl::Status ErrnoStatus(absl::string_view what, int err) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, ": ", strerror(err)));
}

// Moves this process into its own mount namespace with private propagation: the tmpfs and FUSE
// mounts of the tests then exist only here, and vanish with the process whatever happens to it.
void EnterPrivateMountNamespace() {
  static const bool done = [] {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr)) {
      std::cerr << "mount_harness: no private mount namespace (" << strerror(errno)
                << "); mounts are visible system-wide until teardown\n";
      return false;
    }
    return true;
  }();
  (void)done;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Mount point and file-system type of every entry of /proc/self/mountinfo.
std::vector<std::pair<std::string, std::string>> MountTable() {
  std::vector<std::pair<std::string, std::string>> table;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    auto sep = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || sep == fields.end() || sep + 1 == fields.end()) continue;
    table.emplace_back(fields[4], *(sep + 1));
  }
  return table;
}

bool MountedAt(const std::string& path, absl::string_view fstype_prefix) {
  for (const auto& [point, type] : MountTable()) {
    if (point == path && absl::StartsWith(type, fstype_prefix)) return true;
  }
  return false;
}

DaemonExit DecodeStatus(int status) {
  DaemonExit e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  }
  return e;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string ReadAllFrom(int fd) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Wire format of an AppResult from child to parent.
struct WireHeader {
  int32_t err;
  uint32_t mode;
  int64_t value;
  uint64_t dev;
  uint64_t data_size;
  uint64_t name_count;
};

void SendResult(int fd, const AppResult& r) {
  WireHeader h{r.err, r.mode, r.value, r.dev, r.data.size(), r.names.size()};
  if (!WriteAll(fd, &h, sizeof(h)) || !WriteAll(fd, r.data.data(), r.data.size())) _exit(3);
  for (const std::string& name : r.names) {
    uint64_t len = name.size();
    if (!WriteAll(fd, &len, sizeof(len)) || !WriteAll(fd, name.data(), name.size())) _exit(3);
  }
}

bool ParseResult(const std::string& wire, AppResult* r) {
  WireHeader h;
  if (wire.size() < sizeof(h)) return false;
  memcpy(&h, wire.data(), sizeof(h));
  size_t at = sizeof(h);
  if (wire.size() - at < h.data_size) return false;
  r->err = h.err;
  r->mode = h.mode;
  r->value = h.value;
  r->dev = h.dev;
  r->data = wire.substr(at, h.data_size);
  at += h.data_size;
  for (uint64_t i = 0; i < h.name_count; ++i) {
    uint64_t len;
    if (wire.size() - at < sizeof(len)) return false;
    memcpy(&len, wire.data() + at, sizeof(len));
    at += sizeof(len);
    if (wire.size() - at < len) return false;
    r->names.push_back(wire.substr(at, len));
    at += len;
  }
  return at == wire.size();
}

AppResult FromErrno() {
  AppResult r;
  r.err = errno;
  return r;
}

AppResult FromStat(const struct stat& st) {
  AppResult r;
  r.value = st.st_size;
  r.mode = st.st_mode;
  r.dev = st.st_dev;
  return r;
}

// Runs `argv` (argv[0] a runfiles path) to completion; its stdout is returned.
absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
  pid_t pid = fork();
  if (pid < 0) return ErrnoStatus("fork", errno);
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  std::string output = ReadAllFrom(out[0]);
  close(out[0]);
  int status;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), " failed (",
                                            DecodeStatus(status).ToString(), "): ", output));
  }
  return output;
}

}  // namespace

std::string WhyNotMountable() {
  if (geteuid() != 0) {
    return absl::StrCat("needs root (euid is ", geteuid(),
                        "): the test mounts tmpfs and FUSE and acts as app uids");
  }
  if (access("/dev/fuse", R_OK | W_OK) != 0) {
    return absl::StrCat("needs /dev/fuse: ", strerror(errno));
  }
  return "";
}

// --- Content ----------------------------------------------------------------------------------

std::string Pattern(size_t size, uint32_t seed) {
  std::string out(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1103515245u + 12345u;
    out[i] = static_cast<char>(x >> 24);
  }
  return out;
}

namespace {
std::string WithMagic(absl::string_view magic, size_t size, uint32_t seed) {
  std::string out = Pattern(std::max(size, magic.size()), seed);
  out.replace(0, magic.size(), magic.data(), magic.size());
  return out;
}
}  // namespace

std::string JpegBytes(size_t size) {
  static constexpr char kMagic[] = "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00";
  return WithMagic(absl::string_view(kMagic, sizeof(kMagic) - 1), size, 1);
}

std::string Mp4Bytes(size_t size) {
  static constexpr char kMagic[] =
      "\x00\x00\x00\x18"
      "ftypisom\x00\x00\x02\x00isommp41";
  return WithMagic(absl::string_view(kMagic, sizeof(kMagic) - 1), size, 2);
}

std::string Mp3Bytes(size_t size) {
  static constexpr char kMagic[] = "ID3\x04\x00\x00\x00\x00\x00\x00";
  return WithMagic(absl::string_view(kMagic, sizeof(kMagic) - 1), size, 3);
}

std::string AndroidRulesUnderPosixSemantics() {
  std::ifstream in("policy/configs/android.textproto");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string policy = ss.str();
  const std::string kAndroid = "semantics: SEMANTICS_ANDROID";
  size_t at = policy.find(kAndroid);
  EXPECT_NE(at, std::string::npos) << "android.textproto names no semantics";
  if (at == std::string::npos) return "";
  policy.replace(at, kAndroid.size(), "semantics: SEMANTICS_POSIX");
  std::string path = absl::StrCat(::testing::TempDir(), "/android_rules_posix.textproto");
  std::ofstream(path) << policy;
  return path;
}

std::string PdfBytes(size_t size) {
  std::string out = "%PDF-1.7\n";
  while (out.size() < size) out += "% scopedfs test document\n";
  out.resize(size);
  return out;
}

const std::vector<std::string>& DefaultTopLevelDirs() {
  static const auto* dirs = new std::vector<std::string>{
      "Alarms", "Android",       "Audiobooks", "DCIM",     "Documents",  "Download", "Movies",
      "Music",  "Notifications", "Pictures",   "Podcasts", "Recordings", "Ringtones"};
  return *dirs;
}

// --- Results ----------------------------------------------------------------------------------

std::string ErrnoName(int err) {
  if (err == 0) return "success";
  if (err == AppResult::kChildDied) return "child died";
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : absl::StrCat("errno ", err);
}

std::ostream& operator<<(std::ostream& os, const AppResult& r) {
  os << r.what << " -> " << ErrnoName(r.err);
  if (r.err == AppResult::kChildDied) os << " (" << r.data << ")";
  return os;
}

::testing::AssertionResult Succeeds(const AppResult& r) {
  if (r.ok()) return ::testing::AssertionSuccess() << r;
  return ::testing::AssertionFailure() << r << ", expected success";
}

::testing::AssertionResult FailsWith(const AppResult& r, int err) {
  if (r.err == err) return ::testing::AssertionSuccess() << r;
  return ::testing::AssertionFailure() << r << ", expected " << ErrnoName(err);
}

bool Contains(const std::vector<std::string>& names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

::testing::AssertionResult SameBytes(absl::string_view actual, absl::string_view expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < actual.size() && i < expected.size() && actual[i] == expected[i]) ++i;
  return ::testing::AssertionFailure() << "got " << actual.size() << " bytes, expected "
                                       << expected.size() << "; first difference at offset " << i;
}

// --- Processes as apps ------------------------------------------------------------------------

pid_t StartAs(uid_t uid, const std::function<int()>& body, const std::string& cwd,
              absl::Duration timeout) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid != 0) return pid;
  // A hung request must not hang the suite: the child dies of SIGALRM instead.
  alarm(static_cast<unsigned>(std::max<int64_t>(1, absl::ToInt64Seconds(timeout))));
  // The cwd is entered as root: the mount point sits in root's private temp directory, which an
  // app could not traverse. Everything the app does afterwards is relative to the mount root.
  if (chdir(cwd.c_str()) != 0) _exit(124);
  if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 ||
      setresuid(uid, uid, uid) != 0) {
    _exit(125);
  }
  _exit(body() & 0xff);
}

int WaitChild(pid_t pid) {
  if (pid < 0) return 255;
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 255;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int RunAs(uid_t uid, const std::function<int()>& body, const std::string& cwd,
          absl::Duration timeout) {
  return WaitChild(StartAs(uid, body, cwd, timeout));
}

AppResult App::Run(absl::string_view what, const std::function<AppResult()>& body) const {
  AppResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.err = AppResult::kChildDied;
    result.data = absl::StrCat("pipe2: ", strerror(errno));
  } else {
    pid_t pid = StartAs(
        uid_,
        [&] {
          close(fds[0]);
          SendResult(fds[1], body());
          return 0;
        },
        mountpoint_);
    close(fds[1]);
    std::string wire = ReadAllFrom(fds[0]);
    close(fds[0]);
    int code = WaitChild(pid);
    if (code != 0 || !ParseResult(wire, &result)) {
      result = AppResult();
      result.err = AppResult::kChildDied;
      result.data = absl::StrCat("app process exit code ", code);
    }
  }
  result.what = absl::StrCat("uid ", uid_, ": ", what);
  return result;
}

AppResult App::Stat(const std::string& path) const {
  return Run(absl::StrCat("stat ", path), [&] {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? FromStat(st) : FromErrno();
  });
}

AppResult App::Lstat(const std::string& path) const {
  return Run(absl::StrCat("lstat ", path), [&] {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 ? FromStat(st) : FromErrno();
  });
}

AppResult App::Read(const std::string& path) const {
  return Run(absl::StrCat("read ", path), [&] {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return FromErrno();
    AppResult r;
    char buf[1 << 16];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0) {
        r.err = errno;
        break;
      }
      if (n == 0) break;
      r.data.append(buf, static_cast<size_t>(n));
    }
    if (close(fd) != 0 && r.err == 0) r.err = errno;
    r.value = static_cast<int64_t>(r.data.size());
    return r;
  });
}

AppResult App::Open(const std::string& path, int flags, mode_t mode) const {
  return Run(absl::StrCat("open ", path, " flags 0", absl::Hex(flags)), [&] {
    int fd = open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) return FromErrno();
    AppResult r;
    if (close(fd) != 0) r.err = errno;
    return r;
  });
}

AppResult App::Write(const std::string& path, const std::string& content, int flags) const {
  return Run(absl::StrCat("write ", path), [&] {
    int fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) return FromErrno();
    AppResult r;
    if (!WriteAll(fd, content.data(), content.size())) r.err = errno;
    if (close(fd) != 0 && r.err == 0) r.err = errno;
    return r;
  });
}

AppResult App::Create(const std::string& path, const std::string& content) const {
  AppResult r = Write(path, content, O_WRONLY | O_CREAT | O_EXCL);
  r.what = absl::StrCat("uid ", uid_, ": create ", path);
  return r;
}

AppResult App::List(const std::string& dir) const {
  return Run(absl::StrCat("readdir ", dir), [&] {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return FromErrno();
    AppResult r;
    errno = 0;
    while (dirent* e = readdir(d)) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) r.names.push_back(e->d_name);
    }
    r.err = errno;
    closedir(d);
    std::sort(r.names.begin(), r.names.end());
    return r;
  });
}

AppResult App::Mkdir(const std::string& path, mode_t mode) const {
  return Run(absl::StrCat("mkdir ", path),
             [&] { return mkdir(path.c_str(), mode) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Rmdir(const std::string& path) const {
  return Run(absl::StrCat("rmdir ", path),
             [&] { return rmdir(path.c_str()) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Unlink(const std::string& path) const {
  return Run(absl::StrCat("unlink ", path),
             [&] { return unlink(path.c_str()) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Rename(const std::string& from, const std::string& to, unsigned flags) const {
  return Run(
      absl::StrCat("rename ", from, " -> ", to, flags ? absl::StrCat(" flags ", flags) : ""), [&] {
        return renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags) == 0 ? AppResult()
                                                                                   : FromErrno();
      });
}

AppResult App::Link(const std::string& from, const std::string& to) const {
  return Run(absl::StrCat("link ", from, " -> ", to),
             [&] { return link(from.c_str(), to.c_str()) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Symlink(const std::string& target, const std::string& path) const {
  return Run(absl::StrCat("symlink ", path, " -> ", target), [&] {
    return symlink(target.c_str(), path.c_str()) == 0 ? AppResult() : FromErrno();
  });
}

AppResult App::Readlink(const std::string& path) const {
  return Run(absl::StrCat("readlink ", path), [&] {
    char buf[PATH_MAX];
    ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
    if (n < 0) return FromErrno();
    AppResult r;
    r.data.assign(buf, static_cast<size_t>(n));
    return r;
  });
}

AppResult App::Chmod(const std::string& path, mode_t mode) const {
  return Run(absl::StrCat("chmod ", path, " 0", absl::Hex(mode)),
             [&] { return chmod(path.c_str(), mode) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Chown(const std::string& path, uid_t owner, gid_t group) const {
  return Run(absl::StrCat("chown ", path, " ", owner, ":", group),
             [&] { return chown(path.c_str(), owner, group) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Truncate(const std::string& path, off_t size) const {
  return Run(absl::StrCat("truncate ", path, " ", size),
             [&] { return truncate(path.c_str(), size) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::GetXattr(const std::string& path, const std::string& name) const {
  return Run(absl::StrCat("getxattr ", path, " ", name), [&] {
    char buf[4096];
    ssize_t n = getxattr(path.c_str(), name.c_str(), buf, sizeof(buf));
    if (n < 0) return FromErrno();
    AppResult r;
    r.data.assign(buf, static_cast<size_t>(n));
    return r;
  });
}

AppResult App::SetXattr(const std::string& path, const std::string& name,
                        const std::string& value) const {
  return Run(absl::StrCat("setxattr ", path, " ", name), [&] {
    return setxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0) == 0 ? AppResult()
                                                                                    : FromErrno();
  });
}

AppResult App::ListXattr(const std::string& path) const {
  return Run(absl::StrCat("listxattr ", path), [&] {
    char buf[4096];
    ssize_t n = listxattr(path.c_str(), buf, sizeof(buf));
    if (n < 0) return FromErrno();
    AppResult r;
    for (absl::string_view name : absl::StrSplit(absl::string_view(buf, static_cast<size_t>(n)),
                                                 absl::ByChar('\0'), absl::SkipEmpty())) {
      r.names.emplace_back(name);
    }
    return r;
  });
}

// --- The storage and its daemon ---------------------------------------------------------------

std::string DaemonExit::ToString() const {
  if (exited) return absl::StrCat("exit status ", code);
  return absl::StrCat("killed by signal ", signal, " (", strsignal(signal), ")");
}

absl::Status ScopedStorage::Prepare() {
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
  if (mount("tmpfs", lower_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=512m,mode=0755") != 0) {
    return ErrnoStatus(absl::StrCat("mount tmpfs on ", lower_), errno);
  }
  tmpfs_mounted_ = true;
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
  if (options.control_socket) {
    if (socket_dir_.empty()) {
      char dir[] = "/tmp/scopedfs-ctl.XXXXXX";
      if (mkdtemp(dir) == nullptr) return ErrnoStatus("mkdtemp /tmp/scopedfs-ctl.XXXXXX", errno);
      socket_dir_ = dir;
    }
    argv.push_back(absl::StrCat("--control_socket=", control_socket()));
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

DaemonExit ScopedStorage::StopDaemon() {
  if (daemon_pid_ <= 0) return last_exit_;
  kill(daemon_pid_, SIGTERM);
  return WaitDaemonExit(kStopTimeout);
}

DaemonExit ScopedStorage::WaitDaemonExit(absl::Duration timeout) {
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
  return log_path_.empty() ? "" : ReadWholeFile(log_path_);
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
  if (tmpfs_mounted_) {
    umount2(lower_.c_str(), MNT_DETACH);
    tmpfs_mounted_ = false;
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
  SCOPEDFS_ASSERT_OK(storage_.Prepare());
  SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
  SCOPEDFS_ASSERT_OK(storage_.StartDaemon(Options()));
}

void MountTest::TearDown() {
  if (storage_.daemon_running()) {
    DaemonExit e = storage_.StopDaemon();
    EXPECT_TRUE(e.clean()) << "scopedfsd did not exit cleanly on SIGTERM: " << e.ToString();
    EXPECT_FALSE(storage_.IsMounted()) << "scopedfsd exited but left its mount behind";
  }
  if (HasFailure()) std::cerr << "--- scopedfsd log ---\n" << storage_.DaemonLog() << "---\n";
  storage_.Teardown();
}

}  // namespace scopedfs::tests
