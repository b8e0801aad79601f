// scopedfsctl scan: per file, its sniffed format, location ranges, fallback, scan cost and, with
// --redacted_out, a copy with the fills a redacted reader gets (RedactedFills), narrowed to
// --kinds.
#include "tools/scopedfsctl_scan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/unique_fd.h"
#include "media/content_facts.h"
#include "media/location/location.h"
#include "policy/rule_set.h"
#include "tools/scopedfsctl_content.h"
#include "tools/scopedfsctl_flags.h"

namespace scopedfs::policy::ctl {
namespace {

// "exif_gps" for REDACTION_EXIF_GPS: the spelling --kinds takes.
std::string KindName(Redaction kind) {
  std::string name = Redaction_Name(kind);
  absl::string_view short_name(name);
  if (absl::ConsumePrefix(&short_name, "REDACTION_")) name = std::string(short_name);
  return absl::AsciiStrToLower(name);
}

std::string DescribeRange(uint64_t begin, uint64_t end) {
  return absl::StrCat("[", begin, ", ", end, ")");
}

std::string FillByte(uint8_t fill) { return absl::StrFormat("0x%02x", fill); }

uint64_t FilledBytes(absl::Span<const media::FillRange> plan) {
  uint64_t total = 0;
  for (const media::FillRange& f : plan) total += f.end - f.begin;
  return total;
}

// Parses --kinds ("exif_gps,xmp_gps") into a mask of 1 << Redaction.
absl::StatusOr<EnumMask> ParseKinds(absl::string_view text) {
  EnumMask mask = 0;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    word = absl::StripAsciiWhitespace(word);
    bool known = false;
    for (int r = REDACTION_EXIF_GPS; r <= REDACTION_XMP_PLACE; ++r) {
      if (word == KindName(static_cast<Redaction>(r))) {
        mask |= Bit(r);
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kinds: unknown kind \"", word,
                       "\" (expected exif_gps, xmp_gps, isobmff_location, iptc_place, xmp_place)"));
    }
  }
  if (mask == 0) return absl::InvalidArgumentError("--kinds: no kind given");
  return mask;
}

// Copies `in` to `out_path` with `plan` applied, through a temporary file renamed into place, so
// that a reader never sees a half-written copy and a read-only earlier copy is replaced.
absl::Status WriteRedacted(const InputFile& in, const std::string& in_path,
                           absl::Span<const media::FillRange> plan, const std::string& dir,
                           const std::string& out_path) {
  std::string tmp_path = absl::StrCat(dir, "/.scopedfsctl-scan.XXXXXX");
  base::UniqueFd out(mkstemp(tmp_path.data()));
  if (!out.valid()) return absl::ErrnoToStatus(errno, dir);
  absl::Status status;
  std::vector<uint8_t> buf(1 << 20);
  for (uint64_t offset = 0; status.ok() && offset < in.size();) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), in.size() - offset));
    ssize_t got = pread(in.fd(), buf.data(), want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      status = absl::ErrnoToStatus(errno, in_path);
      break;
    }
    if (got == 0) {
      status = absl::DataLossError(absl::StrCat(in_path, ": file shrank while being copied"));
      break;
    }
    absl::Span<uint8_t> chunk(buf.data(), static_cast<size_t>(got));
    media::ApplyFills(plan, offset, chunk);
    for (size_t done = 0; done < chunk.size();) {
      ssize_t put = write(out.get(), chunk.data() + done, chunk.size() - done);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) {
        status = absl::ErrnoToStatus(errno, out_path);
        break;
      }
      done += static_cast<size_t>(put);
    }
    offset += chunk.size();
  }
  if (status.ok() && fchmod(out.get(), 0644) != 0) status = absl::ErrnoToStatus(errno, out_path);
  // close(2) is where a full disk or a failed NFS flush shows up, so its result counts.
  if (out.Close() != 0 && status.ok()) status = absl::ErrnoToStatus(errno, out_path);
  if (status.ok() && rename(tmp_path.c_str(), out_path.c_str()) != 0) {
    status = absl::ErrnoToStatus(errno, out_path);
  }
  if (!status.ok()) unlink(tmp_path.c_str());
  return status;
}

void PrintRanges(absl::string_view label, absl::Span<const media::LocationRange> ranges,
                 EnumMask kinds) {
  for (const media::LocationRange& r : ranges) {
    std::cout << "  " << label << DescribeRange(r.begin, r.end) << " " << KindName(r.kind)
              << " fill " << FillByte(media::FillFor(r.kind));
    if (!(kinds & Bit(r.kind))) std::cout << " (not in --kinds)";
    std::cout << "\n";
  }
}

}  // namespace

