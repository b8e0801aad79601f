// Stats counters and latency histograms (see stats.h).
#include "daemon/stats.h"

namespace scopedfs::daemon {

absl::string_view OpKindName(OpKind kind) {
  static constexpr absl::string_view kNames[] = {
      "lookup", "getattr", "setattr", "readdir", "open",    "create", "read",  "write",
      "mkdir",  "unlink",  "rmdir",   "rename",  "link",    "symlink", "xattr", "other"};
  size_t i = static_cast<size_t>(kind);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "?";
}

void Stats::Record(OpKind kind, uint64_t nanos) {
  PerOp& op = ops_[static_cast<size_t>(kind)];
  op.count.fetch_add(1, std::memory_order_relaxed);
  int bucket = 0;
  while (bucket + 1 < kBuckets && (uint64_t{1} << (bucket + 1)) <= nanos) ++bucket;
  op.buckets[static_cast<size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
}

uint64_t Stats::Count(OpKind kind) const {
  return ops_[static_cast<size_t>(kind)].count.load(std::memory_order_relaxed);
}

uint64_t Stats::Percentile(OpKind kind, double fraction) const {
  const PerOp& op = ops_[static_cast<size_t>(kind)];
  uint64_t total = 0;
  for (const auto& b : op.buckets) total += b.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  uint64_t want = static_cast<uint64_t>(fraction * static_cast<double>(total));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += op.buckets[static_cast<size_t>(i)].load(std::memory_order_relaxed);
    if (seen > want) return uint64_t{1} << (i + 1);
  }
  return uint64_t{1} << kBuckets;
}

}  // namespace scopedfs::daemon
