// Exif GPS finder (see exif_gps.h): follows GPSInfo pointers from every IFD a reader walks (the
// IFD0 chain, the Exif, Interoperability, SubIFDs and GlobalParameters IFDs and their chains), and
// reports the GPS IFD's entries and their out-of-line values, plus the GPS properties of XMP kept
// in an ApplicationNotes tag. All offsets are checked against the TIFF's bounds before use;
// anything inconsistent fails closed.
#include "media/location/exif_gps.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "media/location/iptc_place.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media {
namespace {

constexpr uint16_t kTagSubIfds = 0x014A;
constexpr uint16_t kTagGlobalParametersIfd = 0x0190;
constexpr uint16_t kTagApplicationNotes = 0x02BC;  // XMP packet (TIFF/EP, Adobe XMP part 3)
constexpr uint16_t kTagIptcNaa = 0x83BB;           // IPTC IIM datasets (TIFF's IPTC-NAA)
constexpr uint16_t kTagExifIfd = 0x8769;
constexpr uint16_t kTagGpsIfd = 0x8825;
constexpr uint16_t kTagInteropIfd = 0xA005;

// Tags whose values point at IFDs that readers parse with the IFD0 tag table, so a GPSInfo tag in
// them is honoured: ExifTool follows all five, Android's ExifInterface the Exif, Interop and
// SubIFDs pointers.
bool IsSubIfdPointer(uint16_t tag) {
  return tag == kTagExifIfd || tag == kTagInteropIfd || tag == kTagSubIfds ||
         tag == kTagGlobalParametersIfd;
}

// The XMP depth limit for ApplicationNotes packets. ScanReader does not expose the scan's own
// limit; a deeper packet only fails the XMP parse, which then redacts the packet whole.
constexpr int kXmpMaxDepth = ScanLimits().max_depth;

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
    // IFD0 must exist, and so must every link of its chain.
    return WalkChain(U32(header + 4), /*strict=*/true);
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

  // Reads the IFD at TIFF-relative `ifd`: its entries and the next-IFD link, which must be
  // present if `need_next` and otherwise is reported (*has_next) only if it lies inside the TIFF.
  bool ReadIfd(uint32_t ifd, bool need_next, std::vector<Entry>* entries, uint32_t* next,
               bool* has_next) {
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
    *has_next = need_next || Inside(ifd + uint64_t{2}, kEntrySize * count + 4);
    uint64_t body = kEntrySize * count + (*has_next ? 4 : 0);
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
    if (*has_next) *next = U32(raw.data() + kEntrySize * count);
    return true;
  }

  // Walks the IFD at `ifd` and the chain its next-IFD links make, following the pointers in each.
  // The chain is walked iteratively (it is a list, not a tree); `visited_` ends loops and the
  // structure budget bounds its length. In a `strict` chain (IFD0's) every link must be a valid
  // IFD. Other IFDs' links are not defined by the standard, and writers often leave garbage or
  // nothing there; but ExifTool follows SubIFD chains and ExifInterface reads the link after any
  // IFD as a further IFD. So a link there is followed when it is nonzero, new and lands on an IFD
  // that lies wholly inside the TIFF, which is what those readers check before using one.
  bool WalkChain(uint32_t ifd, bool strict) {
    bool first = true;
    while (true) {
      if (!first && !strict && !PlausibleIfd(ifd)) return true;
      first = false;
      std::vector<Entry> entries;
      uint32_t next = 0;
      bool has_next = false;
      if (!ReadIfd(ifd, strict, &entries, &next, &has_next)) return false;
      if (!FollowPointers(entries)) return false;
      if (!has_next || next == 0) return true;
      ifd = next;
    }
  }

  // Whether a non-strict next-IFD link leads somewhere a reader could parse as a new IFD.
  bool PlausibleIfd(uint32_t ifd) {
    if (ifd < 8 || !Inside(ifd, 2) || visited_.contains(ifd)) return false;
    uint8_t count_bytes[2];
    if (!r_.Read(begin_ + ifd, 2, count_bytes)) return false;
    return Inside(ifd + uint64_t{2}, kEntrySize * U16(count_bytes));
  }

