#include "daemon/judge/record_writer.h"

#include <utility>

namespace scopedfs::daemon {

RecordWriter::RecordWriter() = default;

RecordWriter::~RecordWriter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.Join();
}

bool RecordWriter::Queue(absl::Time not_before, std::function<void()> write) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= kMaxQueued) return false;
  if (!thread_.started() && thread_.Start([this] { Run(); }) != 0) return false;
  queue_.push_back({not_before, std::move(write)});
  ++queued_;
  return true;
}

void RecordWriter::Drain() {
  absl::MutexLock lock(&mu_);
  uint64_t target = queued_;
  auto done = [this, target]()
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return completed_ >= target || stopping_; };
  mu_.Await(absl::Condition(&done));
}

uint64_t RecordWriter::completed() const {
  absl::MutexLock lock(&mu_);
  return completed_;
}

uint64_t RecordWriter::waiting() const {
  absl::MutexLock lock(&mu_);
  return queued_ - completed_;
}

void RecordWriter::Run() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    auto ready = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
    mu_.Await(absl::Condition(&ready));
    if (stopping_) break;
    // In queue order: each waits for its own time (a record's quiet age, at most
    // kRecordQuietAge), and those behind it were queued later, so they are due about as late.
    absl::Time due = queue_.front().not_before;
    auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (absl::Now() < due && mu_.AwaitWithDeadline(absl::Condition(&stop), due)) break;
    Pending next = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    next.write();
    next.write = nullptr;  // what it kept (a descriptor) goes before the lock is taken again
    mu_.Lock();
    ++completed_;
  }
  // Stopping: what is left is dropped, its descriptors closed outside the lock.
  std::deque<Pending> left;
  left.swap(queue_);
  mu_.Unlock();
  left.clear();
  mu_.Lock();
}

}  // namespace scopedfs::daemon
