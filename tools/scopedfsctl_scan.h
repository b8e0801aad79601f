// scopedfsctl scan: the location metadata of media files, as the daemon's scan finds it, and
// optionally the copies a redacted reader would get.
#ifndef SCOPEDFS_TOOLS_SCOPEDFSCTL_SCAN_H_
#define SCOPEDFS_TOOLS_SCOPEDFSCTL_SCAN_H_

#include "absl/types/span.h"

namespace scopedfs::policy::ctl {

// scan FILE...: one block per file; exit 1 if any file could not be scanned or copied.
int ScanCommand(absl::Span<char* const> files);

}  // namespace scopedfs::policy::ctl

#endif  // SCOPEDFS_TOOLS_SCOPEDFSCTL_SCAN_H_
