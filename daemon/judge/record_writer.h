// Where facts records (facts_record.h) are written: on a thread of their own, never on a FUSE
// worker. A record written after a request's reply (AfterReply) still ran on the worker before its
// next request, and over io_uring the next request of the same app comes to the same worker: the
// first stat of a hidden file whose facts that stat learned cost one setxattr and two stats more
// than a stat of a missing name (docs/security.md, timing). A version too young to record
// (kRecordQuietAge) waits here until it is old enough, so no request is left to write it later.
//
// Bounded: at most kMaxQueued records wait (each keeps a descriptor of its file). Past that a
// record is not written (counted: facts_records_not_queued), and the file's facts are read from
// its bytes again after a restart, as for a file never recorded.
#ifndef SCOPEDFS_DAEMON_JUDGE_RECORD_WRITER_H_
#define SCOPEDFS_DAEMON_JUDGE_RECORD_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/small_thread.h"

namespace scopedfs::daemon {

class RecordWriter {
 public:
  static constexpr size_t kMaxQueued = 256;

  RecordWriter();
  // Ends the thread; what is still queued is dropped unwritten (its descriptors closed).
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Runs `write` on the writer's thread (started at the first call), not before `not_before`.
  // False (and `write` is dropped) when kMaxQueued writes wait already, or the thread cannot be
  // started.
  bool Queue(absl::Time not_before, std::function<void()> write) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until every write queued before the call has run (tests, and a daemon's clean stop).
  void Drain() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes run so far, and those queued and not run yet.
  uint64_t completed() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Pending {
    absl::Time not_before;
    std::function<void()> write;
  };
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t queued_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  base::SmallThread thread_;  // started at the first Queue
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_RECORD_WRITER_H_
