// The scan threads and their per-app turns (see scan_queue.h).
#include "daemon/judge/scan_queue.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "base/signals.h"

namespace scopedfs::daemon {

namespace {
thread_local ScanWait* current_wait = nullptr;
thread_local int namespace_lock_held = 0;
}  // namespace

ScanWait::ScanWait(uid_t app, absl::Duration wait)
    : app_(app), deadline_(absl::Now() + wait), outer_(current_wait) {
  current_wait = this;
}

ScanWait::~ScanWait() { current_wait = outer_; }

ScanWait* ScanWait::Current() { return current_wait; }

NoScanWait::NoScanWait() {
  if (current_wait == nullptr) own_ = std::make_unique<ScanWait>(0, absl::ZeroDuration());
  scope_ = current_wait;
  saved_deadline_ = scope_->deadline_;
  saved_missed_ = scope_->missed_;
  scope_->deadline_ = absl::InfinitePast();
  scope_->missed_ = false;
}

NoScanWait::~NoScanWait() {
  scope_->deadline_ = saved_deadline_;
  scope_->missed_ = scope_->missed_ || saved_missed_;
  own_.reset();
}

bool NoScanWait::missed() const { return scope_->missed_; }

NamespaceLockHeld::NamespaceLockHeld() { ++namespace_lock_held; }
NamespaceLockHeld::~NamespaceLockHeld() { --namespace_lock_held; }
bool NamespaceLockHeld::Current() { return namespace_lock_held > 0; }

struct ScanQueue::Job {
  Key key;
  uid_t owner;  // submitted it: its fd counts against this app's queued scans until it starts
  std::function<Scan()> scan;
  // The rest is guarded by ScanQueue::mu_.
  std::vector<uid_t> lines;  // apps whose line holds it, while it is queued
  bool started = false;
  uid_t ran_for = 0;  // the app whose turn started it
  bool done = false;
  Scan result;
  absl::flat_hash_map<uid_t, int> waiting;  // requests waiting for it now, by app
};

int ScanQueue::DefaultThreads() {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<int>(std::max(1L, cores - 1));
}

ScanQueue::ScanQueue(int threads, int max_waiters, Stats* stats)
    : max_waiters_(std::max(1, max_waiters)), stats_(stats) {
  base::NoTerminationSignals no_signals;  // base/signals.h
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Run(); });
}

ScanQueue::~ScanQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [app, jobs] : queued_) {
      for (auto& job : jobs) job->done = true;  // a joined job is in several lines: same answer
    }
    queued_.clear();
    turn_.clear();
    pending_.clear();
  }
  for (std::thread& t : threads_) t.join();
}

std::shared_ptr<ScanQueue::Job> ScanQueue::Submit(uid_t app, const Key& key,
                                                  std::function<Scan()> scan) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return nullptr;
  if (auto it = pending_.find(key); it != pending_.end()) {
    std::shared_ptr<Job> job = it->second;
    // Joined: a job that has not started also stands in this app's line, so this app's request
    // waits for its own turn, never for the work queued ahead of the job in another app's line.
    if (!job->started && std::find(job->lines.begin(), job->lines.end(), app) == job->lines.end()) {
      std::deque<std::shared_ptr<Job>>& line = queued_[app];
      if (line.empty() && !running_.contains(app)) turn_.push_back(app);
      line.push_back(job);
      job->lines.push_back(app);
      if (stats_ != nullptr) stats_->scan_joins.fetch_add(1, std::memory_order_relaxed);
    }
    return job;
  }
  size_t& owned = owned_[app];
  if (owned >= kMaxQueuedPerApp || queued_total_ >= kMaxQueued) {
    if (owned == 0) owned_.erase(app);
    return nullptr;
  }
  auto job = std::make_shared<Job>();
  job->key = key;
  job->owner = app;
  job->scan = std::move(scan);
  job->lines.push_back(app);
  std::deque<std::shared_ptr<Job>>& line = queued_[app];
  if (line.empty() && !running_.contains(app)) turn_.push_back(app);
  line.push_back(job);
  ++owned;
  ++queued_total_;
  pending_[key] = job;
  return job;
}

