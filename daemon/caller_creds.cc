// Per-thread caller credentials (see caller_creds.h).
#include "daemon/caller_creds.h"

#include <grp.h>
#include <sched.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace scopedfs::daemon {
namespace {

// The daemon's own supplementary groups, read once: what every thread goes back to.
const std::vector<gid_t>& DaemonGroups() {
  static const std::vector<gid_t> groups = [] {
    int n = getgroups(0, nullptr);
    std::vector<gid_t> g(n > 0 ? static_cast<size_t>(n) : 0);
    if (n > 0 && getgroups(n, g.data()) != n) g.clear();
    return g;
  }();
  return groups;
}

// setfsuid/setfsgid report the previous id, never an error: read the id back to know.
bool SetFsuid(uid_t uid) {
  syscall(SYS_setfsuid, uid);
  return static_cast<uid_t>(syscall(SYS_setfsuid, static_cast<uid_t>(-1))) == uid;
}

bool SetFsgid(gid_t gid) {
  syscall(SYS_setfsgid, gid);
  return static_cast<gid_t>(syscall(SYS_setfsgid, static_cast<gid_t>(-1))) == gid;
}

// Gives the calling thread its own umask, apart from the other threads'.
bool OwnUmask() {
  thread_local bool own = unshare(CLONE_FS) == 0;
  return own;
}

}  // namespace

ActingAsCaller::ActingAsCaller(uid_t uid, gid_t gid, const std::vector<gid_t>& groups,
                               mode_t mask) {
  DaemonGroups();  // read before the first switch
  if (!OwnUmask()) {
    error_ = EPERM;
    return;
  }
  umask(mask & 0777);
  if (syscall(SYS_setgroups, groups.size(), groups.data()) != 0) {
    error_ = errno;
    umask(0);
    return;
  }
  groups_set_ = true;
  if (!SetFsgid(gid) || !SetFsuid(uid)) {
    error_ = EPERM;
    Restore();
  }
}

ActingAsCaller::~ActingAsCaller() {
  if (error_ == 0) Restore();
}

bool ProcessInGroup(pid_t pid, gid_t gid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    std::vector<gid_t> ids;
    for (gid_t id; fields >> id;) ids.push_back(id);
    // "Gid:" lists real, effective, saved and file-system gids; only the last counts here.
    if (key == "Gid:" && ids.size() == 4 && ids[3] == gid) return true;
    if (key == "Groups:" && std::find(ids.begin(), ids.end(), gid) != ids.end()) return true;
  }
  return false;
}

void ActingAsCaller::Restore() {
  umask(0);
  // A thread that could not return to root's credentials would serve later requests as an app:
  // there is no safe way on, so stop.
  if (!SetFsuid(geteuid()) || !SetFsgid(getegid())) abort();
  if (groups_set_) {
    const std::vector<gid_t>& own = DaemonGroups();
    if (syscall(SYS_setgroups, own.size(), own.data()) != 0) abort();
  }
}

}  // namespace scopedfs::daemon
