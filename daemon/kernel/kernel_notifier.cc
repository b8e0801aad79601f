// The invalidation thread (see kernel_notifier.h).
#include "daemon/kernel/kernel_notifier.h"

#include <pthread.h>

#include <utility>
#include <vector>

#include "base/signals.h"

namespace scopedfs::daemon {

KernelNotifier::KernelNotifier(fuse_session* se) : se_(se) {
  base::NoTerminationSignals no_signals;  // base/signals.h
  thread_ = std::thread([this] { Run(); });
}

KernelNotifier::~KernelNotifier() { Stop(); }

void KernelNotifier::InvalidateInode(uint64_t node) {
  absl::MutexLock lock(&mu_);
  if (!stopping_) queued_.insert(node);
}

void KernelNotifier::InvalidateAttributes(uint64_t node) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
  }
  fuse_lowlevel_notify_inval_inode(se_, node, -1, 0);
}

void KernelNotifier::InvalidateEntry(uint64_t parent, std::string name) {
  absl::MutexLock lock(&mu_);
  if (!stopping_) queued_entries_.emplace(parent, std::move(name));
}

void KernelNotifier::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void KernelNotifier::Run() {
  pthread_setname_np(pthread_self(), "sfs-notify");  // named for ps -T and the tests
  for (;;) {
    std::vector<uint64_t> batch;
    std::vector<std::pair<uint64_t, std::string>> entries;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &KernelNotifier::Ready));
      // Nothing is sent once the workers are gone: an invalidation could wait for a page whose
      // READ no worker will ever answer, and the daemon would never exit.
      if (stopping_) return;
      batch.assign(queued_.begin(), queued_.end());
      queued_.clear();
      entries.assign(queued_entries_.begin(), queued_entries_.end());
      queued_entries_.clear();
    }
    // A dentry the kernel does not hold answers ENOENT: nothing to do either.
    for (const auto& [parent, name] : entries) {
      fuse_lowlevel_notify_inval_entry(se_, parent, name.data(), name.size());
    }
    // Offset 0, length 0: the whole page cache. A node the kernel has forgotten answers ENOENT,
    // which is nothing to do.
    for (uint64_t node : batch) fuse_lowlevel_notify_inval_inode(se_, node, 0, 0);
  }
}

}  // namespace scopedfs::daemon
