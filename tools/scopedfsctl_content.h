// A file named on scopedfsctl's command line, judged as scopedfsd judges a file's content when it
// first opens it: the format sniffed from its first bytes and, for a format that may carry
// location, its location scan. explain --content and scan both read their files through it.
#ifndef SCOPEDFS_TOOLS_SCOPEDFSCTL_CONTENT_H_
#define SCOPEDFS_TOOLS_SCOPEDFSCTL_CONTENT_H_

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "media/content_facts.h"
#include "media/location/location.h"

namespace scopedfs::policy::ctl {

// A regular file opened for reading, with the stat taken at open.
class InputFile {
 public:
  // O_NONBLOCK so that a FIFO named by mistake fails the regular-file check instead of hanging.
  absl::Status Open(const std::string& path);
  int fd() const { return fd_.get(); }
  const struct stat& st() const { return st_; }
  // The size stat'ed at open: scan and copy both judge this one version of the file.
  uint64_t size() const { return static_cast<uint64_t>(st_.st_size); }

 private:
  base::UniqueFd fd_;
  struct stat st_ = {};
};

// What scopedfsd learns about a file's content when it first opens it.
struct ScannedFile {
  media::MediaFormat format = media::MediaFormat::kUnknown;
  // The location scan, as the daemon makes one of every file.
  std::optional<media::LocationScan> scan;
};

// Sniffs and scans `in` (named `path` in errors), as the daemon does.
absl::StatusOr<ScannedFile> ScanInput(const InputFile& in, const std::string& path);

}  // namespace scopedfs::policy::ctl

#endif  // SCOPEDFS_TOOLS_SCOPEDFSCTL_CONTENT_H_
