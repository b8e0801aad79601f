#include "daemon/ops/kernel_listings.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>

#include "daemon/judge/facts_cache.h"
#include "daemon/ops/tree_walk.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

bool ListedByEveryCaller(const RequestContext& ctx, const Resolved& r, int dir_fd,
                         const dirent* ent) {
  bool directory = ent->d_type == DT_DIR;
  if (ent->d_type == DT_UNKNOWN) {
    struct stat st;
    directory = fstatat(dir_fd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
  }
  return directory && ctx.VisibleToEveryCaller(ChildPath(r.path, ent->d_name));
}

namespace {
// At most this many entries are read to prove a listing shared; a larger directory is listed
// per open.
constexpr int kMaxSharedListingEntries = 4096;

// Whether every caller who may open the directory `r` (its lower fd `dir_fd`) lists it alike, so
// that the kernel may keep one listing of it for all of them: the caller is of the storage's user
// (callers of another user, and every caller under the device layout, are judged per open), and
// every entry is ListedByEveryCaller. A caller refused the directory's OPENDIR never reads the
// kernel's listing: only an open answered with FOPEN_CACHE_DIR does.
bool ListedAlikeByEveryCaller(const RequestContext& ctx, const Resolved& r, int dir_fd) {
  if (ctx.engine() == nullptr || OfAnotherUser(ctx)) return false;
  DirStream stream;
  if (stream.Open(dir_fd) != 0) return false;
  int entries = 0;
  errno = 0;
  while (dirent* ent = stream.Next()) {
    if (IsDot(ent->d_name)) continue;
    if (++entries > kMaxSharedListingEntries) return false;
    if (!ListedByEveryCaller(ctx, r, stream.fd(), ent)) return false;
    errno = 0;
  }
  return errno == 0;
}

// The version of the directory `r` (stat'ed `st`) as far as a listing of it goes: any entry
// added, removed or renamed, through the mount or behind the daemon's back, changes the lower
// directory's mtime and ctime; and what the rules show of it can change with its path, which a
// rename of an ancestor changes and nothing in the directory itself records. 0: never.
uint64_t ListingVersion(const Resolved& r, const struct stat& st) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (uint64_t v :
       {static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_mtim.tv_sec),
        static_cast<uint64_t>(st.st_mtim.tv_nsec), static_cast<uint64_t>(st.st_ctim.tv_sec),
        static_cast<uint64_t>(st.st_ctim.tv_nsec), static_cast<uint64_t>(st.st_size),
        static_cast<uint64_t>(st.st_nlink)}) {
    mix(v);
  }
  mix(r.path.size());
  for (char c : r.path) mix(static_cast<unsigned char>(c));
  return h == 0 ? 1 : h;
}

// Whether the caller made the directory `node` (its lower fd `dir_fd`, stat'ed `st`): the creator
// recorded when it was made through the mount (under POSIX semantics, its owner). Only a
// directory's creator may have the kernel keep a listing of it made for it alone
// (ChooseKernelListing), so what one app does never changes what another's listing costs.
bool CallerMadeIt(Filesystem* fs, const RequestContext& ctx, Node* node, int dir_fd,
                  const struct stat& st) {
  if (fs->posix()) return st.st_uid == ctx.uid();
  int64_t creator = node->creator.load(std::memory_order_relaxed);
  if (creator < 0) {
    std::optional<uint32_t> recorded = RecordedOwner(dir_fd);
    if (!recorded.has_value()) return false;
    creator = *recorded;
    node->creator.store(creator, std::memory_order_relaxed);
  }
  return creator == static_cast<int64_t>(ctx.uid());
}

// How long a listing the kernel keeps may be served before the daemon lists the directory again:
// while the names and attributes that came with it (entry_cache_seconds) stay fresh for another
// second, so that a kept listing never turns into a LOOKUP per name.
int64_t KeptListingFreshNs(const Filesystem* fs) {
  return static_cast<int64_t>(fs->options().entry_cache_seconds * 1e9) - 1'000'000'000;
}
}  // namespace

// The kernel keeps one listing per directory inode, read and filled only by opens that carry
// FOPEN_CACHE_DIR, and emptied by any open without FOPEN_KEEP_CACHE. Which opens may use it
// is KeptListing's to say (kept_listing.h): at any time, only opens of one viewer, so no
// caller is ever served a listing made for another. Two viewers may keep one: every caller,
// where each lists the directory alike (what READDIR serves such opens is only what every
// caller lists: ListingSource::ForSharedListing), and the directory's creator, for a
// listing of its own that depends on no file's content (an app's own tree). Every other
// open answers FOPEN_KEEP_CACHE alone: it reads the daemon's listing and leaves the
// kernel's alone. A kept listing lasts while the lower directory keeps its version: changes
// through the mount the kernel sees itself, one behind the daemon's back makes the next open
// fill afresh.
void ChooseKernelListing(Filesystem* fs, const RequestContext& ctx, const Resolved& r, OpenDir* dir,
                         fuse_file_info* fi) {
  struct stat st;
  if (fstat(dir->fd.get(), &st) != 0)
    return;  // neither flag: read afresh; the kernel empties its own
  uint64_t version = ListingVersion(r, st);
  KeptListing& listing = r.node->kept_listing.Get();
  // Whether every caller lists it alike is a question of its entries, its path and the rules,
  // which its version and the engine's serial pin down: asked once per version (a read of the
  // whole directory), and taken from the record of whom the listing at this version was kept
  // for after that.
  std::string everyone = ctx.EveryCallerViewer();
  std::string recorded = listing.ViewerAt(version);
  bool alike;
  if (!everyone.empty() && ctx.OfThisSnapshot(recorded)) {
    alike = recorded == everyone && !OfAnotherUser(ctx);
  } else {
    alike = ListedAlikeByEveryCaller(ctx, r, dir->fd.get());
  }
  std::string viewer;
  if (alike) {
    viewer = std::move(everyone);
  } else if (CallerMadeIt(fs, ctx, r.node.get(), dir->fd.get(), st)) {
    viewer = ctx.ListingViewer();
  }
  KeptListing::Open kept = KeptListing::Open::kUncached;
  if (!viewer.empty()) {
    kept = listing.Begin(viewer, version, SteadyNowNs(), KeptListingFreshNs(fs), &dir->kept_fill);
  }
  dir->shared_listing = alike;
  if (alike) fs->stats().shared_listing_opens.fetch_add(1, std::memory_order_relaxed);
  fi->cache_readdir = kept != KeptListing::Open::kUncached;
  fi->keep_cache = kept != KeptListing::Open::kFill;
  if (kept != KeptListing::Open::kUncached) {
    dir->kept = r.node;
    (kept == KeptListing::Open::kKeep ? fs->stats().kept_listing_keeps
                                      : fs->stats().kept_listing_fills)
        .fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace scopedfs::daemon
