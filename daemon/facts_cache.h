// The content-facts cache: what each lower file is (sniffed format, recorded creator, location
// scan), kept per (device, inode) for one version of the file, so a photo is scanned once per
// version rather than at every lookup. Bounded: it never holds more than kMaxEntries files.
#ifndef SCOPEDFS_DAEMON_FACTS_CACHE_H_
#define SCOPEDFS_DAEMON_FACTS_CACHE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "daemon/file_info.h"
#include "daemon/node_table.h"
#include "daemon/scan_queue.h"
#include "daemon/stats.h"
#include "policy/engine.h"

namespace scopedfs::daemon {

// The version of a lower file's content `st` describes.
FileVersion VersionOf(const struct stat& st);

// The creator recorded on a lower object (an O_PATH fd of it), or nullopt. Reads the object's own
// attribute, also for a symlink: the /proc magic link is not followed any further.
std::optional<uint32_t> RecordedOwner(int fd);

// What a caller of FactsCache::Lookup will use; the rest is neither read nor cached for it.
struct FactNeeds {
  bool owner = true;    // the recorded creator (an xattr read)
  bool content = true;  // format and location scan (an open and a read of the file's head)
  // POSIX semantics: the creator is the file's owner (st_uid), no attribute is read.
  bool owner_is_uid = false;
};

// What the decisions of `engine` can look at (everything for a null engine).
FactNeeds NeedsOf(const policy::Engine* engine);

class FactsCache {
 public:
  static constexpr size_t kMaxEntries = 1 << 18;

  // `stats` (may be null) counts the location scans. The queued scans run on `scan_threads`, and
  // at most `max_waiters` requests wait for them at once (ScanQueue).
  explicit FactsCache(Stats* stats, int scan_threads = ScanQueue::DefaultThreads(),
                      int max_waiters = ScanQueue::kMaxWaiters)
      : stats_(stats), scans_(scan_threads, max_waiters) {}

  // Facts of the lower object `fd` (O_PATH) as stat'ed in `st`, judged under `name` (the class a
  // name claims is checked against the content each time; the bytes are read once per version).
  // The scan runs without any lock held: inline when the thread has no ScanWait scope, else on
  // the scan queue (scan_queue.h), charged to the scope's app, and waited for until the scope's
  // deadline. A regular file whose bytes cannot be read, or whose scan is not done by then, is
  // reported with content_read false and location malformed (uncertain), and is not cached. What
  // `needs` leaves out is not looked at: content_read is then false and the facts are those of the
  // name alone. Directories and other non-regular objects are cached too (their creator), per
  // version.
  FileInfo Lookup(int fd, const struct stat& st, absl::string_view name, FactNeeds needs = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets a file (after a write or truncate through the mount, so a timestamp that did not move
  // cannot hide the change).
  void Invalidate(dev_t dev, ino_t ino) ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Key {
    dev_t dev;
    ino_t ino;
    bool operator==(const Key& o) const { return dev == o.dev && ino == o.ino; }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.dev, k.ino);
    }
  };
  struct Entry {
    FileVersion version;
    bool owner_read = false;
    bool content_read = false;
    policy::MediaFormat format = policy::MediaFormat::kUnknown;
    std::optional<uint32_t> owner;
    std::shared_ptr<const policy::LocationScan> scan;
  };

  // Scans `fd` (readable) of `size` bytes, sniffed as `format`, and counts it in the stats.
  std::shared_ptr<const policy::LocationScan> Scan(int fd, uint64_t size,
                                                   policy::MediaFormat format);
  // The scan of one file version: inline without a ScanWait scope, else queued and waited for.
  // False: not done in time (the scope notes the miss).
  bool ScanFor(const struct stat& st, base::UniqueFd rfd, policy::MediaFormat format,
               std::shared_ptr<const policy::LocationScan>* out);

  Stats* stats_;
  // A leaf lock: nothing else is taken while it is held.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // Last, so its threads end before anything they use goes.
  ScanQueue scans_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_FACTS_CACHE_H_
