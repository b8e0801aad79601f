// Location finder for the ISO base media file format family (HEIF, AVIF, MP4, MOV, 3GP, M4A): one
// walk finds every kind wherever a common reader (exiftool, ffmpeg) would: Exif and XMP items of
// any meta box, ©xyz/loci/gps boxes and keys/ilst location tags in any user data or meta box, XMP
// and Exif in uuid boxes. It also learns the content class from track handlers and image items.
// Only box headers and small metadata boxes are read, and no table grows with a product of counts.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "media/location/exif_gps.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::policy {
namespace {

constexpr uint32_t FourCc(const char (&s)[5]) {
  return (uint32_t{static_cast<uint8_t>(s[0])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[2])} << 8) | uint32_t{static_cast<uint8_t>(s[3])};
}

constexpr uint32_t kFtyp = FourCc("ftyp");
constexpr uint32_t kMoov = FourCc("moov");
constexpr uint32_t kTrak = FourCc("trak");
constexpr uint32_t kUdta = FourCc("udta");
constexpr uint32_t kMeta = FourCc("meta");
constexpr uint32_t kIlst = FourCc("ilst");
constexpr uint32_t kKeys = FourCc("keys");
constexpr uint32_t kData = FourCc("data");
constexpr uint32_t kName = FourCc("name");
constexpr uint32_t kFreeform = FourCc("----");
constexpr uint32_t kXyz = 0xA978797A;  // "©xyz" with © in Latin-1, as QuickTime spells it
constexpr uint32_t kLoci = FourCc("loci");
constexpr uint32_t kGps = FourCc("gps ");
constexpr uint32_t kGps0 = FourCc("gps0");
constexpr uint32_t kXmpBox = FourCc("XMP_");
constexpr uint32_t kUuid = FourCc("uuid");
constexpr uint32_t kIinf = FourCc("iinf");
constexpr uint32_t kInfe = FourCc("infe");
constexpr uint32_t kIloc = FourCc("iloc");
constexpr uint32_t kIdat = FourCc("idat");
constexpr uint32_t kHdlr = FourCc("hdlr");
constexpr uint32_t kMdia = FourCc("mdia");
constexpr uint32_t kMinf = FourCc("minf");
constexpr uint32_t kMoof = FourCc("moof");
constexpr uint32_t kTraf = FourCc("traf");
constexpr uint32_t kMeco = FourCc("meco");
constexpr uint32_t kXml = FourCc("xml ");
constexpr uint32_t kAtXyz = FourCc("@xyz");  // ©xyz as some writers spell it in ASCII
constexpr uint32_t kCmt4 = FourCc("CMT4");   // Canon: a TIFF whose IFD0 is the GPS IFD
constexpr uint32_t kVide = FourCc("vide");
constexpr uint32_t kSoun = FourCc("soun");
constexpr uint32_t kPict = FourCc("pict");
// Pseudo parent type for the children of Canon's metadata uuid box.
constexpr uint32_t kCanonParent = FourCc("CNuu");
constexpr uint32_t kExifItem = FourCc("Exif");
constexpr uint32_t kMimeItem = FourCc("mime");

// The extended type under which XMP is stored in a uuid box.
constexpr uint8_t kXmpUuid[16] = {0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8,
                                  0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC};

// Canon's metadata box (CR3 and Canon MP4): CMT1..CMT4 TIFF structures, CMT4 holding GPS.
constexpr uint8_t kCanonUuid[16] = {0x85, 0xC0, 0xB6, 0x87, 0x82, 0x0F, 0x11, 0xE0,
                                    0x81, 0x11, 0xF4, 0xCE, 0x46, 0x2B, 0x6A, 0x48};

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr Redaction kXmp = REDACTION_XMP_GPS;
constexpr Redaction kBox = REDACTION_ISOBMFF_LOCATION;