  // The integer values of a pointer entry (`max` at most). Readers take an IFD offset from any
  // integer type (ExifTool uses whatever number the value decodes to; ExifInterface accepts
  // SHORT, SSHORT, LONG and SLONG), so all integer types are accepted. Any other type, or no
  // value, means we misunderstand the file while a reader might still follow it: malformed.
  bool PointerTargets(const Entry& e, uint32_t max, std::vector<uint32_t>* targets) {
    uint64_t unit = 0;
    switch (e.type) {
      case 1:  // BYTE
      case 6:  // SBYTE
        unit = 1;
        break;
      case 3:  // SHORT
      case 8:  // SSHORT
        unit = 2;
        break;
      case 4:   // LONG
      case 9:   // SLONG
      case 13:  // IFD
        unit = 4;
        break;
      default:
        break;
    }
    if (unit == 0 || e.count == 0) {
      return r_.Fail(e.at, absl::StrCat("tag 0x", absl::Hex(e.tag), " is not an IFD offset"));
    }
    // A count comes from the file: more pointers than any reader follows is refused (fail
    // closed), and what is kept is charged to the scan's memory budget before it is allocated.
    constexpr uint32_t kMaxPointers = 256;
    if (e.count > kMaxPointers && max > 1) {
      return r_.Fail(e.at, absl::StrCat("tag 0x", absl::Hex(e.tag), " lists ", e.count,
                                        " IFD offsets (at most ", kMaxPointers, ")"));
    }
    uint64_t n = std::min<uint64_t>(e.count, max);
    uint64_t size = unit * static_cast<uint64_t>(e.count);
    if (!r_.Charge(e.at, unit * n + sizeof(uint32_t) * n)) return false;
    std::vector<uint8_t> raw(unit * n);
    if (size <= 4) {
      // Inline: the value field, in the file's byte order, left-justified.
      uint8_t field[4];
      if (!r_.Read(e.at + 8, 4, field)) return false;
      std::copy(field, field + raw.size(), raw.begin());
    } else {
      if (!Inside(e.value, size)) {
        return r_.Fail(e.at, absl::StrCat("tag 0x", absl::Hex(e.tag), " offsets at ", e.value,
                                          " outside the TIFF"));
      }
      if (!r_.Read(begin_ + e.value, raw.size(), raw.data())) return false;
    }
    for (uint64_t i = 0; i < n; ++i) {
      const uint8_t* p = raw.data() + unit * i;
      targets->push_back(unit == 1 ? p[0] : unit == 2 ? U16(p) : U32(p));
    }
    return true;
  }

  // GPSInfo is defined for IFD0, but readers (ExifTool, Android's ExifInterface) follow it from
  // any IFD they parse with the IFD0 table, so a pointer in IFD1, the Exif IFD, the
  // Interoperability IFD, a SubIFD or the GlobalParameters IFD is honoured too.
  bool FollowPointers(const std::vector<Entry>& entries) {
    for (const Entry& e : entries) {
      std::vector<uint32_t> targets;
      if (e.tag == kTagGpsIfd) {
        // Readers take the first offset only (ExifTool: MaxSubdirs 1).
        if (!PointerTargets(e, 1, &targets)) return false;
        ScanReader::DepthGuard guard(r_, e.at);
        if (!guard.ok() || !ScanGpsIfd(targets[0])) return false;
      } else if (IsSubIfdPointer(e.tag)) {
        // SubIFDs may list several IFDs; the structure budget bounds how many.
        if (!PointerTargets(e, e.count, &targets)) return false;
        ScanReader::DepthGuard guard(r_, e.at);
        if (!guard.ok()) return false;
        for (uint32_t target : targets) {
          if (!WalkChain(target, /*strict=*/false)) return false;
        }
      } else if (e.tag == kTagApplicationNotes) {
        if (!ScanApplicationNotes(e)) return false;
      } else if (e.tag == kTagIptcNaa) {
        if (!ScanIptcNaa(e)) return false;
      }
    }
    return true;
  }

  // XMP stored in the TIFF itself (TIFF/EP's XMLPacket tag, which ExifTool reads from Exif too).
  // Its GPS properties are reported as XMP ranges; XML the XMP finder cannot vouch for is
  // reported whole.
  bool ScanApplicationNotes(const Entry& e) {
    uint64_t unit = TypeSize(e.type);
    if (unit != 1) {
      return r_.Fail(e.at, absl::StrCat("ApplicationNotes of type ", e.type));
    }
    uint64_t size = e.count;
    uint64_t at = e.at + 8;  // inline
    if (size > 4) {
      if (!Inside(e.value, size)) {
        return r_.Fail(e.at, absl::StrCat("ApplicationNotes of ", size, " bytes at ", e.value,
                                          " outside the TIFF"));
      }
      at = begin_ + e.value;
    }
    std::string packet;
    if (!r_.ReadString(at, size, &packet)) return false;
    FindXmpGps(packet, at, kXmpMaxDepth, out_);
    return true;
  }

  // IPTC IIM stored in the TIFF (IPTC-NAA), which ExifTool reads from a JPEG's Exif too, of any
  // type (writers use UNDEFINED, BYTE and LONG). Its place datasets are reported.
  bool ScanIptcNaa(const Entry& e) {
    uint64_t unit = TypeSize(e.type);
    if (unit == 0) return r_.Fail(e.at, absl::StrCat("IPTC-NAA of unknown type ", e.type));
    uint64_t size = unit * e.count;  // at most 8 * (2^32 - 1): no overflow
    uint64_t at = e.at + 8;          // inline
    if (size > 4) {
      if (!Inside(e.value, size)) {
        return r_.Fail(
            e.at, absl::StrCat("IPTC-NAA of ", size, " bytes at ", e.value, " outside the TIFF"));
      }
      at = begin_ + e.value;
    }
    return FindIptcPlaces(r_, at, at + size, out_);
  }

  bool ScanGpsIfd(uint32_t ifd) {
    std::vector<Entry> entries;
    uint32_t next = 0;
    bool has_next = false;
    if (!ReadIfd(ifd, /*need_next=*/false, &entries, &next, &has_next)) return false;
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
    // ExifInterface reads the IFD a GPS IFD links to as one more IFD (with pointers of its own);
    // ExifTool ignores it. The link itself stays, so it is walked like any non-strict link.
    if (has_next && next != 0 && PlausibleIfd(next)) return WalkChain(next, /*strict=*/false);
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

}  // namespace scopedfs::media
