// Stats counters and latency histograms (see stats.h).
#include "daemon/observe/stats.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
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

std::string FuseOpcodeName(uint32_t opcode) {
  // From the kernel's include/uapi/linux/fuse.h (enum fuse_opcode); 7, 19 and 40-41 are unused
  // here or not requests.
  static constexpr const char* kNames[] = {
      nullptr,        "LOOKUP",        "FORGET",      "GETATTR",  "SETATTR",  "READLINK",
      "SYMLINK",      nullptr,         "MKNOD",       "MKDIR",    "UNLINK",   "RMDIR",
      "RENAME",       "LINK",          "OPEN",        "READ",     "WRITE",    "STATFS",
      "RELEASE",      nullptr,         "FSYNC",       "SETXATTR", "GETXATTR", "LISTXATTR",
      "REMOVEXATTR",  "FLUSH",         "INIT",        "OPENDIR",  "READDIR",  "RELEASEDIR",
      "FSYNCDIR",     "GETLK",         "SETLK",       "SETLKW",   "ACCESS",   "CREATE",
      "INTERRUPT",    "BMAP",          "DESTROY",     "IOCTL",    "POLL",     "NOTIFY_REPLY",
      "BATCH_FORGET", "FALLOCATE",     "READDIRPLUS", "RENAME2",  "LSEEK",    "COPY_FILE_RANGE",
      "SETUPMAPPING", "REMOVEMAPPING", "SYNCFS",      "TMPFILE",  "STATX",
  };
  if (opcode < sizeof(kNames) / sizeof(kNames[0]) && kNames[opcode] != nullptr) {
    return kNames[opcode];
  }
  return absl::StrCat("OPCODE_", opcode);
}

void Stats::CountRequest(uint32_t opcode) {
  requests.fetch_add(1, std::memory_order_relaxed);
  Of(requests_by_opcode_, opcode).fetch_add(1, kRelaxed);
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
  out->clear_opcodes();
  for (uint32_t code = 0; code < kOpcodes; ++code) {
    uint64_t requests_of = requests_by_opcode_[code].load(kRelaxed);
    uint64_t replies_of = replies_by_opcode_[code].load(kRelaxed);
    uint64_t audits_of = audits_by_opcode_[code].load(kRelaxed);
    if (requests_of == 0 && replies_of == 0 && audits_of == 0) continue;
    OpcodeStats* row = out->add_opcodes();
    row->set_opcode(code);
    row->set_name(FuseOpcodeName(code));
    row->set_requests(static_cast<double>(requests_of));
    row->set_replies(static_cast<double>(replies_of));
    row->set_audits(static_cast<double>(audits_of));
  }
}

}  // namespace scopedfs::daemon
