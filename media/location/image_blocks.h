// The metadata blocks the still-image walks share (image_location.cc: JPEG and WebP;
// png_location.cc: PNG): Exif TIFF structures, XMP packets and Photoshop image resources, read
// within the scan's budget. Private to //media/location.
#ifndef SCOPEDFS_MEDIA_LOCATION_IMAGE_BLOCKS_H_
#define SCOPEDFS_MEDIA_LOCATION_IMAGE_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media::image_blocks {

inline constexpr Redaction kExif = REDACTION_EXIF_GPS;
inline constexpr Redaction kXmp = REDACTION_XMP_GPS;

inline absl::string_view View(const uint8_t* p, size_t n) {
  return absl::string_view(reinterpret_cast<const char*>(p), n);
}

inline uint32_t Be32At(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

inline uint32_t Le32At(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// Reads [begin, end) whole. The budget is checked before allocating, so that a huge chunk that
// is really in the file cannot make us allocate gigabytes only to be refused by Read.
bool ReadWhole(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
               std::string* out);

// Up to `max` bytes from `begin`, fewer if [begin, end) is shorter: for matching identifiers.
bool Peek(ScanReader& r, uint64_t begin, uint64_t end, size_t max, std::string* out);

// The XMP packet in [begin, end). XML we cannot parse is redacted whole by FindXmpGps; that
// contains the damage to the packet, which is well delimited, so the scan stays clean.
bool ScanXmpPacket(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
                   LocationScan* scan);

// A bare TIFF structure in [begin, end), tolerating the "Exif\0\0" prefix some PNG and WebP
// writers add (readers skip it too).
bool ScanExifBlock(ScanReader& r, uint64_t begin, uint64_t end, LocationScan* scan);

// Photoshop image resource blocks in [begin, end): "8BIM", a 16-bit ID, a Pascal name padded to
// an even size, a 32-bit size and the data, padded to an even size. The IPTC IIM (0x0404), Exif
// (0x0422) and XMP (0x0424) resources are scanned. Like ExifTool, the walk ends at a block of
// another signature. A block that runs past `end` ends it too, unless `strict`: in JPEG, resources
// may continue in the next APP13 segment (ExifTool joins them), which we do not, so that is
// malformed.
bool ScanPhotoshopResources(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
                            bool strict, LocationScan* scan);

// The walk's result: its ranges merged and sorted, and the reader's verdict (a failure makes it
// malformed).
LocationScan Done(ScanReader& r, LocationScan scan);

}  // namespace scopedfs::media::image_blocks

#endif  // SCOPEDFS_MEDIA_LOCATION_IMAGE_BLOCKS_H_
