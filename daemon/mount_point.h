// Whether something is mounted on a directory: scopedfsd refuses to mount over a busy mount
// point, since that would hide what is there. Asked of the kernel with statx, not by parsing
// /proc/self/mountinfo, whose escaped paths (\040 for a space) a field split gets wrong.
#ifndef SCOPEDFS_DAEMON_MOUNT_POINT_H_
#define SCOPEDFS_DAEMON_MOUNT_POINT_H_

#include <string>

#include "absl/status/statusor.h"

namespace scopedfs::daemon {

// True if `path` (symlinks followed, as mount(2) follows them) is the root of a mount: "/", or a
// directory something is mounted on. Errors carry the code absl::ErrnoToStatus gives statx's errno
// (NotFound if `path` does not exist); Unimplemented if the kernel does not report
// STATX_ATTR_MOUNT_ROOT (before Linux 5.8).
absl::StatusOr<bool> IsMountRoot(const std::string& path);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_MOUNT_POINT_H_
