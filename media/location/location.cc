// Format dispatch and range arithmetic for location redaction (see location.h). The per-format
// parsers live in exif_gps.cc, xmp_gps.cc, image_location.cc and isobmff_location.cc (with its
// parts isobmff_box.cc, isobmff_items.cc and isobmff_movie.cc).
#include "media/location/location.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scopedfs::media {

bool MemorySource::Read(uint64_t offset, size_t n, uint8_t* out) {
  if (offset > bytes_.size() || n > bytes_.size() - offset) return false;
  if (n > 0) memcpy(out, bytes_.data() + offset, n);
  return true;
}

bool FdSource::Read(uint64_t offset, size_t n, uint8_t* out) {
  if (offset > size_ || n > size_ - offset) return false;
  size_t done = 0;
  while (done < n) {
    ssize_t got = pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;  // error, or the file shrank under us
    done += static_cast<size_t>(got);
  }
  return true;
}

bool HasLocationParser(MediaFormat format) {
  switch (format) {
    case MediaFormat::kJpeg:
    case MediaFormat::kPng:
    case MediaFormat::kWebp:
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

ContentFacts FactsOfContent(absl::string_view name, MediaFormat format, const LocationScan* scan) {
  ContentFacts facts = FactsFromFormat(name, format);
  if (scan == nullptr) return facts;
  facts.location = scan->malformed        ? LocationPresence::kMalformed
                   : scan->ranges.empty() ? LocationPresence::kAbsent
                                          : LocationPresence::kPresent;
  MediaClass proven = scan->content_class;
  if (proven != MEDIA_CLASS_UNSPECIFIED && facts.media_class != MEDIA_CLASS_NONE &&
      proven != facts.media_class &&
      !(facts.media_class == MEDIA_CLASS_VIDEO && proven == MEDIA_CLASS_AUDIO)) {
    facts.media_class = MEDIA_CLASS_NONE;
  }
  return facts;
}

LocationScan ScanLocation(MediaFormat format, ByteSource& source, const ScanLimits& limits) {
  switch (format) {
    case MediaFormat::kJpeg:
      return ScanJpeg(source, limits);
    case MediaFormat::kPng:
      return ScanPng(source, limits);
    case MediaFormat::kWebp:
      return ScanWebp(source, limits);
    // One walk for the whole family: a HEIF with a moov, or an MP4 with a file-level meta box,
    // holds what either kind of file can, and the brands (or the name) prove nothing.
    case MediaFormat::kHeif:
    case MediaFormat::kAvif:
      return ScanHeif(source, limits);
    case MediaFormat::kMp4:
    case MediaFormat::kQuickTime:
    case MediaFormat::k3gp:
    case MediaFormat::kM4a:
      return ScanMp4(source, limits);
    case MediaFormat::kGif:
    case MediaFormat::kTiff:
    case MediaFormat::kMatroska:
    case MediaFormat::kWebm: {
      // These can carry location (XMP application extensions, Matroska tags) but have no parser:
      // nothing in them can be vouched for.
      LocationScan scan;
      scan.malformed = true;
      scan.error = "no location parser for this format";
      for (Redaction kind : kFallbackKinds) {
        if (source.size() > 0) scan.fallback.push_back({0, source.size(), kind});
      }
      return scan;
    }
    default:
      // Audio, PDF, ZIP and content of no known format: no structure to vouch for, so the bytes
      // are swept for metadata signatures (unparsed_location.cc).
      return ScanUnparsed(source, limits);
  }
}

uint8_t FillFor(Redaction kind) {
  return kind == REDACTION_XMP_GPS || kind == REDACTION_XMP_PLACE ? ' ' : 0;
}

void NormalizeRanges(std::vector<LocationRange>* ranges) {
  ranges->erase(std::remove_if(ranges->begin(), ranges->end(),
                               [](const LocationRange& r) { return r.end <= r.begin; }),
                ranges->end());
  std::sort(ranges->begin(), ranges->end(), [](const LocationRange& a, const LocationRange& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.begin < b.begin;
  });
  std::vector<LocationRange> merged;
  for (const LocationRange& r : *ranges) {
    if (!merged.empty() && merged.back().kind == r.kind && r.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
    } else {
      merged.push_back(r);
    }
  }
  std::stable_sort(
      merged.begin(), merged.end(),
      [](const LocationRange& a, const LocationRange& b) { return a.begin < b.begin; });
  *ranges = std::move(merged);
}

std::vector<FillRange> PlanFills(absl::Span<const LocationRange> ranges, uint32_t kinds) {
  // Sweep over boundaries: at each elementary interval, zero if any zero-fill range covers it,
  // else space if any space-fill range does.
  struct Edge {
    uint64_t at;
    int zero_delta;
    int space_delta;
  };
  std::vector<Edge> edges;
  for (const LocationRange& r : ranges) {
    if (r.end <= r.begin || r.kind <= 0 || r.kind >= 32 || !(kinds & (1u << r.kind))) continue;
    bool zero = FillFor(r.kind) == 0;
    edges.push_back({r.begin, zero ? 1 : 0, zero ? 0 : 1});
    edges.push_back({r.end, zero ? -1 : 0, zero ? 0 : -1});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  std::vector<FillRange> plan;
  int zeros = 0, spaces = 0;
  for (size_t i = 0; i < edges.size();) {
    uint64_t at = edges[i].at;
    for (; i < edges.size() && edges[i].at == at; ++i) {
      zeros += edges[i].zero_delta;
      spaces += edges[i].space_delta;
    }
    if (i == edges.size()) break;
    uint64_t next = edges[i].at;
    if (zeros == 0 && spaces == 0) continue;
    uint8_t fill = zeros > 0 ? 0 : ' ';
    if (!plan.empty() && plan.back().end == at && plan.back().fill == fill) {
      plan.back().end = next;
    } else {
      plan.push_back({at, next, fill});
    }
  }
  return plan;
}

void ApplyFills(absl::Span<const FillRange> plan, uint64_t offset, absl::Span<uint8_t> buf) {
  uint64_t end = offset + buf.size();
  // First range that ends after `offset`.
  auto it = std::upper_bound(plan.begin(), plan.end(), offset,
                             [](uint64_t off, const FillRange& r) { return off < r.end; });
  for (; it != plan.end() && it->begin < end; ++it) {
    uint64_t from = std::max(it->begin, offset);
    uint64_t to = std::min(it->end, end);
    if (to > from) memset(buf.data() + (from - offset), it->fill, to - from);
  }
}

std::vector<FillRange> RedactedFills(const LocationScan* scan, bool content_read, uint64_t size,
                                     uint32_t kinds) {
  std::vector<FillRange> fills;
  if (scan == nullptr) {
    if (!content_read && size > 0) fills.push_back({0, size, 0});
    return fills;
  }
  std::vector<LocationRange> ranges = scan->ranges;
  if (scan->malformed) ranges.insert(ranges.end(), scan->fallback.begin(), scan->fallback.end());
  fills = PlanFills(ranges, kinds);
  if (scan->malformed && fills.empty() && size > 0) fills.push_back({0, size, 0});
  return fills;
}

}  // namespace scopedfs::media
