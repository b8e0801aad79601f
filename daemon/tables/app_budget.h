// One budget per app for everything the daemon holds on its behalf: file descriptors (open files
// and directories, lock descriptions) and queued lock waits, counted in fd units, and memory
// (redaction plans), counted in bytes. Sized from the daemon's real fd limit, so that no set of
// apps together can take the fds the daemon, root and the system uids need.
#ifndef SCOPEDFS_DAEMON_TABLES_APP_BUDGET_H_
#define SCOPEDFS_DAEMON_TABLES_APP_BUDGET_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace scopedfs::daemon {

class AppBudget {
 public:
  struct Limits {
    size_t fd_pool = 0;      // fd units all apps together may hold
    size_t fds_per_app = 0;  // what one app may hold
    size_t fd_floor = 0;     // what any app may still take once the pool runs low
    size_t low_water = 0;    // free units below which only apps under fd_floor are served
    uint64_t byte_pool = 0;  // plan memory all apps together may hold
    uint64_t bytes_per_app = 0;
  };

  // Limits for a daemon that may open `nofile` fds (RLIMIT_NOFILE's soft limit, after raising):
  // a reserve for the daemon's own fds (a few per worker thread for one request, the fuse device,
  // the control socket) and for root and the system uids, which are never counted; the rest is
  // the apps' pool. One app gets a quarter of it, and once only a quarter is left, only apps that
  // hold little may take more, so many apps at their limit still leave each other app a floor.
  static Limits ForFdLimit(uint64_t nofile);

  explicit AppBudget(const Limits& limits) : limits_(limits) {}
  AppBudget(const AppBudget&) = delete;
  AppBudget& operator=(const AppBudget&) = delete;

  // Takes `n` fd units (or bytes) for the app `uid`: true, or false past its budget or the pool's
  // (and then nothing is taken). Every successful take is given back exactly once.
  bool TakeFds(uid_t uid, size_t n = 1) ABSL_LOCKS_EXCLUDED(mu_);
  void ReleaseFds(uid_t uid, size_t n = 1) ABSL_LOCKS_EXCLUDED(mu_);
  bool TakeBytes(uid_t uid, uint64_t n) ABSL_LOCKS_EXCLUDED(mu_);
  void ReleaseBytes(uid_t uid, uint64_t n) ABSL_LOCKS_EXCLUDED(mu_);

  const Limits& limits() const { return limits_; }
  size_t fds_held() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t fds_held(uid_t uid) const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t bytes_held() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t bytes_held(uid_t uid) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Held {
    size_t fds = 0;
    uint64_t bytes = 0;
  };

  const Limits limits_;
  // A leaf lock: nothing is called while it is held.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uid_t, Held> held_ ABSL_GUARDED_BY(mu_);
  size_t fds_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_APP_BUDGET_H_
