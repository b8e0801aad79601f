// One budget per app for everything the daemon holds on its behalf: file descriptors (open files
// and directories, lock descriptions, queued lock waits), counted in fd units; memory (redaction
// plans), counted in bytes; and queued lock waits, counted in waits. Sized from the daemon's real
// fd limit, so that no set of apps together can take the fds the daemon, root and the system uids
// need.
#ifndef SCOPEDFS_DAEMON_TABLES_APP_BUDGET_H_
#define SCOPEDFS_DAEMON_TABLES_APP_BUDGET_H_

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace scopedfs::daemon {

class AppBudget {
 public:
  // What a budget counts: fd units, bytes of plan memory, or queued lock waits. Each is its own
  // pool (a queued wait takes one unit of kFds and one of kLockWaits).
  enum Resource : size_t { kFds = 0, kBytes = 1, kLockWaits = 2 };
  static constexpr size_t kResources = 3;

  // Lock waits: each is a reply the daemon owes, and over io_uring a ring entry with a buffer of
  // the mount's largest request until it is answered, so the pool is small and fixed
  // (file_locks.h, uring_transport.h). Once only kLockWaitsReserve are free, only apps holding
  // fewer than kLockWaitsFloor may queue more: three apps at their limit leave 16 waits, two for
  // each of eight more apps, and no set of fewer than eleven apps can empty the pool.
  static constexpr uint64_t kLockWaitsTotal = 64;
  static constexpr uint64_t kLockWaitsPerApp = 16;
  static constexpr uint64_t kLockWaitsFloor = 2;
  static constexpr uint64_t kLockWaitsReserve = 16;

  // How much of one resource the apps may hold.
  struct Pool {
    uint64_t total = 0;      // all apps together
    uint64_t per_app = 0;    // one app
    uint64_t floor = 0;      // what any app may still take once the pool runs low
    uint64_t low_water = 0;  // free units below which only apps under `floor` are served
  };
  struct Limits {
    Pool fds;
    Pool bytes;  // no floor: memory is refused at the pool's end alike for every app
    Pool lock_waits = {kLockWaitsTotal, kLockWaitsPerApp, kLockWaitsFloor, kLockWaitsReserve};
    const Pool& of(Resource r) const { return r == kFds ? fds : r == kBytes ? bytes : lock_waits; }
  };

  // How much of one resource the apps hold now: all of them together, the most any one app
  // holds, and how many apps hold any (`scopedfsctl stats`).
  struct Use {
    uint64_t held = 0;
    uint64_t most_by_one_app = 0;
    uint64_t apps = 0;
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

  // Takes `n` units of `r` for the app `uid`: true, or false past its budget or the pool's (and
  // then nothing is taken). Every successful take is given back exactly once.
  bool Take(Resource r, uid_t uid, uint64_t n = 1) ABSL_LOCKS_EXCLUDED(mu_);
  void Release(Resource r, uid_t uid, uint64_t n = 1) ABSL_LOCKS_EXCLUDED(mu_);

  const Limits& limits() const { return limits_; }
  // What all apps together, or the app `uid`, hold of `r`.
  uint64_t held(Resource r) const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t held(Resource r, uid_t uid) const ABSL_LOCKS_EXCLUDED(mu_);
  // One pass over the apps that hold anything: for the stats, not for a request's path.
  Use use(Resource r) const ABSL_LOCKS_EXCLUDED(mu_);
  // How many apps hold anything of any resource.
  size_t apps() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using Counts = std::array<uint64_t, kResources>;

  const Limits limits_;
  // A leaf lock: nothing is called while it is held.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uid_t, Counts> held_ ABSL_GUARDED_BY(mu_);  // no all-zero entries
  Counts total_ ABSL_GUARDED_BY(mu_) = {};
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_APP_BUDGET_H_
