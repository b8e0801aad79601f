// Content facts: what a file is, judged from its bytes and cross-checked against its name. The
// decision engine matches rules on these facts; the daemon computes them once per file version.
#ifndef SCOPEDFS_MEDIA_CONTENT_FACTS_H_
#define SCOPEDFS_MEDIA_CONTENT_FACTS_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/policy.pb.h"

namespace scopedfs::media {

// Container / codec family recognised from magic bytes.
enum class MediaFormat : uint8_t {
  kUnknown = 0,
  kJpeg,
  kPng,
  kGif,
  kWebp,
  kHeif,       // ISO-BMFF ftyp heic/heix/hevc/hevx/heim/heis/mif1/msf1
  kAvif,       // ISO-BMFF ftyp avif/avis
  kMp4,        // ISO-BMFF video brands: isom, iso2..iso6, mp41, mp42, avc1, M4V, dash, ...
  kQuickTime,  // ftyp "qt  ", or a classic MOV starting with moov/mdat/wide/free/skip/pnot atoms
  k3gp,        // ftyp 3gp*/3g2*
  kM4a,        // ISO-BMFF audio brands: "M4A ", "M4B ", "M4P "
  kMatroska,   // EBML header, DocType "matroska"
  kWebm,       // EBML header, DocType "webm"
  kMp3,        // "ID3" tag or an MPEG audio frame sync
  kAac,        // ADTS frame sync (0xFFF1 / 0xFFF9)
  kFlac,       // "fLaC"
  kOgg,        // "OggS"
  kWav,        // RIFF....WAVE
  kPdf,        // "%PDF-"
  kZip,        // "PK\3\4" (also .docx/.xlsx/.pptx/.odt, .apk, .jar)
  kTiff,       // "II*\0" / "MM\0*": TIFF and the raw formats built on it (DNG, CR2, NEF, ARW);
               // also "II"/"MM" with another magic and a plausible IFD offset (ORF, RW2, BigTIFF)
};

// The last MediaFormat; every value from kUnknown to it is a format.
inline constexpr MediaFormat kLastFormat = MediaFormat::kTiff;

// What is known of a format without reading a file: one table holds it for every format, and
// FormatName, ClassesOfFormat and FormatMayCarryLocation read it.
struct FormatTraits {
  MediaFormat format;
  absl::string_view name;   // FormatName
  uint32_t classes;         // ClassesOfFormat
  bool may_carry_location;  // FormatMayCarryLocation
};

// Every format's row, from kUnknown to kLastFormat in enum order.
absl::Span<const FormatTraits> AllFormats();

// Lower-case short name ("jpeg", "mp4", "unknown").
absl::string_view FormatName(MediaFormat format);

// Number of leading bytes SniffFormat looks at; callers read at most this many. 64 would cover
// most magics, but an EBML header written with 8-byte size fields puts the Matroska DocType past
// byte 64, and ftyp boxes listing many compatible brands run long; 256 bytes is still one read.
inline constexpr size_t kSniffBytes = 256;

// Recognises the format from the first bytes of a file (fewer than kSniffBytes is fine). Never
// reads outside `head`. Unrecognised or truncated content is kUnknown. An ftyp box longer than
// `head` is judged on the brands that are inside `head`.
MediaFormat SniffFormat(absl::Span<const uint8_t> head);

// Media class a file name claims through its extension (ASCII case-insensitive), e.g. "a.JPG" ->
// IMAGE, "b.mp4" -> VIDEO, "c.flac" -> AUDIO, "d.pdf" / "e" / "f.tar" -> NONE. The extension
// follows the last '.' of the last '/'-separated segment; a leading '.' only marks a dotfile, so
// ".jpg" has no extension (NONE) while ".x.jpg" is IMAGE. Some claimed extensions (bmp, dng, ts,
// avi, amr) have no MediaFormat yet, so once content is read they come out NONE.
MediaClass ClassOfName(absl::string_view name);

// Bitmask (1 << MediaClass) of the media classes a format can legitimately hold: JPEG -> IMAGE;
// MP4/Matroska/Ogg/3GP -> VIDEO|AUDIO (audio-only files use these containers too); PDF/ZIP/unknown
// -> 0.
uint32_t ClassesOfFormat(MediaFormat format);

// Whether files of this format can hold location metadata that a common reader (exiftool,
// ExifInterface, ffmpeg) reports: every image and video container, and audio (M4A holds the same
// udta boxes as MP4, MP3 and WAV hold XMP). Formats with no location parser (GIF, Matroska, WebM,
// TIFF) are carriers too: their location can never be vouched for. Carriers are read through the
// redacted view by callers owed one, and not written by them. The daemon scans every file, these
// and the others (PDF, ZIP, unknown) alike; a non-carrier is judged by its scan alone.
bool FormatMayCarryLocation(MediaFormat format);

// Whether location metadata may be present. Images and video are kUnknown until their content is
// scanned (media/location/location.h); rules treat everything but kAbsent as "may carry location"
// (fail closed). kMalformed: the scan could not vouch for the file (see Policy.uncertain_location).
enum class LocationPresence : uint8_t { kUnknown = 0, kAbsent, kPresent, kMalformed };

// Everything the engine needs to know about a file's content.
struct ContentFacts {
  MediaFormat format = MediaFormat::kUnknown;  // from content; kUnknown when content was not read
  bool content_known = false;                  // false: decided from the name alone (CREATE)
  MediaClass media_class = MEDIA_CLASS_NONE;
  LocationPresence location = LocationPresence::kAbsent;

  // For has_location matching: unknown and malformed count as present.
  bool MayHaveLocation() const { return location != LocationPresence::kAbsent; }
  // Whether a redacted copy cannot be vouched for (Policy.uncertain_location applies): the scan
  // failed, or content was read but never scanned.
  bool LocationUncertain() const {
    return location == LocationPresence::kMalformed ||
           (content_known && location == LocationPresence::kUnknown);
  }
};

// Facts for a file that has no content yet (CREATE, MKDIR): the extension decides the class.
ContentFacts FactsFromName(absl::string_view name);

// Facts for an existing file whose content was already sniffed (a cached format): the same
// agreement rule as FactsFromContent, so a rename re-judges the class without re-reading.
ContentFacts FactsFromFormat(absl::string_view name, MediaFormat format);

// Facts for an existing file: the class is the one the name claims, but only if the sniffed format
// can hold that class; otherwise MEDIA_CLASS_NONE (a PDF named x.jpg is not an image, a JPEG named
// x.txt is not an image either). Images and video get location kUnknown, everything else kAbsent.
ContentFacts FactsFromContent(absl::string_view name, absl::Span<const uint8_t> head);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_CONTENT_FACTS_H_
