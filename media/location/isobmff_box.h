// Box-level primitives of the ISO-BMFF location walk (isobmff_location.cc), shared by its parts:
// four-character codes, box headers and the bounded walk over a run of boxes, and a cursor over
// the big-endian fields of a box body read into memory. Private to //media/location.
#ifndef SCOPEDFS_MEDIA_LOCATION_ISOBMFF_BOX_H_
#define SCOPEDFS_MEDIA_LOCATION_ISOBMFF_BOX_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media::isobmff {

constexpr uint32_t FourCc(const char (&s)[5]) {
  return (uint32_t{static_cast<uint8_t>(s[0])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[2])} << 8) | uint32_t{static_cast<uint8_t>(s[3])};
}

// The box types more than one part of the walk names; each part keeps the rest to itself.
constexpr uint32_t kFtyp = FourCc("ftyp");
constexpr uint32_t kMeta = FourCc("meta");
constexpr uint32_t kUuid = FourCc("uuid");
constexpr uint32_t kXyz = 0xA978797A;        // "©xyz" with © in Latin-1, as QuickTime spells it
constexpr uint32_t kAtXyz = FourCc("@xyz");  // ©xyz as some writers spell it in ASCII

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr Redaction kXmp = REDACTION_XMP_GPS;
constexpr Redaction kBox = REDACTION_ISOBMFF_LOCATION;

inline uint32_t LoadBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

struct Box {
  uint64_t begin = 0;    // where the size field is
  uint64_t payload = 0;  // after size, type, largesize and the uuid extended type
  uint64_t end = 0;
  uint32_t type = 0;
  uint8_t extended_type[16] = {};
};

// Walks runs of boxes and reads box bodies through the scan's reader, so that every header and
// body counts against its limits.
class BoxWalker {
 public:
  using BoxVisitor = absl::FunctionRef<bool(const Box&)>;

  BoxWalker(ScanReader& r, const ScanLimits& limits) : r_(r), limits_(limits) {}

  ScanReader& reader() { return r_; }

  // Calls `visit` on each box in [begin, end), stopping at the first false.
  bool ForEachBox(uint64_t begin, uint64_t end, bool top_level, BoxVisitor visit);

  // Reads [begin, end) whole, refusing before allocating if the read budget cannot cover it.
  bool ReadAll(uint64_t begin, uint64_t end, std::string* out);

 private:
  bool ReadHeader(uint64_t at, uint64_t end, bool top_level, Box* box);

  ScanReader& r_;
  const ScanLimits& limits_;
};

// Big-endian fields of a box body held in memory; a short read fails the scan at the file
// offset of the missing field.
class Cursor {
 public:
  Cursor(ScanReader& r, absl::string_view bytes, uint64_t file_offset, absl::string_view what)
      : r_(r), bytes_(bytes), file_offset_(file_offset), what_(what) {}

  uint64_t offset() const { return file_offset_ + pos_; }

  // Reads an unsigned field of `width` bytes (0, 1, 2, 4 or 8; 0 reads nothing and yields 0).
  bool Uint(int width, uint64_t* v);
  template <typename T>
  bool Uint(int width, T* v) {
    uint64_t wide = 0;
    if (!Uint(width, &wide)) return false;
    *v = static_cast<T>(wide);
    return true;
  }

  // A NUL-terminated string; when `to_end_ok`, the end of the box may stand in for the NUL,
  // which writers that drop the last terminator rely on.
  bool String(bool to_end_ok, std::string* s);

  bool AtEnd() const { return pos_ == bytes_.size(); }

 private:
  ScanReader& r_;
  absl::string_view bytes_;
  uint64_t file_offset_;
  absl::string_view what_;
  size_t pos_ = 0;
};

}  // namespace scopedfs::media::isobmff

#endif  // SCOPEDFS_MEDIA_LOCATION_ISOBMFF_BOX_H_
