// Per-app budgets (see app_budget.h).
#include "daemon/tables/app_budget.h"

#include <algorithm>

namespace scopedfs::daemon {
namespace {

bool AllZero(const std::array<uint64_t, AppBudget::kResources>& counts) {
  return std::all_of(counts.begin(), counts.end(), [](uint64_t c) { return c == 0; });
}

}  // namespace

AppBudget::Limits AppBudget::ForFdLimit(uint64_t nofile) {
  Limits l;
  // An eighth, at least 128: each of the (at most a few dozen) worker threads holds a handful of
  // fds for one request, and root and the system uids are served from what the apps cannot take.
  uint64_t reserve = std::max<uint64_t>(128, nofile / 8);
  l.fds.total = nofile > reserve + 64 ? nofile - reserve : nofile / 2;
  l.fds.per_app = std::max<uint64_t>(16, l.fds.total / 4);
  l.fds.low_water = l.fds.total / 4;
  l.fds.floor = std::max<uint64_t>(8, l.fds.total / 64);
  // Plans are a few hundred KiB at most (redacted_read.h); this lets an app keep its handles'
  // worth of distinct ones, and bounds all apps together well below a phone's memory.
  l.bytes.total = uint64_t{256} << 20;
  l.bytes.per_app = uint64_t{64} << 20;
  return l;
}

bool AppBudget::Take(Resource r, uid_t uid, uint64_t n) {
  const Pool& pool = limits_.of(r);
  absl::MutexLock lock(&mu_);
  Counts& mine = held_[uid];
  uint64_t free = pool.total - std::min(total_[r], pool.total);
  bool fits = n <= free && mine[r] + n <= pool.per_app &&
              (free - n >= pool.low_water || mine[r] + n <= pool.floor);
  if (!fits) {
    if (AllZero(mine)) held_.erase(uid);
    return false;
  }
  mine[r] += n;
  total_[r] += n;
  return true;
}

void AppBudget::Release(Resource r, uid_t uid, uint64_t n) {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  n = std::min(n, it->second[r]);
  it->second[r] -= n;
  total_[r] -= n;
  if (AllZero(it->second)) held_.erase(it);
}

uint64_t AppBudget::held(Resource r) const {
  absl::MutexLock lock(&mu_);
  return total_[r];
}

AppBudget::Use AppBudget::use(Resource r) const {
  absl::MutexLock lock(&mu_);
  Use u;
  u.held = total_[r];
  for (const auto& [uid, counts] : held_) {
    if (counts[r] == 0) continue;
    ++u.apps;
    u.most_by_one_app = std::max(u.most_by_one_app, counts[r]);
  }
  return u;
}

size_t AppBudget::apps() const {
  absl::MutexLock lock(&mu_);
  return held_.size();
}

uint64_t AppBudget::held(Resource r, uid_t uid) const {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : it->second[r];
}

}  // namespace scopedfs::daemon
