// Redacted reads and their shared fill plans (see redacted_read.h).
#include "daemon/ops/redacted_read.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/time/clock.h"
#include "absl/types/span.h"

namespace scopedfs::daemon {
namespace {

constexpr int kAttempts = 8;
// One-second timestamps settle within a second and two coarse-clock ticks.
constexpr absl::Duration kLongestSettle = absl::Milliseconds(1100);

}  // namespace

// The fills are RedactedFills' (media/location), the function scopedfsctl explain/scan call too.
int PlanTable::For(int fd, std::optional<uid_t> app, struct stat* st, FillPlan* out,
                   const ObjectId* object) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Key key{object != nullptr ? *object : ObjectIdOf(fd, *st), VersionOf(*st)};
    std::shared_ptr<const Plan> live;
    {
      absl::MutexLock lock(&mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) live = it->second.lock();
    }
    if (live != nullptr) {
      *out = FillPlan(live, &live->fills);
      return 0;
    }
    // A plan is made only from bytes of a settled version (UntilSettled), so that no rewrite the
    // version cannot tell apart comes between the bytes it was made from and the ones it is
    // applied to.
    if (absl::Duration wait = UntilSettled(fd, *st); wait > absl::ZeroDuration()) {
      // Longer than any tick: a ctime in the future (the clock was set back). Not waited for.
      if (wait > kLongestSettle) return EAGAIN;
      absl::SleepFor(wait);
      if (fstat(fd, st) != 0) return errno;
      continue;
    }
    FileInfo info = facts_->Lookup(fd, *st, key.object, "");
    // Bytes that could not be read (an fd limit, say) are no plan to share: this read is
    // answered as a file that cannot be vouched for (zeros), the next one tries again.
    if (!info.content_read) return EAGAIN;
    auto made = std::make_unique<Plan>();
    made->fills = media::RedactedFills(info.scan.get(), info.content_read,
                                       static_cast<uint64_t>(st->st_size), kinds());
    made->fills.shrink_to_fit();
    struct stat after;
    if (fstat(fd, &after) != 0) return errno;
    if (VersionOf(after) != key.version) {
      *st = after;
      continue;
    }
    made->bytes = sizeof(Plan) + made->fills.capacity() * sizeof(media::FillRange);
    if (app.has_value() && budget_ != nullptr) {
      if (!budget_->Take(AppBudget::kBytes, *app, made->bytes)) return ENOMEM;
      made->charged = app;
    }
    std::shared_ptr<const Plan> plan(made.release(),
                                     [this, key](const Plan* p) { Forget(key, p); });
    {
      absl::MutexLock lock(&mu_);
      std::weak_ptr<const Plan>& slot = plans_[key];
      live = slot.lock();
      if (live == nullptr) slot = plan;
    }
    // Made meanwhile by another handle's read: that one is shared, ours goes (after the lock).
    if (live != nullptr) plan = std::move(live);
    *out = FillPlan(plan, &plan->fills);
    return 0;
  }
  return EAGAIN;
}

void PlanTable::Forget(const Key& key, const Plan* plan) {
  {
    absl::MutexLock lock(&mu_);
    auto it = plans_.find(key);
    if (it != plans_.end() && it->second.expired()) plans_.erase(it);
  }
  if (plan->charged.has_value()) budget_->Release(AppBudget::kBytes, *plan->charged, plan->bytes);
  delete plan;
}

size_t PlanTable::size() const {
  absl::MutexLock lock(&mu_);
  return plans_.size();
}

int RedactionPlan::For(PlanTable& table, int fd, std::optional<uid_t> app, struct stat* st,
                       FillPlan* out) {
  {
    absl::MutexLock lock(&mu_);
    if (fills_ != nullptr && version_ == VersionOf(*st)) {
      *out = fills_;
      return 0;
    }
  }
  if (int err = table.For(fd, app, st, out, object_.has_value() ? &*object_ : nullptr)) {
    return err;
  }
  FillPlan old;  // the previous version's plan is let go outside the lock (PlanTable::Forget)
  absl::MutexLock lock(&mu_);
  old = std::move(fills_);
  version_ = VersionOf(*st);
  fills_ = *out;
  return 0;
}

bool RedactionPlan::Current(FillPlan* out, FileVersion* version) {
  absl::MutexLock lock(&mu_);
  if (fills_ == nullptr) return false;
  *out = fills_;
  *version = version_;
  return true;
}

int ReadRedacted(PlanTable& plans, int fd, std::optional<uid_t> app, RedactionPlan* plan,
                 size_t size, off_t off, char* buf, size_t* got, bool* zero_filled) {
  if (zero_filled != nullptr) *zero_filled = false;
  struct stat st;
  FillPlan fills;
  FileVersion version;
  int err = 0;
  // The handle's plan, if it has one, is tried first: the stat after the read says whether it
  // still holds (the first read of a handle stats before, to find its plan).
  bool stat_known = false;
  if (!plan->Current(&fills, &version)) {
    if (fstat(fd, &st) != 0) return errno;
    stat_known = true;
    err = plan->For(plans, fd, app, &st, &fills);
    version = VersionOf(st);
  }
  for (int attempt = 0; err == 0 && attempt < kAttempts; ++attempt) {
    ssize_t n = pread(fd, buf, size, off);
    if (n < 0) return errno;
    struct stat after;
    if (fstat(fd, &after) != 0) return errno;
    stat_known = true;
    if (VersionOf(after) != version) {
      st = after;
      err = plan->For(plans, fd, app, &st, &fills);
      version = VersionOf(st);
      continue;
    }
    media::ApplyFills(*fills, static_cast<uint64_t>(off),
                      absl::MakeSpan(reinterpret_cast<uint8_t*>(buf), static_cast<size_t>(n)));
    *got = static_cast<size_t>(n);
    return 0;
  }
  if (err != 0 && err != EAGAIN) return err;
  if (!stat_known && fstat(fd, &st) != 0) return errno;
  *got = off < st.st_size ? std::min(size, static_cast<size_t>(st.st_size - off)) : 0;
  memset(buf, 0, *got);
  if (zero_filled != nullptr) *zero_filled = true;
  return 0;
}

}  // namespace scopedfs::daemon
