// File locks taken through the mount, held on the lower file, so that they meet the locks of
// processes that use the lower file directly, as locks on the lower filesystem do.
//
// POSIX record locks (fcntl F_SETLK) belong to a lock owner: the kernel's id of the caller's file
// table, the same for all of its fds of a file. Each (lower file, owner) gets an open file
// description of its own on the lower file, and the owner's locks are open-file-description
// locks (F_OFD_SETLK) on it: two owners conflict with each other, and with any POSIX or OFD lock
// taken on the lower file directly, exactly as two processes would. The description goes when
// the owner closes any fd of the file (FLUSH), which is when POSIX releases its locks.
// flock() locks belong to an open file and are taken on that handle's own lower description
// (ops_lock.cc).
//
// A lock that must be waited for (F_SETLKW, flock without LOCK_NB) does not hold a FUSE worker
// thread: it joins a queue that one waiter thread retries every few milliseconds, and is answered
// when granted, when the caller is interrupted (EINTR), or at shutdown (ENOLCK).
//
// Bounded: an app's descriptions and queued waits each take one unit of its budget
// (app_budget.h), with its open files, so no app, and no set of apps, can take the fds the
// daemon and other apps need; past it, ENOLCK, the errno for "no locks available". Root and the
// system uids are not counted against any app; all callers together hold at most kMaxOwners
// descriptions. Waits are bounded by count too: at most kMaxWaitsPerApp per app and kMaxWaiters
// in all. Each unanswered wait is a reply the daemon owes, and over FUSE over io_uring each
// holds a ring entry with a buffer of the mount's largest request (1 MiB) until it is answered,
// so the transport sizes its queues by kMaxWaiters (uring_transport.h). An app's waits are also
// its budget's kLockWaits (app_budget.h): once the pool runs low, only apps holding fewer than
// its floor may queue more, so a few apps at their limit cannot take every wait, and an app with
// none queued still gets one.
#ifndef SCOPEDFS_DAEMON_TABLES_FILE_LOCKS_H_
#define SCOPEDFS_DAEMON_TABLES_FILE_LOCKS_H_

#include <fcntl.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "daemon/tables/app_budget.h"
#include "daemon/tables/object_id.h"

namespace scopedfs::daemon {

class FileLocks {
 public:
  static constexpr size_t kMaxOwners = 4096;
  static constexpr size_t kMaxWaiters = AppBudget::kLockWaitsTotal;
  static constexpr size_t kMaxWaitsPerApp = AppBudget::kLockWaitsPerApp;

  // A lower file.
  // The lower object (object_id.h): a lock on a removed file never blocks the next file to get
  // its number.
  using FileKey = ObjectId;

  // `budget` (may be null: nothing is counted per app) must outlive this.
  explicit FileLocks(AppBudget* budget = nullptr) : budget_(budget) {}
  FileLocks(const FileLocks&) = delete;
  FileLocks& operator=(const FileLocks&) = delete;
  ~FileLocks() { Stop(); }

  // One non-blocking F_SETLK of `owner` on the lower file that `fd` (any fd of it, the caller's
  // handle) has open: 0, EAGAIN when another owner's lock is in the way, or an errno. `pid` is the
  // caller's, reported to other owners' F_GETLK. `app_uid`: the app to count it against, if any.
  int SetLock(const FileKey& file, uint64_t owner, int fd, const struct flock& lock, pid_t pid,
              std::optional<uid_t> app_uid);
  // F_GETLK for `owner`: *lock becomes the first lock in the way, or l_type F_UNLCK. A lock of
  // another owner of the mount reports that owner's pid.
  int GetLock(const FileKey& file, uint64_t owner, int fd, struct flock* lock);
  // The owner closed an fd of the file: all its locks on it go.
  void ReleaseOwner(const FileKey& file, uint64_t owner);
  size_t owners() const;

  // Queues a wait: `attempt` is called from the waiter thread until it returns anything but
  // EAGAIN, or until `interrupted` says so (then the result is EINTR); `done` gets the result,
  // exactly once. Returns 0 if queued, ENOLCK past the bounds (and then `done` is not called):
  // never more than kMaxWaiters waits are unanswered at once, kMaxWaitsPerApp of one app.
  int Wait(std::optional<uid_t> app_uid, std::function<bool()> interrupted,
           std::function<int()> attempt, std::function<void(int)> done);
  size_t waiting() const;
  // Ends every queued wait with ENOLCK and stops the waiter thread; later waits are refused
  // (ENOLCK). Call before the FUSE session goes away.
  void Stop();

 private:
  struct Owner {
    base::UniqueFd fd;  // the owner's own description of the lower file
    pid_t pid = 0;
    std::optional<uid_t> app_uid;
  };
  struct Waiter {
    std::optional<uid_t> app_uid;
    std::function<bool()> interrupted;
    std::function<int()> attempt;
    std::function<void(int)> done;
  };

  // The owner's description, opened from `fd` if new; nullptr and *err if it cannot be.
  std::shared_ptr<Owner> OwnerOf(const FileKey& file, uint64_t owner, int fd, pid_t pid,
                                 std::optional<uid_t> app_uid, bool create, int* err);
  void WaiterLoop();
  // A wait of `app_uid` answered: counted off queued_ and queued_by_app_.
  void Answered(std::optional<uid_t> app_uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(wait_mu_);

  // An app's charge for one description: true if it may have it.
  bool Charge(std::optional<uid_t> app_uid);
  void Refund(std::optional<uid_t> app_uid);
  // An app's charge for one queued wait: an fd unit and a lock wait of its budget.
  bool ChargeWait(std::optional<uid_t> app_uid);
  void RefundWait(std::optional<uid_t> app_uid);

  AppBudget* const budget_;
  // mu_ and wait_mu_ are never held together; the budget's lock is taken under either (a leaf).
  mutable absl::Mutex mu_;
  absl::flat_hash_map<FileKey, absl::flat_hash_map<uint64_t, std::shared_ptr<Owner>>> files_
      ABSL_GUARDED_BY(mu_);
  size_t owner_count_ ABSL_GUARDED_BY(mu_) = 0;

  mutable absl::Mutex wait_mu_;
  std::list<Waiter> waiters_ ABSL_GUARDED_BY(wait_mu_);
  // Waits queued and not answered yet: those in waiters_ and those the waiter thread is trying
  // (kMaxWaiters bounds this, and so the replies the daemon defers: uring_transport.h).
  size_t queued_ ABSL_GUARDED_BY(wait_mu_) = 0;
  absl::flat_hash_map<uid_t, size_t> queued_by_app_ ABSL_GUARDED_BY(wait_mu_);
  bool stopping_ ABSL_GUARDED_BY(wait_mu_) = false;
  std::thread waiter_thread_;  // started with the first wait
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_FILE_LOCKS_H_
