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

struct ScanQueue::Job {
  Key key;
  uid_t app;
  std::function<Scan()> scan;
  bool done = false;  // guarded by ScanQueue::mu_
  Scan result;        // guarded by ScanQueue::mu_
};

int ScanQueue::DefaultThreads() {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<int>(std::max(1L, cores - 1));
}

ScanQueue::ScanQueue(int threads, int max_waiters) : max_waiters_(std::max(1, max_waiters)) {
  base::NoTerminationSignals no_signals;  // base/signals.h
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Run(); });
}

ScanQueue::~ScanQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [app, jobs] : queued_) {
      for (auto& job : jobs) job->done = true;
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
  if (auto it = pending_.find(key); it != pending_.end()) return it->second;
  std::deque<std::shared_ptr<Job>>& jobs = queued_[app];
  if (jobs.size() >= kMaxQueuedPerApp || queued_total_ >= kMaxQueued) {
    if (jobs.empty()) queued_.erase(app);
    return nullptr;
  }
  auto job = std::make_shared<Job>();
  job->key = key;
  job->app = app;
  job->scan = std::move(scan);
  if (jobs.empty() && !running_.contains(app)) turn_.push_back(app);
  jobs.push_back(job);
  ++queued_total_;
  pending_[key] = job;
  return job;
}

bool ScanQueue::Wait(uid_t app, Job* job, absl::Time deadline, Scan* out) {
  absl::MutexLock lock(&mu_);
  if (!job->done && absl::Now() < deadline) {
    int& mine = waiters_[app];
    if (mine < kMaxWaitersPerApp && waiters_total_ < max_waiters_) {
      ++mine;
      ++waiters_total_;
      mu_.AwaitWithDeadline(absl::Condition(&job->done), deadline);
      --waiters_total_;
      if (--waiters_[app] == 0) waiters_.erase(app);
    } else if (mine == 0) {
      waiters_.erase(app);
    }
  }
  if (job->done) *out = job->result;
  return job->done;
}

uint64_t ScanQueue::completed() const {
  absl::MutexLock lock(&mu_);
  return completed_;
}

int ScanQueue::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiters_total_;
}

bool ScanQueue::Runnable() const { return stopping_ || !turn_.empty(); }

void ScanQueue::Run() {
  pthread_setname_np(pthread_self(), "sfs-scan");  // named for ps -T and the tests
  for (;;) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &ScanQueue::Runnable));
      if (stopping_) return;
      // turn_ holds only apps with queued jobs and none running: the next one in line scans.
      uid_t app = turn_.front();
      turn_.pop_front();
      std::deque<std::shared_ptr<Job>>& jobs = queued_[app];
      job = std::move(jobs.front());
      jobs.pop_front();
      --queued_total_;
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
    running_.erase(job->app);
    auto it = queued_.find(job->app);
    if (it != queued_.end() && !it->second.empty()) {
      turn_.push_back(job->app);  // its next scan waits for every other app's turn
    } else if (it != queued_.end()) {
      queued_.erase(it);
    }
    if (stopping_) return;
  }
}

}  // namespace scopedfs::daemon