uint32_t LoadBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Types that can open the payload of a QuickTime-style meta box, which (unlike the ISO one) has
// no version and flags: seeing one 4 bytes in means the payload starts with a child box.
bool IsMetaChildType(uint32_t type) {
  constexpr uint32_t kTypes[] = {FourCc("hdlr"), FourCc("keys"), FourCc("ilst"), FourCc("iinf"),
                                 FourCc("iloc"), FourCc("pitm"), FourCc("idat"), FourCc("iref"),
                                 FourCc("iprp"), FourCc("dinf"), FourCc("xml "), FourCc("bxml"),
                                 FourCc("free")};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

// Whether a keys or freeform name is a location tag. Liberal on purpose: exiftool prints tags it
// does not know under their own names, so any name that says where is treated as location.
bool NamesLocation(absl::string_view key) {
  const std::string lower = absl::AsciiStrToLower(key);
  for (absl::string_view word :
       {"location", "gps", "coordinate", "latitude", "longitude", "iso6709", "xyz", "geo"}) {
    if (absl::StrContains(lower, word)) return true;
  }
  return false;
}

// A four-character code compared case-insensitively, so that 'LOCI' or 'Xmp_' count too.
bool SameType(uint32_t type, uint32_t want) { return (type | 0x20202020u) == (want | 0x20202020u); }

// Item types of coded images (HEIF, AVIF and their derived images): items a reader shows.
bool IsImageItemType(uint32_t type) {
  constexpr uint32_t kTypes[] = {FourCc("hvc1"), FourCc("hev1"), FourCc("av01"), FourCc("avc1"),
                                 FourCc("grid"), FourCc("iovl"), FourCc("iden"), FourCc("jpeg"),
                                 FourCc("j2k1"), FourCc("unci"), FourCc("vvc1"), FourCc("tmap")};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

// Brands of HEIF/AVIF image files, whose items may sit before their meta box (see ItemPlace).
bool IsImageBrand(uint32_t brand) {
  constexpr uint32_t kBrands[] = {FourCc("mif1"), FourCc("mif2"), FourCc("msf1"), FourCc("heic"),
                                  FourCc("heix"), FourCc("hevc"), FourCc("hevx"), FourCc("heim"),
                                  FourCc("heis"), FourCc("avif"), FourCc("avis"), FourCc("miaf"),
                                  FourCc("avci"), FourCc("jpeg"), FourCc("MiHE"), FourCc("MiHB")};
  return std::find(std::begin(kBrands), std::end(kBrands), brand) != std::end(kBrands);
}

bool IsTiff(absl::string_view b) {
  return absl::StartsWith(b, absl::string_view("MM\0*", 4)) ||
         absl::StartsWith(b, absl::string_view("II*\0", 4));
}

struct Box {
  uint64_t begin = 0;    // where the size field is
  uint64_t payload = 0;  // after size, type, largesize and the uuid extended type
  uint64_t end = 0;
  uint32_t type = 0;
  uint8_t extended_type[16] = {};
};

// One contiguous piece of an item's data, in file offsets.
struct Extent {
  uint64_t begin = 0;
  uint64_t length = 0;
};

// Where an item's bytes are, as iloc says, before resolving against the file or idat.
struct ItemLocation {
  uint32_t id = 0;
  int construction_method = 0;
  uint16_t data_reference_index = 0;
  uint64_t base_offset = 0;
  std::vector<Extent> extents;  // offsets relative to base_offset; length 0 = to the end
};

enum class ItemKind { kExif, kXmp };

struct Item {
  uint32_t id = 0;
  ItemKind kind = ItemKind::kExif;
  bool located = false;  // an iloc entry for it was seen
};

// An Exif or XMP item and where its bytes are in the file.
struct ResolvedItem {
  ItemKind kind = ItemKind::kExif;
  std::vector<Extent> extents;
};

// An item spread over several extents, seen as one run of bytes so that FindTiffGps can walk it
// with its own offsets. Reads go through the scan's reader, so they count against its budget.
class ExtentSource : public ByteSource {
 public:
  ExtentSource(ScanReader& r, absl::Span<const Extent> extents) : r_(r), extents_(extents) {
    for (const Extent& e : extents_) {
      starts_.push_back(size_);
      size_ += e.length;
    }
  }
  uint64_t size() const override { return size_; }
  bool Read(uint64_t offset, size_t n, uint8_t* out) override {
    if (offset > size_ || n > size_ - offset) return false;
    size_t done = 0;
    size_t i = Index(offset);
    while (done < n) {
      const uint64_t at = offset + done;
      while (at >= starts_[i] + extents_[i].length) ++i;  // skips empty extents too
      const uint64_t within = at - starts_[i];
      const size_t chunk =
          static_cast<size_t>(std::min<uint64_t>(n - done, extents_[i].length - within));
      if (!r_.Read(extents_[i].begin + within, chunk, out + done)) return false;
      done += chunk;
    }
    return true;
  }

  // The file offset of logical offset `at` (the end of the last extent for `at` == size()).
  uint64_t FileOffset(uint64_t at) const {
    if (extents_.empty()) return 0;
    if (at >= size_) return extents_.back().begin + extents_.back().length;
    size_t i = Index(at);
    while (at >= starts_[i] + extents_[i].length) ++i;
    return extents_[i].begin + (at - starts_[i]);
  }

  // Appends the file ranges that logical range `range` covers; it splits where extents do.
  void MapRange(const LocationRange& range, std::vector<LocationRange>* out) const {
    for (size_t i = 0; i < extents_.size(); ++i) {
      const uint64_t from = std::max(range.begin, starts_[i]);
      const uint64_t to = std::min(range.end, starts_[i] + extents_[i].length);
      if (from < to) {
        AddRange(out, extents_[i].begin + (from - starts_[i]),
                 extents_[i].begin + (to - starts_[i]), range.kind);
      }
    }
  }

 private:
  // The last extent starting at or before `at`.
  size_t Index(uint64_t at) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), at);
    return it == starts_.begin() ? 0 : static_cast<size_t>(it - starts_.begin() - 1);
  }

  ScanReader& r_;
  absl::Span<const Extent> extents_;
  std::vector<uint64_t> starts_;
  uint64_t size_ = 0;
};

// Big-endian fields of a box body held in memory; a short read fails the scan at the file
// offset of the missing field.
class Cursor {
 public:
  Cursor(ScanReader& r, absl::string_view bytes, uint64_t file_offset, absl::string_view what)
      : r_(r), bytes_(bytes), file_offset_(file_offset), what_(what) {}

  uint64_t offset() const { return file_offset_ + pos_; }

  // Reads an unsigned field of `width` bytes (0, 1, 2, 4 or 8; 0 reads nothing and yields 0).
  bool Uint(int width, uint64_t* v) {
    if (bytes_.size() - pos_ < static_cast<size_t>(width)) {
      return r_.Fail(offset(), absl::StrCat(what_, " is truncated"));
    }
    *v = 0;
    for (int i = 0; i < width; ++i) *v = (*v << 8) | static_cast<uint8_t>(bytes_[pos_++]);
    return true;
  }
  template <typename T>
  bool Uint(int width, T* v) {
    uint64_t wide = 0;
    if (!Uint(width, &wide)) return false;
    *v = static_cast<T>(wide);
    return true;
  }

  // A NUL-terminated string; when `to_end_ok`, the end of the box may stand in for the NUL,
  // which writers that drop the last terminator rely on.
  bool String(bool to_end_ok, std::string* s) {
    size_t nul = bytes_.find('\0', pos_);
    if (nul == absl::string_view::npos) {
      if (!to_end_ok) return r_.Fail(offset(), absl::StrCat(what_, " has an unterminated string"));
      nul = bytes_.size();
    }
    *s = std::string(bytes_.substr(pos_, nul - pos_));
    pos_ = std::min(nul + 1, bytes_.size());
    return true;
  }

  bool AtEnd() const { return pos_ == bytes_.size(); }