int ScanCommand(absl::Span<char* const> files) {
  if (files.empty()) return Usage("scan needs at least one FILE");
  absl::StatusOr<EnumMask> kinds = ParseKinds(absl::GetFlag(FLAGS_kinds));
  if (!kinds.ok()) {
    std::cerr << "scopedfsctl: " << kinds.status().message() << "\n";
    return 1;
  }
  std::string out_dir = absl::GetFlag(FLAGS_redacted_out);
  if (!out_dir.empty()) {
    struct stat st;
    absl::Status problem;
    if (stat(out_dir.c_str(), &st) != 0) {
      problem = absl::ErrnoToStatus(errno, absl::StrCat("--redacted_out=", out_dir));
    } else if (!S_ISDIR(st.st_mode)) {
      problem =
          absl::InvalidArgumentError(absl::StrCat("--redacted_out=", out_dir, ": not a directory"));
    }
    if (!problem.ok()) {
      std::cerr << "scopedfsctl: " << problem.message() << "\n";
      return 1;
    }
  }
  int failed = 0;
  std::set<std::string> written;
  for (const char* file : files) {
    std::string path = file;
    InputFile in;
    absl::Status opened = in.Open(path);
    absl::StatusOr<ScannedFile> scanned =
        opened.ok() ? ScanInput(in, path) : absl::StatusOr<ScannedFile>(opened);
    if (!scanned.ok()) {
      std::cerr << "scopedfsctl: " << scanned.status().message() << "\n";
      ++failed;
      continue;
    }
    std::cout << path << ": format " << media::FormatName(scanned->format) << ", " << in.size()
              << " bytes\n";
    media::LocationScan none;
    const media::LocationScan& scan = scanned->scan.has_value() ? *scanned->scan : none;
    if (!scanned->scan.has_value()) {
      std::cout << "  location:  absent (format carries none; not scanned)\n";
    } else {
      std::cout << "  location:  "
                << (scan.ranges.empty() ? std::string("absent")
                                        : absl::StrCat("present, ", scan.ranges.size(), " ranges"))
                << "\n";
    }
    std::cout << "  malformed: " << (scan.malformed ? absl::StrCat("yes: ", scan.error) : "no")
              << "\n";
    PrintRanges("range     ", scan.ranges, *kinds);
    // Only a malformed scan's fallback is ever filled; otherwise it just lists the containers.
    if (scan.malformed) PrintRanges("fallback  ", scan.fallback, *kinds);
    std::cout << "  cost:      " << scan.bytes_read << " bytes read, " << scan.structures_visited
              << " structures visited, " << scan.bytes_swept << " bytes swept\n";
    if (out_dir.empty()) continue;

    std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    std::string out_path = absl::StrCat(out_dir, "/", base);
    struct stat existing;
    if (base.empty() || base == "." || base == "..") {
      std::cerr << "scopedfsctl: " << path << ": no file name to write under --redacted_out\n";
      ++failed;
      continue;
    }
    if (!written.insert(base).second) {
      std::cerr << "scopedfsctl: " << path << ": another FILE was already written as " << out_path
                << "\n";
      ++failed;
      continue;
    }
    if (stat(out_path.c_str(), &existing) == 0 && existing.st_dev == in.st().st_dev &&
        existing.st_ino == in.st().st_ino) {
      std::cerr << "scopedfsctl: " << path << ": --redacted_out would overwrite the file itself\n";
      ++failed;
      continue;
    }
    // The daemon's fills (RedactedFills) narrowed to --kinds: malformed files get their fallback
    // filled too, as a redacted reader would under uncertain_location REDACT_ALL (under DENY it
    // gets nothing at all).
    std::vector<media::FillRange> plan =
        media::RedactedFills(&scan, /*content_read=*/true, in.size(), *kinds);
    absl::Status status = WriteRedacted(in, path, plan, out_dir, out_path);
    if (!status.ok()) {
      std::cerr << "scopedfsctl: " << status.message() << "\n";
      ++failed;
      continue;
    }
    std::cout << "  redacted:  " << out_path << " (" << FilledBytes(plan) << " bytes filled in "
              << plan.size() << " runs)\n";
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace scopedfs::policy::ctl
