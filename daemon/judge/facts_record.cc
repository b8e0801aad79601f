// Content facts kept on the lower tree (see facts_record.h). The bytes are little-endian:
//   "SFF1" ino:8 generation:8 size:8 mtime_ns:8 ctime_bound_ns:8
//   format:1 content_class:1 flags:1 (bit 0: scanned) reserved:1 ranges:2 (count)
//   then per range: begin:8 end:8 kind:1
#include "daemon/judge/facts_record.h"

#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace scopedfs::daemon {
namespace {

constexpr char kMagic[] = "SFF1";
constexpr size_t kHeaderBytes = 4 + 5 * 8 + 4 + 2;
constexpr size_t kRangeBytes = 17;
constexpr uint8_t kScanned = 1;

int64_t Nanos(const struct timespec& ts) { return ts.tv_sec * 1000000000LL + ts.tv_nsec; }

void Put(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t Get(absl::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}

std::string ProcPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

}  // namespace

std::string EncodeFactsRecord(const FactsRecord& r) {
  const media::LocationScan* scan = r.scan.get();
  if (scan != nullptr && (scan->malformed || scan->ranges.size() > kMaxRecordRanges)) return "";
  std::string out(kMagic, 4);
  Put(&out, r.ino, 8);
  Put(&out, r.generation, 8);
  Put(&out, static_cast<uint64_t>(r.size), 8);
  Put(&out, static_cast<uint64_t>(r.mtime_ns), 8);
  Put(&out, static_cast<uint64_t>(r.ctime_bound_ns), 8);
  Put(&out, static_cast<uint8_t>(r.format), 1);
  Put(&out, scan != nullptr ? static_cast<uint8_t>(scan->content_class) : 0, 1);
  Put(&out, scan != nullptr ? kScanned : 0, 1);
  Put(&out, 0, 1);
  size_t n = scan != nullptr ? scan->ranges.size() : 0;
  Put(&out, n, 2);
  for (size_t i = 0; i < n; ++i) {
    const media::LocationRange& range = scan->ranges[i];
    Put(&out, range.begin, 8);
    Put(&out, range.end, 8);
    Put(&out, static_cast<uint8_t>(range.kind), 1);
  }
  return out;
}

absl::StatusOr<FactsRecord> DecodeFactsRecord(absl::string_view in) {
  auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("facts record: ", what));
  };
  if (in.size() < kHeaderBytes || in.size() > kMaxRecordBytes) {
    return bad(absl::StrCat("length ", in.size()));
  }
  if (in.substr(0, 4) != absl::string_view(kMagic, 4)) return bad("no SFF1 magic");
  FactsRecord r;
  r.ino = Get(in, 4, 8);
  r.generation = Get(in, 12, 8);
  r.size = static_cast<int64_t>(Get(in, 20, 8));
  r.mtime_ns = static_cast<int64_t>(Get(in, 28, 8));
  r.ctime_bound_ns = static_cast<int64_t>(Get(in, 36, 8));
  uint8_t format = static_cast<uint8_t>(Get(in, 44, 1));
  uint8_t content_class = static_cast<uint8_t>(Get(in, 45, 1));
  uint8_t flags = static_cast<uint8_t>(Get(in, 46, 1));
  size_t n = Get(in, 48, 2);
  if (r.size < 0) return bad("negative size");
  if (format > static_cast<uint8_t>(media::kLastFormat)) return bad("unknown format");
  if ((flags & ~kScanned) != 0 || Get(in, 47, 1) != 0) return bad("unknown flags");
  if (n > kMaxRecordRanges) return bad(absl::StrCat(n, " ranges"));
  if (in.size() != kHeaderBytes + n * kRangeBytes) return bad("length does not match the ranges");
  if (!MediaClass_IsValid(content_class)) return bad("unknown content class");
  r.format = static_cast<media::MediaFormat>(format);
  if ((flags & kScanned) == 0) {
    if (n != 0 || content_class != 0) return bad("ranges without a scan");
    return r;
  }
  auto scan = std::make_shared<media::LocationScan>();
  scan->content_class = static_cast<MediaClass>(content_class);
  // The last end of each kind: ranges of one kind never overlap or touch (location.h).
  std::vector<std::pair<int, uint64_t>> last_end;
  for (size_t i = 0; i < n; ++i) {
    size_t at = kHeaderBytes + i * kRangeBytes;
    media::LocationRange range;
    range.begin = Get(in, at, 8);
    range.end = Get(in, at + 8, 8);
    int kind = static_cast<int>(Get(in, at + 16, 1));
    if (!Redaction_IsValid(kind) || kind == REDACTION_UNSPECIFIED) return bad("unknown kind");
    range.kind = static_cast<Redaction>(kind);
    if (range.begin >= range.end || range.end > static_cast<uint64_t>(r.size)) {
      return bad(absl::StrCat("range ", i, " outside the file"));
    }
    if (!scan->ranges.empty() && range.begin < scan->ranges.back().begin) {
      return bad("ranges out of order");
    }
    for (auto& [k, end] : last_end) {
      if (k == kind && range.begin <= end) return bad("ranges of one kind overlap");
    }
    bool seen = false;
    for (auto& [k, end] : last_end) {
      if (k == kind) end = range.end, seen = true;
    }
    if (!seen) last_end.emplace_back(kind, range.end);
    scan->ranges.push_back(range);
  }
  r.scan = std::move(scan);
  return r;
}

