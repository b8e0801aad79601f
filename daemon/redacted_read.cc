// Redacted reads (see redacted_read.h).
#include "daemon/redacted_read.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/types/span.h"

namespace scopedfs::daemon {

// The fills are RedactedFills' (media/location), the function scopedfsctl explain/scan call too.
FillPlan RedactionPlan::For(FactsCache& facts, int node_fd, const struct stat& st) {
  FileVersion version = VersionOf(st);
  {
    absl::MutexLock lock(&mu_);
    if (fills_ != nullptr && version_ == version) return fills_;
  }
  FileInfo info = facts.Lookup(node_fd, st, "");
  auto fills = std::make_shared<const std::vector<policy::FillRange>>(
      policy::RedactedFills(info.scan.get(), info.content_read, static_cast<uint64_t>(st.st_size)));
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
