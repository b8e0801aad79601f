// Content-facts cache (see facts_cache.h).
#include "daemon/judge/facts_cache.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "daemon/judge/facts_record.h"
#include "daemon/judge/location_bounds.h"

namespace scopedfs::daemon {

FileVersion VersionOf(const struct stat& st) {
  return {st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
          st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
}

absl::Duration UntilSettled(const struct stat& st, absl::Duration cap) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return UntilSettledAt(st, absl::TimeFromTimespec(now), cap);
}

absl::Duration UntilSettledAt(const struct stat& st, absl::Time now, absl::Duration cap) {
  static const absl::Duration kTick = [] {
    struct timespec res;
    if (clock_getres(CLOCK_REALTIME_COARSE, &res) != 0) return absl::Milliseconds(10);
    return std::max(absl::DurationFromTimespec(res), absl::Milliseconds(1));
  }();
  absl::Duration tick = 2 * kTick;
  if (st.st_ctim.tv_nsec == 0 && st.st_mtim.tv_nsec == 0) tick += absl::Seconds(1);
  absl::Duration left = absl::TimeFromTimespec(st.st_ctim) + tick - now;
  return std::clamp(left, absl::ZeroDuration(), cap);
}

namespace {

// Multigrain timestamps came with Linux 6.13.
bool KernelHasMultigrainTimestamps() {
  static const bool has = [] {
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
    return major > 6 || (major == 6 && minor >= 13);
  }();
  return has;
}

}  // namespace

bool StampsEveryChange(int fd, const struct stat& st) {
  // One-second timestamps (ext4 with 128-byte inodes, among others) cannot, multigrain or not.
  if (st.st_ctim.tv_nsec == 0 && st.st_mtim.tv_nsec == 0) return false;
  if (!KernelHasMultigrainTimestamps()) return false;
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<uint64_t>(fs.f_type)) {
    case TMPFS_MAGIC:
    case EXT4_SUPER_MAGIC:
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

absl::Duration UntilSettled(int fd, const struct stat& st) {
  absl::Duration left = UntilSettled(st);
  if (left == absl::ZeroDuration() || StampsEveryChange(fd, st)) return absl::ZeroDuration();
  return left;
}

std::optional<uint32_t> RecordedOwner(int fd) {
  char value[16];
  std::string proc = absl::StrCat("/proc/self/fd/", fd);
  ssize_t len = getxattr(proc.c_str(), kOwnerXattr, value, sizeof(value) - 1);
  uint32_t owner;
  if (len > 0 && absl::SimpleAtoi(absl::string_view(value, static_cast<size_t>(len)), &owner)) {
    return owner;
  }
  return std::nullopt;
}

FactNeeds NeedsOf(const policy::Engine* engine) {
  if (engine == nullptr) return {};
  return {engine->reads_owner(), engine->reads_content(), engine->semantics() == SEMANTICS_POSIX};
}

FileInfo FactsCache::Lookup(int fd, const struct stat& st, absl::string_view name,
                            FactNeeds needs) {
  ObjectId object;
  if (UsesIdentity(st, needs)) object = ObjectIdOf(fd, st);
  return Lookup(fd, st, object, name, needs);
}

FileInfo FactsCache::Lookup(int fd, const struct stat& st, const ObjectId& object,
                            absl::string_view name, FactNeeds needs) {
  // Only a regular file's bytes are ever read; a directory, symlink, fifo or socket has only
  // its creator.
  if (!S_ISREG(st.st_mode)) needs.content = false;
  FileInfo info;
  info.facts = media::FactsFromFormat(name, media::MediaFormat::kUnknown);
  info.content_read = !S_ISREG(st.st_mode);
  if (needs.owner && needs.owner_is_uid) {
    info.owner = st.st_uid;
    needs.owner = false;
  }
  if (!needs.owner && !needs.content) return info;

  const Key& key = object;
  FileVersion version = VersionOf(st);
  Entry entry;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.version == version) entry = it->second;
  }
  if (entry.version != version) {
    entry = Entry();
    entry.version = version;
  }
  // The version a scan of these bytes is queued under (see Entry::recorded_from).
  FileVersion scanned = entry.recorded_from.size >= 0 ? entry.recorded_from : version;
  bool changed = false;
  bool cacheable = true;
  if (needs.content && needs.content_decides != nullptr) {
    FileInfo creator = info;
    if (needs.owner) {
      if (!entry.owner_read) {
        entry.owner = RecordedOwner(fd);
        entry.owner_read = true;
        changed = true;
      }
      creator.owner = entry.owner;
    }
    if (!(*needs.content_decides)(creator)) needs.content = false;
  }
  // Facts recorded on the file at this version stand for its bytes (facts_record.h).
  bool wants_bytes = needs.content && !entry.content_read && (needs.location || !entry.format_read);
  if (wants_bytes && records_ && TakeRecord(fd, key, st, &entry)) {
    changed = true;
    cacheable = UntilSettled(fd, st) == absl::ZeroDuration();
  }
  bool scanned_now = false;
  bool sniffed_now = false;
  // The head alone, when the scan is not asked for and not cached.
  bool head_only = needs.content && !needs.location && !entry.content_read;
  if (head_only && !entry.format_read) {
    cacheable = UntilSettled(fd, st) == absl::ZeroDuration();
    std::string proc = absl::StrCat("/proc/self/fd/", fd);
    base::UniqueFd rfd(open(proc.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    uint8_t head[media::kSniffBytes];
    ssize_t n = rfd.valid() ? pread(rfd.get(), head, sizeof(head), 0) : -1;
    if (stats_ != nullptr && rfd.valid()) stats_->content_reads.fetch_add(1);
    if (n >= 0) {
      entry.format = media::SniffFormat(absl::MakeConstSpan(head, static_cast<size_t>(n)));
      entry.format_read = true;
      changed = true;
      sniffed_now = true;
      struct stat after;
      cacheable = cacheable && fstat(fd, &after) == 0 && SameBytes(key, version, VersionOf(after));
    }
  }
  if (head_only) needs.content = false;
  if (needs.content && !entry.content_read) {
    // Bytes read before the version settled may be of a rewrite the version cannot tell apart.
    cacheable = UntilSettled(fd, st) == absl::ZeroDuration();
    std::string proc = absl::StrCat("/proc/self/fd/", fd);
    base::UniqueFd rfd(open(proc.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!rfd.valid()) {
      // Not cached: the next request tries again. Until then nothing about it can be vouched for.
      info.content_read = false;
      if (needs.owner) info.owner = entry.owner_read ? entry.owner : RecordedOwner(fd);
      info.facts.location = media::LocationPresence::kMalformed;
      return info;
    }
    uint8_t head[media::kSniffBytes];
    ssize_t n = pread(rfd.get(), head, sizeof(head), 0);
    if (stats_ != nullptr) stats_->content_reads.fetch_add(1);
    if (n > 0) {
      entry.format = media::SniffFormat(absl::MakeConstSpan(head, static_cast<size_t>(n)));
    }
    // Every file gets a location verdict, carriers by their parsers and all else by a bounded
    // signature sweep: no format is served unexamined to a caller owed a redacted copy.
    {
      std::shared_ptr<const media::LocationScan> scan;
      if (!ScanFor(key, st, scanned, std::move(rfd), entry.format, cacheable, &scan)) {
        // Not scanned in time: uncertain, and not cached (the queued scan fills the cache).
        info.content_read = false;
        if (needs.owner) info.owner = entry.owner_read ? entry.owner : RecordedOwner(fd);
        info.facts = media::FactsFromFormat(name, entry.format);
        info.facts.location = media::LocationPresence::kMalformed;
        return info;
      }
      entry.scan = std::move(scan);
    }
    entry.content_read = true;
    entry.format_read = true;
    changed = true;
    scanned_now = true;
    struct stat after;
    cacheable = cacheable && fstat(fd, &after) == 0 && SameBytes(key, version, VersionOf(after));
  }
  if (needs.owner && !entry.owner_read) {
    entry.owner = RecordedOwner(fd);
    entry.owner_read = true;
    changed = true;
  }
  if (changed && cacheable) {
    uint64_t bytes = entry.scan != nullptr ? ScanBytes(*entry.scan) : 0;
    absl::MutexLock lock(&mu_);
    if (entries_.size() >= kMaxEntries || scan_bytes_ + bytes > kMaxScanBytes) {
      entries_.clear();
      scan_bytes_ = 0;
      if (stats_ != nullptr) stats_->scan_cache_clears.fetch_add(1);
    }
    Entry& slot = entries_[key];
    // The daemon's own record write moved the version meanwhile: what was learned is filed under
    // the version it moved to (same bytes), which the record holds for.
    if (slot.recorded_from == entry.version && slot.version != entry.version) {
      entry.recorded_from = slot.recorded_from;
      entry.version = slot.version;
    }
    if (slot.scan != nullptr) scan_bytes_ -= std::min(scan_bytes_, ScanBytes(*slot.scan));
    slot = entry;
    scan_bytes_ += bytes;
  }
  // Bytes read now, of a version that was settled and unchanged after: recorded for the next
  // daemon (a queued scan records its own, on the scan thread). The head alone is recorded too.
  // Written on the record writer's thread (record_writer.h), not this request's: a record written
  // by another app's lookup of a hidden file would make its ENOENT, or its next request, slower
  // than a missing name's.
  bool inline_scan = scanned_now && ScanWait::Current() == nullptr;
  if (records_ && changed && cacheable && (inline_scan || sniffed_now)) {
    QueueRecord(fd, key, st, entry.format, inline_scan ? entry.scan : nullptr);
  }
  if (needs.owner) info.owner = entry.owner;
  if (head_only) {
    info.content_read = false;
    info.facts = media::FactsFromFormat(name, entry.format);
    info.facts.location = media::LocationPresence::kUnknown;
  }
  if (needs.content) {
    info.content_read = true;
    info.scan = entry.scan;
    info.facts = media::FactsOfContent(name, entry.format, entry.scan.get());
  }
  return info;
}

FileInfo FactsCache::Cached(int fd, const struct stat& st, absl::string_view name,
                            FactNeeds needs) {
  FileInfo info;
  info.facts = media::FactsFromFormat(name, media::MediaFormat::kUnknown);
  if (needs.owner && needs.owner_is_uid) {
    info.owner = st.st_uid;
    needs.owner = false;
  }
  if (!needs.owner && !needs.content) return info;
  Key key = ObjectIdOf(fd, st);
  FileVersion version = VersionOf(st);
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || !(it->second.version == version)) return info;
  const Entry& entry = it->second;
  if (needs.owner && entry.owner_read) info.owner = entry.owner;
  if (needs.content && entry.format_read) {
    info.facts = media::FactsFromFormat(name, entry.format);
    info.facts.location = media::LocationPresence::kUnknown;
  }
  return info;
}

std::shared_ptr<const media::LocationScan> FactsCache::Scan(int fd, uint64_t size,
                                                            media::MediaFormat format) {
  media::FdSource source(fd, size);
  auto scan = std::make_shared<media::LocationScan>(media::ScanLocation(format, source));
  BoundScan(scan.get());
  if (stats_ != nullptr) {
    stats_->location_scans.fetch_add(1);
    if (scan->malformed) {
      stats_->location_malformed.fetch_add(1);
    } else if (!scan->ranges.empty()) {
      stats_->location_found.fetch_add(1);
    }
  }
  return scan;
}

bool FactsCache::ScanFor(const ObjectId& object, const struct stat& st, FileVersion scanned,
                         base::UniqueFd rfd, media::MediaFormat format, bool cacheable,
                         std::shared_ptr<const media::LocationScan>* out) {
  ScanWait* wait = ScanWait::Current();
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (wait == nullptr) {
    if (stats_ != nullptr && NamespaceLockHeld::Current()) stats_->scan_waits_locked.fetch_add(1);
    *out = Scan(rfd.get(), size, format);
    return true;
  }
  FileVersion v = scanned;
  ScanQueue::Key key{object.dev, object.ino, v.size, v.mtime_ns, v.ctime_ns, object.generation};
  auto fd = std::make_shared<base::UniqueFd>(std::move(rfd));
  std::shared_ptr<ScanQueue::Job> job =
      scans_.Submit(wait->app(), key, [this, fd, size, format, key, cacheable] {
        std::shared_ptr<const media::LocationScan> scan = Scan(fd->get(), size, format);
        // Filed only if the version scanned was settled before the scan and its bytes are the
        // file's now: a change meanwhile is a new version (the daemon's own record write is not).
        FileVersion version{key.size, key.mtime_ns, key.ctime_ns};
        ObjectId id{key.dev, key.ino, key.generation};
        struct stat after;
        if (cacheable && fstat(fd->get(), &after) == 0 &&
            SameBytes(id, version, VersionOf(after))) {
          Store(id, version, VersionOf(after), format, scan);
          if (records_) QueueRecord(fd->get(), id, after, format, scan);
        }
        return scan;
      });
  ScanQueue::WaitOutcome how;
  bool done = job != nullptr && scans_.Wait(wait->app(), job.get(), wait->deadline(), out, &how);
  if (stats_ != nullptr) {
    if (job == nullptr) stats_->scans_not_queued.fetch_add(1);
    if (how.waited) stats_->scan_waits.fetch_add(1);
    if (how.waited && !done) stats_->scan_waits_expired.fetch_add(1);
    if (how.over_bounds) stats_->scan_waits_over_bound.fetch_add(1);
    if (how.waited && NamespaceLockHeld::Current()) stats_->scan_waits_locked.fetch_add(1);
  }
  if (done) return *out != nullptr;
  wait->NoteMissed();
  return false;
}

bool FactsCache::SameBytes(const ObjectId& object, FileVersion before, FileVersion now) const {
  if (before.size < 0) return false;  // no version: matches none
  if (now == before) return true;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(object);
  return it != entries_.end() && it->second.version == now && it->second.recorded_from == before;
}

void FactsCache::Store(Key key, FileVersion scanned, FileVersion now, media::MediaFormat format,
                       std::shared_ptr<const media::LocationScan> scan) {
  uint64_t bytes = scan != nullptr ? ScanBytes(*scan) : 0;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (now != scanned &&
      (it == entries_.end() || it->second.version != now || it->second.recorded_from != scanned)) {
    return;  // changed since, by more than the daemon's own record write
  }
  if (it != entries_.end() && it->second.version == now && it->second.content_read) return;
  if (entries_.size() >= kMaxEntries || scan_bytes_ + bytes > kMaxScanBytes) {
    entries_.clear();
    scan_bytes_ = 0;
    it = entries_.end();
    if (stats_ != nullptr) stats_->scan_cache_clears.fetch_add(1);
  }
  if (it == entries_.end() || it->second.version != now) {
    Entry fresh;
    fresh.version = now;
    if (it != entries_.end() && it->second.scan != nullptr) {
      scan_bytes_ -= std::min(scan_bytes_, ScanBytes(*it->second.scan));
    }
    it = entries_.insert_or_assign(key, fresh).first;
  }
  it->second.format = format;
  it->second.scan = std::move(scan);
  it->second.content_read = true;
  scan_bytes_ += bytes;
}

void FactsCache::Invalidate(const ObjectId& object) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(object);
  if (it == entries_.end()) return;
  if (it->second.scan != nullptr) {
    scan_bytes_ -= std::min(scan_bytes_, ScanBytes(*it->second.scan));
  }
  entries_.erase(it);
}

size_t FactsCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

uint64_t FactsCache::scan_bytes() const {
  absl::MutexLock lock(&mu_);
  return scan_bytes_;
}

}  // namespace scopedfs::daemon
