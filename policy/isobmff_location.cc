// Location finders for the ISO base media file format family: HEIF/AVIF (the Exif and XMP items
// of the file-level meta box) and MP4/MOV/3GP/M4A (©xyz, loci and gps boxes, location tags of
// iTunes and QuickTime metadata, XMP boxes). Only box headers and small metadata boxes are read.
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
#include "policy/exif_gps.h"
#include "policy/location.h"
#include "policy/scan_reader.h"
#include "policy/xmp_gps.h"

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
constexpr uint32_t kExifItem = FourCc("Exif");
constexpr uint32_t kMimeItem = FourCc("mime");

// The extended type under which XMP is stored in a uuid box.
constexpr uint8_t kXmpUuid[16] = {0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8,
                                  0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC};

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

bool NamesLocation(absl::string_view key) {
  return absl::StrContains(absl::AsciiStrToLower(key), "location");
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
  Scanner(ByteSource& source, const ScanLimits& limits, bool heif)
      : r_(source, limits), limits_(limits), heif_(heif) {}

  LocationScan Run() {
    bool first = true;
    ForEachBox(0, r_.size(), /*top_level=*/true, [&](const Box& box) {
      if (heif_ && first && box.type != kFtyp) {
        return r_.Fail(box.begin, "HEIF file does not start with an ftyp box");
      }
      first = false;
      if (heif_) {
        (box.type == kFtyp || box.type == kMeta ? structural_top_level_ : other_top_level_)
            .push_back(box);
      }
      return HandleBox(box);
    });
    if (heif_ && first && r_.ok()) r_.Fail(0, "empty HEIF file");
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
      // except for ftyp and meta boxes, which ItemPlace refuses as item data. (MP4 item data,
      // rare and so not worth the cost, may only follow its meta box: see ItemPlace.)
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

  // Boxes anywhere in the walked tree (the top level and inside moov, trak, udta and meta).
  bool HandleBox(const Box& box) {
    switch (box.type) {
      case kMoov:
      case kTrak:
      case kUdta:
        return Container(box);
      case kMeta:
        return Meta(box);
      case kXyz:
      case kGps:
      case kGps0:
        // ©xyz here is a QuickTime user-data text (length, language, ISO 6709 string); gps
        // boxes are vendor formats. Emptying the payload keeps the box walkable.
        AddRange(&ranges_, box.payload, box.end, kBox);
        return true;
      case kLoci:
        // Keep version and flags; language, name, coordinates, body and notes all go.
        if (box.end - box.payload < 4) return r_.Fail(box.begin, "loci box too small");
        AddRange(&ranges_, box.payload + 4, box.end, kBox);
        return true;
      case kXmpBox:
        return Xmp(box.payload, box.end);
      case kUuid:
        if (memcmp(box.extended_type, kXmpUuid, sizeof(kXmpUuid)) == 0) {
          return Xmp(box.payload, box.end);
        }
        return true;
      default:
        return true;
    }
  }

  bool Container(const Box& box) {
    // A failure later on cannot tell which user data was location, so all of it falls back.
    if (box.type == kUdta) AddRange(&fallback_, box.payload, box.end, kBox);
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    return ForEachBox(box.payload, box.end, false,
                      [&](const Box& child) { return HandleBox(child); });
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
              ilst.push_back(child);
              return true;
            case kIinf:
              iinf.push_back(child);
              return true;
            case kIloc:
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
            default:
              return HandleBox(child);
          }
        })) {
      return false;
    }
    // keys name the ilst items of QuickTime metadata, wherever the two sit in the meta box.
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
      if (NamesLocation(name)) location_keys->push_back(static_cast<uint32_t>(index));
      at += key_size;
    }
    return true;
  }

  // ilst: one box per tag, named by a 4cc (iTunes), a keys index (QuickTime) or "----" with a
  // name child (freeform); each holds data boxes of type, locale and value.
  bool Ilst(const Box& box, const std::vector<uint32_t>& location_keys) {
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    return ForEachBox(box.payload, box.end, false, [&](const Box& item) {
      bool location = item.type == kXyz || std::find(location_keys.begin(), location_keys.end(),
                                                     item.type) != location_keys.end();
      if (!location && item.type != kFreeform) return true;
      ScanReader::DepthGuard item_guard(r_, item.begin);
      if (!item_guard.ok()) return false;
      std::vector<Box> values;
      if (!ForEachBox(item.payload, item.end, false, [&](const Box& child) {
            if (child.type == kData) values.push_back(child);
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
    items->push_back({id, exif ? ItemKind::kExif : ItemKind::kXmp});
    return true;
  }

  // iloc (FullBox, versions 0-2). Parses every entry (the layout is sequential) and keeps those
  // of the items in `wanted`.
  bool Iloc(const Box& box, const std::vector<Item>& wanted, std::vector<ItemLocation>* out) {
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
    uint32_t count = 0;
    if (!c.Uint(version < 2 ? 2 : 4, &count)) return false;
    for (uint64_t i = 0; i < count; ++i) {
      if (!r_.Visit(c.offset())) return false;
      ItemLocation loc;
      uint16_t method = 0, extent_count = 0;
      if (!c.Uint(version < 2 ? 2 : 4, &loc.id) || (version >= 1 && !c.Uint(2, &method)) ||
          !c.Uint(2, &loc.data_reference_index) || !c.Uint(base_offset_size, &loc.base_offset) ||
          !c.Uint(2, &extent_count)) {
        return false;
      }
      loc.construction_method = method & 0xF;
      for (uint16_t e = 0; e < extent_count; ++e) {
        if (!r_.Visit(c.offset())) return false;
        uint64_t index = 0;
        Extent extent;
        if (!c.Uint(index_size, &index) || !c.Uint(offset_size, &extent.begin) ||
            !c.Uint(length_size, &extent.length)) {
          return false;
        }
        loc.extents.push_back(extent);
      }
      bool keep = std::any_of(wanted.begin(), wanted.end(),
                              [&](const Item& item) { return item.id == loc.id; });
      if (keep) out->push_back(std::move(loc));
    }
    return true;
  }

  // Item data in the file (construction method 0) that a scan failing before it learns the
  // items (under tighter limits, say) would not cover, and so refused: the fallback of such a scan
  // holds [failure point, end of file), plus in HEIF, until the items of a first meta box are
  // located, the top-level boxes before the failure point other than ftyp and meta boxes (see
  // Run). So in HEIF item data may not sit inside a top-level ftyp or meta box, nor, for any meta
  // box after the first to locate items, before the end of that meta box; in MP4, nor before the
  // end of any meta box. The refused data falls back, as `kind`.
  bool ItemPlace(const Box& meta, uint64_t begin, uint64_t length, Redaction kind, uint64_t where) {
    if (length == 0) return true;
    const Box* inside = nullptr;
    if (heif_) {
      for (const Box& box : structural_top_level_) {
        if (begin < box.end && box.begin < begin + length) inside = &box;
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
      out->push_back({begin, length});
    }
    return true;
  }

  bool Items(const Box& meta, const std::vector<Box>& iinf, const std::vector<Box>& iloc,
             const Box* idat) {
    if (iinf.empty()) return r_.Fail(meta.begin, "meta box locates items but has no iinf");
    std::vector<Item> items;
    for (const Box& box : iinf) {
      if (!Iinf(box, &items)) return false;
    }
    if (items.empty()) return true;
    // Several iloc boxes are invalid, but a reader may pick any of them: take every entry.
    std::vector<std::pair<ItemLocation, uint64_t>> locations;
    for (const Box& box : iloc) {
      std::vector<ItemLocation> found;
      if (!Iloc(box, items, &found)) return false;
      for (ItemLocation& loc : found) locations.push_back({std::move(loc), box.begin});
    }
    std::vector<ResolvedItem> resolved;
    for (const Item& item : items) {
      for (const auto& [loc, where] : locations) {
        if (loc.id != item.id) continue;
        ResolvedItem res{item.kind, {}};
        const Redaction kind = item.kind == ItemKind::kExif ? kExif : kXmp;
        if (!Resolve(meta, loc, idat, kind, where, &res.extents)) return false;
        resolved.push_back(std::move(res));
      }
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

  ScanReader r_;
  const ScanLimits limits_;
  const bool heif_;
  bool items_resolved_ = false;            // some meta box's items are located
  std::vector<ResolvedItem> items_;        // parsed after the walk
  std::vector<Box> structural_top_level_;  // HEIF: ftyp and meta boxes at the top level
  std::vector<Box> other_top_level_;       // HEIF: the others
  std::vector<LocationRange> ranges_;
  std::vector<LocationRange> fallback_;
};

}  // namespace

LocationScan ScanHeif(ByteSource& source, const ScanLimits& limits) {
  return Scanner(source, limits, /*heif=*/true).Run();
}

LocationScan ScanMp4(ByteSource& source, const ScanLimits& limits) {
  return Scanner(source, limits, /*heif=*/false).Run();
}

}  // namespace scopedfs::policy
