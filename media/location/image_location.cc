// Location finders for still-image containers: JPEG (APP1 Exif, XMP and ExtendedXMP, APP13
// Photoshop resources with their Exif, XMP and IPTC IIM), PNG (eXIf, XMP text chunks, ImageMagick's
// raw profiles) and WebP (EXIF and XMP chunks). They delimit the metadata blocks and hand them to
// the Exif and XMP finders.
//
// What counts as a metadata block is what the most liberal common reader takes as one (ExifTool;
// Android's ExifInterface is stricter everywhere here): Exif identifiers in any case and after up
// to 4 bytes of garbage, XMP in APP1 segments with non-standard headers, Photoshop resources,
// PNG chunks after IEND and WebP chunks past the RIFF size. A block that could be one and cannot
// be delimited makes the scan malformed, never clean.
//
// Only what can be vouched for is served: a JPEG APPn segment, PNG chunk or WebP chunk of a kind
// the walk does not parse and does not know to be free of location (GoPro GPMF in APP6, JUMBF and
// C2PA manifests in APP11 or caBX, MPF, FlashPix, vendor segments) is filled whole, and whatever
// follows the image's end (motion-photo video, a second image, vendor trailers) is walked as a
// file of its own or filled (trailer.h). Maker notes inside Exif are not covered (location there
// survives redaction), nor multi-segment Exif and Photoshop data that spans segments (malformed).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "media/location/exif_gps.h"
#include "media/location/image_blocks.h"
#include "media/location/iptc_place.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"
#include "media/location/signature_sweep.h"
#include "media/location/trailer.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media {
namespace {

using image_blocks::kExif;
using image_blocks::kXmp;
using image_blocks::Le32At;
using image_blocks::Peek;
using image_blocks::ReadWhole;
using image_blocks::ScanExifBlock;
using image_blocks::ScanPhotoshopResources;
using image_blocks::ScanXmpPacket;
using image_blocks::View;

// The sixth byte of the Exif identifier is padding that some cameras leave non-zero, and
// readers accept that, so only the first five are matched. ExifTool also matches them in any case
// and after up to 4 bytes of garbage (/^(.{0,4})Exif\0/is), which some encoders write.
constexpr absl::string_view kExifId("Exif\0", 5);
constexpr uint64_t kExifIdSize = 6;
constexpr size_t kExifIdMaxGarbage = 4;
constexpr absl::string_view kXmpId("http://ns.adobe.com/xap/1.0/\0", 29);
constexpr absl::string_view kExtendedXmpId("http://ns.adobe.com/xmp/extension/\0", 35);
// Identifier, GUID (32 hex digits), full length (4), offset of this chunk (4).
constexpr uint64_t kExtendedXmpHeaderSize = 35 + 32 + 4 + 4;
// APP13 identifiers of Photoshop image resource blocks, current and old.
constexpr absl::string_view kPhotoshopId("Photoshop 3.0\0", 14);
constexpr absl::string_view kOldPhotoshopId("Adobe_Photoshop2.5:", 19);
constexpr size_t kOldPhotoshopHeaderSize = 27;

// ---- JPEG ----

// Where an APP1 segment's Exif identifier starts, as ExifTool matches it: "Exif\0" in any case,
// after at most kExifIdMaxGarbage bytes. npos if there is none.
size_t FindExifId(absl::string_view head) {
  for (size_t at = 0; at <= kExifIdMaxGarbage && at + kExifId.size() <= head.size(); ++at) {
    if (absl::EqualsIgnoreCase(head.substr(at, kExifId.size()), kExifId)) return at;
  }
  return absl::string_view::npos;
}

bool JpegApp1(ScanReader& r, const ScanLimits& limits, uint64_t data, uint64_t end,
              LocationScan* scan, bool* vouched) {
  std::string head;
  if (!Peek(r, data, end, kExtendedXmpId.size(), &head)) return false;
  *vouched = true;
  size_t exif_at = FindExifId(head);
  if (exif_at != absl::string_view::npos) {
    AddRange(&scan->fallback, data, end, kExif);
    // If the segment is shorter than the identifier, FindTiffGps sees begin > end and fails.
    return FindTiffGps(r, data + exif_at + kExifIdSize, end, &scan->ranges);
  }
  if (absl::StartsWith(head, kXmpId)) {
    AddRange(&scan->fallback, data, end, kXmp);
    return ScanXmpPacket(r, limits, data + kXmpId.size(), end, scan);
  }
  if (absl::StartsWith(head, kExtendedXmpId)) {
    // ExtendedXMP splits one serialized packet into chunks at arbitrary byte positions (even
    // inside a tag or a UTF-8 sequence), to be reassembled in offset order, possibly from
    // segments that are missing or reordered. Rather than reassemble and map ranges back across
    // segments, each chunk's data is blanked whole. Readers then reassemble a packet of spaces
    // (ExifTool warns "Invalid XMP") and lose the properties moved there, typically the large
    // ones; the main packet is parsed normally.
    AddRange(&scan->fallback, data, end, kXmp);
    if (end - data < kExtendedXmpHeaderSize) return r.Fail(data, "ExtendedXMP header truncated");
    AddRange(&scan->ranges, data + kExtendedXmpHeaderSize, end, kXmp);
    return true;
  }
  // ExifTool also parses as XMP any other APP1 segment that starts with "http" or "XMP\0" or
  // holds "<exif:" or "<?xpacket" anywhere, from its first byte: non-standard headers some
  // writers use. The whole segment goes to the XMP finder, which ignores text outside tags.
  std::string segment;
  if (!ReadWhole(r, limits, data, end, &segment)) return false;
  if (absl::StartsWith(segment, "http") ||
      absl::StartsWith(segment, absl::string_view("XMP\0", 4)) ||
      absl::StrContains(segment, "<exif:") || absl::StrContains(segment, "<?xpacket")) {
    AddRange(&scan->fallback, data, end, kXmp);
    FindXmpGps(segment, data, limits.max_depth, &scan->ranges);
    return true;
  }
  *vouched = false;  // FLIR, QVCI and other vendor APP1 segments
  return true;
}

// APP13: Photoshop image resources, which may carry a whole Exif TIFF and an XMP packet.
bool JpegApp13(ScanReader& r, const ScanLimits& limits, uint64_t data, uint64_t end,
               LocationScan* scan, bool* vouched) {
  std::string head;
  if (!Peek(r, data, end, kOldPhotoshopHeaderSize, &head)) return false;
  uint64_t resources;
  if (absl::StartsWith(head, kPhotoshopId)) {
    resources = data + kPhotoshopId.size();
  } else if (absl::StartsWith(head, kOldPhotoshopId)) {
    if (end - data < kOldPhotoshopHeaderSize) return r.Fail(data, "Photoshop header truncated");
    resources = data + kOldPhotoshopHeaderSize;
  } else {
    *vouched = false;
    return true;
  }
  *vouched = true;
  return ScanPhotoshopResources(r, limits, resources, end, /*strict=*/true, scan);
}

// APPn segments whose identifier says they hold no location: JFIF and its extension (APP0), ICC
// profiles (APP2) and Adobe's colour transform flag (APP14).
bool IsCleanAppSegment(uint8_t marker, absl::string_view head) {
  return (marker == 0xE0 && (absl::StartsWith(head, absl::string_view("JFIF\0", 5)) ||
                             absl::StartsWith(head, absl::string_view("JFXX\0", 5)))) ||
         (marker == 0xE2 && absl::StartsWith(head, absl::string_view("ICC_PROFILE\0", 12))) ||
         (marker == 0xEE && absl::StartsWith(head, "Adobe"));
}

// An APPn segment: parsed (APP1, APP13), known to be clean, or filled whole.
bool JpegApp(ScanReader& r, const ScanLimits& limits, uint8_t marker, uint64_t data, uint64_t end,
             LocationScan* scan) {
  bool vouched = false;
  if (marker == 0xE1) {
    if (!JpegApp1(r, limits, data, end, scan, &vouched)) return false;
  } else if (marker == 0xED) {
    if (!JpegApp13(r, limits, data, end, scan, &vouched)) return false;
  } else {
    std::string head;
    if (!Peek(r, data, end, 12, &head)) return false;
    vouched = IsCleanAppSegment(marker, head);
  }
  if (!vouched) {
    AddRange(&scan->fallback, data, end, kExif);
    AddRange(&scan->ranges, data, end, kExif);
  }
  return true;
}

// `depth`: how many trailers deep this JPEG is (0 for the file itself).
bool JpegSegments(ScanReader& r, const ScanLimits& limits, int depth, LocationScan* scan) {
  uint8_t b[2];
  if (!r.Read(0, 2, b)) return false;
  if (b[0] != 0xFF || b[1] != 0xD8) return r.Fail(0, "not a JPEG (no SOI marker)");
  uint64_t pos = 2;
  while (true) {
    if (!r.Read(pos, 2, b)) return false;
    if (b[0] != 0xFF) return r.Fail(pos, "expected a marker");
    // Fill bytes before a marker. Each counts as a structure, so a run of them is bounded like
    // any other repetition.
    if (b[1] == 0xFF) {
      if (!r.Visit(pos)) return false;
      ++pos;
      continue;
    }
    uint64_t marker_at = pos;
    uint8_t marker = b[1];
    pos += 2;
    if (!r.Visit(marker_at)) return false;
    // What follows the image is walked or filled; the JPEG itself ends here.
    if (marker == 0xD9) return ScanTrailer(r, pos, depth, scan);
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // TEM, RSTn: no length
    if (marker == 0x00 || marker == 0xD8) {
      return r.Fail(marker_at, absl::StrCat("unexpected marker 0xFF", absl::Hex(marker)));
    }
    // A file cut short inside the scan header is an image cut short: nothing follows it.
    if (marker == 0xDA && r.size() - pos < 2) return true;
    uint16_t length;
    if (!r.Be16(pos, &length)) return false;
    if (length < 2) return r.Fail(marker_at, "segment length below 2");
    uint64_t data = pos + 2;
    uint64_t end = pos + length;
    if (marker == 0xDA && end > r.size()) return true;
    if (end > r.size()) return r.Fail(marker_at, "segment runs past the end of the file");
    if (marker >= 0xE0 && marker <= 0xEF && !JpegApp(r, limits, marker, data, end, scan)) {
      return false;
    }
    pos = end;
    // Entropy-coded data follows SOS, up to the next marker (DHT, another SOS, EOI): read to find
    // where the image ends. A file that ends inside it has no trailer.
    if (marker == 0xDA) {
      if (!SkipJpegEntropyData(r, &pos)) return false;
      if (pos == r.size()) return true;
    }
  }
}

// ---- WebP ----

// Chunks of image data and rendering parameters (the WebP container specification).
bool IsCleanWebpChunk(absl::string_view fourcc) {
  static constexpr absl::string_view kClean[] = {"VP8 ", "VP8L", "VP8X", "ALPH",
                                                 "ANIM", "ANMF", "ICCP"};
  return std::find(std::begin(kClean), std::end(kClean), fourcc) != std::end(kClean);
}

bool WebpChunks(ScanReader& r, const ScanLimits& limits, LocationScan* scan) {
  uint8_t header[12];
  if (!r.Read(0, sizeof(header), header)) return false;
  if (View(header, 4) != "RIFF" || View(header + 8, 4) != "WEBP") {
    return r.Fail(0, "not a WebP (bad RIFF header)");
  }
  // The RIFF size is the writer's claim; the file may be shorter (truncated) or longer. ExifTool
  // reads chunks to the end of the file whatever the RIFF size says, metadata past it included,
  // so chunks are bounded by the file, not by the RIFF size. Inside the claimed RIFF a chunk cut
  // short by the end of the file is malformed; past it (trailing data) ExifTool stops reading at
  // the first incomplete chunk, and so do we.
  uint64_t riff_end = std::min<uint64_t>(r.size(), 8 + uint64_t{Le32At(header + 4)});
  uint64_t pos = sizeof(header);
  while (pos < r.size()) {
    if (!r.Visit(pos)) return false;
    bool trailing = pos >= riff_end;
    if (r.size() - pos < 8) {
      return trailing ? ScanTrailer(r, pos, 0, scan)
                      : r.Fail(pos, "chunk header runs past the RIFF end");
    }
    uint8_t chunk[8];
    if (!r.Read(pos, sizeof(chunk), chunk)) return false;
    uint64_t data = pos + 8;
    uint64_t size = Le32At(chunk + 4);
    if (size > r.size() - data) {
      return trailing ? ScanTrailer(r, pos, 0, scan) : r.Fail(pos, "chunk runs past the RIFF end");
    }
    uint64_t end = data + size;
    absl::string_view fourcc = View(chunk, 4);
    if (fourcc == "EXIF") {
      if (!ScanExifBlock(r, data, end, scan)) return false;
    } else if (fourcc == "XMP " || fourcc == "_PMX") {
      // "_PMX" is where Adobe Bridge puts XMP in RIFF files; ExifTool reads it in WebP too.
      AddRange(&scan->fallback, data, end, kXmp);
      if (!ScanXmpPacket(r, limits, data, end, scan)) return false;
    } else if (fourcc == "RIFF" && size >= 4) {
      // A RIFF inside (a concatenated file): ExifTool goes on reading the chunks in it.
      pos = data + 4;
      continue;
    } else if (!IsCleanWebpChunk(fourcc)) {
      AddRange(&scan->fallback, data, end, kExif);
      AddRange(&scan->ranges, data, end, kExif);
    }
    // Odd sizes are followed by a pad byte; a missing one at the very end is tolerated.
    pos = end + (size & 1);
  }
  return true;
}

}  // namespace

LocationScan ScanJpegAtDepth(ByteSource& source, const ScanLimits& limits, int depth) {
  ScanReader r(source, limits);
  LocationScan scan;
  JpegSegments(r, limits, depth, &scan);
  return image_blocks::Done(r, std::move(scan));
}

LocationScan ScanJpeg(ByteSource& source, const ScanLimits& limits) {
  return ScanJpegAtDepth(source, limits, /*depth=*/0);
}

LocationScan ScanWebp(ByteSource& source, const ScanLimits& limits) {
  ScanReader r(source, limits);
  LocationScan scan;
  WebpChunks(r, limits, &scan);
  return image_blocks::Done(r, std::move(scan));
}

}  // namespace scopedfs::media
