// MountLikeVold (see vold_mount.h). The facts are vold's; the code is ours.
#include "tests/vold_mount.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace scopedfs::tests {

std::string VoldMountData(int fd) {
  return absl::StrCat("fd=", fd, ",rootmode=40000,allow_other,user_id=0,group_id=0");
}

absl::StatusOr<int> MountLikeVold(const std::string& mountpoint) {
  int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("open /dev/fuse: ", strerror(errno)));
  }
  if (mount("/dev/fuse", mountpoint.c_str(), "fuse", kVoldMountFlags, VoldMountData(fd).c_str()) !=
      0) {
    int err = errno;
    close(fd);
    return absl::ErrnoToStatus(
        err, absl::StrCat("mount /dev/fuse on ", mountpoint, " as vold: ", strerror(err)));
  }
  return fd;
}

}  // namespace scopedfs::tests