 private:
  ScanReader& r_;
  absl::string_view bytes_;
  uint64_t file_offset_;
  absl::string_view what_;
  size_t pos_ = 0;
};

class Scanner {
 public:
  // `image_format`: the file was sniffed as HEIF or AVIF, so it must start with ftyp, and its
  // items may lie before their meta box (as do files whose ftyp names an image brand).
  Scanner(ByteSource& source, const ScanLimits& limits, bool image_format)
      : r_(source, limits), limits_(limits), needs_ftyp_(image_format), heif_(image_format) {}

  LocationScan Run() {
    bool first = true;
    ForEachBox(0, r_.size(), /*top_level=*/true, [&](const Box& box) {
      if (first && box.type == kFtyp && !Ftyp(box)) return false;
      if (needs_ftyp_ && first && box.type != kFtyp) {
        return r_.Fail(box.begin, "HEIF file does not start with an ftyp box");
      }
      first = false;
      if (!r_.Charge(box.begin, sizeof(Box))) return false;
      (box.type == kFtyp || box.type == kMeta ? structural_top_level_ : other_top_level_)
          .push_back(box);
      return HandleBox(box, /*parent=*/0);
    });
    if (needs_ftyp_ && first && r_.ok()) r_.Fail(0, "empty HEIF file");
    // Item data can sit anywhere in the file, after boxes the walk has yet to reach as well as
    // before. Parsed during the walk, a failure in it (a read budget spent, say) would end the
    // scan at the item, past boxes never walked, which then neither the ranges nor the fallback
    // [failure point, end) would cover. So items are parsed once the walk is over; their extents
    // are all in the fallback already, so a failure in one covers them all.
    for (const ResolvedItem& item : items_) {
      if (!r_.ok()) break;
      if (item.kind == ItemKind::kExif) {
        ExifItem(item.extents);
      } else {
        XmpItem(item.extents);
      }
    }
    if (!r_.ok() && heif_ && !items_resolved_) {
      // No meta box's item locations were learnt, and HEIF lets item data sit in any box (an mdat
      // before the meta box, say): what lies before the failure point can hold Exif or XMP too,
      // except for ftyp and meta boxes, which ItemPlace refuses as item data. (In other files
      // item data, rare and so not worth the cost, may only follow its meta box: see ItemPlace.)
      for (const Box& box : other_top_level_) {
        AddRange(&fallback_, box.begin, box.end, kExif);
        AddRange(&fallback_, box.begin, box.end, kXmp);
      }
    }
    LocationScan scan;
    NormalizeRanges(&ranges_);
    NormalizeRanges(&fallback_);
    scan.ranges = std::move(ranges_);
    scan.fallback = std::move(fallback_);
    scan.content_class = ContentClass();
    r_.Finish(&scan);
    return scan;
  }

 private:
  using BoxVisitor = absl::FunctionRef<bool(const Box&)>;

  // Calls `visit` on each box in [begin, end), stopping at the first false.
  bool ForEachBox(uint64_t begin, uint64_t end, bool top_level, BoxVisitor visit) {
    for (uint64_t at = begin; at < end;) {
      if (!r_.Visit(at)) return false;
      if (!top_level && end - at == 4) {
        // QuickTime may close a list of atoms with a 32-bit zero.
        uint32_t word;
        if (!r_.Be32(at, &word)) return false;
        if (word == 0) return true;
      }
      Box box;
      if (!ReadHeader(at, end, top_level, &box) || !visit(box)) return false;
      at = box.end;
    }
    return true;
  }

  bool ReadHeader(uint64_t at, uint64_t end, bool top_level, Box* box) {
    if (end - at < 8) {
      return r_.Fail(at, top_level ? "box header cut by the end of the file"
                                   : "box header cut by the end of its container");
    }
    uint8_t head[8];
    if (!r_.Read(at, 8, head)) return false;
    uint64_t size = LoadBe32(head);
    uint64_t header = 8;
    box->type = LoadBe32(head + 4);
    if (size == 1) {
      if (end - at < 16) return r_.Fail(at, "64-bit box size cut short");
      if (!r_.Be64(at + 8, &size)) return false;
      header = 16;
    } else if (size == 0) {
      // Only the last top-level box may run to the end of the file. Inside a container readers
      // disagree (some stop, some skip 4 bytes and carry on), so it cannot be vouched for.
      if (!top_level) return r_.Fail(at, "box of size 0 inside a container");
      size = end - at;
    }
    if (size < header) return r_.Fail(at, absl::StrCat("box size ", size, " below its header"));
    if (size > end - at) {
      return r_.Fail(at, absl::StrCat("box of ", size, " bytes overruns ",
                                      top_level ? "the end of the file" : "its container"));
    }
    if (box->type == kUuid) {
      if (size - header < 16) return r_.Fail(at, "uuid box too small for its extended type");
      if (!r_.Read(at + header, 16, box->extended_type)) return false;
      header += 16;
    }
    box->begin = at;
    box->payload = at + header;
    box->end = at + size;
    return true;
  }

  // Reads [begin, end) whole, refusing before allocating if the read budget cannot cover it.
  bool ReadAll(uint64_t begin, uint64_t end, std::string* out) {
    const uint64_t n = end - begin;
    if (n > limits_.max_bytes_read - std::min(limits_.max_bytes_read, r_.bytes_read())) {
      return r_.Fail(begin, absl::StrCat("read budget of ", limits_.max_bytes_read,
                                         " bytes cannot cover ", n, " bytes"));
    }
    return r_.ReadString(begin, static_cast<size_t>(n), out);
  }

  // ftyp: major brand, minor version, compatible brands. An image brand anywhere makes the file
  // a HEIF for item placement, whatever the sniffer (or the name) called it.
  bool Ftyp(const Box& box) {
    const uint64_t n = std::min<uint64_t>(box.end - box.payload, 4096);
    std::string body;
    if (!ReadAll(box.payload, box.payload + n, &body)) return false;
    for (size_t at = 0; at + 4 <= body.size(); at += 4) {
      if (at == 4) continue;  // the minor version
      if (IsImageBrand(LoadBe32(reinterpret_cast<const uint8_t*>(body.data() + at)))) {
        heif_ = true;
      }
    }
    return true;
  }

