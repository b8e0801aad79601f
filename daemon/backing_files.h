// Passthrough backing files: which opens of a node get kernel passthrough, and the one backing id
// per node that all of them share (the kernel allows one backing file per inode). Every open of a
// node must agree: the kernel answers a mix of passthrough and userspace opens with EIO, so a node
// with userspace opens never starts passthrough, and the reverse.
#ifndef SCOPEDFS_DAEMON_BACKING_FILES_H_
#define SCOPEDFS_DAEMON_BACKING_FILES_H_

#include <atomic>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/node_table.h"
#include "daemon/stats.h"

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

class BackingFiles {
 public:
  // `wanted`: passthrough was asked for (--passthrough). `stats` (may be null) counts the
  // registered backing ids.
  BackingFiles(bool wanted, Stats* stats) : wanted_(wanted), stats_(stats) {}
  void set_source(BackingIdSource* source) { source_.store(source); }

  // Whether new opens may get passthrough at all.
  bool active() const;
  // For an open of `node` through the lower fd `fd`: the backing id to hand the kernel, or -1 to
  // serve this open in userspace (*userspace is set accordingly). Each call is undone by one
  // Detach with the same answer.
  int Attach(Node& node, int fd, bool* userspace);
  void Detach(Node& node, bool passthrough);

 private:
  const bool wanted_;
  Stats* const stats_;
  std::atomic<BackingIdSource*> source_{nullptr};
  std::atomic<bool> warned_{false};
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_BACKING_FILES_H_
