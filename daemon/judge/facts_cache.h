// The content-facts cache: what each lower file is (sniffed format, recorded creator, location
// scan), kept per (device, inode) for one version of the file, so a photo is scanned once per
// version rather than at every lookup. Bounded: it never holds more than kMaxEntries files, nor
// scans of more than kMaxScanBytes together (each scan is bounded by location_bounds.h).
#ifndef SCOPEDFS_DAEMON_JUDGE_FACTS_CACHE_H_
#define SCOPEDFS_DAEMON_JUDGE_FACTS_CACHE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/judge/file_info.h"
#include "daemon/judge/record_writer.h"
#include "daemon/judge/scan_queue.h"
#include "daemon/observe/stats.h"
#include "daemon/tables/node_table.h"
#include "daemon/tables/object_id.h"
#include "policy/engine.h"

namespace scopedfs::daemon {

// The version of a lower file's content `st` describes.
FileVersion VersionOf(const struct stat& st);

// A version is only as fine as the file's timestamps: a same-size rewrite within one timestamp
// tick leaves (size, mtime, ctime) as they were (git calls such an entry "racy"). Bytes read
// after the daemon stat'ed a version belong to it for as long as the version stays, if either
// - the filesystem stamps every change made after its ctime was read with a later ctime
//   (StampsEveryChange): Linux's multigrain timestamps (6.13 and later; tmpfs, ext4, xfs and
//   btrfs) with nanosecond granularity; or
// - the version's tick was over when it was stat'ed: any later write stamps a later ctime.
// Otherwise (one-second timestamps, other filesystems, older kernels) the version must settle
// first. UntilSettled(fd, st): how long from now until the version `st` (stat'ed from `fd`) has
// settled; zero when it has or need not. The tick is two ticks of the kernel's coarse clock, plus
// a second when the timestamps carry no nanoseconds; the wait is capped at two seconds (a ctime
// in the future, a clock set back, is waited for no longer).
bool StampsEveryChange(int fd, const struct stat& st);
absl::Duration UntilSettled(int fd, const struct stat& st);
// The timestamp rule alone, for a filesystem that does not stamp every change.
absl::Duration UntilSettled(const struct stat& st, absl::Duration cap = absl::Seconds(2));
// The same at the time `now` (CLOCK_REALTIME), so that a test can say when without a race.
absl::Duration UntilSettledAt(const struct stat& st, absl::Time now,
                              absl::Duration cap = absl::Seconds(2));

// The creator recorded on a lower object (an O_PATH fd of it), or nullopt. Reads the object's own
// attribute, also for a symlink: the /proc magic link is not followed any further.
std::optional<uint32_t> RecordedOwner(int fd);

// What a caller of FactsCache::Lookup will use; the rest is neither read nor cached for it.
struct FactNeeds {
  bool owner = true;    // the recorded creator (an xattr read)
  bool content = true;  // format and location scan (an open, the head, and a bounded scan)
  // POSIX semantics: the creator is the file's owner (st_uid), no attribute is read.
  bool owner_is_uid = false;
  // With `content`: the location scan too. Without it only the head is read (the format), and a
  // file whose scan is not cached comes back with content_read false and its location unknown:
  // what a lookup needs to know whether the caller finds the name, in a time that does not grow
  // with the file (Engine::lookup_reads_location).
  bool location = true;
  // With `content`: asked once the creator is known (as `needs` gives it; the content is not
  // looked at), before any byte is read; false leaves the content unread, as without `content`.
  // The caller's own question whether its decisions can depend on the content
  // (RequestContext::DependsOnContent), so a file whose content decides nothing for it costs one
  // cache probe.
  const std::function<bool(const FileInfo&)>* content_decides = nullptr;
};

// What the decisions of `engine` can look at (everything for a null engine).
FactNeeds NeedsOf(const policy::Engine* engine);

class FactsCache {
 public:
  static constexpr size_t kMaxEntries = 1 << 18;
  static constexpr uint64_t kMaxScanBytes = uint64_t{64} << 20;

