// scopedfsctl repair: makes fstab users whole after a daemon was killed. Its FUSE mount stays in
// the mount table, dead (every call ENOTCONN), so `mount -a` skips its line; repair detaches each
// dead scopedfs mount and mounts it again with mount(8), which reads the fstab line and starts a
// new daemon through the mount helper.
#ifndef SCOPEDFS_TOOLS_SCOPEDFSCTL_REPAIR_H_
#define SCOPEDFS_TOOLS_SCOPEDFSCTL_REPAIR_H_

#include <string>

#include "absl/status/statusor.h"

namespace scopedfs::policy::ctl {

// repair [--mount=DIR] [--fstab=FILE] [--detach_only]: every dead fuse.scopedfs mount (or DIR's
// dead FUSE mount) detached and mounted again with `mount [-T FILE] DIR`. Prints one line per
// mount found dead and what became of it; 0 if every one serves again (or none was dead), 1 if
// one could not be detached or mounted again.
int RepairCommand();

// `--mount=DIR` as the daemon names its control socket: the real path, or, on a dead mount
// (whose root cannot be resolved), its parent's real path and its own name.
std::string ResolvedMountFlag(const std::string& dir);

}  // namespace scopedfs::policy::ctl

#endif  // SCOPEDFS_TOOLS_SCOPEDFSCTL_REPAIR_H_
