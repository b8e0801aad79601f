// Which opens of one directory may use the listing the kernel keeps of it.
//
// The kernel keeps at most one listing per directory inode (its page cache, filled from the
// READDIR replies of opens answered FOPEN_CACHE_DIR) and serves it to every open answered
// FOPEN_CACHE_DIR | FOPEN_KEEP_CACHE, whoever the caller is; an open without FOPEN_KEEP_CACHE
// empties it, and only opens with FOPEN_CACHE_DIR read or fill it (fs/fuse/readdir.c). Under a
// policy whose listings differ by caller, that is safe only if everything that can enter the cache
// while an open may read it was made for one viewer: KeptListing is that bookkeeping, one per
// directory node.
//
// A viewer is an opaque key (the daemon's: a caller's uid, SELinux domain and policy snapshot, or
// "every caller" for a listing every caller shares) and a version of the lower directory. The
// rules, per OPENDIR:
//  - kFill (FOPEN_CACHE_DIR without FOPEN_KEEP_CACHE: the kernel empties what it kept, and this
//    open fills it afresh): when no open that may fill is outstanding, and what is kept is not
//    this viewer's, or its freshness or content-independence is not known. From then on the
//    kept listing is this viewer's.
//  - kKeep (both flags): the kept listing is this viewer's at this version, its listing was
//    found not to depend on any file's content (Listed), and it was listed less than `fresh_ns`
//    ago (the kernel's cached names and attributes that came with it are still fresh).
//  - kUncached (neither flag matters: the open never reads or fills the kernel's listing; the
//    daemon answers FOPEN_KEEP_CACHE alone so that it does not empty another viewer's): an open
//    that may fill is outstanding for another viewer or version, or this viewer's listing
//    depends on content.
// So every open that may read or fill the kernel's listing at a time is of one viewer and
// version, and a new viewer's first open empties what another left. End() is called at the
// RELEASEDIR of every kFill and kKeep open.
#ifndef SCOPEDFS_DAEMON_TABLES_KEPT_LISTING_H_
#define SCOPEDFS_DAEMON_TABLES_KEPT_LISTING_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace scopedfs::daemon {

class KeptListing {
 public:
  enum class Open { kUncached, kFill, kKeep };

  // An OPENDIR of `viewer` while the lower directory has `version` (0: unknown, never kept).
  // kFill and kKeep set *fill to the fill the open belongs to (for Listed).
  Open Begin(absl::string_view viewer, uint64_t version, int64_t now_ns, int64_t fresh_ns,
             uint64_t* fill) ABSL_LOCKS_EXCLUDED(mu_);
  // An open of `fill` was served a listing from its start at `now_ns` (the kernel filled, or
  // filled again, its cache from it): `content_free` when no entry's visibility to the viewer
  // could depend on a file's content. A fill that is no longer the kept one is ignored.
  void Listed(uint64_t fill, bool content_free, int64_t now_ns) ABSL_LOCKS_EXCLUDED(mu_);
  // The RELEASEDIR of an open Begin answered kFill or kKeep.
  void End() ABSL_LOCKS_EXCLUDED(mu_);
  // The viewer of the latest fill when it was of `version`, else "": whom the listing at that
  // version was found to be for.
  std::string ViewerAt(uint64_t version) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Content { kUnknown, kFree, kDepends };
  absl::Mutex mu_;
  std::string viewer_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t fill_ ABSL_GUARDED_BY(mu_) = 0;
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // kFill and kKeep opens not yet ended
  Content content_ ABSL_GUARDED_BY(mu_) = Content::kUnknown;
  int64_t listed_at_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

// A directory node's KeptListing, made at its first use (most nodes are files, and most
// directories are never listed by a viewer that may keep a listing).
class KeptListingSlot {
 public:
  KeptListingSlot() = default;
  KeptListingSlot(const KeptListingSlot&) = delete;
  KeptListingSlot& operator=(const KeptListingSlot&) = delete;
  ~KeptListingSlot() { delete listing_.load(std::memory_order_acquire); }
  KeptListing& Get();

 private:
  std::atomic<KeptListing*> listing_{nullptr};
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_KEPT_LISTING_H_
