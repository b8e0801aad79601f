// Where the daemon's location scans run: off the FUSE workers, on fewer scan threads than the
// machine has cores, one scan at a time per app, apps served in turn. Each app has a line of the
// scans its requests wait for. A version is scanned once however many ask, and a scan several
// apps ask for stands in each of their lines and runs at the first of their turns, charged to the
// app whose turn it is: so one app's expensive files queue behind each other and can take neither
// the CPU, nor the workers, nor the place of a scan another app's request is waiting for. Requests
// wait for a scan only as long as their ScanWait allows; what is not scanned by then is answered
// as uncertain (facts_cache.h).
#ifndef SCOPEDFS_DAEMON_JUDGE_SCAN_QUEUE_H_
#define SCOPEDFS_DAEMON_JUDGE_SCAN_QUEUE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/observe/stats.h"
#include "media/location/location.h"

namespace scopedfs::daemon {

// How long the request running on this thread may wait for a location scan, and on whose behalf
// the scans it starts run. Scopes nest; without one, FactsCache scans inline (tools, unit tests).
class ScanWait {
 public:
  ScanWait(uid_t app, absl::Duration wait);
  ~ScanWait();
  ScanWait(const ScanWait&) = delete;
  ScanWait& operator=(const ScanWait&) = delete;

  static ScanWait* Current();
  uid_t app() const { return app_; }
  absl::Time deadline() const { return deadline_; }
  // A scan this request needed was not done in time: its answer was the uncertain one.
  bool missed() const { return missed_; }
  void NoteMissed() { missed_ = true; }

 private:
  friend class NoScanWait;
  uid_t app_;
  absl::Time deadline_;
  bool missed_ = false;
  ScanWait* outer_;
};

// While held, the current request waits for no scan (it holds a lock other apps need); the scans
// it asks for are still queued, so a retry after the lock is released finds them done.
class NoScanWait {
 public:
  NoScanWait();
  ~NoScanWait();
  NoScanWait(const NoScanWait&) = delete;
  NoScanWait& operator=(const NoScanWait&) = delete;
  // Whether a scan was needed, and not current, since this guard was taken.
  bool missed() const;

 private:
  std::unique_ptr<ScanWait> own_;  // when the request had no scope of its own
  ScanWait* scope_;
  absl::Time saved_deadline_;
  bool saved_missed_;
};

// Marks this thread as holding the daemon's namespace lock, which every create, rename and removal
// needs, for the guard's lifetime. Kept apart from NoScanWait, which is what keeps such a thread
// from waiting: a scan waited for while marked is counted (FactsCache, the stats'
// scan_waits_locked), so a lock section that lost its NoScanWait shows in the count.
class NamespaceLockHeld {
 public:
  NamespaceLockHeld();
  ~NamespaceLockHeld();
  NamespaceLockHeld(const NamespaceLockHeld&) = delete;
  NamespaceLockHeld& operator=(const NamespaceLockHeld&) = delete;
  static bool Current();
};

class ScanQueue {
 public:
  using Scan = std::shared_ptr<const media::LocationScan>;
  // One file version's scan: its identity and, once done, its result.
  // One version of one lower object (object_id.h: `generation` tells apart the objects that
  // had one inode number).
  struct Key {
    dev_t dev;
    ino_t ino;
    int64_t size, mtime_ns, ctime_ns;
    uint64_t generation = 0;
    bool operator==(const Key& o) const {
      return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns &&
             ctime_ns == o.ctime_ns && generation == o.generation;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.dev, k.ino, k.size, k.mtime_ns, k.ctime_ns, k.generation);
    }
  };
  struct Job;

  // Bounds. Per app: queued scans (an fd each) and requests waiting on a worker. In all: scans
  // queued, and waiting workers (the daemon passes all of its workers but one), so that scans
  // never hold every worker whatever the number of apps.
  static constexpr size_t kMaxQueuedPerApp = 8;
  static constexpr size_t kMaxQueued = 256;
  static constexpr int kMaxWaitersPerApp = 2;
  static constexpr int kMaxWaiters = 4;

