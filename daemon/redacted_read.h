// The redacted read path: what a reader of a redacted view gets for a byte range of the lower
// file. Every location range any parser finds in the file's current version is filled (zero, or
// space inside XMP); a file that cannot be vouched for gets the scan's fallback filled too, and a
// file whose bytes cannot be read at all is filled whole (policy::RedactedFills, in
// media/location, decides which bytes; scopedfsctl explain/scan show the same). The fills and the
// bytes always come from one version of the file.
#ifndef SCOPEDFS_DAEMON_REDACTED_READ_H_
#define SCOPEDFS_DAEMON_REDACTED_READ_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "daemon/facts_cache.h"
#include "daemon/node_table.h"
#include "media/location/location.h"

namespace scopedfs::daemon {

using FillPlan = std::shared_ptr<const std::vector<policy::FillRange>>;

// The fills for a file, remembered for the version they were made for (one per open handle).
class RedactionPlan {
 public:
  // The fills for the lower file `node_fd` (O_PATH) as `st` describes it.
  FillPlan For(FactsCache& facts, int node_fd, const struct stat& st) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  FileVersion version_ ABSL_GUARDED_BY(mu_);
  FillPlan fills_ ABSL_GUARDED_BY(mu_);
};

// Reads [off, off + size) through `fd` (an open fd of the lower file `node_fd`) with the fills
// applied. Writes change the version before they copy data, so a version unchanged after the read
// means the bytes belong to the plan's version; otherwise the plan is remade and the read
// repeated. If the file keeps changing, zeros are answered rather than bytes no plan was made
// for. Returns 0 or an errno; *got is the number of bytes in `buf`.
int ReadRedacted(FactsCache& facts, int node_fd, int fd, RedactionPlan* plan, size_t size,
                 off_t off, char* buf, size_t* got);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_REDACTED_READ_H_
