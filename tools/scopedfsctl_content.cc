// Opening and scanning the files scopedfsctl is given, as the daemon opens and scans content.
#include "tools/scopedfsctl_content.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "media/content_facts.h"
#include "media/location/location.h"

namespace scopedfs::policy::ctl {

absl::Status InputFile::Open(const std::string& path) {
  fd_.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd_.valid()) return absl::ErrnoToStatus(errno, path);
  if (fstat(fd_.get(), &st_) != 0) return absl::ErrnoToStatus(errno, path);
  if (!S_ISREG(st_.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ScannedFile> ScanInput(const InputFile& in, const std::string& path) {
  std::vector<uint8_t> head(media::kSniffBytes);
  ssize_t n = pread(in.fd(), head.data(), head.size(), 0);
  if (n < 0) return absl::ErrnoToStatus(errno, path);
  head.resize(static_cast<size_t>(n));
  ScannedFile scanned;
  scanned.format = media::SniffFormat(head);
  // The daemon scans every file (carriers with their parsers, the rest with a signature sweep),
  // so explain sees what the engine would see.
  media::FdSource source(in.fd(), in.size());
  scanned.scan = media::ScanLocation(scanned.format, source);
  return scanned;
}

}  // namespace scopedfs::policy::ctl
