// scopedfsctl repair (see scopedfsctl_repair.h). The detaching is the daemon's own
// (daemon/kernel/mount_point: DetachDeadFuseMount, as a restarted daemon does at its start); the
// mounting again is mount(8)'s, so the fstab line's options are the ones used.
#include "tools/scopedfsctl_repair.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "daemon/kernel/mount_point.h"
#include "tools/scopedfsctl_flags.h"

namespace scopedfs::policy::ctl {
namespace {

// Runs `mount [-T fstab] dir` and returns its exit status (127 if it could not be run).
int MountAgain(const std::string& dir, const std::string& fstab) {
  std::vector<std::string> argv = {"mount"};
  if (!fstab.empty()) argv.insert(argv.end(), {"-T", fstab});
  argv.push_back(dir);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    execvp("mount", args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::string ResolvedMountFlag(const std::string& dir) {
  char real[PATH_MAX];
  if (realpath(dir.c_str(), real) != nullptr) return real;
  std::string trimmed = dir;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  size_t slash = trimmed.rfind('/');
  std::string parent = slash == std::string::npos ? "." : trimmed.substr(0, slash);
  if (parent.empty()) parent = "/";
  if (realpath(parent.c_str(), real) == nullptr) return dir;
  std::string base = trimmed.substr(slash + 1);
  return std::string(real) == "/" ? absl::StrCat("/", base) : absl::StrCat(real, "/", base);
}

int RepairCommand() {
  std::string only = absl::GetFlag(FLAGS_mount);
  std::string fstab = absl::GetFlag(FLAGS_fstab);
  const bool detach_only = absl::GetFlag(FLAGS_detach_only);
  std::vector<std::string> candidates;
  if (!only.empty()) {
    candidates.push_back(ResolvedMountFlag(only));
  } else {
    std::ifstream in("/proc/self/mountinfo");
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      std::cerr << "scopedfsctl: cannot read /proc/self/mountinfo: " << std::strerror(errno)
                << "\n";
      return 1;
    }
    for (const daemon::MountInfoEntry& entry : daemon::ParseMountInfo(text.str())) {
      if (entry.fstype != "fuse.scopedfs") continue;
      bool seen = false;
      for (const std::string& c : candidates) seen = seen || c == entry.mount_point;
      if (!seen) candidates.push_back(entry.mount_point);
    }
  }
  int dead = 0, failed = 0;
  for (const std::string& dir : candidates) {
    absl::StatusOr<std::string> detached = daemon::DetachDeadFuseMount(dir);
    if (!detached.ok()) {
      std::cerr << "scopedfsctl: " << dir << ": " << detached.status().message() << "\n";
      ++failed;
      continue;
    }
    if (detached->empty()) continue;  // it answers (or nothing is mounted there)
    ++dead;
    for (absl::string_view line : absl::StrSplit(*detached, '\n', absl::SkipEmpty())) {
      std::cout << "scopedfsctl: " << line << "\n";
    }
    if (detach_only) {
      std::cout << "scopedfsctl: " << dir << ": detached; `mount " << dir
                << "` (or mount -a) mounts it again\n";
      continue;
    }
    int rc = MountAgain(dir, fstab);
    if (rc == 0) {
      std::cout << "scopedfsctl: " << dir << ": mounted again (mount " << dir << ")\n";
    } else {
      std::cerr << "scopedfsctl: " << dir << ": detached, but `mount " << dir << "` exited " << rc
                << (rc == 127 ? " (mount(8) could not be run)" : "")
                << ": mount it again by hand (a mount made without an fstab line needs its "
                   "options again)\n";
      ++failed;
    }
  }
  if (dead == 0 && failed == 0) {
    std::cout << "scopedfsctl: no dead scopedfs mount"
              << (only.empty() ? "" : absl::StrCat(" at ", candidates[0])) << "\n";
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace scopedfs::policy::ctl
