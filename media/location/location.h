// Location metadata finders: for each media format, the byte ranges that carry where a photo or
// video was taken (Exif GPS, XMP GPS, ISO-BMFF location boxes). The daemon's redacted view fills
// exactly these ranges, so everything else in the file stays byte-identical. Pure C++, no FUSE.
//
// The parsers read through a ByteSource and a ScanBudget, so they are bounded in bytes read, in
// nesting depth and in the number of structures visited (hence in time), and they never read
// past the end of the source. Hostile input yields LocationScan::malformed, never a crash.
#ifndef SCOPEDFS_MEDIA_LOCATION_LOCATION_H_
#define SCOPEDFS_MEDIA_LOCATION_LOCATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "media/content_facts.h"
#include "proto/policy.pb.h"

namespace scopedfs::media {

// Random-access bytes of one file version. Read fails (false) rather than return short data.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Fills out[0, n) from [offset, offset + n). False if that is not entirely inside [0, size())
  // or on an I/O error.
  virtual bool Read(uint64_t offset, size_t n, uint8_t* out) = 0;
};

// Bytes in memory (tests, fuzzers).
class MemorySource : public ByteSource {
 public:
  explicit MemorySource(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  bool Read(uint64_t offset, size_t n, uint8_t* out) override;

 private:
  absl::Span<const uint8_t> bytes_;
};

// A file read with pread; `size` is the size the caller stat'ed (the version being judged).
class FdSource : public ByteSource {
 public:
  FdSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint64_t size() const override { return size_; }
  bool Read(uint64_t offset, size_t n, uint8_t* out) override;

 private:
  int fd_;
  uint64_t size_;
};

// How much work one scan may do. Exceeding any limit makes the scan malformed (fail closed).
struct ScanLimits {
  uint64_t max_bytes_read = 16u << 20;  // total bytes fetched from the source
  int max_depth = 16;                   // nested boxes / IFD pointers / XML elements
  uint32_t max_structures = 100000;     // segments + chunks + boxes + IFD entries visited
  // What the scan may keep in memory while it runs (item tables, extent lists, box lists),
  // charged as it grows. Transient buffers are bounded by max_bytes_read instead. Without this a
  // small file declaring many small structures could make the daemon allocate without bound.
  uint64_t max_alloc_bytes = 8u << 20;
  // Bytes that linear passes may read: signature sweeps of content no parser understands and the
  // walk over a JPEG's entropy-coded data to its end marker. They keep nothing, so they are bounded
  // in time only; a region larger than what is left is refused before it is read (uncertain).
  uint64_t max_sweep_bytes = 128u << 20;
};

// One range of location metadata, half-open [begin, end), in file offsets.
struct LocationRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  Redaction kind = REDACTION_UNSPECIFIED;  // which Action.redact entry covers it

  bool operator==(const LocationRange& o) const {
    return begin == o.begin && end == o.end && kind == o.kind;
  }
};

struct LocationScan {
  // Location found (possibly none). Sorted by begin; ranges of one kind never overlap or touch
  // (they are merged).
  std::vector<LocationRange> ranges;
  // The file could not be fully understood (bad structure, a limit reached, an I/O error). Then
  // `error` says what and where, and `fallback` covers everything that could hold location:
  // every metadata container the parser could delimit, plus everything from the point parsing
  // failed to the end of the file. `ranges` stays what was found before the failure.
  bool malformed = false;
  std::string error;
  std::vector<LocationRange> fallback;
  // What the scan cost (for explain output and the limits' tests).
  uint32_t structures_visited = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_allocated = 0;  // charged against ScanLimits::max_alloc_bytes
  uint64_t bytes_swept = 0;      // charged against ScanLimits::max_sweep_bytes
  // Comparisons made joining item tables (sorting item entries, finding each location's item):
  // work that reads nothing, counted so that its growth can be checked (n log n, not n^2).
  uint64_t item_comparisons = 0;
  // The class the content itself proves, whatever the file's name says (set by the ISO-BMFF
  // walk): VIDEO if any track has handler 'vide'; else IMAGE for HEIF/AVIF image items (or
  // tracks that are all 'pict' image sequences); else AUDIO if every track is 'soun'.
  // UNSPECIFIED when it cannot tell: no tracks or items, other handlers, other formats, or a
  // malformed scan that had not yet seen a video track.
  MediaClass content_class = MEDIA_CLASS_UNSPECIFIED;
};

// Whether `format` has a location parser. Of the formats without one, those whose location is
// structural (GIF, TIFF and the raws built on it, Matroska, WebM) scan as malformed with the whole
// file as fallback; all others (audio, PDF, ZIP, unknown) get a signature sweep (ScanUnparsed).
bool HasLocationParser(MediaFormat format);

// The content facts of an existing file as the engine sees them, once its format is sniffed and,
// for a location carrier, its location scanned (null: not scanned). The daemon and
// `scopedfsctl explain` both use this, so explain cannot drift from what the daemon decides:
// - location is the scan's verdict (present, absent, or malformed);
// - the class the content proves (ISO-BMFF track handlers) overrides what the name claims: a
//   file with a video track is video or nothing, so a video named .m4a is not audio. Only an
//   audio-only file named as video keeps the video class, as media stores list it.
ContentFacts FactsOfContent(absl::string_view name, MediaFormat format, const LocationScan* scan);

