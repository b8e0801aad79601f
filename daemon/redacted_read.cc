// Redacted reads (see redacted_read.h).
#include "daemon/redacted_read.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/types/span.h"

namespace scopedfs::daemon {
namespace {

constexpr uint32_t kAllLocationKinds = (1u << REDACTION_EXIF_GPS) | (1u << REDACTION_XMP_GPS) |
                                       (1u << REDACTION_ISOBMFF_LOCATION);

std::vector<policy::FillRange> MakeFills(const FileInfo& info, const struct stat& st) {
  std::vector<policy::FillRange> fills;
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (info.scan == nullptr) {
    // No carrier format (no parser can find location in it): served as it is. Unless its bytes
    // could not be read at all, when nothing in it can be vouched for.
    if (!info.content_read && size > 0) fills.push_back({0, size, 0});
    return fills;
  }
  std::vector<policy::LocationRange> ranges = info.scan->ranges;
  // Fallback ranges apply under REDACT_ALL, and also whenever the file became malformed after
  // the view was chosen: a redacted view never serves what it cannot vouch for.
  if (info.scan->malformed) {
    ranges.insert(ranges.end(), info.scan->fallback.begin(), info.scan->fallback.end());
  }
  // Every kind the parsers found is filled, whichever rule made the view redacted.
  fills = policy::PlanFills(ranges, kAllLocationKinds);
  if (info.scan->malformed && fills.empty() && size > 0) fills.push_back({0, size, 0});
  return fills;
}

}  // namespace

FillPlan RedactionPlan::For(FactsCache& facts, int node_fd, const struct stat& st) {
  FileVersion version = VersionOf(st);
  {
    absl::MutexLock lock(&mu_);
    if (fills_ != nullptr && version_ == version) return fills_;
  }
  auto fills = std::make_shared<const std::vector<policy::FillRange>>(
      MakeFills(facts.Lookup(node_fd, st, ""), st));
  absl::MutexLock lock(&mu_);
  version_ = version;
  fills_ = std::move(fills);
  return fills_;
}

int ReadRedacted(FactsCache& facts, int node_fd, int fd, RedactionPlan* plan, size_t size,
                 off_t off, char* buf, size_t* got) {
  constexpr int kAttempts = 8;
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  FillPlan fills = plan->For(facts, node_fd, st);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    ssize_t n = pread(fd, buf, size, off);
    if (n < 0) return errno;
    struct stat after;
    if (fstat(fd, &after) != 0) return errno;
    if (VersionOf(after) != VersionOf(st)) {
      st = after;
      fills = plan->For(facts, node_fd, st);
      continue;
    }
    policy::ApplyFills(*fills, static_cast<uint64_t>(off),
                       absl::MakeSpan(reinterpret_cast<uint8_t*>(buf), static_cast<size_t>(n)));
    *got = static_cast<size_t>(n);
    return 0;
  }
  *got = off < st.st_size ? std::min(size, static_cast<size_t>(st.st_size - off)) : 0;
  memset(buf, 0, *got);
  return 0;
}

}  // namespace scopedfs::daemon
