// Live counters for `scopedfsctl stats`: lock-free, updated on the request path, and copied into
// the control protocol's Stats message (proto/control.proto documents what each counter means).
#ifndef SCOPEDFS_DAEMON_OBSERVE_STATS_H_
#define SCOPEDFS_DAEMON_OBSERVE_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/control.pb.h"

namespace scopedfs::daemon {

// Operation families counted separately (latency percentiles come from log2 buckets).
enum class OpKind : uint8_t {
  kLookup,
  kGetattr,
  kSetattr,
  kReaddir,
  kOpen,
  kCreate,
  kRead,
  kWrite,
  kMkdir,
  kMknod,
  kUnlink,
  kRmdir,
  kRename,
  kLink,
  kSymlink,
  kXattr,
  kOther,
  kCount
};
absl::string_view OpKindName(OpKind kind);
// The name of a FUSE opcode as the kernel's fuse.h spells it without FUSE_ ("LOOKUP"), or
// "OPCODE_<n>" for one this table does not know.
std::string FuseOpcodeName(uint32_t opcode);

// The counters, listed once: this list declares each Stats member and copies it into the field of
// the same name of scopedfs::Stats (a counter without a field there does not compile). Adding a
// counter means a line here and a documented field in proto/control.proto, nothing else.
#define SCOPEDFS_STATS_COUNTERS(X)  \
  X(open_passthrough)               \
  X(open_mediated)                  \
  X(open_clean_media)               \
  X(open_denied)                    \
  X(read_requests)                  \
  X(write_requests)                 \
  X(redacted_reads)                 \
  X(redacted_reads_in_ring)         \
  X(location_scans)                 \
  X(location_found)                 \
  X(location_malformed)             \
  X(scan_joins)                     \
  X(scan_waits_behind_other_app)    \
  X(case_directory_reads)           \
  X(scan_waits)                     \
  X(scan_waits_expired)             \
  X(scan_waits_over_bound)          \
  X(scan_waits_locked)              \
  X(scans_not_queued)               \
  X(scan_cache_clears)              \
  X(content_reads)                  \
  X(facts_from_records)             \
  X(facts_records_written)          \
  X(facts_records_stale)            \
  X(facts_records_rejected)         \
  X(facts_records_dropped)          \
  X(tree_checks_unlocked)           \
  X(tree_checks_locked)             \
  X(backing_files)                  \
  X(backing_files_idle)             \
  X(backing_registrations)          \
  X(reloads)                        \
  X(requests)                       \
  X(requests_lookup)                \
  X(requests_getattr)               \
  X(requests_opendir)               \
  X(requests_releasedir)            \
  X(requests_readdir)               \
  X(requests_xattr)                 \
  X(requests_flush)                 \
  X(shared_listing_opens)           \
  X(kept_listing_fills)             \
  X(kept_listing_keeps)             \
  X(listing_entries_without_lookup) \
  X(listing_entries_from_listing)   \
  X(reply_defects)

class Stats {
 public:
#define SCOPEDFS_DECLARE_COUNTER(name) std::atomic<uint64_t> name{0};
  SCOPEDFS_STATS_COUNTERS(SCOPEDFS_DECLARE_COUNTER)
#undef SCOPEDFS_DECLARE_COUNTER

  void Record(OpKind kind, uint64_t nanos);
  // One request read from the kernel, by its FUSE opcode (those libfuse answers itself too).
  void CountRequest(uint32_t opcode);
  // One reply an op sent (OpRequest, including FORGET's none), and one audit decision made on a
  // reply's way out, by the opcode of the request answered.
  void CountReply(uint32_t opcode) { Of(replies_by_opcode_, opcode).fetch_add(1, kRelaxed); }
  void CountAudit(uint32_t opcode) { Of(audits_by_opcode_, opcode).fetch_add(1, kRelaxed); }
  uint64_t Count(OpKind kind) const;
  // Nearest-rank percentile of the recorded latencies of `kind`, `fraction` in [0, 1]: the upper
  // bound (ns) of the power-of-two bucket holding the ceil(fraction * n)-th smallest sample. 0
  // when nothing was recorded.
  uint64_t Percentile(OpKind kind, double fraction) const;

  // Fills every counter and the per-op table of `out`. The daemon-wide facts that are not
  // counters (nodes, passthrough_enabled, policy) are the caller's to set.
  void ToProto(scopedfs::Stats* out) const;

 private:
  // Opcodes 0..kOpcodes-2 are counted each; anything larger is counted in the last slot.
  static constexpr uint32_t kOpcodes = 64;
  using ByOpcode = std::array<std::atomic<uint64_t>, kOpcodes>;
  static constexpr std::memory_order kRelaxed = std::memory_order_relaxed;
  static std::atomic<uint64_t>& Of(ByOpcode& table, uint32_t opcode) {
    return table[opcode < kOpcodes ? opcode : kOpcodes - 1];
  }
  ByOpcode requests_by_opcode_{};
  ByOpcode replies_by_opcode_{};
  ByOpcode audits_by_opcode_{};
  static constexpr int kBuckets = 40;  // bucket i holds [2^i, 2^(i+1)) ns; 0 and 1 ns go to 0
  struct PerOp {
    std::atomic<uint64_t> count{0};
    std::array<std::atomic<uint64_t>, kBuckets> buckets{};
  };
  std::array<PerOp, static_cast<size_t>(OpKind::kCount)> ops_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OBSERVE_STATS_H_
