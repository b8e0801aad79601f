// The mount harness's process control (see mount_harness.h): commands and tools run to
// completion, the private mount namespace, and forked children that act as app uids.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/harness_internal.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace internal {

absl::Status ErrnoStatus(absl::string_view what, int err) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, ": ", strerror(err)));
}

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

}  // namespace internal

int RunCommand(const std::vector<std::string>& argv, std::string* output) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return -1;
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    fprintf(stderr, "exec %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  close(out[1]);
  *output = internal::ReadAllFrom(out[0]);
  close(out[0]);
  return WaitChild(pid);
}

namespace {

// The bytes of the file at `path`; *readable says whether it could be opened.
std::string ReadFile(const std::string& path, bool* readable) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  *readable = in.good();
  return ss.str();
}

}  // namespace

std::string ReadFileOrDie(const std::string& path) {
  bool readable;
  std::string bytes = ReadFile(path, &readable);
  if (!readable) ADD_FAILURE() << "cannot read " << path;
  return bytes;
}

std::string ReadFileOrEmpty(const std::string& path) {
  bool readable;
  return ReadFile(path, &readable);
}

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

absl::Status FrozenThreads::Freeze(pid_t pid, absl::string_view name) {
  Thaw();
  std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return internal::ErrnoStatus(tasks, errno);
  std::vector<pid_t> tids;
  while (dirent* e = readdir(dir)) {
    pid_t tid = static_cast<pid_t>(atoi(e->d_name));
    if (tid <= 0) continue;
    std::string comm = ReadFileOrEmpty(absl::StrCat(tasks, "/", tid, "/comm"));
    if (absl::StripTrailingAsciiWhitespace(comm) == name) tids.push_back(tid);
  }
  closedir(dir);
  if (tids.empty()) return absl::NotFoundError(absl::StrCat("no thread named ", name));
  for (pid_t tid : tids) {
    // The state is the field after the parenthesised name: S, asleep (for a scan thread: waiting
    // for work). A thread still finishing something is asked again, for a while.
    char state = '?';
    for (int i = 0; i < 500 && state != 'S'; ++i) {
      if (i > 0) usleep(10 * 1000);
      std::string stat = ReadFileOrEmpty(absl::StrCat(tasks, "/", tid, "/stat"));
      size_t paren = stat.rfind(')');
      state = paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
    }
    absl::Status failed;
    if (state != 'S') {
      failed = absl::FailedPreconditionError(
          absl::StrCat("thread ", tid, " (", name, ") is not idle: state ", std::string(1, state)));
    } else if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
      failed = internal::ErrnoStatus(absl::StrCat("PTRACE_SEIZE ", tid), errno);
    } else {
      tids_.push_back(tid);
      int status = 0;
      if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
        failed = internal::ErrnoStatus(absl::StrCat("PTRACE_INTERRUPT ", tid), errno);
      } else if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status)) {
        failed = absl::InternalError(absl::StrCat("thread ", tid, " did not stop: ", status));
      }
    }
    if (!failed.ok()) {
      Thaw();
      return failed;
    }
  }
  return absl::OkStatus();
}

void FrozenThreads::Thaw() {
  for (pid_t tid : tids_) {
    // A tracee leaves only from a stop: one that is not stopped (its stop failed) is stopped first.
    if (ptrace(PTRACE_DETACH, tid, nullptr, nullptr) != 0 && errno == ESRCH &&
        ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0) {
      int status;
      waitpid(tid, &status, __WALL);
      ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    }
  }
  tids_.clear();
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

}  // namespace scopedfs::tests
