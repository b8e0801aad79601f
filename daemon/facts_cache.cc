// Content-facts cache (see facts_cache.h).
#include "daemon/facts_cache.h"

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace scopedfs::daemon {

FileVersion VersionOf(const struct stat& st) {
  return {st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
          st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
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
  // Only a regular file's bytes are ever read; a directory, symlink, fifo or socket has only
  // its creator.
  if (!S_ISREG(st.st_mode)) needs.content = false;
  FileInfo info;
  info.facts = policy::FactsFromFormat(name, policy::MediaFormat::kUnknown);
  info.content_read = !S_ISREG(st.st_mode);
  if (needs.owner && needs.owner_is_uid) {
    info.owner = st.st_uid;
    needs.owner = false;
  }
  if (!needs.owner && !needs.content) return info;

  Key key{st.st_dev, st.st_ino};
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
  bool changed = false;
  if (needs.content && !entry.content_read) {
    std::string proc = absl::StrCat("/proc/self/fd/", fd);
    base::UniqueFd rfd(open(proc.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!rfd.valid()) {
      // Not cached: the next request tries again. Until then nothing about it can be vouched for.
      info.content_read = false;
      if (needs.owner) info.owner = entry.owner_read ? entry.owner : RecordedOwner(fd);
      info.facts.location = policy::LocationPresence::kMalformed;
      return info;
    }
    uint8_t head[policy::kSniffBytes];
    ssize_t n = pread(rfd.get(), head, sizeof(head), 0);
    if (n > 0) {
      entry.format = policy::SniffFormat(absl::MakeConstSpan(head, static_cast<size_t>(n)));
    }
    if (policy::FormatMayCarryLocation(entry.format)) {
      std::shared_ptr<const policy::LocationScan> scan;
      if (!ScanFor(st, std::move(rfd), entry.format, &scan)) {
        // Not scanned in time: uncertain, and not cached (the queued scan fills the cache).
        info.content_read = false;
        if (needs.owner) info.owner = entry.owner_read ? entry.owner : RecordedOwner(fd);
        info.facts = policy::FactsFromFormat(name, entry.format);
        info.facts.location = policy::LocationPresence::kMalformed;
        return info;
      }
      entry.scan = std::move(scan);
    }
    entry.content_read = true;
    changed = true;
  }
  if (needs.owner && !entry.owner_read) {
    entry.owner = RecordedOwner(fd);
    entry.owner_read = true;
    changed = true;
  }
  if (changed) {
    absl::MutexLock lock(&mu_);
    if (entries_.size() >= kMaxEntries) entries_.clear();
    entries_[key] = entry;
  }
  if (needs.owner) info.owner = entry.owner;
  if (needs.content) {
    info.content_read = true;
    info.scan = entry.scan;
    info.facts = policy::FactsOfContent(name, entry.format, entry.scan.get());
  }
  return info;
}

std::shared_ptr<const policy::LocationScan> FactsCache::Scan(int fd, uint64_t size,
                                                             policy::MediaFormat format) {
  policy::FdSource source(fd, size);
  auto scan = std::make_shared<policy::LocationScan>(policy::ScanLocation(format, source));
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

bool FactsCache::ScanFor(const struct stat& st, base::UniqueFd rfd, policy::MediaFormat format,
                         std::shared_ptr<const policy::LocationScan>* out) {
  ScanWait* wait = ScanWait::Current();
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (wait == nullptr) {
    *out = Scan(rfd.get(), size, format);
    return true;
  }
  FileVersion v = VersionOf(st);
  ScanQueue::Key key{st.st_dev, st.st_ino, v.size, v.mtime_ns, v.ctime_ns};
  auto fd = std::make_shared<base::UniqueFd>(std::move(rfd));
  std::shared_ptr<ScanQueue::Job> job =
      scans_.Submit(wait->app(), key, [this, fd, size, format, key] {
        std::shared_ptr<const policy::LocationScan> scan = Scan(fd->get(), size, format);
        // Filed under the version stat'ed before the scan: a change meanwhile is a new version.
        FileVersion version{key.size, key.mtime_ns, key.ctime_ns};
        absl::MutexLock lock(&mu_);
        auto it = entries_.find(Key{key.dev, key.ino});
        if (it == entries_.end() || it->second.version != version) {
          if (entries_.size() >= kMaxEntries) entries_.clear();
          Entry fresh;
          fresh.version = version;
          it = entries_.insert_or_assign(Key{key.dev, key.ino}, fresh).first;
        }
        if (!it->second.content_read) {
          it->second.format = format;
          it->second.scan = scan;
          it->second.content_read = true;
        }
        return scan;
      });
  if (job != nullptr && scans_.Wait(wait->app(), job.get(), wait->deadline(), out)) {
    return *out != nullptr;
  }
  wait->NoteMissed();
  return false;
}

void FactsCache::Invalidate(dev_t dev, ino_t ino) {
  absl::MutexLock lock(&mu_);
  entries_.erase(Key{dev, ino});
}

size_t FactsCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace scopedfs::daemon
