// Bounded location scans (see location_bounds.h).
#include "daemon/judge/location_bounds.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"

namespace scopedfs::daemon {
namespace {

using media::LocationRange;

// Sorts by begin and merges ranges of one kind that overlap or lie at most `gap` bytes apart.
void Merge(std::vector<LocationRange>* ranges, uint64_t gap) {
  std::sort(ranges->begin(), ranges->end(), [](const LocationRange& a, const LocationRange& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.begin < b.begin;
  });
  std::vector<LocationRange> out;
  for (const LocationRange& r : *ranges) {
    if (r.end <= r.begin) continue;
    if (!out.empty() && out.back().kind == r.kind && r.begin <= out.back().end + gap) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end(), [](const LocationRange& a, const LocationRange& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.kind < b.kind;
  });
  *ranges = std::move(out);
}

// One range per kind, from the kind's first byte to its last.
void Hull(std::vector<LocationRange>* ranges) {
  std::map<Redaction, LocationRange> by_kind;
  for (const LocationRange& r : *ranges) {
    auto [it, fresh] = by_kind.emplace(r.kind, r);
    if (!fresh) {
      it->second.begin = std::min(it->second.begin, r.begin);
      it->second.end = std::max(it->second.end, r.end);
    }
  }
  ranges->clear();
  for (const auto& [kind, r] : by_kind) ranges->push_back(r);
  std::sort(ranges->begin(), ranges->end(),
            [](const LocationRange& a, const LocationRange& b) { return a.begin < b.begin; });
}

}  // namespace

void BoundScan(media::LocationScan* scan) {
  if (scan->ranges.size() + scan->fallback.size() <= kMaxLocationRanges) return;
  Merge(&scan->ranges, kLocationMergeGap);
  Merge(&scan->fallback, kLocationMergeGap);
  size_t merged = scan->ranges.size() + scan->fallback.size();
  if (merged <= kMaxLocationRanges) {
    scan->ranges.shrink_to_fit();
    scan->fallback.shrink_to_fit();
    return;
  }
  if (!scan->malformed) {
    scan->malformed = true;
    scan->error = absl::StrCat(merged, " location ranges, more than the ", kMaxLocationRanges,
                               " one file may have");
  }
  Hull(&scan->ranges);
  Hull(&scan->fallback);
  scan->ranges.shrink_to_fit();
  scan->fallback.shrink_to_fit();
}

uint64_t ScanBytes(const media::LocationScan& scan) {
  return sizeof(scan) + scan.error.capacity() +
         (scan.ranges.capacity() + scan.fallback.capacity()) * sizeof(LocationRange);
}

}  // namespace scopedfs::daemon
