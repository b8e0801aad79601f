// The facts cache's records on the lower tree (facts_record.h): taken instead of reading a file,
// queued for the record writer once read, and the files the daemon made without one.
#include <fcntl.h>
#include <time.h>

#include <cstdio>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "daemon/judge/facts_cache.h"
#include "daemon/judge/facts_record.h"

namespace scopedfs::daemon {

bool FactsCache::TakeRecord(int fd, const ObjectId& object, const struct stat& st, Entry* entry) {
  // Records are kept only where every change stamps a later ctime (see Record).
  if (!StampsEveryChange(fd, st)) return false;
  absl::StatusOr<FactsRecord> record = ReadFactsRecord(fd);
  if (!record.ok()) {
    if (absl::IsNotFound(record.status())) return false;
    uint64_t seen = stats_ != nullptr ? stats_->facts_records_rejected.fetch_add(1) : 0;
    // Logged, at most 32 times a run: hostile bytes on many files must not flood the log.
    if (seen < 32) {
      fprintf(stderr, "scopedfsd: ignoring the facts record of inode %llu: %s\n",
              static_cast<unsigned long long>(st.st_ino), record.status().ToString().c_str());
    }
    return false;
  }
  if (!RecordMatches(*record, object, st)) {
    if (stats_ != nullptr) stats_->facts_records_stale.fetch_add(1);
    return false;
  }
  if (stats_ != nullptr) stats_->facts_from_records.fetch_add(1);
  entry->format = record->format;
  entry->format_read = true;
  if (record->scan != nullptr) {
    entry->scan = std::move(record->scan);
    entry->content_read = true;
  }
  return true;
}

void FactsCache::QueueRecord(int fd, const ObjectId& object, const struct stat& st,
                             media::MediaFormat format,
                             std::shared_ptr<const media::LocationScan> scan) {
  // Where timestamps are coarse (one-second ones, kernels without multigrain timestamps), a
  // rewrite in the tick of the record's own write would keep its mtime and ctime: no record.
  if (!StampsEveryChange(fd, st)) return;
  absl::Time due = absl::TimeFromTimespec(st.st_ctim) + kRecordQuietAge;
  bool queued = false;
  int mount_id = -1;
  FileHandle handle;
  if (reopen_) handle = HandleOf(fd, &mount_id);
  if (!handle.empty()) {
    queued = records_written_.Queue(due, [this, handle, mount_id, object, st, format, scan] {
      base::UniqueFd again;
      if (reopen_(handle, mount_id, &again) == 0) Record(again.get(), object, st, format, scan);
    });
  } else {
    auto kept = std::make_shared<base::UniqueFd>(fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (!kept->valid()) return;
    queued = records_written_.Queue(due, [this, kept, object, st, format, scan] {
      Record(kept->get(), object, st, format, scan);
    });
  }
  if (!queued && stats_ != nullptr) stats_->facts_records_not_queued.fetch_add(1);
}

void FactsCache::Record(int fd, const ObjectId& object, const struct stat& st,
                        media::MediaFormat format,
                        std::shared_ptr<const media::LocationScan> scan) {
  // Queued for the version's quiet age (QueueRecord); a clock set back meanwhile leaves it young.
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (absl::TimeFromTimespec(now) - absl::TimeFromTimespec(st.st_ctim) < kRecordQuietAge) return;
  {
    // Before the write: a file made meanwhile is not taken for one without a record.
    absl::MutexLock lock(&mu_);
    ++record_epoch_;
    recordless_.erase(object);
  }
  // A record written meanwhile of the same version (the head a lookup sniffed, before the scan
  // an open queued) moved only the ctime: the bytes are still those of `st`, and a scan's record,
  // which knows more, replaces it at the version that write left.
  struct stat version = st;
  struct stat current;
  bool moved_by_record = fstat(fd, &current) == 0 && VersionOf(current) != VersionOf(st) &&
                         SameBytes(object, VersionOf(st), VersionOf(current));
  // One of the head alone knows nothing the record already there does not: it is not written
  // over a scan's.
  if (moved_by_record && scan == nullptr) return;
  if (moved_by_record) version = current;
  struct stat after;
  if (!WriteFactsRecord(fd, object, version, format, scan, &after)) return;
  if (stats_ != nullptr) stats_->facts_records_written.fetch_add(1);
  // The record's write moved the ctime: the entry of the version before it would never match
  // again. It holds for the version after it, as every later change stamps a later ctime. The
  // entry keeps the first version the daemon's records moved it from (what open handles hold).
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(object);
  if (it != entries_.end() && it->second.version == VersionOf(version)) {
    if (!moved_by_record) it->second.recorded_from = it->second.version;
    it->second.version = VersionOf(after);
  }
}

uint64_t FactsCache::RecordEpoch() const {
  absl::MutexLock lock(&mu_);
  return record_epoch_;
}

void FactsCache::MadeWithoutRecord(const ObjectId& object, uint64_t epoch) {
  // Records are written only of objects with a handle generation (WriteFactsRecord).
  if (object.generation == 0) return;
  absl::MutexLock lock(&mu_);
  if (record_epoch_ != epoch) return;
  if (recordless_.size() >= kMaxRecordless) recordless_.clear();
  recordless_.insert(object);
}

bool FactsCache::MayHaveRecord(const ObjectId& object) const {
  absl::MutexLock lock(&mu_);
  return !recordless_.contains(object);
}

}  // namespace scopedfs::daemon
