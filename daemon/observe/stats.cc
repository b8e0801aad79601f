// Stats counters and latency histograms (see stats.h).
#include "daemon/observe/stats.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/numeric/bits.h"
#include "daemon/abi/fuse_kernel_abi.h"

namespace scopedfs::daemon {

absl::string_view OpKindName(OpKind kind) {
  static constexpr absl::string_view kNames[] = {
      "lookup", "getattr", "setattr", "readdir", "open", "create",  "read",  "write", "mkdir",
      "mknod",  "unlink",  "rmdir",   "rename",  "link", "symlink", "xattr", "other"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(OpKind::kCount),
                "one name per OpKind");
  size_t i = static_cast<size_t>(kind);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "?";
}

void Stats::Record(OpKind kind, uint64_t nanos) {
  PerOp& op = ops_[static_cast<size_t>(kind)];
  op.count.fetch_add(1, std::memory_order_relaxed);
  // floor(log2(nanos)), capped at the last bucket; this runs on every request.
  int bucket = nanos == 0 ? 0 : absl::bit_width(nanos) - 1;
  if (bucket >= kBuckets) bucket = kBuckets - 1;
  op.buckets[static_cast<size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
}

void Stats::CountRequest(uint32_t opcode) {
  requests.fetch_add(1, std::memory_order_relaxed);
  std::atomic<uint64_t>* of_kind = nullptr;
  switch (opcode) {
    case abi::kOpcodeLookup:
      of_kind = &requests_lookup;
      break;
    case abi::kOpcodeGetattr:
      of_kind = &requests_getattr;
      break;
    case abi::kOpcodeOpendir:
      of_kind = &requests_opendir;
      break;
    case abi::kOpcodeReleasedir:
      of_kind = &requests_releasedir;
      break;
    case abi::kOpcodeReaddir:
    case abi::kOpcodeReaddirplus:
      of_kind = &requests_readdir;
      break;
    case abi::kOpcodeSetxattr:
    case abi::kOpcodeGetxattr:
    case abi::kOpcodeListxattr:
    case abi::kOpcodeRemovexattr:
      of_kind = &requests_xattr;
      break;
    case abi::kOpcodeFlush:
      of_kind = &requests_flush;
      break;
    default:
      return;
  }
  of_kind->fetch_add(1, std::memory_order_relaxed);
}

uint64_t Stats::Count(OpKind kind) const {
  return ops_[static_cast<size_t>(kind)].count.load(std::memory_order_relaxed);
}

uint64_t Stats::Percentile(OpKind kind, double fraction) const {
  const PerOp& op = ops_[static_cast<size_t>(kind)];
  // One pass loads each bucket once, so concurrent Records cannot make the rank overshoot.
  std::array<uint64_t, kBuckets> counts;
  uint64_t total = 0;
  for (int i = 0; i < kBuckets; ++i) {
    counts[static_cast<size_t>(i)] =
        op.buckets[static_cast<size_t>(i)].load(std::memory_order_relaxed);
    total += counts[static_cast<size_t>(i)];
  }
  if (total == 0) return 0;
  double clamped = std::isnan(fraction) ? 0.0 : std::clamp(fraction, 0.0, 1.0);
  uint64_t rank = static_cast<uint64_t>(std::ceil(clamped * static_cast<double>(total)));
  if (rank < 1) rank = 1;
  if (rank > total) rank = total;  // guards rounding of fraction * total
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts[static_cast<size_t>(i)];
    if (seen >= rank) return uint64_t{1} << (i + 1);
  }
  return uint64_t{1} << kBuckets;  // not reached: seen ends at total >= rank
}

void Stats::ToProto(scopedfs::Stats* out) const {
  // Numbers are doubles in the message so that its JSON form prints them as numbers (proto3 JSON
  // prints 64-bit integers as strings); counts and nanoseconds stay exact up to 2^53.
#define SCOPEDFS_COPY_COUNTER(name) \
  out->set_##name(static_cast<double>(name.load(std::memory_order_relaxed)));
  SCOPEDFS_STATS_COUNTERS(SCOPEDFS_COPY_COUNTER)
#undef SCOPEDFS_COPY_COUNTER
  out->clear_ops();
  for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k) {
    OpKind kind = static_cast<OpKind>(k);
    OpStats* op = out->add_ops();
    op->set_op(std::string(OpKindName(kind)));
    op->set_count(static_cast<double>(Count(kind)));
    op->set_p50_ns(static_cast<double>(Percentile(kind, 0.50)));
    op->set_p90_ns(static_cast<double>(Percentile(kind, 0.90)));
    op->set_p99_ns(static_cast<double>(Percentile(kind, 0.99)));
  }
}

}  // namespace scopedfs::daemon