// Finds the location metadata of a file of the given (sniffed) format. Every format gets a verdict:
// there is no format whose content is served unexamined to a reader who must not get location.
LocationScan ScanLocation(MediaFormat format, ByteSource& source, const ScanLimits& limits = {});

// Per-format entry points. ScanLocation sends every ISO-BMFF format (HEIF, AVIF, MP4, MOV, 3GP,
// M4A) through one walk that looks for every kind of ISO-BMFF location, whatever the brands
// claim: ScanHeif is that walk requiring a leading ftyp, ScanMp4 the same walk without it.
LocationScan ScanJpeg(ByteSource& source, const ScanLimits& limits = {});
LocationScan ScanPng(ByteSource& source, const ScanLimits& limits = {});
LocationScan ScanWebp(ByteSource& source, const ScanLimits& limits = {});
LocationScan ScanHeif(ByteSource& source, const ScanLimits& limits = {});  // HEIF and AVIF
LocationScan ScanMp4(ByteSource& source, const ScanLimits& limits = {});   // MP4/MOV/3GP/M4A
// Content no parser understands (audio, AVI, PDF, ZIP, unknown): a sweep for metadata signatures
// (Exif/TIFF headers, XMP packets, ISO-BMFF metadata boxes, GPMF, JUMBF, ID3). A hit inside an
// ID3v2 tag or a RIFF metadata chunk fills that container; a hit anywhere else, or content larger
// than max_sweep_bytes, makes the scan malformed with the whole file as fallback.
LocationScan ScanUnparsed(ByteSource& source, const ScanLimits& limits = {});

// A byte range and the byte it is filled with: 0, except inside XML (XMP GPS and XMP place
// names), where a NUL would make the packet unparsable and so XML whitespace (0x20) is used
// instead.
struct FillRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint8_t fill = 0;
  bool operator==(const FillRange& o) const {
    return begin == o.begin && end == o.end && fill == o.fill;
  }
};

// The fill byte for a kind of range.
uint8_t FillFor(Redaction kind);

// Turns ranges of the kinds in `kinds` (a mask of 1 << Redaction) into sorted, non-overlapping
// fill ranges. Overlapping or touching ranges with the same fill merge; where a zero range and a
// space range overlap, zero wins. Empty ranges are dropped.
std::vector<FillRange> PlanFills(absl::Span<const LocationRange> ranges, uint32_t kinds);

// Applies `plan` to `buf`, which holds the file's bytes [offset, offset + buf.size()).
void ApplyFills(absl::Span<const FillRange> plan, uint64_t offset, absl::Span<uint8_t> buf);

// Every kind of location range, in enum order: coordinates (and the containers holding them)
// first, then place names.
inline constexpr Redaction kLocationKindList[] = {REDACTION_EXIF_GPS, REDACTION_XMP_GPS,
                                                  REDACTION_ISOBMFF_LOCATION, REDACTION_IPTC_PLACE,
                                                  REDACTION_XMP_PLACE};

// The kinds a failed scan's fallback ranges are listed under: the coordinate kinds, which every
// policy fills, so what cannot be vouched for is filled whatever redact_place_names says.
inline constexpr Redaction kFallbackKinds[] = {REDACTION_EXIF_GPS, REDACTION_XMP_GPS,
                                               REDACTION_ISOBMFF_LOCATION};

// The kinds that are place names rather than coordinates (a mask of 1 << Redaction): what
// Policy.redact_place_names FALSE leaves unfilled.
inline constexpr uint32_t kPlaceNameKinds =
    (1u << REDACTION_IPTC_PLACE) | (1u << REDACTION_XMP_PLACE);

// Every kind of location range (a mask of 1 << Redaction), place names included.
inline constexpr uint32_t kAllLocationKinds = (1u << REDACTION_EXIF_GPS) |
                                              (1u << REDACTION_XMP_GPS) |
                                              (1u << REDACTION_ISOBMFF_LOCATION) | kPlaceNameKinds;

// What a redacted reader gets for a file of `size` bytes: the fills of its redacted view. The
// daemon serves exactly this and `scopedfsctl explain`/`scan --redacted_out` show and write it,
// so they cannot drift apart.
// - `scan`: the file's location scan, null if its format carries no location (not scanned). Such
//   a file is served as it is, unless its bytes could not be read (`content_read` false): then
//   nothing in it can be vouched for and it is filled whole.
// - Every range of the kinds in `kinds` is filled, whichever rule made the view redacted (the
//   daemon passes its policy's kinds: kAllLocationKinds, less kPlaceNameKinds under
//   redact_place_names FALSE; `scan --kinds` narrows it).
// - A malformed scan also gets its fallback filled (a clean scan's fallback only lists the
//   containers and is never filled), and a malformed file whose fills are still empty is filled
//   whole: a redacted view never serves what it cannot vouch for.
std::vector<FillRange> RedactedFills(const LocationScan* scan, bool content_read, uint64_t size,
                                     uint32_t kinds = kAllLocationKinds);

// Sorts `ranges` by (begin, kind) and merges overlapping or touching ranges of the same kind.
void NormalizeRanges(std::vector<LocationRange>* ranges);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_LOCATION_H_
