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
#include "media/location/iptc_place.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"
#include "media/location/signature_sweep.h"
#include "media/location/trailer.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr Redaction kXmp = REDACTION_XMP_GPS;

// The sixth byte of the Exif identifier is padding that some cameras leave non-zero, and
// readers accept that, so only the first five are matched. ExifTool also matches them in any case
// and after up to 4 bytes of garbage (/^(.{0,4})Exif\0/is), which some encoders write.
constexpr absl::string_view kExifId("Exif\0", 5);
constexpr uint64_t kExifIdSize = 6;
constexpr size_t kExifIdMaxGarbage = 4;
constexpr absl::string_view kStrictExifId("Exif\0\0", 6);
constexpr absl::string_view kXmpId("http://ns.adobe.com/xap/1.0/\0", 29);
constexpr absl::string_view kExtendedXmpId("http://ns.adobe.com/xmp/extension/\0", 35);
// Identifier, GUID (32 hex digits), full length (4), offset of this chunk (4).
constexpr uint64_t kExtendedXmpHeaderSize = 35 + 32 + 4 + 4;
// APP13 identifiers of Photoshop image resource blocks, current and old.
constexpr absl::string_view kPhotoshopId("Photoshop 3.0\0", 14);
constexpr absl::string_view kOldPhotoshopId("Adobe_Photoshop2.5:", 19);
constexpr size_t kOldPhotoshopHeaderSize = 27;
// Photoshop resource IDs that hold location: IPTC IIM (place names), Exif (a TIFF structure) and
// XMP.
constexpr uint16_t kPhotoshopIptc = 0x0404;
constexpr uint16_t kPhotoshopExif = 0x0422;
constexpr uint16_t kPhotoshopXmp = 0x0424;

absl::string_view View(const uint8_t* p, size_t n) {
  return absl::string_view(reinterpret_cast<const char*>(p), n);
}

uint32_t Be32At(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

uint32_t Le32At(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// Reads [begin, end) whole. The budget is checked before allocating, so that a huge chunk that
// is really in the file cannot make us allocate gigabytes only to be refused by Read.
bool ReadWhole(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
               std::string* out) {
  uint64_t left = limits.max_bytes_read - std::min(limits.max_bytes_read, r.bytes_read());
  if (end - begin > left) {
    return r.Fail(begin, absl::StrCat("read budget of ", limits.max_bytes_read, " bytes spent"));
  }
  return r.ReadString(begin, end - begin, out);
}

// Up to `max` bytes from `begin`, fewer if [begin, end) is shorter: for matching identifiers.
bool Peek(ScanReader& r, uint64_t begin, uint64_t end, size_t max, std::string* out) {
  return r.ReadString(begin, std::min<uint64_t>(end - begin, max), out);
}

// The XMP packet in [begin, end). XML we cannot parse is redacted whole by FindXmpGps; that
// contains the damage to the packet, which is well delimited, so the scan stays clean.
bool ScanXmpPacket(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
                   LocationScan* scan) {
  std::string packet;
  if (!ReadWhole(r, limits, begin, end, &packet)) return false;
  FindXmpGps(packet, begin, limits.max_depth, &scan->ranges);
  return true;
}

// A bare TIFF structure in [begin, end), tolerating the "Exif\0\0" prefix some PNG and WebP
// writers add (readers skip it too).
bool ScanExifBlock(ScanReader& r, uint64_t begin, uint64_t end, LocationScan* scan) {
  AddRange(&scan->fallback, begin, end, kExif);
  std::string head;
  if (!Peek(r, begin, end, kStrictExifId.size(), &head)) return false;
  uint64_t tiff = head == kStrictExifId ? begin + kStrictExifId.size() : begin;
  return FindTiffGps(r, tiff, end, &scan->ranges);
}

// Photoshop image resource blocks in [begin, end): "8BIM", a 16-bit ID, a Pascal name padded to
// an even size, a 32-bit size and the data, padded to an even size. The IPTC IIM (0x0404), Exif
// (0x0422) and XMP (0x0424) resources are scanned. Like ExifTool, the walk ends at a block of
// another signature. A block that runs past `end` ends it too, unless `strict`: in JPEG, resources
// may continue in the next APP13 segment (ExifTool joins them), which we do not, so that is
// malformed.
bool ScanPhotoshopResources(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
                            bool strict, LocationScan* scan) {
  uint64_t pos = begin;
  while (end - pos > 8) {
    if (!r.Visit(pos)) return false;
    uint8_t head[7];
    if (!r.Read(pos, sizeof(head), head)) return false;
    absl::string_view type = View(head, 4);
    if (type != "8BIM" && type != "PHUT" && type != "DCSR" && type != "AgHg" && type != "MeSa") {
      return true;
    }
    uint16_t id = static_cast<uint16_t>((head[4] << 8) | head[5]);
    uint64_t name_size = head[6];
    uint64_t size_at = pos + 7 + name_size + ((name_size & 1) ? 0 : 1);
    uint32_t size = 0;
    if (size_at + 4 > end || !r.Be32(size_at, &size)) {
      return strict ? r.Fail(pos, "Photoshop resource header runs past its segment") : r.ok();
    }
    uint64_t data = size_at + 4;
    if (size > end - data) {
      return strict ? r.Fail(pos, "Photoshop resource runs past its segment") : true;
    }
    if (type == "8BIM" && id == kPhotoshopIptc) {
      AddRange(&scan->fallback, data, data + size, REDACTION_IPTC_PLACE);
      if (!FindIptcPlaces(r, data, data + size, &scan->ranges)) return false;
    } else if (type == "8BIM" && id == kPhotoshopExif) {
      AddRange(&scan->fallback, data, data + size, kExif);
      if (!FindTiffGps(r, data, data + size, &scan->ranges)) return false;
    } else if (type == "8BIM" && id == kPhotoshopXmp) {
      AddRange(&scan->fallback, data, data + size, kXmp);
      if (!ScanXmpPacket(r, limits, data, data + size, scan)) return false;
    }
    pos = data + size + (size & 1);
    if (pos > end) break;
  }
  return true;
}

LocationScan Done(ScanReader& r, LocationScan scan) {
  NormalizeRanges(&scan.ranges);
  NormalizeRanges(&scan.fallback);
  r.Finish(&scan);
  return scan;
}

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

// ---- PNG ----

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
  return Done(r, std::move(scan));
}

LocationScan ScanJpeg(ByteSource& source, const ScanLimits& limits) {
  return ScanJpegAtDepth(source, limits, /*depth=*/0);
}

LocationScan ScanPng(ByteSource& source, const ScanLimits& limits) {
  ScanReader r(source, limits);
  LocationScan scan;
  PngChunks(r, limits, &scan);
  return Done(r, std::move(scan));
}

LocationScan ScanWebp(ByteSource& source, const ScanLimits& limits) {
  ScanReader r(source, limits);
  LocationScan scan;
  WebpChunks(r, limits, &scan);
  return Done(r, std::move(scan));
}

}  // namespace scopedfs::media