  // Boxes anywhere in the walked tree. `parent` is the type of the enclosing box (0 at the top).
  bool HandleBox(const Box& box, uint32_t parent) {
    switch (box.type) {
      case kMoov:
      case kTrak:
      case kUdta:
      case kMdia:
      case kMinf:
      case kMoof:
      case kTraf:
      case kMeco:
        return Container(box, box.type);
      case kMeta:
        return Meta(box);
      case kIlst:
        // An ilst outside a meta box: no keys can name its items, but ©xyz and freeform ones can.
        AddRange(&fallback_, box.payload, box.end, kBox);
        return Ilst(box, {});
      case kHdlr:
        return parent == kMdia ? TrackHandler(box) : true;
      case kUuid:
        return Uuid(box);
      default:
        break;
    }
    if (box.type == kXyz || box.type == kAtXyz || SameType(box.type, kGps) ||
        SameType(box.type, kGps0)) {
      // ©xyz here is a QuickTime user-data text (length, language, ISO 6709 string); gps
      // boxes are vendor formats. Emptying the payload keeps the box walkable.
      AddRange(&ranges_, box.payload, box.end, kBox);
      return true;
    }
    if (SameType(box.type, kLoci)) {
      // Keep version and flags; language, name, coordinates, body and notes all go.
      if (box.end - box.payload < 4) return r_.Fail(box.begin, "loci box too small");
      AddRange(&ranges_, box.payload + 4, box.end, kBox);
      return true;
    }
    if (SameType(box.type, kXmpBox)) return Xmp(box.payload, box.end);
    // Any other box of user data, or of Canon's metadata uuid, is metadata of a kind this walk
    // does not name; what a liberal reader could find in it, this must find too.
    if (parent == kUdta || parent == kCanonParent) return Opaque(box);
    return true;
  }

  bool Container(const Box& box, uint32_t as) {
    // A failure later on cannot tell which user data was location, so all of it falls back.
    if (box.type == kUdta || as == kCanonParent) AddRange(&fallback_, box.payload, box.end, kBox);
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    const uint32_t saved_handler = track_handler_;
    if (box.type == kTrak) track_handler_ = 0;
    const bool ok = ForEachBox(box.payload, box.end, false,
                               [&](const Box& child) { return HandleBox(child, as); });
    if (box.type == kTrak) {
      ++tracks_;
      if (track_handler_ == kVide) saw_video_track_ = true;
      if (track_handler_ == kSoun) ++sound_tracks_;
      if (track_handler_ == kPict) ++picture_tracks_;
      track_handler_ = saved_handler;
    }
    return ok;
  }

  // hdlr (FullBox) of a track's mdia: pre_defined, then the handler type.
  bool TrackHandler(const Box& box) {
    if (box.end - box.payload < 12) return r_.Fail(box.begin, "hdlr box too small");
    return r_.Be32(box.payload + 8, &track_handler_);
  }

  bool Uuid(const Box& box) {
    if (memcmp(box.extended_type, kXmpUuid, sizeof(kXmpUuid)) == 0) {
      return Xmp(box.payload, box.end);
    }
    if (memcmp(box.extended_type, kCanonUuid, sizeof(kCanonUuid)) == 0) {
      return Container(box, kCanonParent);
    }
    return Opaque(box);
  }

  bool Xmp(uint64_t begin, uint64_t end) {
    AddRange(&fallback_, begin, end, kXmp);
    std::string packet;
    if (!ReadAll(begin, end, &packet)) return false;
    // An unparsable packet comes back whole in ranges_, which already covers it: no need to
    // fail the file over it.
    FindXmpGps(packet, begin, limits_.max_depth, &ranges_);
    return true;
  }

  // A metadata box of a type the walk does not know (a user-data atom, a vendor uuid, a meta
  // box's xml): exiftool reads Exif and XMP out of several such vendor boxes, so this looks at
  // the bytes. Exif or TIFF at the start is walked for GPS, an XMP packet anywhere is parsed, and
  // a TIFF header elsewhere (Exif in a layout not understood here) makes the file uncertain.
  bool Opaque(const Box& box) {
    if (box.end == box.payload) return true;
    std::string body;
    if (!ReadAll(box.payload, box.end, &body)) return false;
    const absl::string_view b(body);
    const absl::string_view exif_header("Exif\0\0", 6);
    if (box.type == kCmt4 && IsTiff(b) && b.size() > 8) {
      // The TIFF's IFD0 is the GPS IFD itself: empty it all, so it reads as no entries.
      AddRange(&fallback_, box.payload, box.end, kExif);
      AddRange(&ranges_, box.payload + 8, box.end, kExif);
      return true;
    }
    if (absl::StartsWith(b, exif_header) && IsTiff(b.substr(6))) {
      AddRange(&fallback_, box.payload, box.end, kExif);
      return FindTiffGps(r_, box.payload + 6, box.end, &ranges_);
    }
    if (IsTiff(b)) {
      AddRange(&fallback_, box.payload, box.end, kExif);
      return FindTiffGps(r_, box.payload, box.end, &ranges_);
    }
    size_t start = absl::string_view::npos;
    for (absl::string_view marker : {"<?xpacket", "<x:xmpmeta", "<rdf:RDF"}) {
      start = std::min(start, b.find(marker));
    }
    if (start != absl::string_view::npos) {
      // The packet runs to its trailer if there is one, else to the end of the box.
      size_t end = b.size();
      for (absl::string_view trailer : {"</x:xmpmeta>", "</rdf:RDF>"}) {
        const size_t at = b.rfind(trailer);
        if (at != absl::string_view::npos && at > start) {
          end = at + trailer.size();
          break;
        }
      }
      const size_t pi = b.find("<?xpacket end", end);
      if (pi != absl::string_view::npos) {
        const size_t close = b.find("?>", pi);
        if (close != absl::string_view::npos) end = close + 2;
      }
      AddRange(&fallback_, box.payload + start, box.payload + end, kXmp);
      FindXmpGps(b.substr(start, end - start), box.payload + start, limits_.max_depth, &ranges_);
      return true;
    }
    if (b.find(exif_header) != absl::string_view::npos ||
        b.find(absl::string_view("MM\0*", 4)) != absl::string_view::npos ||
        b.find(absl::string_view("II*\0", 4)) != absl::string_view::npos) {
      AddRange(&fallback_, box.payload, box.end, kExif);
      return r_.Fail(box.begin, "metadata box holds Exif in a layout not understood");
    }
    return true;
  }