  // `threads` scan threads (at least one); at most `max_waiters` requests wait at once.
  // `stats` (may be null) counts joins and passed_over() (scan_joins,
  // scan_waits_behind_other_app).
  explicit ScanQueue(int threads, int max_waiters = kMaxWaiters, Stats* stats = nullptr);
  ~ScanQueue();  // ends the threads; queued scans are abandoned (their waiters get no result)
  ScanQueue(const ScanQueue&) = delete;
  ScanQueue& operator=(const ScanQueue&) = delete;

  // Scan threads for this machine: one fewer than its cores, at least one.
  static int DefaultThreads();

  // Queues `scan` for `key` in `app`'s line, or joins the job pending for `key` already: a job
  // not started yet then stands in `app`'s line too (at its end), and runs at the first turn of
  // any app whose line holds it. Null when the app (or everyone) has too many scans of its own
  // queued; joining is never refused (it costs no fd, and a line holds a job at most once).
  std::shared_ptr<Job> Submit(uid_t app, const Key& key, std::function<Scan()> scan)
      ABSL_LOCKS_EXCLUDED(mu_);
  // How a Wait went, beyond its result: whether the caller waited at all, and whether it did not
  // because the waiter bounds were reached (the job not done, the deadline still ahead).
  struct WaitOutcome {
    bool waited = false;
    bool over_bounds = false;
  };
  // Waits for `job` until `deadline`, as one of `app`'s waiting workers. Returns whether it is
  // done, and then its result in *out (null if abandoned). Past the waiter bounds it does not
  // wait at all.
  bool Wait(uid_t app, Job* job, absl::Time deadline, Scan* out, WaitOutcome* how = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Scans run so far (for tests and stats).
  uint64_t completed() const ABSL_LOCKS_EXCLUDED(mu_);
  // Scans started from one app's line while a request of another app waited for a scan queued
  // behind them there and in no line of its own: its wait was spent on work another app queued.
  // Each such (scan, waiting app) counts once. Zero by construction (Submit); kept as a check.
  uint64_t passed_over() const ABSL_LOCKS_EXCLUDED(mu_);
  // Requests waiting in Wait now (for tests: a handshake instead of a sleep), and the most that
  // ever waited at once.
  int waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  int most_waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  // Scans queued or running now.
  size_t pending() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  bool Runnable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `app`'s next job out of every line that holds it.
  std::shared_ptr<Job> TakeNext(uid_t app) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts, for the job about to start from `app`'s line, the requests of other apps it passes.
  void CountPassedOver(uid_t app) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;  // a leaf: scans run without it
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Each app's line: the jobs not started yet that its requests asked for, its own and those it
  // joined. A job stands in every line that asked for it until one of them starts it.
  absl::flat_hash_map<uid_t, std::deque<std::shared_ptr<Job>>> queued_ ABSL_GUARDED_BY(mu_);
  // Apps with a non-empty line and no scan running for them, next first.
  std::deque<uid_t> turn_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<uid_t> running_ ABSL_GUARDED_BY(mu_);  // apps whose turn is being scanned
  absl::flat_hash_map<Key, std::shared_ptr<Job>> pending_ ABSL_GUARDED_BY(mu_);
  // Jobs queued (not started), in all and by the app that submitted them (their fds).
  size_t queued_total_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uid_t, size_t> owned_ ABSL_GUARDED_BY(mu_);
  uint64_t passed_over_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uid_t, int> waiters_ ABSL_GUARDED_BY(mu_);
  int waiters_total_ ABSL_GUARDED_BY(mu_) = 0;
  int most_waiters_ ABSL_GUARDED_BY(mu_) = 0;
  const int max_waiters_;
  Stats* const stats_;
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_SCAN_QUEUE_H_
