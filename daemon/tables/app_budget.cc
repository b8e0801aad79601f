// Per-app budgets (see app_budget.h).
#include "daemon/tables/app_budget.h"

#include <algorithm>

namespace scopedfs::daemon {

AppBudget::Limits AppBudget::ForFdLimit(uint64_t nofile) {
  Limits l;
  // An eighth, at least 128: each of the (at most a few dozen) worker threads holds a handful of
  // fds for one request, and root and the system uids are served from what the apps cannot take.
  uint64_t reserve = std::max<uint64_t>(128, nofile / 8);
  l.fd_pool = static_cast<size_t>(nofile > reserve + 64 ? nofile - reserve : nofile / 2);
  l.fds_per_app = std::max<size_t>(16, l.fd_pool / 4);
  l.low_water = l.fd_pool / 4;
  l.fd_floor = std::max<size_t>(8, l.fd_pool / 64);
  // Plans are a few hundred KiB at most (redacted_read.h); this lets an app keep its handles'
  // worth of distinct ones, and bounds all apps together well below a phone's memory.
  l.byte_pool = uint64_t{256} << 20;
  l.bytes_per_app = uint64_t{64} << 20;
  return l;
}

bool AppBudget::TakeFds(uid_t uid, size_t n) {
  absl::MutexLock lock(&mu_);
  Held& mine = held_[uid];
  size_t free = limits_.fd_pool - std::min(fds_, limits_.fd_pool);
  bool fits = n <= free && mine.fds + n <= limits_.fds_per_app &&
              (free - n >= limits_.low_water || mine.fds + n <= limits_.fd_floor);
  if (!fits) {
    if (mine.fds == 0 && mine.bytes == 0) held_.erase(uid);
    return false;
  }
  mine.fds += n;
  fds_ += n;
  return true;
}

void AppBudget::ReleaseFds(uid_t uid, size_t n) {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  n = std::min(n, it->second.fds);
  it->second.fds -= n;
  fds_ -= n;
  if (it->second.fds == 0 && it->second.bytes == 0) held_.erase(it);
}

bool AppBudget::TakeBytes(uid_t uid, uint64_t n) {
  absl::MutexLock lock(&mu_);
  Held& mine = held_[uid];
  if (bytes_ + n > limits_.byte_pool || mine.bytes + n > limits_.bytes_per_app) {
    if (mine.fds == 0 && mine.bytes == 0) held_.erase(uid);
    return false;
  }
  mine.bytes += n;
  bytes_ += n;
  return true;
}

void AppBudget::ReleaseBytes(uid_t uid, uint64_t n) {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  n = std::min(n, it->second.bytes);
  it->second.bytes -= n;
  bytes_ -= n;
  if (it->second.fds == 0 && it->second.bytes == 0) held_.erase(it);
}

size_t AppBudget::fds_held() const {
  absl::MutexLock lock(&mu_);
  return fds_;
}

size_t AppBudget::fds_held(uid_t uid) const {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : it->second.fds;
}

uint64_t AppBudget::bytes_held() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

uint64_t AppBudget::bytes_held(uid_t uid) const {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : it->second.bytes;
}

}  // namespace scopedfs::daemon
