// Location in content no structural parser understands: unknown formats, audio (MP3, AAC, FLAC,
// Ogg, WAV), AVI, PDF, ZIP. Nothing in such bytes can be vouched for by structure, so they are
// swept for metadata signatures (signature_sweep.h). Two containers are delimited first, since
// recordings carry their metadata there: an ID3v2 tag at the start of the file, and the chunks of a
// RIFF file (WAV, AVI). A hit inside such a metadata container fills the container whole; a hit
// anywhere else, or a sweep that cannot finish, makes the file uncertain.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"
#include "media/location/signature_sweep.h"

namespace scopedfs::media {
namespace {

// Filled containers are zero-filled: their bytes are dropped whatever they held.
constexpr Redaction kFilled = REDACTION_EXIF_GPS;

// Sweeps [begin, end), which holds the file's content (not metadata): a hit is uncertainty.
bool SweepContent(ScanReader& r, uint64_t begin, uint64_t end) {
  std::optional<SignatureHit> hit;
  if (!SweepForMetadata(r, begin, end, &hit)) return false;
  if (!hit) return true;
  return r.Fail(hit->offset, absl::StrCat(hit->name, " in content of no known structure"));
}

// Sweeps the metadata container [begin, end): a hit fills it whole.
bool SweepContainer(ScanReader& r, uint64_t begin, uint64_t end, LocationScan* scan) {
  std::optional<SignatureHit> hit;
  if (!SweepForMetadata(r, begin, end, &hit)) return false;
  if (hit) AddRange(&scan->ranges, begin, end, kFilled);
  return true;
}

// ID3v2 at the start: "ID3", version, flags, a 28-bit syncsafe size of what follows the 10-byte
// header (a 10-byte footer follows if flag 0x10 is set). Returns the tag's end, or 0 if there is
// no tag. The tag's frames (PRIV "XMP", GEOB, APIC pictures with their own Exif) are not walked:
// a signature anywhere in the tag fills the tag.
uint64_t Id3v2End(ScanReader& r) {
  uint8_t h[10];
  if (r.size() < sizeof(h) || !r.Read(0, sizeof(h), h)) return 0;
  if (h[0] != 'I' || h[1] != 'D' || h[2] != '3' || h[3] < 2 || h[3] > 4) return 0;
  uint64_t size = 0;
  for (int i = 6; i < 10; ++i) {
    if (h[i] & 0x80) return 0;
    size = (size << 7) | h[i];
  }
  uint64_t end = sizeof(h) + size + ((h[5] & 0x10) ? 10 : 0);
  return std::min(end, r.size());
}

bool IsRiffFourCc(const uint8_t* p, absl::string_view type) {
  return absl::string_view(reinterpret_cast<const char*>(p), 4) == type;
}

// The chunks of a RIFF file: sample data ("data", LIST "movi", an AVI's RIFF "AVIX" extension) is
// content; every other chunk is
// metadata (INFO lists, "_PMX" XMP, "id3 " tags, "bext", "iXML", "JUNK") and is filled whole if a
// signature is in it. Whatever follows the last whole chunk is content.
bool RiffChunks(ScanReader& r, LocationScan* scan) {
  uint64_t pos = 12;
  while (r.size() - pos >= 8) {
    if (!r.Visit(pos)) return false;
    uint8_t h[12] = {};
    size_t got = static_cast<size_t>(std::min<uint64_t>(12, r.size() - pos));
    if (!r.Read(pos, got, h)) return false;
    uint64_t data = pos + 8;
    uint64_t size =
        uint64_t{h[4]} | (uint64_t{h[5]} << 8) | (uint64_t{h[6]} << 16) | (uint64_t{h[7]} << 24);
    uint64_t end = std::min(r.size(), data + size);
    bool samples = IsRiffFourCc(h, "data") || IsRiffFourCc(h, "RIFF") ||
                   (IsRiffFourCc(h, "LIST") && got == 12 && IsRiffFourCc(h + 8, "movi"));
    if (samples ? !SweepContent(r, data, end) : !SweepContainer(r, data, end, scan)) return false;
    pos = end + (size & 1);
    if (pos >= r.size()) return true;
  }
  return SweepContent(r, pos, r.size());
}

}  // namespace

LocationScan ScanUnparsed(ByteSource& source, const ScanLimits& limits) {
  ScanReader r(source, limits);
  LocationScan scan;
  uint8_t h[12] = {};
  bool riff =
      r.size() >= 12 && r.Read(0, 12, h) && (IsRiffFourCc(h, "RIFF") || IsRiffFourCc(h, "RF64"));
  if (riff) {
    RiffChunks(r, &scan);
  } else {
    uint64_t tag_end = Id3v2End(r);
    if (tag_end > 10) SweepContainer(r, 10, tag_end, &scan);
    if (r.ok()) SweepContent(r, tag_end, r.size());
  }
  NormalizeRanges(&scan.ranges);
  r.Finish(&scan);
  if (scan.malformed) {
    // No structure tells which part held the signature's metadata: all of it is fallback.
    for (Redaction kind : kFallbackKinds) {
      AddRange(&scan.fallback, 0, r.size(), kind);
    }
    NormalizeRanges(&scan.fallback);
  }
  return scan;
}

}  // namespace scopedfs::media
