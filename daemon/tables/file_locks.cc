// File locks on the lower file (see file_locks.h).
#include "daemon/tables/file_locks.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/signals.h"

namespace scopedfs::daemon {

bool FileLocks::Charge(std::optional<uid_t> app_uid) {
  return !app_uid.has_value() || budget_ == nullptr || budget_->Take(AppBudget::kFds, *app_uid);
}

void FileLocks::Refund(std::optional<uid_t> app_uid) {
  if (app_uid.has_value() && budget_ != nullptr) budget_->Release(AppBudget::kFds, *app_uid);
}

bool FileLocks::ChargeWait(std::optional<uid_t> app_uid) {
  if (!app_uid.has_value() || budget_ == nullptr) return true;
  if (!budget_->Take(AppBudget::kLockWaits, *app_uid)) return false;
  if (budget_->Take(AppBudget::kFds, *app_uid)) return true;
  budget_->Release(AppBudget::kLockWaits, *app_uid);
  return false;
}

void FileLocks::RefundWait(std::optional<uid_t> app_uid) {
  if (!app_uid.has_value() || budget_ == nullptr) return;
  budget_->Release(AppBudget::kFds, *app_uid);
  budget_->Release(AppBudget::kLockWaits, *app_uid);
}

std::shared_ptr<FileLocks::Owner> FileLocks::OwnerOf(const FileKey& file, uint64_t owner, int fd,
                                                     pid_t pid, std::optional<uid_t> app_uid,
                                                     bool create, int* err) {
  *err = 0;
  {
    absl::MutexLock lock(&mu_);
    auto f = files_.find(file);
    if (f != files_.end()) {
      auto o = f->second.find(owner);
      if (o != f->second.end()) {
        if (create) o->second->pid = pid;
        return o->second;
      }
    }
    if (!create) return nullptr;
    if (owner_count_ >= kMaxOwners || !Charge(app_uid)) {
      *err = ENOLCK;
      return nullptr;
    }
  }
  // From here the app is charged for the description: refunded unless it is kept.
  // A description of its own, for locks only. Read-write where the daemon may, so the owner can
  // take write locks through any of its handles; O_NONBLOCK so a lease on the lower file makes
  // this fail instead of wait. Otherwise the access mode of the caller's own handle.
  std::string proc = absl::StrCat("/proc/self/fd/", fd);
  auto made = std::make_shared<Owner>();
  made->fd.reset(open(proc.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!made->fd.valid()) {
    int mode = fcntl(fd, F_GETFL);
    made->fd.reset(mode < 0 ? -1 : open(proc.c_str(), (mode & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC));
    if (!made->fd.valid()) {
      *err = errno;
      Refund(app_uid);
      return nullptr;
    }
  }
  made->pid = pid;
  made->app_uid = app_uid;
  absl::MutexLock lock(&mu_);
  std::shared_ptr<Owner>& slot = files_[file][owner];
  if (slot != nullptr) {  // made meanwhile by another request of the same owner
    Refund(app_uid);
    return slot;
  }
  slot = std::move(made);
  ++owner_count_;
  return slot;
}

int FileLocks::SetLock(const FileKey& file, uint64_t owner, int fd, const struct flock& lock,
                       pid_t pid, std::optional<uid_t> app_uid) {
  bool unlock = lock.l_type == F_UNLCK;
  int err = 0;
  // An unlock by an owner that never locked the file has nothing to release.
  std::shared_ptr<Owner> o = OwnerOf(file, owner, fd, pid, app_uid, !unlock, &err);
  if (o == nullptr) return err;
  struct flock ofd = lock;
  ofd.l_pid = 0;  // required for OFD locks
  if (fcntl(o->fd.get(), F_OFD_SETLK, &ofd) != 0) return errno == EACCES ? EAGAIN : errno;
  return 0;
}

int FileLocks::GetLock(const FileKey& file, uint64_t owner, int fd, struct flock* lock) {
  std::shared_ptr<Owner> mine;
  std::vector<std::shared_ptr<Owner>> others;
  {
    absl::MutexLock l(&mu_);
    auto f = files_.find(file);
    if (f != files_.end()) {
      for (const auto& [id, o] : f->second) {
        if (id == owner) {
          mine = o;
        } else {
          others.push_back(o);
        }
      }
    }
  }
  // The owner's own description does not see the owner's locks, as F_GETLK must not; an owner
  // without one holds no locks, and its handle's description holds no record locks either.
  struct flock probe = *lock;
  probe.l_pid = 0;
  if (fcntl(mine != nullptr ? mine->fd.get() : fd, F_OFD_GETLK, &probe) != 0) return errno;
  if (probe.l_type != F_UNLCK && probe.l_pid == -1) {
    // An OFD lock: another owner of the mount (or an OFD lock taken below). The owner that holds
    // it does not see it in its own way.
    for (const std::shared_ptr<Owner>& other : others) {
      struct flock theirs = probe;
      theirs.l_type = lock->l_type;
      theirs.l_pid = 0;
      if (fcntl(other->fd.get(), F_OFD_GETLK, &theirs) == 0 && theirs.l_type == F_UNLCK) {
        probe.l_pid = other->pid;
        break;
      }
    }
  }
  *lock = probe;
  return 0;
}

void FileLocks::ReleaseOwner(const FileKey& file, uint64_t owner) {
  std::shared_ptr<Owner> gone;
  {
    absl::MutexLock lock(&mu_);
    auto f = files_.find(file);
    if (f == files_.end()) return;
    auto o = f->second.find(owner);
    if (o == f->second.end()) return;
    gone = std::move(o->second);
    f->second.erase(o);
    if (f->second.empty()) files_.erase(f);
    --owner_count_;
  }
  Refund(gone->app_uid);
  // Unlocked at once, even while a queued wait still holds the description.
  struct flock all = {};
  all.l_type = F_UNLCK;
  all.l_whence = SEEK_SET;
  fcntl(gone->fd.get(), F_OFD_SETLK, &all);
}

size_t FileLocks::owners() const {
  absl::MutexLock lock(&mu_);
  return owner_count_;
}

int FileLocks::Wait(std::optional<uid_t> app_uid, std::function<bool()> interrupted,
                    std::function<int()> attempt, std::function<void(int)> done) {
  absl::MutexLock lock(&wait_mu_);
  if (stopping_ || queued_ >= kMaxWaiters) return ENOLCK;
  if (app_uid.has_value()) {
    auto mine = queued_by_app_.find(*app_uid);
    if (mine != queued_by_app_.end() && mine->second >= kMaxWaitsPerApp) return ENOLCK;
  }
  if (!ChargeWait(app_uid)) return ENOLCK;
  ++queued_;
  if (app_uid.has_value()) ++queued_by_app_[*app_uid];
  waiters_.push_back(Waiter{app_uid, std::move(interrupted), std::move(attempt), std::move(done)});
  if (!waiter_thread_.joinable()) {
    base::NoTerminationSignals no_signals;  // base/signals.h
    waiter_thread_ = std::thread([this] { WaiterLoop(); });
  }
  return 0;
}

void FileLocks::Answered(std::optional<uid_t> app_uid) {
  --queued_;
  if (!app_uid.has_value()) return;
  auto mine = queued_by_app_.find(*app_uid);
  if (mine != queued_by_app_.end() && --mine->second == 0) queued_by_app_.erase(mine);
}

size_t FileLocks::waiting() const {
  absl::MutexLock lock(&wait_mu_);
  return queued_;
}

void FileLocks::WaiterLoop() {
  pthread_setname_np(pthread_self(), "sfs-locks");  // named for ps -T and the tests
  // Retried every millisecond at first, backing off to every 10 ms while nothing changes.
  absl::Duration pause = absl::Milliseconds(1);
  std::list<Waiter> mine;
  for (;;) {
    {
      absl::MutexLock lock(&wait_mu_);
      wait_mu_.Await(absl::Condition(
          +[](FileLocks* self) { return self->stopping_ || !self->waiters_.empty(); }, this));
      if (stopping_) break;
      mine.splice(mine.end(), waiters_);
    }
    bool changed = false;
    std::vector<std::optional<uid_t>> finished;
    for (auto it = mine.begin(); it != mine.end();) {
      int result = it->interrupted() ? EINTR : it->attempt();
      if (result == EAGAIN) {
        ++it;
        continue;
      }
      it->done(result);
      finished.push_back(it->app_uid);
      it = mine.erase(it);
      changed = true;
    }
    pause = changed ? absl::Milliseconds(1) : std::min(pause * 2, absl::Milliseconds(10));
    for (const std::optional<uid_t>& uid : finished) RefundWait(uid);
    absl::MutexLock lock(&wait_mu_);
    for (const std::optional<uid_t>& uid : finished) Answered(uid);
    waiters_.splice(waiters_.begin(), mine);  // oldest first
    if (stopping_) break;
    wait_mu_.AwaitWithTimeout(absl::Condition(&stopping_), pause);
    if (stopping_) break;
  }
  // Shutdown: every wait still queued ends with ENOLCK. Not EINTR: the kernel turns that into a
  // restart, which only a pending signal makes sense of.
  std::list<Waiter> left;
  {
    absl::MutexLock lock(&wait_mu_);
    left.splice(left.end(), mine);
    left.splice(left.end(), waiters_);
  }
  for (Waiter& w : left) {
    w.done(ENOLCK);
    RefundWait(w.app_uid);
  }
  absl::MutexLock lock(&wait_mu_);
  for (const Waiter& w : left) Answered(w.app_uid);
}

void FileLocks::Stop() {
  {
    absl::MutexLock lock(&wait_mu_);
    stopping_ = true;
  }
  if (waiter_thread_.joinable()) waiter_thread_.join();
}

}  // namespace scopedfs::daemon
