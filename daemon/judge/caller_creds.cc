// Per-thread caller credentials (see caller_creds.h).
#include "daemon/judge/caller_creds.h"

#include <grp.h>
#include <linux/capability.h>
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

// The daemon's own ids, which a worker thread's fs ids are between operations (Restore aborts
// otherwise). Read once: the daemon never changes them while it serves.
uid_t DaemonUid() {
  static const uid_t id = geteuid();
  return id;
}
gid_t DaemonGid() {
  static const gid_t id = getegid();
  return id;
}

// setfsuid/setfsgid report the previous id, never an error: the id is read back (-1 only reads
// it) to know. The thread's ids before are the daemon's (above), so an id it has already (a root
// caller of a root daemon) is not set again: setting one makes the thread a new set of
// credentials (allocated, and freed after an RCU grace period) even when the id is the same.
bool SetFsuid(uid_t uid) {
  syscall(SYS_setfsuid, uid);
  return static_cast<uid_t>(syscall(SYS_setfsuid, static_cast<uid_t>(-1))) == uid;
}

bool SetFsgid(gid_t gid) {
  syscall(SYS_setfsgid, gid);
  return static_cast<gid_t>(syscall(SYS_setfsgid, static_cast<gid_t>(-1))) == gid;
}

// Gives the calling thread its own umask, apart from the other threads', and makes it 0: the
// umask it has between operations (ActingAsCaller sets a caller's for one and puts 0 back).
bool OwnUmask() {
  thread_local bool own = [] {
    if (unshare(CLONE_FS) != 0) return false;
    umask(0);
    return true;
  }();
  return own;
}

// Raises the capabilities ActingAsCaller keeps (see caller_creds.h) in the thread's effective set.
bool RaiseKeptCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  bool missing = false;
  for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FSETID}) {
    __u32 add = CAP_TO_MASK(cap) & data[CAP_TO_INDEX(cap)].permitted;
    missing = missing || (data[CAP_TO_INDEX(cap)].effective & add) != add;
    data[CAP_TO_INDEX(cap)].effective |= add;
  }
  // With fsuid 0 (a root caller) the kernel never dropped them: capset would only make the
  // thread new credentials that are the same.
  return !missing || syscall(SYS_capset, &header, data) == 0;
}

}  // namespace

ActingAsCaller::ActingAsCaller(uid_t uid, gid_t gid, mode_t mask) {
  if (!OwnUmask()) {
    error_ = EPERM;
    return;
  }
  // The thread's umask is 0 between operations.
  umask_ = mask & 0777;
  if (umask_ != 0) umask(umask_);
  // A caller with the daemon's own ids (root, for a root daemon) needs no switch: the thread's fs
  // ids are those already, and with them it never lost a capability.
  switched_ = uid != DaemonUid() || gid != DaemonGid();
  if (!switched_) return;
  if ((gid != DaemonGid() && !SetFsgid(gid)) || (uid != DaemonUid() && !SetFsuid(uid)) ||
      !RaiseKeptCapabilities()) {
    error_ = EPERM;
    Restore();
  }
}

ActingAsCaller::~ActingAsCaller() {
  if (error_ == 0) Restore();
}

void ActingAsCaller::Restore() {
  if (umask_ != 0) umask(0);
  if (!switched_) return;
  // Back to fsuid 0 the kernel raises every file-system capability again. A thread that could
  // not return to the daemon's credentials would serve later requests as an app: there is no
  // safe way on, so stop.
  if (!SetFsuid(DaemonUid()) || !SetFsgid(DaemonGid())) abort();  // each read back to be sure
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

}  // namespace scopedfs::daemon
