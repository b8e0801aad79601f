#include "media/location/image_blocks.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "media/location/exif_gps.h"
#include "media/location/iptc_place.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media::image_blocks {
namespace {

// The Exif identifier as PNG and WebP writers that add one spell it (ScanExifBlock).
constexpr absl::string_view kStrictExifId("Exif\0\0", 6);
// Photoshop resource IDs that hold location: IPTC IIM (place names), Exif (a TIFF structure) and
// XMP.
constexpr uint16_t kPhotoshopIptc = 0x0404;
constexpr uint16_t kPhotoshopExif = 0x0422;
constexpr uint16_t kPhotoshopXmp = 0x0424;

}  // namespace

bool ReadWhole(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
               std::string* out) {
  uint64_t left = limits.max_bytes_read - std::min(limits.max_bytes_read, r.bytes_read());
  if (end - begin > left) {
    return r.Fail(begin, absl::StrCat("read budget of ", limits.max_bytes_read, " bytes spent"));
  }
  return r.ReadString(begin, end - begin, out);
}

bool Peek(ScanReader& r, uint64_t begin, uint64_t end, size_t max, std::string* out) {
  return r.ReadString(begin, std::min<uint64_t>(end - begin, max), out);
}

bool ScanXmpPacket(ScanReader& r, const ScanLimits& limits, uint64_t begin, uint64_t end,
                   LocationScan* scan) {
  std::string packet;
  if (!ReadWhole(r, limits, begin, end, &packet)) return false;
  FindXmpGps(packet, begin, limits.max_depth, &scan->ranges);
  return true;
}

bool ScanExifBlock(ScanReader& r, uint64_t begin, uint64_t end, LocationScan* scan) {
  AddRange(&scan->fallback, begin, end, kExif);
  std::string head;
  if (!Peek(r, begin, end, kStrictExifId.size(), &head)) return false;
  uint64_t tiff = head == kStrictExifId ? begin + kStrictExifId.size() : begin;
  return FindTiffGps(r, tiff, end, &scan->ranges);
}

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

}  // namespace scopedfs::media::image_blocks
