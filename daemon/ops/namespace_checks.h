// The checks of the namespace ops (namespace_checks.cc): free names in any case, the layout's
// move rules, no gain of any operation for any app, and how long they wait for a scan. Private to
// daemon/ops.
#ifndef SCOPEDFS_DAEMON_OPS_NAMESPACE_CHECKS_H_
#define SCOPEDFS_DAEMON_OPS_NAMESPACE_CHECKS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/judge/file_info.h"
#include "daemon/judge/request_context.h"
#include "daemon/ops/filesystem.h"
#include "daemon/ops/resolve.h"

namespace scopedfs::daemon {

// Scans and the locks others wait for (scan_queue.h). The kernel holds a directory's lock while
// it asks LOOKUP, READDIR(PLUS) and the namespace ops there, so those wait at most this long for a
// location scan (filesystem.cc sets it per op); other ops wait for theirs. Under the namespace
// lock nothing waits (NoScanWait): a rename or link whose checks met a file not scanned yet
// returns kFactsNotCurrent before changing anything, and is retried with the lock released.
inline constexpr absl::Duration kDirLockedScanWait = absl::Milliseconds(20);
inline constexpr absl::Duration kRequestScanWait = absl::Seconds(30);
inline constexpr int kFactsNotCurrent = -1;  // never an errno

inline constexpr int kMaxRenameCheckEntries = 4096;

// For create/mkdir/symlink/mknod/link targets: 0 if `name` is free in `parent`, in any case
// (LowerName), EEXIST-worthy (*exists_visible) if it or a case variant exists and the caller sees
// it, EACCES if what exists is hidden from the caller (never revealed by EEXIST), EMFILE if the
// directory is too large to vouch for. *real: the lower spelling of what exists, else `name`.
int CheckFreeName(Filesystem* fs, const RequestContext& ctx, const Resolved& parent,
                  const char* name, bool* exists_visible, std::string* real = nullptr);
// A directory move's tree, judged outside the namespace lock (PrecheckTreeMove) while the names
// it depends on were those of `generation` (Filesystem::namespace_generation).
struct TreeVerdict {
  bool valid = false;
  uint64_t generation = 0;
  std::string from, to;
  int err = 0;
};
void PrecheckTreeMove(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent,
                      const char* name, fuse_ino_t newparent, const char* newname,
                      TreeVerdict* verdict);
int CheckNoGain(Filesystem* fs, const RequestContext& ctx, const std::string& from,
                const FileInfo& info, const std::string& to, absl::string_view to_name, mode_t type,
                int fd, const TreeVerdict* tree = nullptr);
int CheckLayoutMove(const RequestContext& ctx, const std::string& from, const std::string& to);
int CheckPlace(Filesystem* fs, const RequestContext& ctx, const Resolved& parent, const char* name,
               bool directory, const FileInfo& moving, bool exchange, unsigned int flags);
void WarmRenameFacts(Filesystem* fs, fuse_ino_t parent, const char* name);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_NAMESPACE_CHECKS_H_