bool RecordMatches(const FactsRecord& r, const ObjectId& id, const struct stat& st) {
  return r.ino == static_cast<uint64_t>(st.st_ino) && id.generation != 0 &&
         r.generation == id.generation && r.size == st.st_size && r.mtime_ns == Nanos(st.st_mtim) &&
         Nanos(st.st_ctim) <= r.ctime_bound_ns;
}

absl::StatusOr<FactsRecord> ReadFactsRecord(int fd) {
  char value[kMaxRecordBytes + 1];
  ssize_t len = getxattr(ProcPath(fd).c_str(), kFactsXattr, value, sizeof(value));
  if (len < 0) {
    if (errno == ERANGE) return absl::InvalidArgumentError("facts record: too long");
    return absl::NotFoundError("no facts record");
  }
  return DecodeFactsRecord(absl::string_view(value, static_cast<size_t>(len)));
}

bool WriteFactsRecord(int fd, const ObjectId& id, const struct stat& before,
                      media::MediaFormat format, std::shared_ptr<const media::LocationScan> scan,
                      struct stat* after) {
  if (id.generation == 0 || !S_ISREG(before.st_mode)) return false;
  struct stat now;
  if (fstat(fd, &now) != 0 || now.st_ino != before.st_ino || now.st_size != before.st_size ||
      Nanos(now.st_mtim) != Nanos(before.st_mtim) || Nanos(now.st_ctim) != Nanos(before.st_ctim)) {
    return false;
  }
  struct timespec clock;
  clock_gettime(CLOCK_REALTIME, &clock);
  FactsRecord r;
  r.ino = static_cast<uint64_t>(before.st_ino);
  r.generation = id.generation;
  r.size = before.st_size;
  r.mtime_ns = Nanos(before.st_mtim);
  r.ctime_bound_ns = Nanos(clock) + absl::ToInt64Nanoseconds(kRecordCtimeSlack);
  r.format = format;
  r.scan = std::move(scan);
  std::string bytes = EncodeFactsRecord(r);
  if (bytes.empty()) return false;
  std::string proc = ProcPath(fd);
  if (setxattr(proc.c_str(), kFactsXattr, bytes.data(), bytes.size(), 0) != 0) return false;
  // The record holds only if nothing but its own write came between the stat above and now.
  if (fstat(fd, after) == 0 && RecordMatches(r, id, *after)) return true;
  removexattr(proc.c_str(), kFactsXattr);
  return false;
}

void DropFactsRecord(int fd) { removexattr(ProcPath(fd).c_str(), kFactsXattr); }

void DropFactsRecordOfOpenFile(int fd) { fremovexattr(fd, kFactsXattr); }

}  // namespace scopedfs::daemon