  bool Meta(const Box& box) {
    if (!heif_) AddRange(&fallback_, box.payload, box.end, kBox);
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    uint64_t children = box.payload;
    if (box.end - box.payload >= 8) {
      uint8_t head[8];
      if (!r_.Read(box.payload, 8, head)) return false;
      // The ISO meta box is a FullBox (zero version and flags); QuickTime's is a plain box.
      if (LoadBe32(head) == 0 || !IsMetaChildType(LoadBe32(head + 4))) children += 4;
    } else {
      if (box.end - box.payload < 4) return r_.Fail(box.begin, "meta box too small");
      children += 4;
    }

    // Children are handled in file order, so that when one fails, every child before it has been
    // dealt with and every child after it lies past the failure point. The exceptions wait for
    // boxes that may come later, and so fall back first when they can hold location: ilst needs
    // the keys that name its items; iinf, iloc and idat need each other (only idat holds item
    // data; the items' own extents fall back as soon as they are known).
    std::vector<uint32_t> location_keys;
    std::vector<Box> ilst, iinf, iloc;
    std::optional<Box> idat;
    if (!ForEachBox(children, box.end, false, [&](const Box& child) {
          switch (child.type) {
            case kKeys:
              return Keys(child, &location_keys);
            case kIlst:
              AddRange(&fallback_, child.payload, child.end, kBox);
              if (!r_.Charge(child.begin, sizeof(Box))) return false;
              ilst.push_back(child);
              return true;
            case kIinf:
              if (!r_.Charge(child.begin, sizeof(Box))) return false;
              iinf.push_back(child);
              return true;
            case kIloc:
              if (!r_.Charge(child.begin, sizeof(Box))) return false;
              iloc.push_back(child);
              return true;
            case kIdat:
              // Item data stored in the meta box itself: if parsing fails before the items are
              // known, it must be covered.
              AddRange(&fallback_, child.payload, child.end, kExif);
              AddRange(&fallback_, child.payload, child.end, kXmp);
              if (idat.has_value()) return r_.Fail(child.begin, "second idat box in a meta box");
              idat = child;
              return true;
            case kXml:
              // ISO meta may carry its metadata as XML (FullBox): XMP there is still XMP.
              return Opaque(child);
            default:
              return HandleBox(child, kMeta);
          }
        })) {
      return false;
    }
    // keys name the ilst items of QuickTime metadata, wherever the two sit in the meta box.
    std::sort(location_keys.begin(), location_keys.end());
    for (const Box& child : ilst) {
      if (!Ilst(child, location_keys)) return false;
    }
    if (!iinf.empty() || !iloc.empty()) {
      if (!Items(box, iinf, iloc, idat.has_value() ? &*idat : nullptr)) return false;
      items_resolved_ = true;
    }
    return true;
  }

  // keys (FullBox): entry_count, then entries of key_size (counting itself and the namespace),
  // namespace and name. Collects the 1-based indices of keys that name a location.
  bool Keys(const Box& box, std::vector<uint32_t>* location_keys) {
    uint32_t count;
    if (box.end - box.payload < 8) return r_.Fail(box.begin, "keys box too small");
    if (!r_.Be32(box.payload + 4, &count)) return false;
    uint64_t at = box.payload + 8;
    for (uint64_t index = 1; index <= count; ++index) {
      if (!r_.Visit(at)) return false;
      uint32_t key_size;
      if (box.end - at < 8) return r_.Fail(at, "keys entry past the end of the keys box");
      if (!r_.Be32(at, &key_size)) return false;
      if (key_size < 8 || key_size > box.end - at) {
        return r_.Fail(at, absl::StrCat("keys entry of bad size ", key_size));
      }
      std::string name;
      if (!ReadAll(at + 8, at + key_size, &name)) return false;
      if (NamesLocation(name)) {
        if (!r_.Charge(at, sizeof(uint32_t))) return false;
        location_keys->push_back(static_cast<uint32_t>(index));
      }
      at += key_size;
    }
    return true;
  }

  // ilst: one box per tag, named by a 4cc (iTunes), a keys index (QuickTime) or "----" with a
  // name child (freeform); each holds data boxes of type, locale and value. `location_keys` is
  // sorted, so that a lookup per item costs a logarithm, not the number of keys.
  bool Ilst(const Box& box, const std::vector<uint32_t>& location_keys) {
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    return ForEachBox(box.payload, box.end, false, [&](const Box& item) {
      bool location = item.type == kXyz || item.type == kAtXyz ||
                      std::binary_search(location_keys.begin(), location_keys.end(), item.type);
      if (!location && item.type != kFreeform) return true;
      ScanReader::DepthGuard item_guard(r_, item.begin);
      if (!item_guard.ok()) return false;
      // Values are few per item; each is charged, so a hostile item cannot grow this unbounded.
      std::vector<Box> values;
      if (!ForEachBox(item.payload, item.end, false, [&](const Box& child) {
            if (child.type == kData) {
              if (!r_.Charge(child.begin, sizeof(Box))) return false;
              values.push_back(child);
            }
            if (child.type == kName) {
              // FullBox: version and flags, then the name up to the end of the box.
              std::string name;
              if (child.end - child.payload < 4) return r_.Fail(child.begin, "name box too small");
              if (!ReadAll(child.payload + 4, child.end, &name)) return false;
              if (NamesLocation(name)) location = true;
            }
            return true;
          })) {
        return false;
      }
      if (!location) return true;
      for (const Box& value : values) {
        // Keep the value's type and locale so the tag still parses, as an empty value.
        if (value.end - value.payload < 8) return r_.Fail(value.begin, "data box too small");
        AddRange(&ranges_, value.payload + 8, value.end, kBox);
      }
      return true;
    });
  }

