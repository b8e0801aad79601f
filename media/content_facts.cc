// Magic-byte sniffing and extension cross-checks behind ContentFacts. Everything here reads only
// the caller's head span and allocates nothing, so it is safe on the daemon's open path.

#include "media/content_facts.h"

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace scopedfs::media {
namespace {

using Bytes = absl::Span<const uint8_t>;

constexpr uint32_t Bit(MediaClass media_class) { return 1u << media_class; }

// ---- What each format is -----------------------------------------------------------------------

constexpr uint32_t kImage = Bit(MEDIA_CLASS_IMAGE);
// Containers that hold audio-only files as often as video (an .m4a may be an isom MP4, an .ogg
// Vorbis file is the common case, .mka is Matroska).
constexpr uint32_t kVideoOrAudio = Bit(MEDIA_CLASS_VIDEO) | Bit(MEDIA_CLASS_AUDIO);
constexpr uint32_t kAudio = Bit(MEDIA_CLASS_AUDIO);
constexpr bool kCarrier = true;

// One row per MediaFormat, in enum order. Every image and video container carries location, and so
// do recordings: ID3 tags hold XMP (PRIV "XMP"), RIFF files hold "_PMX" XMP chunks, Vorbis comments
// and FLAC blocks hold whatever a writer puts there. HEIF image sequences (msf1) are animations,
// like animated GIF/WebP: still IMAGE.
constexpr FormatTraits kFormats[] = {
    {MediaFormat::kUnknown, "unknown", 0, !kCarrier},
    {MediaFormat::kJpeg, "jpeg", kImage, kCarrier},
    {MediaFormat::kPng, "png", kImage, kCarrier},
    {MediaFormat::kGif, "gif", kImage, kCarrier},
    {MediaFormat::kWebp, "webp", kImage, kCarrier},
    {MediaFormat::kHeif, "heif", kImage, kCarrier},
    {MediaFormat::kAvif, "avif", kImage, kCarrier},
    {MediaFormat::kMp4, "mp4", kVideoOrAudio, kCarrier},
    {MediaFormat::kQuickTime, "quicktime", kVideoOrAudio, kCarrier},
    {MediaFormat::k3gp, "3gp", kVideoOrAudio, kCarrier},
    {MediaFormat::kM4a, "m4a", kAudio, kCarrier},
    {MediaFormat::kMatroska, "matroska", kVideoOrAudio, kCarrier},
    {MediaFormat::kWebm, "webm", kVideoOrAudio, kCarrier},
    {MediaFormat::kMp3, "mp3", kAudio, kCarrier},
    {MediaFormat::kAac, "aac", kAudio, kCarrier},
    {MediaFormat::kFlac, "flac", kAudio, kCarrier},
    {MediaFormat::kOgg, "ogg", kVideoOrAudio, kCarrier},
    {MediaFormat::kWav, "wav", kAudio, kCarrier},
    {MediaFormat::kPdf, "pdf", 0, !kCarrier},
    {MediaFormat::kZip, "zip", 0, !kCarrier},
    {MediaFormat::kTiff, "tiff", kImage, kCarrier},
};

constexpr bool InEnumOrder() {
  for (size_t i = 0; i < sizeof(kFormats) / sizeof(kFormats[0]); ++i) {
    if (static_cast<size_t>(kFormats[i].format) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kFormats has one row per MediaFormat, in enum order");
static_assert(kFormats[sizeof(kFormats) / sizeof(kFormats[0]) - 1].format == kLastFormat,
              "kFormats has a row for every MediaFormat");

// A value cast from outside the enum (e.g. read from a corrupt cache) is kUnknown's row: still
// printable, no class, no carrier.
const FormatTraits& TraitsOf(MediaFormat format) {
  const size_t i = static_cast<size_t>(format);
  return i < sizeof(kFormats) / sizeof(kFormats[0]) ? kFormats[i] : kFormats[0];
}

// True if `head` holds `magic` starting at `offset` (bounds checked).
bool HasAt(Bytes head, size_t offset, absl::string_view magic) {
  if (offset > head.size() || magic.size() > head.size() - offset) return false;
  for (size_t i = 0; i < magic.size(); ++i) {
    if (head[offset + i] != static_cast<uint8_t>(magic[i])) return false;
  }
  return true;
}

// Caller guarantees offset + 4 <= head.size().
uint32_t Be32(Bytes head, size_t offset) {
  return (uint32_t{head[offset]} << 24) | (uint32_t{head[offset + 1]} << 16) |
         (uint32_t{head[offset + 2]} << 8) | uint32_t{head[offset + 3]};
}

// Caller guarantees offset + 4 <= head.size().
absl::string_view FourCc(Bytes head, size_t offset) {
  return absl::string_view(reinterpret_cast<const char*>(head.data() + offset), 4);
}

// ---- ISO-BMFF -----------------------------------------------------------------------------------

struct BrandFormat {
  absl::string_view brand;
  MediaFormat format;
};

// mif1/msf1 only say "HEIF structure"; AVIF files are built on them too, so they are kept apart
// from the codec-specific brands and resolved after looking at the compatible brands.
bool IsStructuralHeifBrand(absl::string_view brand) { return brand == "mif1" || brand == "msf1"; }

constexpr BrandFormat kBrands[] = {
    {"heic", MediaFormat::kHeif}, {"heix", MediaFormat::kHeif},      {"hevc", MediaFormat::kHeif},
    {"hevx", MediaFormat::kHeif}, {"heim", MediaFormat::kHeif},      {"heis", MediaFormat::kHeif},
    {"mif1", MediaFormat::kHeif}, {"msf1", MediaFormat::kHeif},      {"avif", MediaFormat::kAvif},
    {"avis", MediaFormat::kAvif}, {"qt  ", MediaFormat::kQuickTime}, {"M4A ", MediaFormat::kM4a},
    {"M4B ", MediaFormat::kM4a},  {"M4P ", MediaFormat::kM4a},       {"isom", MediaFormat::kMp4},
    {"iso2", MediaFormat::kMp4},  {"iso3", MediaFormat::kMp4},       {"iso4", MediaFormat::kMp4},
    {"iso5", MediaFormat::kMp4},  {"iso6", MediaFormat::kMp4},       {"iso7", MediaFormat::kMp4},
    {"iso8", MediaFormat::kMp4},  {"iso9", MediaFormat::kMp4},       {"mp41", MediaFormat::kMp4},
    {"mp42", MediaFormat::kMp4},  {"mp71", MediaFormat::kMp4},       {"avc1", MediaFormat::kMp4},
    {"M4V ", MediaFormat::kMp4},  {"M4VH", MediaFormat::kMp4},       {"M4VP", MediaFormat::kMp4},
    {"dash", MediaFormat::kMp4},  {"mmp4", MediaFormat::kMp4},       {"f4v ", MediaFormat::kMp4},
    {"f4p ", MediaFormat::kMp4},  {"MSNV", MediaFormat::kMp4},       {"XAVC", MediaFormat::kMp4},
    {"cmfc", MediaFormat::kMp4},
};

MediaFormat FormatOfBrand(absl::string_view brand) {
  for (const BrandFormat& entry : kBrands) {
    if (entry.brand == brand) return entry.format;
  }
  // 3GPP (3gp4..3gp9) and 3GPP2 (3g2a..) version letters keep growing; the prefix is what
  // identifies the family.
  const absl::string_view family = brand.substr(0, 3);
  if (family == "3gp" || family == "3g2") return MediaFormat::k3gp;
  return MediaFormat::kUnknown;
}

// ftyp layout: size(4) "ftyp" major_brand(4) minor_version(4) compatible_brands(4 each).
MediaFormat SniffFtyp(Bytes head) {
  if (head.size() < 12 || !HasAt(head, 4, "ftyp")) return MediaFormat::kUnknown;
  // A box too small for major brand and minor version is malformed. This also rejects size 0
  // ("to end of file") and 1 (64-bit size follows), which no real ftyp uses.
  const uint32_t box_size = Be32(head, 0);
  if (box_size < 16) return MediaFormat::kUnknown;

  const absl::string_view major = FourCc(head, 8);
  const MediaFormat major_format = FormatOfBrand(major);
  if (major_format != MediaFormat::kUnknown && !IsStructuralHeifBrand(major)) return major_format;

  // The major brand was structural or unknown: the compatible brands decide. HEIF files routinely
  // also list generic ISO brands (iso8, miaf), so image brands outrank the first listed one.
  bool has_avif = false;
  bool has_heif = IsStructuralHeifBrand(major);
  MediaFormat first_other = MediaFormat::kUnknown;
  // Compatible brands exist only inside the box, and only whole brands inside `head` are read.
  const size_t end = box_size < head.size() ? box_size : head.size();
  for (size_t offset = 16; offset + 4 <= end; offset += 4) {
    const MediaFormat format = FormatOfBrand(FourCc(head, offset));
    if (format == MediaFormat::kAvif) {
      has_avif = true;
    } else if (format == MediaFormat::kHeif) {
      has_heif = true;
    } else if (first_other == MediaFormat::kUnknown) {
      first_other = format;
    }
  }
  if (has_avif) return MediaFormat::kAvif;
  if (has_heif) return MediaFormat::kHeif;
  return first_other;
}

// Pre-ftyp QuickTime files begin directly with a top-level atom. The type alone is four common
// letters, so the 32-bit size must also be plausible (at least the 8-byte header).
bool IsClassicQuickTime(Bytes head) {
  if (head.size() < 8 || Be32(head, 0) < 8) return false;
  const absl::string_view type = FourCc(head, 4);
  return type == "moov" || type == "mdat" || type == "wide" || type == "free" || type == "skip" ||
         type == "pnot";
}

// ---- EBML (Matroska / WebM) ---------------------------------------------------------------------

// Reads an EBML variable-length integer at *pos, not past `end`. Element IDs keep their length
// marker (0x4282 is DocType as written); sizes drop it. An all-ones size means "unknown size",
// which the EBML header may not use, so it is rejected like any malformed integer.
bool ReadVint(Bytes head, size_t end, bool is_id, size_t* pos, uint64_t* value) {
  if (*pos >= end) return false;
  const uint8_t first = head[*pos];
  if (first == 0) return false;  // length > 8
  size_t length = 1;
  while ((first & (0x80 >> (length - 1))) == 0) ++length;
  if (is_id && length > 4) return false;
  if (length > end - *pos) return false;
  uint64_t result = is_id ? first : (first & (0xFFu >> length));
  bool all_ones = result == (0xFFu >> length);
  for (size_t i = 1; i < length; ++i) {
    const uint8_t byte = head[*pos + i];
    result = (result << 8) | byte;
    all_ones = all_ones && byte == 0xFF;
  }
  if (!is_id && all_ones) return false;
  *pos += length;
  *value = result;
  return true;
}

// Walks the EBML header's children to DocType instead of searching for the bytes 42 82, which
// could just as well appear inside another element's value.
MediaFormat SniffEbml(Bytes head) {
  if (!HasAt(head, 0, "\x1A\x45\xDF\xA3")) return MediaFormat::kUnknown;
  size_t pos = 4;
  uint64_t header_size = 0;
  if (!ReadVint(head, head.size(), /*is_id=*/false, &pos, &header_size)) {
    return MediaFormat::kUnknown;
  }
  const size_t end = header_size < head.size() - pos ? pos + header_size : head.size();
  while (pos < end) {
    uint64_t id = 0;
    uint64_t size = 0;
    if (!ReadVint(head, end, /*is_id=*/true, &pos, &id) ||
        !ReadVint(head, end, /*is_id=*/false, &pos, &size) || size > end - pos) {
      return MediaFormat::kUnknown;
    }
    if (id == 0x4282) {
      absl::string_view doc_type(reinterpret_cast<const char*>(head.data() + pos), size);
      // EBML strings may be zero-padded to their element size.
      while (!doc_type.empty() && doc_type.back() == '\0') doc_type.remove_suffix(1);
      if (doc_type == "webm") return MediaFormat::kWebm;
      if (doc_type == "matroska") return MediaFormat::kMatroska;
      return MediaFormat::kUnknown;
    }
    pos += size;
  }
  return MediaFormat::kUnknown;
}

// ---- MPEG audio ---------------------------------------------------------------------------------

// ID3v2 header: "ID3", major version 2..4, revision, flags, 28-bit syncsafe size (top bits clear).
bool IsId3v2(Bytes head) {
  if (head.size() < 10 || !HasAt(head, 0, "ID3")) return false;
  if (head[3] < 2 || head[3] > 4 || head[4] == 0xFF) return false;
  for (size_t i = 6; i < 10; ++i) {
    if (head[i] & 0x80) return false;
  }
  return true;
}

// ADTS: 12-bit sync, ID, layer 00, protection_absent; then a sampling-frequency index that must
// name a real rate and a 13-bit frame length that must at least cover the 7-byte header.
bool IsAdts(Bytes head) {
  if (head.size() < 7 || head[0] != 0xFF || (head[1] & 0xF6) != 0xF0) return false;
  if (((head[2] >> 2) & 0x0F) > 12) return false;
  const uint32_t frame_length =
      ((uint32_t{head[3]} & 0x03) << 11) | (uint32_t{head[4]} << 3) | (uint32_t{head[5]} >> 5);
  return frame_length >= 7;
}

// MPEG-1/2/2.5 audio frame header. 0xFF followed by three set bits is common in arbitrary data,
// so every reserved field value is refused: version 01, layer 00 (that pattern is ADTS), bitrate
// index 1111, sample-rate index 11, emphasis 10. Free-format bitrate (0000) is refused too: it is
// rare in real files and would widen the match.
bool IsMpegAudioFrame(Bytes head) {
  if (head.size() < 4 || head[0] != 0xFF || (head[1] & 0xE0) != 0xE0) return false;
  const uint8_t version = (head[1] >> 3) & 0x03;
  const uint8_t layer = (head[1] >> 1) & 0x03;
  const uint8_t bitrate = head[2] >> 4;
  const uint8_t sample_rate = (head[2] >> 2) & 0x03;
  const uint8_t emphasis = head[3] & 0x03;
  return version != 1 && layer != 0 && bitrate != 0 && bitrate != 0x0F && sample_rate != 3 &&
         emphasis != 2;
}

// ---- TIFF and the raws built on it -----------------------------------------------------------

// A TIFF structure under another magic: Olympus ORF ("IIRO", "IIRS", "MMOR"), Panasonic RW2
// ("IIU\0"), BigTIFF ("II+\0"), and whatever a camera maker writes next. What they share is the
// byte-order mark and a 32-bit offset of the first IFD, which lies past the header and in real
// files within the first 256 MiB; text starting "II" or "MM" gives an offset of printable bytes,
// far larger. Location there is in the GPS IFD, which no signature marks.
bool IsTiffStructure(Bytes head) {
  if (head.size() < 8) return false;
  const bool little = HasAt(head, 0, "II");
  if (!little && !HasAt(head, 0, "MM")) return false;
  const uint32_t ifd = little ? (uint32_t{head[4]} | (uint32_t{head[5]} << 8) |
                                 (uint32_t{head[6]} << 16) | (uint32_t{head[7]} << 24))
                              : Be32(head, 4);
  // BigTIFF keeps its offset in bytes 8..15 and has 8 (the offset size) in bytes 4..5.
  if (HasAt(head, 2, absl::string_view("+\0", 2)) || HasAt(head, 2, absl::string_view("\0+", 2))) {
    return true;
  }
  return ifd >= 8 && ifd < (1u << 28);
}

// ---- Names --------------------------------------------------------------------------------------

// absl::EqualsIgnoreCase would do, but Debian's abseil has its own string_view type that
// absl::string_view does not convert to.
bool EqualsAsciiIgnoreCase(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

struct ExtensionClass {
  absl::string_view extension;
  MediaClass media_class;
};

constexpr ExtensionClass kExtensions[] = {
    {"jpg", MEDIA_CLASS_IMAGE},  {"jpeg", MEDIA_CLASS_IMAGE}, {"jpe", MEDIA_CLASS_IMAGE},
    {"png", MEDIA_CLASS_IMAGE},  {"gif", MEDIA_CLASS_IMAGE},  {"webp", MEDIA_CLASS_IMAGE},
    {"heic", MEDIA_CLASS_IMAGE}, {"heif", MEDIA_CLASS_IMAGE}, {"avif", MEDIA_CLASS_IMAGE},
    {"bmp", MEDIA_CLASS_IMAGE},  {"dng", MEDIA_CLASS_IMAGE},  {"mp4", MEDIA_CLASS_VIDEO},
    {"m4v", MEDIA_CLASS_VIDEO},  {"mov", MEDIA_CLASS_VIDEO},  {"3gp", MEDIA_CLASS_VIDEO},
    {"3gpp", MEDIA_CLASS_VIDEO}, {"3g2", MEDIA_CLASS_VIDEO},  {"mkv", MEDIA_CLASS_VIDEO},
    {"webm", MEDIA_CLASS_VIDEO}, {"ts", MEDIA_CLASS_VIDEO},   {"avi", MEDIA_CLASS_VIDEO},
    {"mp3", MEDIA_CLASS_AUDIO},  {"m4a", MEDIA_CLASS_AUDIO},  {"aac", MEDIA_CLASS_AUDIO},
    {"flac", MEDIA_CLASS_AUDIO}, {"ogg", MEDIA_CLASS_AUDIO},  {"oga", MEDIA_CLASS_AUDIO},
    {"opus", MEDIA_CLASS_AUDIO}, {"wav", MEDIA_CLASS_AUDIO},  {"amr", MEDIA_CLASS_AUDIO},
    {"mka", MEDIA_CLASS_AUDIO},  {"tif", MEDIA_CLASS_IMAGE},  {"tiff", MEDIA_CLASS_IMAGE},
};

bool IsMediaClass(MediaClass media_class) {
  return media_class == MEDIA_CLASS_IMAGE || media_class == MEDIA_CLASS_VIDEO ||
         media_class == MEDIA_CLASS_AUDIO;
}

// MediaProvider redacts location only in images and video (EXIF GPS, ISO-BMFF location boxes);
// until the location parsers exist, those stay "unknown" so rules fail closed.
LocationPresence LocationFor(MediaClass media_class) {
  return media_class == MEDIA_CLASS_IMAGE || media_class == MEDIA_CLASS_VIDEO
             ? LocationPresence::kUnknown
             : LocationPresence::kAbsent;
}

}  // namespace

absl::Span<const FormatTraits> AllFormats() { return kFormats; }

absl::string_view FormatName(MediaFormat format) { return TraitsOf(format).name; }

MediaFormat SniffFormat(Bytes head) {
  if (HasAt(head, 0, "\xFF\xD8\xFF")) return MediaFormat::kJpeg;
  if (HasAt(head, 0, "\x89PNG\r\n\x1A\n")) return MediaFormat::kPng;
  if (HasAt(head, 0, absl::string_view("II*\0", 4)) ||
      HasAt(head, 0, absl::string_view("MM\0*", 4))) {
    return MediaFormat::kTiff;
  }
  if (HasAt(head, 0, "GIF87a") || HasAt(head, 0, "GIF89a")) return MediaFormat::kGif;
  if (HasAt(head, 0, "RIFF") && HasAt(head, 8, "WEBP")) return MediaFormat::kWebp;
  // RF64 is the EBU's 64-bit-size WAVE for recordings over 4 GiB.
  if ((HasAt(head, 0, "RIFF") || HasAt(head, 0, "RF64")) && HasAt(head, 8, "WAVE")) {
    return MediaFormat::kWav;
  }
  if (HasAt(head, 0, "%PDF-")) return MediaFormat::kPdf;
  if (HasAt(head, 0, "PK\x03\x04")) return MediaFormat::kZip;
  if (HasAt(head, 0, "fLaC")) return MediaFormat::kFlac;
  // The byte after the capture pattern is the stream structure version, which has only ever been 0.
  if (HasAt(head, 0, absl::string_view("OggS\0", 5))) return MediaFormat::kOgg;
  if (const MediaFormat format = SniffFtyp(head); format != MediaFormat::kUnknown) return format;
  if (IsClassicQuickTime(head)) return MediaFormat::kQuickTime;
  if (const MediaFormat format = SniffEbml(head); format != MediaFormat::kUnknown) return format;
  if (IsId3v2(head)) return MediaFormat::kMp3;
  if (IsAdts(head)) return MediaFormat::kAac;
  if (IsMpegAudioFrame(head)) return MediaFormat::kMp3;
  // Last: two letters and an offset are weaker evidence than any magic above.
  if (IsTiffStructure(head)) return MediaFormat::kTiff;
  return MediaFormat::kUnknown;
}

MediaClass ClassOfName(absl::string_view name) {
  const size_t slash = name.rfind('/');
  if (slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  const size_t dot = name.rfind('.');
  // dot == 0 is a dotfile (".jpg" is named "jpg" and has no extension): the scanner treats such
  // names as hidden non-media, and an empty stem cannot carry a claim about content.
  if (dot == absl::string_view::npos || dot == 0) return MEDIA_CLASS_NONE;
  const absl::string_view extension = name.substr(dot + 1);
  for (const ExtensionClass& entry : kExtensions) {
    if (EqualsAsciiIgnoreCase(entry.extension, extension)) return entry.media_class;
  }
  return MEDIA_CLASS_NONE;
}

uint32_t ClassesOfFormat(MediaFormat format) { return TraitsOf(format).classes; }

ContentFacts FactsFromName(absl::string_view name) {
  ContentFacts facts;
  facts.content_known = false;
  facts.format = MediaFormat::kUnknown;
  facts.media_class = ClassOfName(name);
  facts.location = LocationFor(facts.media_class);
  return facts;
}

ContentFacts FactsFromFormat(absl::string_view name, MediaFormat format) {
  ContentFacts facts;
  facts.content_known = true;
  facts.format = format;
  // Agreement is per class, not per format: WebP bytes in x.png are still an image, since
  // MediaProvider itself only classifies by extension and the image codecs sniff on decode.
  const MediaClass claimed = ClassOfName(name);
  facts.media_class = IsMediaClass(claimed) && (ClassesOfFormat(format) & Bit(claimed)) != 0
                          ? claimed
                          : MEDIA_CLASS_NONE;
  // A carrier's location is a property of its bytes, not of its name: a JPEG named x.txt still
  // holds its GPS (Policy.location_guard).
  facts.location =
      FormatMayCarryLocation(format) ? LocationPresence::kUnknown : LocationFor(facts.media_class);
  return facts;
}

bool FormatMayCarryLocation(MediaFormat format) { return TraitsOf(format).may_carry_location; }

ContentFacts FactsFromContent(absl::string_view name, Bytes head) {
  return FactsFromFormat(name, SniffFormat(head));
}

}  // namespace scopedfs::media
