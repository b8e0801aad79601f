// IsMountRoot (see mount_point.h).
#include "daemon/mount_point.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace scopedfs::daemon {

absl::StatusOr<bool> IsMountRoot(const std::string& path) {
  struct statx stx = {};
  // No attributes are needed from the mask: stx_attributes is filled whatever is asked for.
  if (statx(AT_FDCWD, path.c_str(), 0, 0, &stx) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("statx ", path));
  }
  // A kernel that does not know the attribute leaves its bit clear in stx_attributes too, which
  // would read as "not a mount point": that must be an error, not a yes-to-mount.
  if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) == 0) {
    return absl::UnimplementedError(absl::StrCat(
        "statx ", path, ": the kernel does not report STATX_ATTR_MOUNT_ROOT (needs Linux 5.8)"));
  }
  return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

}  // namespace scopedfs::daemon
