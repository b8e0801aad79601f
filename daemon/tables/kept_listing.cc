#include "daemon/tables/kept_listing.h"

namespace scopedfs::daemon {

namespace {
// Fill ids are unique across directories, so a fill of a node that went and came back is never
// mistaken for a current one.
std::atomic<uint64_t> next_fill{1};
}  // namespace

KeptListing::Open KeptListing::Begin(absl::string_view viewer, uint64_t version, int64_t now_ns,
                                     int64_t fresh_ns, uint64_t* fill) {
  if (version == 0 || viewer.empty()) return Open::kUncached;
  absl::MutexLock lock(&mu_);
  bool same = version_ == version && viewer_ == viewer;
  if (open_ > 0 && !same) return Open::kUncached;
  if (same && content_ == Content::kFree && now_ns - listed_at_ns_ < fresh_ns) {
    ++open_;
    *fill = fill_;
    return Open::kKeep;
  }
  // This viewer's fill is still being read (freshness or content not known yet), or its listing
  // depends on content: leave the kernel's listing alone.
  if (open_ > 0 || (same && content_ == Content::kDepends)) return Open::kUncached;
  viewer_.assign(viewer.data(), viewer.size());
  version_ = version;
  fill_ = next_fill.fetch_add(1, std::memory_order_relaxed);
  content_ = Content::kUnknown;
  listed_at_ns_ = 0;
  ++open_;
  *fill = fill_;
  return Open::kFill;
}

void KeptListing::Listed(uint64_t fill, bool content_free, int64_t now_ns) {
  absl::MutexLock lock(&mu_);
  if (fill != fill_ || content_ == Content::kDepends) return;
  if (!content_free) {
    content_ = Content::kDepends;
    return;
  }
  content_ = Content::kFree;
  listed_at_ns_ = now_ns;
}

KeptListing& KeptListingSlot::Get() {
  KeptListing* listing = listing_.load(std::memory_order_acquire);
  if (listing != nullptr) return *listing;
  auto* made = new KeptListing;
  if (listing_.compare_exchange_strong(listing, made, std::memory_order_acq_rel)) return *made;
  delete made;
  return *listing;
}

std::string KeptListing::ViewerAt(uint64_t version) {
  absl::MutexLock lock(&mu_);
  return version != 0 && version_ == version ? viewer_ : std::string();
}

void KeptListing::End() {
  absl::MutexLock lock(&mu_);
  if (open_ > 0) --open_;
}

}  // namespace scopedfs::daemon
