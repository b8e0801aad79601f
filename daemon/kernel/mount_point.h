// The state of scopedfsd's mount point before it mounts. IsMountRoot: whether something is mounted
// on a directory (scopedfsd refuses to mount over a busy mount point, since that would hide what is
// there), asked of the kernel with statx. DetachDeadFuseMount: the FUSE mount a killed daemon left
// behind (every call on it fails ENOTCONN), which a restarted daemon replaces; it needs the mount
// table to tell that a FUSE mount is there, so it reads /proc/self/mountinfo and undoes its octal
// escapes (\040 for a space) before comparing paths.
#ifndef SCOPEDFS_DAEMON_KERNEL_MOUNT_POINT_H_
#define SCOPEDFS_DAEMON_KERNEL_MOUNT_POINT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopedfs::daemon {

// True if `path` (symlinks followed, as mount(2) follows them) is the root of a mount: "/", or a
// directory something is mounted on. Errors carry the code absl::ErrnoToStatus gives statx's errno
// (NotFound if `path` does not exist); Unimplemented if the kernel does not report
// STATX_ATTR_MOUNT_ROOT (before Linux 5.8).
absl::StatusOr<bool> IsMountRoot(const std::string& path);

// One line of /proc/self/mountinfo, paths unescaped.
struct MountInfoEntry {
  int mount_id = 0;
  std::string mount_point;
  std::string fstype;  // "fuse.scopedfs", "tmpfs", ...
  std::string source;
};

// Parses the text of a mountinfo file (proc(5)). Lines that do not parse are skipped.
std::vector<MountInfoEntry> ParseMountInfo(absl::string_view text);

// If `path` is the root of a FUSE mount whose daemon is gone (statx of `path` fails ENOTCONN and
// the topmost mount /proc/self/mountinfo lists there is "fuse", "fuse.*" or "fuseblk"), detaches it
// with umount2(MNT_DETACH), repeatedly if dead mounts are stacked there (at most 16), and returns
// one line per mount saying what was found and done, for the daemon's log. Returns "" and changes
// nothing if statx of `path` does not fail ENOTCONN: a live mount, a plain directory and a missing
// path are all left to the caller's own checks. Errors: FailedPrecondition if `path` answers
// ENOTCONN but the mount table shows no FUSE mount there (naming what it shows), or if dead mounts
// are still there after 16 detaches; the errno code of umount2 or of resolving the parent
// directory otherwise.
absl::StatusOr<std::string> DetachDeadFuseMount(const std::string& path);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_KERNEL_MOUNT_POINT_H_
