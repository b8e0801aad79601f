// Mounting emulated storage as Android's vold does (system/vold Utils.cpp, MountUserFuse): the
// test opens /dev/fuse itself, mount(2)s it with vold's data and flags, and hands the fd to
// scopedfsd --fuse_fd, as vold hands it to MediaProvider; the test, like vold, unmounts.
#ifndef SCOPEDFS_TESTS_VOLD_MOUNT_H_
#define SCOPEDFS_TESTS_VOLD_MOUNT_H_

#include <sys/mount.h>

#include <string>

#include "absl/status/statusor.h"

namespace scopedfs::tests {

// vold's mount flags. MS_LAZYTIME is vold's too (its mounts show "lazytime" among the super
// options), though the brief of vold's mount usually leaves it out.
inline constexpr unsigned long kVoldMountFlags =
    MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_LAZYTIME;

// vold's mount data for the /dev/fuse fd `fd`: no default_permissions, so the kernel leaves every
// permission question to the daemon.
std::string VoldMountData(int fd);

// Opens /dev/fuse (O_RDWR | O_CLOEXEC, as vold does) and mounts it at `mountpoint` with vold's
// source ("/dev/fuse"), type ("fuse"), flags and data. Returns the fd, which the caller passes to
// the daemon and closes; nothing is left mounted or open on error.
absl::StatusOr<int> MountLikeVold(const std::string& mountpoint);

}  // namespace scopedfs::tests

#endif  // SCOPEDFS_TESTS_VOLD_MOUNT_H_