  // `stats` (may be null) counts the location scans, the requests that waited for them and how
  // those waits ended, and the times the cache was emptied at its bounds. The queued scans run on
  // `scan_threads`, and at most `max_waiters` requests wait for them at once (ScanQueue).
  explicit FactsCache(Stats* stats, int scan_threads = ScanQueue::DefaultThreads(),
                      int max_waiters = ScanQueue::kMaxWaiters)
      : stats_(stats), scans_(scan_threads, max_waiters, stats) {}

  // Whether facts are kept on the lower tree across restarts (facts_record.h): read before a
  // file's bytes would be, written once they were. On by default; set before the first Lookup.
  void set_records(bool records) { records_ = records; }
  // How the record writer opens a file again by its handle (NodeTable::OpenHandle): a queued
  // record (of a version too young to write, or behind one) waits holding the handle, not a
  // descriptor, so a file removed meanwhile is not kept alive (nor its number kept from reuse) by
  // the wait. Without it (tools, unit tests), or for a file without a handle, the wait holds a
  // descriptor. Set before the first Lookup.
  using Reopen = std::function<int(const FileHandle& handle, int mount_id, base::UniqueFd* out)>;
  void set_reopen(Reopen reopen) { reopen_ = std::move(reopen); }

  // Facts of the lower object `fd` (O_PATH) as stat'ed in `st`, judged under `name` (the class a
  // name claims is checked against the content each time; the bytes are read once per version).
  // The scan runs without any lock held: inline when the thread has no ScanWait scope, else on
  // the scan queue (scan_queue.h), charged to the scope's app, and waited for until the scope's
  // deadline. It is cached only if the version was settled (UntilSettled) before its bytes were
  // read and is unchanged after. A regular file whose bytes cannot be read, or whose scan is not
  // done by then, is reported with content_read false and location malformed (uncertain), and is
  // not cached. What `needs` leaves out is not looked at: content_read is then false and the facts
  // are those of the name alone. Directories and other non-regular objects are cached too (their
  // creator), per version.
  FileInfo Lookup(int fd, const struct stat& st, absl::string_view name, FactNeeds needs = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  // The same for a caller that knows the object `fd` is (ObjectIdOf(fd, st), e.g. from its node
  // or from the identity it read to publish the node): no name_to_handle_at of its own.
  FileInfo Lookup(int fd, const struct stat& st, const ObjectId& object, absl::string_view name,
                  FactNeeds needs = {}) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether Lookup with `needs` looks at the cache, and so at the object's identity, for an
  // object stat'ed as `st` (otherwise it answers from the name alone).
  static bool UsesIdentity(const struct stat& st, FactNeeds needs) {
    return (needs.content && S_ISREG(st.st_mode)) || (needs.owner && !needs.owner_is_uid);
  }
  // What the cache holds of the object of `fd` at this version, by the same probe as Lookup's,
  // reading nothing and caching nothing: what it does not hold is left unknown (content_read
  // false, the name's facts, no owner).
  FileInfo Cached(int fd, const struct stat& st, absl::string_view name, FactNeeds needs = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets a file (after a write or truncate through the mount, so a timestamp that did not move
  // cannot hide the change).
  void Invalidate(const ObjectId& object) ABSL_LOCKS_EXCLUDED(mu_);

  // Files the daemon made itself carry no record (trusted.* is never inherited) until Record
  // writes one, so a change made to them through the mount has no record to remove (tar sets the
  // times of every file it makes: a removexattr each, for nothing). RecordEpoch() is read before
  // the file is made; MadeWithoutRecord then notes the new object unless a record write began
  // since (it might have been on this file). Bounded: past kMaxRecordless objects the set is
  // emptied, and a change removes a record that may be there, as for any other file.
  static constexpr size_t kMaxRecordless = 1 << 16;
  uint64_t RecordEpoch() const ABSL_LOCKS_EXCLUDED(mu_);
  void MadeWithoutRecord(const ObjectId& object, uint64_t epoch) ABSL_LOCKS_EXCLUDED(mu_);
  // False only for a file noted by MadeWithoutRecord that no record has been written on since.
  bool MayHaveRecord(const ObjectId& object) const ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether version `now` of `object` is `before`, or the daemon's own record write made it from
  // `before` (the bytes are the same: only the ctime moved, by the record's xattr).
  bool SameBytes(const ObjectId& object, FileVersion before, FileVersion now) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Records queued and not yet written or given up.
  uint64_t records_waiting() const { return records_written_.waiting(); }
  // Waits until every record queued so far has been written or given up: a daemon's clean stop
  // (nothing it learned is dropped; each waits at most kRecordQuietAge), and tests.
  void DrainRecords() { records_written_.Drain(); }
  // What the cached scans keep, in ScanBytes (at most kMaxScanBytes).
  uint64_t scan_bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  // The scan queue, for its gauges (waiting requests, pending scans).
  const ScanQueue& scans() const { return scans_; }

 private:
  // Facts are of one object (object_id.h): a file that got a removed file's inode number, even
  // at the same size and timestamps, is looked at afresh.
  using Key = ObjectId;
  struct Entry {
    FileVersion version;
    // The version this one replaced by the daemon's own record write (facts_record.h), which
    // moved only the ctime: the bytes of both are the same, so a scan of that version, queued or
    // running when the record was written, stands for this one. size -1: none.
    FileVersion recorded_from;
    bool owner_read = false;
    bool content_read = false;  // the format and the scan
    bool format_read = false;   // the format (sniffed from the head)
    media::MediaFormat format = media::MediaFormat::kUnknown;
    std::optional<uint32_t> owner;
    std::shared_ptr<const media::LocationScan> scan;
  };

  // Scans `fd` (readable) of `size` bytes, sniffed as `format`, and counts it in the stats.
  std::shared_ptr<const media::LocationScan> Scan(int fd, uint64_t size, media::MediaFormat format);
  // The scan of one file version: inline without a ScanWait scope, else queued and waited for.
  // False: not done in time (the scope notes the miss).
  // `cacheable`: the version was settled before the bytes were read (a queued scan is then cached
  // if the version is unchanged after it).
  // `scanned`: the version the scan is of (queued under it, so that requests for it join),
  // which is `st`'s or the one it replaced by the daemon's own record write.
  bool ScanFor(const ObjectId& object, const struct stat& st, FileVersion scanned,
               base::UniqueFd rfd, media::MediaFormat format, bool cacheable,
               std::shared_ptr<const media::LocationScan>* out);
  // Files `scan` of version `scanned` under `key` at version `now` (the file's after the scan)
  // unless the entry there is of another version or has its content already. Nothing is filed
  // unless `now` is `scanned` or the daemon's own record write made it from `scanned`.
  void Store(Key key, FileVersion scanned, FileVersion now, media::MediaFormat format,
             std::shared_ptr<const media::LocationScan> scan) ABSL_LOCKS_EXCLUDED(mu_);

  // The facts recorded on `fd`, filled into `entry` if they hold for `st`; a malformed record is
  // counted and logged, and never used.
  bool TakeRecord(int fd, const ObjectId& object, const struct stat& st, Entry* entry);
  // Queues the record of facts read at version `st` of the object of `fd` on the record writer,
  // to be written once the version is kRecordQuietAge old, holding the object's handle
  // (set_reopen) or else a duplicate of `fd`.
  void QueueRecord(int fd, const ObjectId& object, const struct stat& st, media::MediaFormat format,
                   std::shared_ptr<const media::LocationScan> scan);
  // Records facts read at version `st` on `fd` where the filesystem stamps every change
  // (StampsEveryChange) and `st` is still the file's version; the cached entry moves to the
  // version the record's own write leaves. On the record writer's thread.
  void Record(int fd, const ObjectId& object, const struct stat& st, media::MediaFormat format,
              std::shared_ptr<const media::LocationScan> scan) ABSL_LOCKS_EXCLUDED(mu_);

  Stats* stats_;
  bool records_ = true;
  Reopen reopen_;
  // A leaf lock: nothing else is taken while it is held.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t scan_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // ScanBytes of the cached scans
  absl::flat_hash_set<Key> recordless_ ABSL_GUARDED_BY(mu_);
  uint64_t record_epoch_ ABSL_GUARDED_BY(mu_) = 0;  // record writes begun
  // Where records are written (record_writer.h). Before the scan queue, whose scans queue their
  // records here: the scan threads end first.
  RecordWriter records_written_;
  // Last, so its threads end before anything they use goes.
  ScanQueue scans_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_FACTS_CACHE_H_
