// Acting as the caller for the lower operation that makes a new object, under POSIX semantics:
// the worker thread takes the caller's fsuid, fsgid and umask, so the lower filesystem itself
// decides the new object's owner, its group (set-gid directories) and which mode bits survive
// (umask, default ACLs), exactly as it would for the caller natively.
#ifndef SCOPEDFS_DAEMON_JUDGE_CALLER_CREDS_H_
#define SCOPEDFS_DAEMON_JUDGE_CALLER_CREDS_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <vector>

namespace scopedfs::daemon {

// Switches only the calling thread (raw syscalls) and switches back when destroyed. While the
// fsuid is not 0 the kernel drops the file-system capabilities from the thread's effective set
// and restores them with fsuid 0. Three are raised again: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
// and CAP_FSETID. The kernel has already checked the caller's right to make the object, with
// its full credentials (default_permissions: search and write on the directory; set-gid bits the
// caller may not set are already gone from the mode), so the lower filesystem must neither check
// again with credentials that lack the caller's supplementary groups nor strip more. CAP_CHOWN,
// CAP_FOWNER and CAP_MKNOD stay dropped. Resolve everything the daemon needs root for before
// constructing one.
class ActingAsCaller {
 public:
  // `umask` is applied to the operation too: the thread gets its own umask (unshare(CLONE_FS),
  // once per thread), which is 0 again afterwards, so the lower filesystem applies the caller's
  // umask, or a directory's default ACL instead, as it would natively.
  ActingAsCaller(uid_t uid, gid_t gid, mode_t umask);
  ~ActingAsCaller();
  ActingAsCaller(const ActingAsCaller&) = delete;
  ActingAsCaller& operator=(const ActingAsCaller&) = delete;

  // 0, or the errno of the switch that failed (the thread is then back to the daemon's own).
  int error() const { return error_; }

 private:
  void Restore();
  int error_ = 0;
  mode_t umask_ = 0;       // set for the operation (0: the thread's own, left alone)
  bool switched_ = false;  // the fs ids were switched (a caller with other ids than the daemon's)
};

// Whether process `pid` is in group `gid` (its fsgid or a supplementary group), from
// /proc/<pid>/status. False if that cannot be read.
bool ProcessInGroup(pid_t pid, gid_t gid);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_CALLER_CREDS_H_
