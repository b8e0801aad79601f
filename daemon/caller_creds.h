// Acting as the caller for the lower operation that makes a new object, under POSIX semantics:
// the worker thread takes the caller's fsuid, fsgid and supplementary groups, so the lower
// filesystem itself decides the new object's owner, its group (set-gid directories), and which
// mode bits survive, exactly as it would for the caller natively.
#ifndef SCOPEDFS_DAEMON_CALLER_CREDS_H_
#define SCOPEDFS_DAEMON_CALLER_CREDS_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <vector>

namespace scopedfs::daemon {

// Switches only the calling thread (raw syscalls: glibc would broadcast setgroups to every thread)
// and switches back when destroyed. While the fsuid is not 0 the kernel drops the file-system
// capabilities (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_MKNOD, ...) from the
// thread's effective set and restores them with fsuid 0, so nothing of root's leaks into the
// caller's operation. Resolve everything the daemon needs root for before constructing one.
class ActingAsCaller {
 public:
  // `umask` is applied to the operation too: the thread gets its own umask (unshare(CLONE_FS),
  // once per thread), which is 0 again afterwards, so the lower filesystem applies the caller's
  // umask, or a directory's default ACL instead, as it would natively.
  ActingAsCaller(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, mode_t umask);
  ~ActingAsCaller();
  ActingAsCaller(const ActingAsCaller&) = delete;
  ActingAsCaller& operator=(const ActingAsCaller&) = delete;

  // 0, or the errno of the switch that failed (the thread is then back to the daemon's own).
  int error() const { return error_; }

 private:
  void Restore();
  int error_ = 0;
  bool groups_set_ = false;
};

// Whether process `pid` is in group `gid` (its fsgid or a supplementary group), from
// /proc/<pid>/status. False if that cannot be read.
bool ProcessInGroup(pid_t pid, gid_t gid);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_CALLER_CREDS_H_