  // iinf (FullBox): entry count (16 bits in version 0, else 32), then infe boxes.
  bool Iinf(const Box& box, std::vector<Item>* items) {
    uint8_t version;
    if (box.end - box.payload < 4) return r_.Fail(box.begin, "iinf box too small");
    if (!r_.Read(box.payload, 1, &version)) return false;
    uint64_t at = box.payload + 4;
    uint32_t count;
    if (version == 0) {
      uint16_t count16;
      if (box.end - at < 2) return r_.Fail(at, "iinf entry count cut short");
      if (!r_.Be16(at, &count16)) return false;
      count = count16;
      at += 2;
    } else {
      if (box.end - at < 4) return r_.Fail(at, "iinf entry count cut short");
      if (!r_.Be32(at, &count)) return false;
      at += 4;
    }
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    // Every infe counts, even past entry_count: some readers list them all.
    uint64_t seen = 0;
    if (!ForEachBox(at, box.end, false, [&](const Box& child) {
          if (child.type != kInfe) return true;
          ++seen;
          return Infe(child, items);
        })) {
      return false;
    }
    if (seen < count) {
      return r_.Fail(box.begin, absl::StrCat("iinf declares ", count, " entries but holds ", seen));
    }
    return true;
  }

  bool Infe(const Box& box, std::vector<Item>* items) {
    if (box.end - box.payload < 4) return r_.Fail(box.begin, "infe box too small");
    std::string body;
    if (!ReadAll(box.payload, box.end, &body)) return false;
    const uint8_t version = static_cast<uint8_t>(body[0]);
    Cursor c(r_, absl::string_view(body).substr(4), box.payload + 4, "infe box");
    uint32_t id = 0;
    uint16_t protection = 0;
    std::string name, content_type, encoding;
    bool exif = false, xmp = false;
    if (version <= 1) {
      // No item type yet: only a MIME type can say what the item is.
      if (!c.Uint(2, &id) || !c.Uint(2, &protection) || !c.String(false, &name) ||
          !c.String(true, &content_type) || (!c.AtEnd() && !c.String(true, &encoding))) {
        return false;
      }
      xmp = absl::EqualsIgnoreCase(content_type, "application/rdf+xml");
    } else if (version <= 3) {
      uint32_t type;
      if (!c.Uint(version == 2 ? 2 : 4, &id) || !c.Uint(2, &protection) || !c.Uint(4, &type)) {
        return false;
      }
      exif = type == kExifItem;
      if (IsImageItemType(type)) image_items_ = true;
      if (type == kMimeItem) {
        if (!c.String(false, &name) || !c.String(true, &content_type) ||
            (!c.AtEnd() && !c.String(true, &encoding))) {
          return false;
        }
        xmp = absl::EqualsIgnoreCase(content_type, "application/rdf+xml");
      }
    } else {
      // A newer layout could hide an Exif item.
      return r_.Fail(box.begin, absl::StrCat("infe version ", int{version}, " unknown"));
    }
    if (!exif && !xmp) return true;
    if (protection != 0) return r_.Fail(box.begin, "protected Exif or XMP item");
    if (!encoding.empty()) return r_.Fail(box.begin, "content-encoded XMP item");
    if (!r_.Charge(box.begin, sizeof(Item))) return false;
    items->push_back({id, exif ? ItemKind::kExif : ItemKind::kXmp});
    return true;
  }

  // iloc (FullBox, versions 0-2). Parses every entry (the layout is sequential) and keeps those
  // of the items in `items` (sorted by id, ids unique), each at most once: an Exif or XMP item
  // located twice is malformed, so that no list grows with entries times items.
  bool Iloc(const Box& box, std::vector<Item>* items, std::vector<ItemLocation>* out) {
    if (box.end - box.payload < 4) return r_.Fail(box.begin, "iloc box too small");
    std::string body;
    if (!ReadAll(box.payload, box.end, &body)) return false;
    const uint8_t version = static_cast<uint8_t>(body[0]);
    if (version > 2)
      return r_.Fail(box.begin, absl::StrCat("iloc version ", int{version}, " unknown"));
    Cursor c(r_, absl::string_view(body).substr(4), box.payload + 4, "iloc box");
    uint8_t sizes = 0, more_sizes = 0;
    if (!c.Uint(1, &sizes) || !c.Uint(1, &more_sizes)) return false;
    const int offset_size = sizes >> 4;
    const int length_size = sizes & 0xF;
    const int base_offset_size = more_sizes >> 4;
    const int index_size = version >= 1 ? (more_sizes & 0xF) : 0;
    for (int size : {offset_size, length_size, base_offset_size, index_size}) {
      if (size != 0 && size != 4 && size != 8) {
        return r_.Fail(box.begin, absl::StrCat("iloc field size ", size, " not 0, 4 or 8"));
      }
    }
    // The declared count is never trusted for an allocation: entries are parsed one by one, and
    // a count larger than the box holds fails at the first missing field.
    uint32_t count = 0;
    if (!c.Uint(version < 2 ? 2 : 4, &count)) return false;
    for (uint64_t i = 0; i < count; ++i) {
      if (!r_.Visit(c.offset())) return false;
      const uint64_t entry_at = c.offset();
      ItemLocation loc;
      uint16_t method = 0, extent_count = 0;
      if (!c.Uint(version < 2 ? 2 : 4, &loc.id) || (version >= 1 && !c.Uint(2, &method)) ||
          !c.Uint(2, &loc.data_reference_index) || !c.Uint(base_offset_size, &loc.base_offset) ||
          !c.Uint(2, &extent_count)) {
        return false;
      }
      loc.construction_method = method & 0xF;
      auto it = std::lower_bound(items->begin(), items->end(), loc.id,
                                 [](const Item& item, uint32_t id) { return item.id < id; });
      const bool keep = it != items->end() && it->id == loc.id;
      if (keep) {
        // Readers disagree on which of two entries wins: neither can be vouched for.
        if (it->located) {
          return r_.Fail(entry_at, absl::StrCat("Exif or XMP item ", loc.id, " located twice"));
        }
        it->located = true;
      }
      for (uint16_t e = 0; e < extent_count; ++e) {
        if (!r_.Visit(c.offset())) return false;
        uint64_t index = 0;
        Extent extent;
        if (!c.Uint(index_size, &index) || !c.Uint(offset_size, &extent.begin) ||
            !c.Uint(length_size, &extent.length)) {
          return false;
        }
        if (!keep) continue;
        if (!r_.Charge(entry_at, sizeof(Extent))) return false;
        loc.extents.push_back(extent);
      }
      if (keep) {
        if (!r_.Charge(entry_at, sizeof(ItemLocation))) return false;
        out->push_back(std::move(loc));
      }
    }
    return true;
  }

