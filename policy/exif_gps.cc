// Exif GPS finder (see exif_gps.h): follows GPSInfo pointers from the IFD0 chain and the Exif and
// Interoperability sub-IFDs, and reports the GPS IFD's entries and their out-of-line values. All
// offsets are checked against the TIFF's bounds before use; anything inconsistent fails closed.
#include "policy/exif_gps.h"

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace scopedfs::policy {
namespace {

constexpr uint16_t kTagExifIfd = 0x8769;
constexpr uint16_t kTagGpsIfd = 0x8825;
constexpr uint16_t kTagInteropIfd = 0xA005;
constexpr uint16_t kTypeLong = 4;
constexpr uint16_t kTypeIfd = 13;

constexpr uint64_t kEntrySize = 12;

// Bytes per value of each TIFF/Exif field type; 0 for types we do not know, whose values we
// could not delimit.
uint64_t TypeSize(uint16_t type) {
  switch (type) {
    case 1:  // BYTE
    case 2:  // ASCII
    case 6:  // SBYTE
    case 7:  // UNDEFINED
      return 1;
    case 3:  // SHORT
    case 8:  // SSHORT
      return 2;
    case 4:   // LONG
    case 9:   // SLONG
    case 11:  // FLOAT
    case 13:  // IFD
      return 4;
    case 5:   // RATIONAL
    case 10:  // SRATIONAL
    case 12:  // DOUBLE
      return 8;
    default:
      return 0;
  }
}

struct Entry {
  uint64_t at;  // file offset of the 12-byte entry
  uint16_t tag;
  uint16_t type;
  uint32_t count;
  uint32_t value;  // the value/offset field, as a number in the TIFF's byte order
};

class TiffWalker {
 public:
  TiffWalker(ScanReader& r, uint64_t begin, uint64_t end, std::vector<LocationRange>* out)
      : r_(r), begin_(begin), length_(end - begin), out_(out) {}

  bool Run() {
    uint8_t header[8];
    if (length_ < sizeof(header)) return r_.Fail(begin_, "TIFF header truncated");
    if (!r_.Read(begin_, sizeof(header), header)) return false;
    if (header[0] == 'I' && header[1] == 'I' && header[2] == 42 && header[3] == 0) {
      big_endian_ = false;
    } else if (header[0] == 'M' && header[1] == 'M' && header[2] == 0 && header[3] == 42) {
      big_endian_ = true;
    } else {
      return r_.Fail(begin_, "bad TIFF header");
    }
    uint32_t ifd = U32(header + 4);
    // The IFD chain is walked iteratively (it is a list, not a tree); `visited_` ends loops and
    // the structure budget bounds its length. A zero link ends it, except that IFD0 must exist.
    do {
      std::vector<Entry> entries;
      uint32_t next = 0;
      if (!ReadIfd(ifd, /*need_next=*/true, &entries, &next)) return false;
      if (!FollowPointers(entries)) return false;
      ifd = next;
    } while (ifd != 0);
    return true;
  }

 private:
  uint16_t U16(const uint8_t* p) const {
    return big_endian_ ? static_cast<uint16_t>((p[0] << 8) | p[1])
                       : static_cast<uint16_t>(p[0] | (p[1] << 8));
  }
  uint32_t U32(const uint8_t* p) const {
    return big_endian_
               ? (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]
               : uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) |
                     (uint32_t{p[3]} << 24);
  }

  // Whether [offset, offset + size) (TIFF-relative) lies inside the TIFF. Written so that no sum
  // can wrap: both operands are at most 2^32 * 8 here, but the check does not rely on it.
  bool Inside(uint64_t offset, uint64_t size) const {
    return offset <= length_ && size <= length_ - offset;
  }

  // Reads the IFD at TIFF-relative `ifd`: its entries and, if `need_next`, the next-IFD link
  // (the GPS IFD's link is never followed, so it need not even be present).
  bool ReadIfd(uint32_t ifd, bool need_next, std::vector<Entry>* entries, uint32_t* next) {
    uint64_t at = begin_ + ifd;
    // Offsets below 8 would overlap the header; real writers never produce them.
    if (ifd < 8) return r_.Fail(at, absl::StrCat("IFD offset ", ifd, " overlaps the header"));
    if (!Inside(ifd, 2)) {
      return r_.Fail(ifd < length_ ? at : begin_,
                     absl::StrCat("IFD offset ", ifd, " outside the TIFF"));
    }
    // Reaching an IFD twice is a loop, or two pointers sharing one IFD; neither is written by
    // real encoders, and refusing both keeps the walk linear.
    if (!visited_.insert(ifd).second) return r_.Fail(at, "IFD reached twice (loop)");
    if (!r_.Visit(at)) return false;
    uint8_t count_bytes[2];
    if (!r_.Read(at, 2, count_bytes)) return false;
    uint64_t count = U16(count_bytes);
    uint64_t body = kEntrySize * count + (need_next ? 4 : 0);
    if (!Inside(ifd + uint64_t{2}, body)) {
      return r_.Fail(at, absl::StrCat("IFD with ", count, " entries runs past the TIFF"));
    }
    // One read for the whole IFD: at most 65535 * 12 bytes, and already known to be inside.
    std::vector<uint8_t> raw(body);
    if (!r_.Read(at + 2, raw.size(), raw.data())) return false;
    entries->reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      const uint8_t* p = raw.data() + kEntrySize * i;
      uint64_t entry_at = at + 2 + kEntrySize * i;
      if (!r_.Visit(entry_at)) return false;
      entries->push_back({entry_at, U16(p), U16(p + 2), U32(p + 4), U32(p + 8)});
    }
    if (need_next) *next = U32(raw.data() + kEntrySize * count);
    return true;
  }

  // An IFD pointer entry must hold exactly one offset; anything else means we misunderstand the
  // file, and a reader might still follow it.
  bool PointerTarget(const Entry& e, uint32_t* target) {
    if ((e.type != kTypeLong && e.type != kTypeIfd) || e.count != 1) {
      return r_.Fail(e.at, absl::StrCat("tag 0x", absl::Hex(e.tag), " is not a single IFD offset"));
    }
    *target = e.value;
    return true;
  }

  // GPSInfo is defined for IFD0, but readers (ExifTool, Android's ExifInterface) follow it from
  // any IFD, so a pointer in IFD1, the Exif IFD or the Interoperability IFD is honoured too.
  bool FollowPointers(const std::vector<Entry>& entries) {
    for (const Entry& e : entries) {
      uint32_t target = 0;
      if (e.tag == kTagGpsIfd) {
        if (!PointerTarget(e, &target)) return false;
        ScanReader::DepthGuard guard(r_, e.at);
        if (!guard.ok() || !ScanGpsIfd(target)) return false;
      } else if (e.tag == kTagExifIfd || e.tag == kTagInteropIfd) {
        if (!PointerTarget(e, &target)) return false;
        ScanReader::DepthGuard guard(r_, e.at);
        if (!guard.ok()) return false;
        std::vector<Entry> sub;
        uint32_t unused_next = 0;
        if (!ReadIfd(target, /*need_next=*/false, &sub, &unused_next)) return false;
        if (!FollowPointers(sub)) return false;
      }
    }
    return true;
  }

  bool ScanGpsIfd(uint32_t ifd) {
    std::vector<Entry> entries;
    uint32_t unused_next = 0;
    if (!ReadIfd(ifd, /*need_next=*/false, &entries, &unused_next)) return false;
    // The count and the entries, not the next-IFD link: zeroing the count alone already empties
    // the IFD for a reader, and the entries go too so that nothing is left for a lenient one.
    uint64_t at = begin_ + ifd;
    AddRange(out_, at, at + 2 + kEntrySize * entries.size(), REDACTION_EXIF_GPS);
    for (const Entry& e : entries) {
      uint64_t unit = TypeSize(e.type);
      if (unit == 0) {
        return r_.Fail(e.at,
                       absl::StrCat("GPS tag 0x", absl::Hex(e.tag), " has unknown type ", e.type));
      }
      uint64_t size = unit * e.count;  // at most 8 * (2^32 - 1): no overflow
      if (size <= 4) continue;         // inline, already inside the entry
      if (!Inside(e.value, size)) {
        return r_.Fail(e.at, absl::StrCat("GPS tag 0x", absl::Hex(e.tag), " value of ", size,
                                          " bytes at ", e.value, " outside the TIFF"));
      }
      AddRange(out_, begin_ + e.value, begin_ + e.value + size, REDACTION_EXIF_GPS);
    }
    return true;
  }

  ScanReader& r_;
  uint64_t begin_;
  uint64_t length_;
  std::vector<LocationRange>* out_;
  bool big_endian_ = false;
  absl::flat_hash_set<uint32_t> visited_;
};

}  // namespace

bool FindTiffGps(ScanReader& r, uint64_t tiff_begin, uint64_t tiff_end,
                 std::vector<LocationRange>* out) {
  if (!r.ok()) return false;
  if (tiff_end < tiff_begin || tiff_end > r.size()) {
    return r.Fail(tiff_begin, "TIFF bounds invalid (empty, reversed or past the file)");
  }
  return TiffWalker(r, tiff_begin, tiff_end, out).Run();
}

}  // namespace scopedfs::policy
