// Passthrough backing files (see backing_files.h).
#include "daemon/backing_files.h"

#include <cstdio>

namespace scopedfs::daemon {

bool BackingFiles::active() const {
  BackingIdSource* source = source_.load();
  return wanted_ && source != nullptr && source->passthrough_enabled();
}

int BackingFiles::Attach(Node& node, int fd, bool* userspace) {
  absl::MutexLock lock(&node.backing_mu);
  *userspace = false;
  if (node.backing_refs > 0) {
    ++node.backing_refs;
    return node.backing_id;
  }
  if (!active() || node.cached_opens > 0) {
    ++node.cached_opens;
    *userspace = true;
    return -1;
  }
  absl::StatusOr<int> id = source_.load()->BackingOpen(fd);
  if (!id.ok()) {
    if (!warned_.exchange(true)) {
      fprintf(stderr,
              "scopedfsd: passthrough unavailable, serving reads and writes in userspace: %s\n",
              std::string(id.status().message()).c_str());
    }
    ++node.cached_opens;
    *userspace = true;
    return -1;
  }
  node.backing_id = *id;
  node.backing_refs = 1;
  if (stats_ != nullptr) stats_->backing_files.fetch_add(1);
  return *id;
}

void BackingFiles::Detach(Node& node, bool passthrough) {
  absl::MutexLock lock(&node.backing_mu);
  if (!passthrough) {
    --node.cached_opens;
    return;
  }
  if (--node.backing_refs == 0) {
    BackingIdSource* source = source_.load();
    if (source != nullptr) source->BackingClose(node.backing_id).IgnoreError();
    node.backing_id = -1;
    if (stats_ != nullptr) stats_->backing_files.fetch_sub(1);
  }
}

}  // namespace scopedfs::daemon