  // Item data in the file (construction method 0) that a scan failing before it learns the
  // items (under tighter limits, say) would not cover, and so refused: the fallback of such a scan
  // holds [failure point, end of file), plus in HEIF, until the items of a first meta box are
  // located, the top-level boxes before the failure point other than ftyp and meta boxes (see
  // Run). So in HEIF item data may not sit inside a top-level ftyp or meta box, nor, for any meta
  // box after the first to locate items, before the end of that meta box; in other files, nor
  // before the end of any meta box. The refused data falls back, as `kind`.
  bool ItemPlace(const Box& meta, uint64_t begin, uint64_t length, Redaction kind, uint64_t where) {
    if (length == 0) return true;
    const Box* inside = nullptr;
    if (heif_) {
      // Top-level boxes are in file order and disjoint: the only candidate is the last one
      // beginning before the data ends (a binary search, not a loop per extent).
      auto it = std::lower_bound(structural_top_level_.begin(), structural_top_level_.end(),
                                 begin + length,
                                 [](const Box& box, uint64_t at) { return box.begin < at; });
      if (it != structural_top_level_.begin() && begin < std::prev(it)->end) {
        inside = &*std::prev(it);
      }
    }
    const bool before = (!heif_ || items_resolved_) && begin < meta.end;
    if (inside == nullptr && !before) return true;
    AddRange(&fallback_, begin, begin + length, kind);
    if (inside != nullptr) {
      return r_.Fail(
          where, absl::StrCat("item data at ", begin, " inside the ",
                              inside->type == kFtyp ? "ftyp" : "meta", " box at ", inside->begin));
    }
    return r_.Fail(where, absl::StrCat("item data at ", begin, " before the end of ",
                                       heif_ ? "a second meta box locating items"
                                             : "the meta box locating it"));
  }

  // Turns an iloc entry of the items of `meta` into file extents. `where` is blamed on failure.
  bool Resolve(const Box& meta, const ItemLocation& loc, const Box* idat, Redaction kind,
               uint64_t where, std::vector<Extent>* out) {
    if (loc.construction_method == 2) {
      return r_.Fail(where, "Exif or XMP item built from other items");
    }
    if (loc.construction_method > 2) {
      return r_.Fail(where, absl::StrCat("construction method ", loc.construction_method));
    }
    if (loc.data_reference_index != 0) return r_.Fail(where, "Exif or XMP item in another file");
    uint64_t region_begin = 0, region_end = r_.size();
    if (loc.construction_method == 1) {
      if (idat == nullptr) return r_.Fail(where, "item in idat but the meta box has no idat");
      region_begin = idat->payload;
      region_end = idat->end;
    }
    const uint64_t region = region_end - region_begin;
    uint64_t total = 0;  // the joined item's size, which must stay addressable
    for (const Extent& e : loc.extents) {
      if (loc.base_offset > region || e.begin > region - loc.base_offset) {
        return r_.Fail(where,
                       absl::StrCat("item extent at ", loc.base_offset, "+", e.begin,
                                    loc.construction_method == 1 ? " past the idat box"
                                                                 : " past the end of the file"));
      }
      const uint64_t begin = region_begin + loc.base_offset + e.begin;
      const uint64_t length = e.length == 0 ? region_end - begin : e.length;
      if (length > region_end - begin) {
        return r_.Fail(
            where, absl::StrCat("item extent of ", length, " bytes at ", begin,
                                loc.construction_method == 1 ? " overruns the idat box"
                                                             : " overruns the end of the file"));
      }
      if (loc.construction_method == 0 && !ItemPlace(meta, begin, length, kind, where)) {
        return false;
      }
      if (length > UINT64_MAX - total) return r_.Fail(where, "item extents too long");
      total += length;
      if (!r_.Charge(where, sizeof(Extent))) return false;
      out->push_back({begin, length});
    }
    return true;
  }

