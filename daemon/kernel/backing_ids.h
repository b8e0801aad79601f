// The kernel's passthrough backing ids, as the layers above see them: the FUSE session registers
// a file with FUSE_DEV_IOC_BACKING_OPEN and closes the id with BACKING_CLOSE; tests use a fake.
#ifndef SCOPEDFS_DAEMON_KERNEL_BACKING_IDS_H_
#define SCOPEDFS_DAEMON_KERNEL_BACKING_IDS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace scopedfs::daemon {

// Registers backing files with the kernel (the FUSE session; a fake in tests).
class BackingIdSource {
 public:
  virtual ~BackingIdSource() = default;
  // Whether the kernel accepted passthrough at INIT.
  virtual bool passthrough_enabled() const = 0;
  virtual absl::StatusOr<int> BackingOpen(int fd) = 0;
  virtual absl::Status BackingClose(int backing_id) = 0;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_KERNEL_BACKING_IDS_H_
