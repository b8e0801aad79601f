// Sends the kernel its cache invalidations from a thread of its own, never from a FUSE worker.
// An invalidation can wait in the kernel for a page lock held by a READ that itself waits for a
// worker; sent from a worker, it could leave every worker waiting so (libfuse's notes on
// fuse_lowlevel_notify_inval_inode, and MediaProvider, send them from another thread for this).
// The one exception, InvalidateAttributes, touches no page and is sent by the caller itself.
#ifndef SCOPEDFS_DAEMON_KERNEL_KERNEL_NOTIFIER_H_
#define SCOPEDFS_DAEMON_KERNEL_KERNEL_NOTIFIER_H_

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <cstdint>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace scopedfs::daemon {

class KernelNotifier {
 public:
  explicit KernelNotifier(fuse_session* se);
  ~KernelNotifier();  // Stop()
  KernelNotifier(const KernelNotifier&) = delete;
  KernelNotifier& operator=(const KernelNotifier&) = delete;

  // Queues an invalidation of the node's whole page cache (and attributes). Never blocks on the
  // kernel; a node already queued is not queued twice, so the queue holds at most one entry per
  // node.
  void InvalidateInode(uint64_t node) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the node's attributes from the kernel's cache now, from the calling thread (a FUSE
  // worker may call it before its reply): an invalidation of attributes only (a negative offset)
  // touches no page, so it waits for no page lock and no request (fs/fuse/inode.c
  // fuse_reverse_inval_inode: it raises the inode's attr_version and marks its attributes
  // stale). The raised attr_version also makes the kernel discard the attributes of a LOOKUP or
  // GETATTR reply that was asked before and arrives after (fuse_change_attributes), so one sent
  // after a change leaves no stale attributes behind. A node the kernel does not hold is nothing
  // to do. Nothing is sent once Stop has begun.
  void InvalidateAttributes(uint64_t node) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues an invalidation of the kernel's dentry `name` in the directory node `parent` (a name
  // the kernel may hold for an object that a request under another spelling of it removed or
  // moved: case_names.h). Queued once per (parent, name), as InvalidateInode.
  void InvalidateEntry(uint64_t parent, std::string name) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the thread once the invalidation it is sending, if any, is done; what is queued and what
  // comes later is dropped (the workers are gone by then, and the mount with them). Call before
  // the session goes away. One invalidation in flight when the workers stop can still wait for
  // a READ that is never answered: the only hang left, at shutdown, in that window.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  bool Ready() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queued_.empty() || !queued_entries_.empty();
  }

  fuse_session* se_;
  mutable absl::Mutex mu_;  // a leaf; never held while the kernel is told
  absl::flat_hash_set<uint64_t> queued_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::pair<uint64_t, std::string>> queued_entries_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_KERNEL_KERNEL_NOTIFIER_H_
