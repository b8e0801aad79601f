// The PNG walk of the still-image location finders (image_location.cc says what counts as a
// metadata block): eXIf, XMP text chunks, ImageMagick's raw profiles, and chunks after IEND.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "media/location/image_blocks.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"
#include "media/location/signature_sweep.h"
#include "media/location/trailer.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media {
namespace {

using image_blocks::Be32At;
using image_blocks::kExif;
using image_blocks::kXmp;
using image_blocks::Peek;
using image_blocks::ReadWhole;
using image_blocks::ScanExifBlock;
using image_blocks::View;

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

// The longest keyword PNG allows (79) and its NUL.
constexpr size_t kPngMaxKeyword = 80;

// Which location kinds a text chunk's keyword announces, and whether its text is an XMP packet
// we can parse (if uncompressed) rather than blank whole.
struct PngTextKinds {
  bool exif = false;
  bool xmp = false;
  bool xmp_packet = false;
};

PngTextKinds KindsForKeyword(absl::string_view keyword) {
  PngTextKinds k;
  if (keyword == "XML:com.adobe.xmp") {
    k.xmp = k.xmp_packet = true;
  } else if (keyword == "Raw profile type exif") {
    // ImageMagick stores Exif and XMP hex-encoded in these when it cannot write eXIf, and
    // ExifTool decodes them. Hex text cannot usefully be edited in place, so the whole text is
    // blanked; an APP1 profile may hold Exif or XMP, so it counts as both.
    k.exif = true;
  } else if (keyword == "Raw profile type APP1") {
    k.exif = k.xmp = true;
  } else if (keyword == "Raw profile type xmp") {
    k.xmp = true;
  } else if (keyword == "Raw profile type iptc" || keyword == "Raw profile type 8bim") {
    // Photoshop resource blocks (the "iptc" profile may also be bare IPTC), which can hold an
    // Exif TIFF (0x0422) and an XMP packet (0x0424); ExifTool decodes both.
    k.exif = k.xmp = true;
  } else {
    // ImageMagick also copies each Exif and XMP property into its own text chunk, keyed
    // "exif:GPSLatitude", "xmp:GPSLongitude" and so on; their values are the coordinates.
    size_t colon = keyword.rfind(':');
    absl::string_view local =
        colon == absl::string_view::npos ? keyword : keyword.substr(colon + 1);
    if (absl::StartsWithIgnoreCase(local, "gps")) {
      (absl::StartsWithIgnoreCase(keyword, "exif:") ? k.exif : k.xmp) = true;
    }
  }
  return k;
}

// Where the text of a tEXt, zTXt or iTXt chunk starts (chunk bytes in `chunk`, keyword of
// `keyword_size` bytes with its NUL), and whether it is compressed. False if the chunk is cut
// short.
bool PngTextStart(absl::string_view type, absl::string_view chunk, size_t keyword_size,
                  size_t* text, bool* compressed) {
  if (type == "tEXt") {
    *text = keyword_size;
    *compressed = false;
    return true;
  }
  if (type == "zTXt") {  // compression method byte
    *text = keyword_size + 1;
    *compressed = true;
    return *text <= chunk.size();
  }
  // iTXt: compression flag, compression method, language tag\0, translated keyword\0.
  size_t at = keyword_size + 2;
  if (at > chunk.size()) return false;
  *compressed = chunk[keyword_size] != 0;
  for (int field = 0; field < 2; ++field) {
    size_t nul = chunk.find('\0', at);
    if (nul == absl::string_view::npos) return false;
    at = nul + 1;
  }
  *text = at;
  return true;
}

bool PngTextChunk(ScanReader& r, const ScanLimits& limits, absl::string_view type, uint64_t data,
                  uint64_t end, LocationScan* scan) {
  std::string head;
  if (!Peek(r, data, end, kPngMaxKeyword, &head)) return false;
  size_t nul = head.find('\0');
  // No keyword terminator: not a valid text chunk, and readers skip it.
  if (nul == std::string::npos) return true;
  PngTextKinds kinds = KindsForKeyword(absl::string_view(head).substr(0, nul));
  if (!kinds.exif && !kinds.xmp) {
    // Text under another keyword is text to ExifTool, but an XMP packet or an Exif block pasted
    // into it is still location an app can read: such a chunk is filled whole.
    std::string chunk;
    if (!ReadWhole(r, limits, data, end, &chunk)) return false;
    if (FindMetadataSignature(chunk)) {
      AddRange(&scan->fallback, data, end, kExif);
      AddRange(&scan->ranges, data, end, kExif);
    }
    return true;
  }
  if (kinds.exif) AddRange(&scan->fallback, data, end, kExif);
  if (kinds.xmp) AddRange(&scan->fallback, data, end, kXmp);

  std::string chunk;
  if (!ReadWhole(r, limits, data, end, &chunk)) return false;
  size_t text;
  bool compressed;
  if (!PngTextStart(type, chunk, nul + 1, &text, &compressed)) {
    return r.Fail(data, absl::StrCat(type, " chunk header truncated"));
  }
  if (kinds.xmp_packet && !compressed) {
    FindXmpGps(absl::string_view(chunk).substr(text), data + text, limits.max_depth, &scan->ranges);
    return true;
  }
  // Uncompressed text (hex profiles, ImageMagick's per-property chunks) is blanked after the
  // keyword. Compressed text cannot be edited in place: any fill breaks the deflate stream. So
  // the whole chunk data goes, keyword included, and readers skip a chunk without a keyword
  // instead of reporting an inflate error. Either way the chunk's other properties are lost.
  uint64_t begin = compressed ? data : data + text;
  if (kinds.exif) AddRange(&scan->ranges, begin, end, kExif);
  if (kinds.xmp) AddRange(&scan->ranges, begin, end, kXmp);
  return true;
}

// Chunks that hold image data or rendering parameters only (PNG 3rd edition and APNG).
bool IsCleanPngChunk(absl::string_view type) {
  static constexpr absl::string_view kClean[] = {
      "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "cHRM", "gAMA", "iCCP", "sBIT", "sRGB", "cICP",
      "mDCV", "cLLI", "bKGD", "hIST", "pHYs", "sPLT", "tIME", "acTL", "fcTL", "fdAT"};
  return std::find(std::begin(kClean), std::end(kClean), type) != std::end(kClean);
}

// One chunk's location, if its type can carry any.
bool PngMetadataChunk(ScanReader& r, const ScanLimits& limits, absl::string_view type,
                      uint64_t data, uint64_t end, LocationScan* scan) {
  // ExifTool reads Exif chunks whatever the case of their name, and also the compressed forms
  // it once proposed (zxIf, and eXIf starting with a NUL); those are blanked whole.
  std::string lower = absl::AsciiStrToLower(type);
  if (lower == "exif" || lower == "zxif") {
    std::string head;
    if (!Peek(r, data, end, 1, &head)) return false;
    if (lower == "zxif" || (!head.empty() && head[0] == '\0')) {
      AddRange(&scan->fallback, data, end, kExif);
      AddRange(&scan->ranges, data, end, kExif);
      return true;
    }
    return ScanExifBlock(r, data, end, scan);
  }
  if (type == "tEXt" || type == "zTXt" || type == "iTXt") {
    return PngTextChunk(r, limits, type, data, end, scan);
  }
  if (!IsCleanPngChunk(type)) {
    // caBX (C2PA), vendor chunks, chunks of future versions: nothing vouches for them.
    AddRange(&scan->fallback, data, end, kExif);
    AddRange(&scan->ranges, data, end, kExif);
  }
  return true;
}

// Data after IEND, read as ExifTool does: chunk after chunk until the file ends or what follows
// is not a whole chunk (ExifTool then stops reading, so nothing past that point reaches it).
bool PngTrailer(ScanReader& r, const ScanLimits& limits, uint64_t pos, LocationScan* scan) {
  while (r.size() - pos >= 12) {
    if (!r.Visit(pos)) return false;
    uint8_t header[8];
    if (!r.Read(pos, sizeof(header), header)) return false;
    uint32_t length = Be32At(header);
    uint64_t data = pos + 8;
    uint64_t end = data + length;
    // What is not a whole chunk is no longer PNG: a trailer (trailer.h).
    if (length > 0x7FFFFFFFu || end + 4 > r.size()) return ScanTrailer(r, pos, 0, scan);
    if (!PngMetadataChunk(r, limits, View(header + 4, 4), data, end, scan)) return false;
    pos = end + 4;
  }
  return ScanTrailer(r, pos, 0, scan);
}

bool PngChunks(ScanReader& r, const ScanLimits& limits, LocationScan* scan) {
  uint8_t sig[sizeof(kPngSignature)];
  if (!r.Read(0, sizeof(sig), sig)) return false;
  if (memcmp(sig, kPngSignature, sizeof(sig)) != 0) return r.Fail(0, "not a PNG (bad signature)");
  uint64_t pos = sizeof(sig);
  while (true) {
    if (!r.Visit(pos)) return false;
    uint8_t header[8];
    if (!r.Read(pos, sizeof(header), header)) return false;
    uint32_t length = Be32At(header);
    if (length > 0x7FFFFFFFu) return r.Fail(pos, "chunk length above 2^31 - 1");
    uint64_t data = pos + 8;
    uint64_t end = data + length;
    if (end + 4 > r.size()) return r.Fail(pos, "chunk runs past the end of the file");
    absl::string_view type = View(header + 4, 4);
    if (type == "IEND") {
      // ExifTool reads whatever follows IEND as more chunks, metadata included, for as long as
      // they are whole (chunk data and CRC present); so do we.
      return PngTrailer(r, limits, end + 4, scan);
    }
    if (!PngMetadataChunk(r, limits, type, data, end, scan)) return false;
    pos = end + 4;  // CRC, deliberately not checked: it does not protect us from anything
  }
}

}  // namespace

LocationScan ScanPng(ByteSource& source, const ScanLimits& limits) {
  ScanReader r(source, limits);
  LocationScan scan;
  PngChunks(r, limits, &scan);
  return image_blocks::Done(r, std::move(scan));
}

}  // namespace scopedfs::media
