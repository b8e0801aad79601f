// Live counters for `scopedfsctl stats`: lock-free, updated on the request path.
#ifndef SCOPEDFS_DAEMON_STATS_H_
#define SCOPEDFS_DAEMON_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace scopedfs::daemon {

// Operation families counted separately (latency percentiles come from log2 buckets).
enum class OpKind : uint8_t {
  kLookup, kGetattr, kSetattr, kReaddir, kOpen, kCreate, kRead, kWrite, kMkdir, kUnlink,
  kRmdir, kRename, kLink, kSymlink, kXattr, kOther, kCount
};
absl::string_view OpKindName(OpKind kind);

class Stats {
 public:
  std::atomic<uint64_t> open_passthrough{0};
  std::atomic<uint64_t> open_mediated{0};
  std::atomic<uint64_t> open_denied{0};
  std::atomic<uint64_t> read_requests{0};
  std::atomic<uint64_t> write_requests{0};
  std::atomic<uint64_t> backing_files{0};  // currently registered backing ids
  // Content-dependent fast path: passthrough opens of photos and videos by callers who would have
  // read a redacted copy, had the file carried location.
  std::atomic<uint64_t> open_clean_media{0};
  std::atomic<uint64_t> redacted_reads{0};      // READs answered from a redacted view
  std::atomic<uint64_t> location_scans{0};      // file versions scanned for location
  std::atomic<uint64_t> location_found{0};      // ... that carried location
  std::atomic<uint64_t> location_malformed{0};  // ... that could not be vouched for

  void Record(OpKind kind, uint64_t nanos);
  uint64_t Count(OpKind kind) const;
  // Latency below which `fraction` of the recorded ops of `kind` fell (bucket upper bound, ns).
  uint64_t Percentile(OpKind kind, double fraction) const;

 private:
  static constexpr int kBuckets = 40;  // 2^0 .. 2^39 ns
  struct PerOp {
    std::atomic<uint64_t> count{0};
    std::array<std::atomic<uint64_t>, kBuckets> buckets{};
  };
  std::array<PerOp, static_cast<size_t>(OpKind::kCount)> ops_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_STATS_H_
