// Trailers after an image's end (see trailer.h).
#include "media/location/trailer.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "media/content_facts.h"

namespace scopedfs::media {
namespace {

// Filled trailer bytes are zero-filled: they are dropped whatever they held.
constexpr Redaction kFilled = REDACTION_EXIF_GPS;

constexpr absl::string_view kSamsungVideoMarker = "MotionPhoto_Data";
// How far into an unknown trailer the marker is looked for.
constexpr uint64_t kMarkerWindow = 64 << 10;

void AddShifted(const std::vector<LocationRange>& from, uint64_t by,
                std::vector<LocationRange>* to) {
  for (const LocationRange& range : from)
    AddRange(to, range.begin + by, range.end + by, range.kind);
}

bool IsIsobmff(MediaFormat format) {
  switch (format) {
    case MediaFormat::kHeif:
    case MediaFormat::kAvif:
    case MediaFormat::kMp4:
    case MediaFormat::kQuickTime:
    case MediaFormat::k3gp:
    case MediaFormat::kM4a:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool SkipJpegEntropyData(ScanReader& r, uint64_t* pos) {
  constexpr size_t kBlock = 64 << 10;
  std::vector<uint8_t> buf(kBlock);
  uint64_t at = *pos;
  while (at < r.size()) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, r.size() - at));
    if (!r.ReadSwept(at, n, buf.data())) return false;
    size_t i = 0;
    while (i < n) {
      const void* ff = memchr(buf.data() + i, 0xFF, n - i);
      if (ff == nullptr) {
        i = n;
        break;
      }
      i = static_cast<size_t>(static_cast<const uint8_t*>(ff) - buf.data());
      // A 0xFF as the block's last byte is judged with the next block.
      if (i + 1 == n) break;
      const uint8_t next = buf[i + 1];
      // Stuffed zero, restart marker, or a fill byte before a marker.
      if (next == 0x00 || (next >= 0xD0 && next <= 0xD7) || next == 0xFF) {
        ++i;
        continue;
      }
      *pos = at + i;
      return true;
    }
    if (at + n == r.size()) break;
    at += i;  // i < n here only when the block ended on a 0xFF, which is read again
  }
  *pos = r.size();
  return true;
}

namespace {

bool WalkTrailer(ScanReader& r, uint64_t pos, int depth, LocationScan* scan);

}  // namespace

// A walk that fails part way (a read past the budget, say while looking for Samsung's marker)
// vouches for none of the trailer, not only for what lies past the point it failed: the whole
// trailer goes to the fallback, which a failed scan fills.
bool ScanTrailer(ScanReader& r, uint64_t pos, int depth, LocationScan* scan) {
  if (WalkTrailer(r, pos, depth, scan)) return true;
  if (pos < r.size()) AddRange(&scan->fallback, pos, r.size(), kFilled);
  return false;
}

namespace {

bool WalkTrailer(ScanReader& r, uint64_t pos, int depth, LocationScan* scan) {
  if (!r.ok() || pos >= r.size()) return r.ok();
  uint8_t head[kSniffBytes];
  size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(head), r.size() - pos));
  if (!r.Read(pos, n, head)) return false;
  MediaFormat format = SniffFormat(absl::MakeConstSpan(head, n));
  // Samsung's motion photos put their video after a "MotionPhoto_Data" marker, which may follow
  // other blocks of its trailer: what precedes the video is filled, the video walked.
  if (format == MediaFormat::kUnknown && depth < kMaxTrailerDepth) {
    std::string window;
    if (!r.ReadString(pos, static_cast<size_t>(std::min<uint64_t>(kMarkerWindow, r.size() - pos)),
                      &window)) {
      return false;
    }
    const size_t marker = absl::string_view(window).find(kSamsungVideoMarker);
    if (marker != std::string::npos) {
      const uint64_t video = pos + marker + kSamsungVideoMarker.size();
      n = static_cast<size_t>(std::min<uint64_t>(sizeof(head), r.size() - video));
      if (n > 0 && r.Read(video, n, head) && IsIsobmff(SniffFormat(absl::MakeConstSpan(head, n)))) {
        AddRange(&scan->ranges, pos, video, kFilled);
        return ScanTrailer(r, video, depth, scan);
      }
      if (!r.ok()) return false;
    }
  }
  if (depth >= kMaxTrailerDepth || (format != MediaFormat::kJpeg && !IsIsobmff(format))) {
    AddRange(&scan->ranges, pos, r.size(), kFilled);
    return true;
  }
  WindowSource window(r.source(), pos, r.size() - pos);
  const LocationScan nested = format == MediaFormat::kJpeg
                                  ? ScanJpegAtDepth(window, r.Remaining(), depth + 1)
                                  : ScanMp4(window, r.Remaining());
  r.Absorb(nested);
  AddShifted(nested.ranges, pos, &scan->ranges);
  // What the embedded walk could not vouch for is filled outright: the outer image stays whole.
  if (nested.malformed) AddShifted(nested.fallback, pos, &scan->ranges);
  AddShifted(nested.fallback, pos, &scan->fallback);
  return true;
}

}  // namespace

}  // namespace scopedfs::media