bool ScanQueue::Wait(uid_t app, Job* job, absl::Time deadline, Scan* out, WaitOutcome* how) {
  WaitOutcome outcome;
  absl::MutexLock lock(&mu_);
  if (!job->done && absl::Now() < deadline) {
    int& mine = waiters_[app];
    if (mine < kMaxWaitersPerApp && waiters_total_ < max_waiters_) {
      ++mine;
      ++waiters_total_;
      most_waiters_ = std::max(most_waiters_, waiters_total_);
      outcome.waited = true;
      ++job->waiting[app];
      mu_.AwaitWithDeadline(absl::Condition(&job->done), deadline);
      if (--job->waiting[app] == 0) job->waiting.erase(app);
      --waiters_total_;
      if (--waiters_[app] == 0) waiters_.erase(app);
    } else {
      outcome.over_bounds = true;
      if (mine == 0) waiters_.erase(app);
    }
  }
  if (how != nullptr) *how = outcome;
  if (job->done) *out = job->result;
  return job->done;
}

uint64_t ScanQueue::completed() const {
  absl::MutexLock lock(&mu_);
  return completed_;
}

uint64_t ScanQueue::passed_over() const {
  absl::MutexLock lock(&mu_);
  return passed_over_;
}

int ScanQueue::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiters_total_;
}

int ScanQueue::most_waiting() const {
  absl::MutexLock lock(&mu_);
  return most_waiters_;
}

size_t ScanQueue::pending() const {
  absl::MutexLock lock(&mu_);
  return pending_.size();
}

bool ScanQueue::Runnable() const { return stopping_ || !turn_.empty(); }

void ScanQueue::CountPassedOver(uid_t app) {
  const std::deque<std::shared_ptr<Job>>& line = queued_[app];
  absl::flat_hash_set<uid_t> passed;
  for (size_t i = 1; i < line.size(); ++i) {
    for (const auto& [waiter, n] : line[i]->waiting) {
      const std::vector<uid_t>& lines = line[i]->lines;
      if (waiter != app && std::find(lines.begin(), lines.end(), waiter) == lines.end()) {
        passed.insert(waiter);
      }
    }
  }
  passed_over_ += passed.size();
  if (stats_ != nullptr && !passed.empty()) {
    stats_->scan_waits_behind_other_app.fetch_add(passed.size(), std::memory_order_relaxed);
  }
}

std::shared_ptr<ScanQueue::Job> ScanQueue::TakeNext(uid_t app) {
  CountPassedOver(app);
  std::deque<std::shared_ptr<Job>>& line = queued_[app];
  std::shared_ptr<Job> job = std::move(line.front());
  line.pop_front();
  job->started = true;
  job->ran_for = app;
  for (uid_t other : job->lines) {
    if (other == app) continue;
    auto it = queued_.find(other);
    if (it == queued_.end()) continue;
    std::deque<std::shared_ptr<Job>>& theirs = it->second;
    theirs.erase(std::remove(theirs.begin(), theirs.end(), job), theirs.end());
    if (theirs.empty()) {
      queued_.erase(it);
      turn_.erase(std::remove(turn_.begin(), turn_.end(), other), turn_.end());
    }
  }
  job->lines.clear();
  --queued_total_;
  if (auto it = owned_.find(job->owner); it != owned_.end() && --it->second == 0) owned_.erase(it);
  return job;
}

void ScanQueue::Run() {
  pthread_setname_np(pthread_self(), "sfs-scan");  // named for ps -T and the tests
  for (;;) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &ScanQueue::Runnable));
      if (stopping_) return;
      // turn_ holds only apps with queued jobs and none running: the next one in line scans, and
      // the scan is charged to it (its next waits for every other app's turn).
      uid_t app = turn_.front();
      turn_.pop_front();
      job = TakeNext(app);
      running_.insert(app);
    }
    Scan result = job->scan();
    absl::MutexLock lock(&mu_);
    job->result = std::move(result);
    job->done = true;
    job->scan = nullptr;  // its fd goes now, not with the last waiter
    ++completed_;
    if (auto it = pending_.find(job->key); it != pending_.end() && it->second == job) {
      pending_.erase(it);
    }
    running_.erase(job->ran_for);
    auto it = queued_.find(job->ran_for);
    if (it != queued_.end() && !it->second.empty()) {
      turn_.push_back(job->ran_for);  // its next scan waits for every other app's turn
    } else if (it != queued_.end()) {
      queued_.erase(it);
    }
    if (stopping_) return;
  }
}

}  // namespace scopedfs::daemon