  // Resolves the Exif and XMP items of one meta box. Each item is resolved once, through the
  // single iloc entry carrying its id: the work and memory are linear in items plus entries.
  bool Items(const Box& meta, const std::vector<Box>& iinf, const std::vector<Box>& iloc,
             const Box* idat) {
    if (iinf.empty()) return r_.Fail(meta.begin, "meta box locates items but has no iinf");
    std::vector<Item> items;
    for (const Box& box : iinf) {
      if (!Iinf(box, &items)) return false;
    }
    if (items.empty()) return true;
    // Two Exif or XMP entries with one id: readers disagree on which one counts (one map keeps
    // the first, another the last), so neither can be vouched for.
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.id < b.id; });
    for (size_t i = 1; i < items.size(); ++i) {
      if (items[i].id == items[i - 1].id) {
        return r_.Fail(iinf.front().begin,
                       absl::StrCat("Exif or XMP item id ", items[i].id, " listed twice"));
      }
    }
    // Several iloc boxes are invalid, but a reader may pick any of them: take every entry (an
    // item located in two of them is malformed, as above).
    std::vector<std::pair<ItemLocation, uint64_t>> locations;
    for (const Box& box : iloc) {
      std::vector<ItemLocation> found;
      if (!Iloc(box, &items, &found)) return false;
      for (ItemLocation& loc : found) locations.push_back({std::move(loc), box.begin});
    }
    std::vector<ResolvedItem> resolved;
    for (const auto& [loc, where] : locations) {
      auto it = std::lower_bound(items.begin(), items.end(), loc.id,
                                 [](const Item& item, uint32_t id) { return item.id < id; });
      ResolvedItem res{it->kind, {}};
      const Redaction kind = it->kind == ItemKind::kExif ? kExif : kXmp;
      if (!Resolve(meta, loc, idat, kind, where, &res.extents)) return false;
      if (!r_.Charge(where, sizeof(ResolvedItem))) return false;
      resolved.push_back(std::move(res));
    }
    // Every extent falls back now; Run parses the items once the walk is over.
    for (ResolvedItem& res : resolved) {
      for (const Extent& e : res.extents) {
        AddRange(&fallback_, e.begin, e.begin + e.length,
                 res.kind == ItemKind::kExif ? kExif : kXmp);
      }
      items_.push_back(std::move(res));
    }
    return true;
  }

  // The Exif item: a 32-bit offset to the TIFF header (past an "Exif\0\0" prefix, usually),
  // then the TIFF structure up to the end of the item.
  bool ExifItem(const std::vector<Extent>& extents) {
    ExtentSource item(r_, extents);
    if (item.size() == 0) return true;  // no data, nothing to find
    const uint64_t where = extents.front().begin;
    if (item.size() < 4) return r_.Fail(where, "Exif item too short");
    uint8_t head[4];
    if (!item.Read(0, 4, head)) return r_.Fail(where, "Exif item unreadable");
    const uint64_t tiff = 4 + uint64_t{LoadBe32(head)};
    if (tiff >= item.size()) return r_.Fail(where, "Exif item's TIFF offset past its end");
    if (extents.size() == 1) {
      return FindTiffGps(r_, where + tiff, where + item.size(), &ranges_);
    }
    // Split over extents: walk the joined bytes with a reader of its own, limited to what the
    // scan has left, and map what it finds back onto the file.
    ScanLimits left = limits_;
    left.max_bytes_read -= std::min(limits_.max_bytes_read, r_.bytes_read());
    left.max_structures -= std::min(limits_.max_structures, r_.structures());
    ScanReader inner(item, left);
    std::vector<LocationRange> found;
    if (!FindTiffGps(inner, tiff, item.size(), &found) || !inner.ok()) {
      return r_.Fail(item.FileOffset(inner.failed_at()),
                     absl::StrCat("Exif item: ", inner.error()));
    }
    for (const LocationRange& range : found) item.MapRange(range, &ranges_);
    return true;
  }

  bool XmpItem(const std::vector<Extent>& extents) {
    ExtentSource item(r_, extents);
    const uint64_t where = extents.empty() ? 0 : extents.front().begin;
    if (item.size() > limits_.max_bytes_read - std::min(limits_.max_bytes_read, r_.bytes_read())) {
      return r_.Fail(where, "XMP item larger than the read budget");
    }
    std::string packet(static_cast<size_t>(item.size()), '\0');
    if (!item.Read(0, packet.size(), reinterpret_cast<uint8_t*>(packet.data()))) {
      return r_.Fail(where, "XMP item unreadable");
    }
    std::vector<LocationRange> found;
    FindXmpGps(packet, 0, limits_.max_depth, &found);
    for (const LocationRange& range : found) item.MapRange(range, &ranges_);
    return true;
  }

  MediaClass ContentClass() const {
    // One video track proves video even if the walk failed later; the other answers need the
    // whole file, since a later track could be video.
    if (saw_video_track_) return MEDIA_CLASS_VIDEO;
    if (!r_.ok()) return MEDIA_CLASS_UNSPECIFIED;
    if (image_items_) return MEDIA_CLASS_IMAGE;
    if (tracks_ > 0 && sound_tracks_ == tracks_) return MEDIA_CLASS_AUDIO;
    if (tracks_ > 0 && picture_tracks_ == tracks_) return MEDIA_CLASS_IMAGE;
    return MEDIA_CLASS_UNSPECIFIED;
  }

  ScanReader r_;
  const ScanLimits limits_;
  const bool needs_ftyp_;
  bool heif_;                   // items may precede their meta box (see ItemPlace)
  uint32_t track_handler_ = 0;  // the handler of the track being walked
  uint32_t tracks_ = 0, sound_tracks_ = 0, picture_tracks_ = 0;
  bool saw_video_track_ = false;
  bool image_items_ = false;               // an infe of a coded image item
  bool items_resolved_ = false;            // some meta box's items are located
  std::vector<ResolvedItem> items_;        // parsed after the walk
  std::vector<Box> structural_top_level_;  // HEIF: ftyp and meta boxes at the top level
  std::vector<Box> other_top_level_;       // HEIF: the others
  std::vector<LocationRange> ranges_;
  std::vector<LocationRange> fallback_;
};

}  // namespace

LocationScan ScanHeif(ByteSource& source, const ScanLimits& limits) {
  return Scanner(source, limits, /*image_format=*/true).Run();
}

LocationScan ScanMp4(ByteSource& source, const ScanLimits& limits) {
  return Scanner(source, limits, /*image_format=*/false).Run();
}

}  // namespace scopedfs::policy
