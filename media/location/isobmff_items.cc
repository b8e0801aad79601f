// The Exif and XMP items of ISO-BMFF meta boxes: iinf/infe say which items are Exif or XMP, iloc
// where their extents are (in the file or in idat), and once the walk is over each item's bytes
// are parsed for GPS as one run, however many extents it spans. Declared counts are never trusted
// for an allocation, and every list kept is charged against the scan's memory cap.
#include "media/location/isobmff_items.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "media/location/exif_gps.h"
#include "media/location/isobmff_box.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media::isobmff {
namespace {

constexpr uint32_t kInfe = FourCc("infe");
constexpr uint32_t kExifItem = FourCc("Exif");
constexpr uint32_t kMimeItem = FourCc("mime");

// Item types of coded images (HEIF, AVIF and their derived images): items a reader shows.
bool IsImageItemType(uint32_t type) {
  constexpr uint32_t kTypes[] = {FourCc("hvc1"), FourCc("hev1"), FourCc("av01"), FourCc("avc1"),
                                 FourCc("grid"), FourCc("iovl"), FourCc("iden"), FourCc("jpeg"),
                                 FourCc("j2k1"), FourCc("unci"), FourCc("vvc1"), FourCc("tmap")};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

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

}  // namespace

bool MetaItems::AddTopLevel(const Box& box) {
  if (!r_.Charge(box.begin, sizeof(Box))) return false;
  (box.type == kFtyp || box.type == kMeta ? structural_top_level_ : other_top_level_)
      .push_back(box);
  return true;
}

bool MetaItems::Locate(const Box& meta, const std::vector<Box>& iinf, const std::vector<Box>& iloc,
                       const Box* idat) {
  if (!Items(meta, iinf, iloc, idat)) return false;
  items_resolved_ = true;
  return true;
}

void MetaItems::ParseItems() {
  for (const ResolvedItem& item : items_) {
    if (!r_.ok()) break;
    if (item.kind == ItemKind::kExif) {
      ExifItem(item.extents);
    } else {
      XmpItem(item.extents);
    }
  }
}

void MetaItems::FallBackUnlocated() {
  // No meta box's item locations were learnt, and HEIF lets item data sit in any box (an mdat
  // before the meta box, say): what lies before the failure point can hold Exif or XMP too,
  // except for ftyp and meta boxes, which ItemPlace refuses as item data. (In other files
  // item data, rare and so not worth the cost, may only follow its meta box: see ItemPlace.)
  if (r_.ok() || !heif_ || items_resolved_) return;
  for (const Box& box : other_top_level_) {
    AddRange(&fallback_, box.begin, box.end, kExif);
    AddRange(&fallback_, box.begin, box.end, kXmp);
  }
}

// iinf (FullBox): entry count (16 bits in version 0, else 32), then infe boxes.
bool MetaItems::Iinf(const Box& box, std::vector<Item>* items) {
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
  if (!walker_.ForEachBox(at, box.end, false, [&](const Box& child) {
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

bool MetaItems::Infe(const Box& box, std::vector<Item>* items) {
  if (box.end - box.payload < 4) return r_.Fail(box.begin, "infe box too small");
  std::string body;
  if (!walker_.ReadAll(box.payload, box.end, &body)) return false;
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
bool MetaItems::Iloc(const Box& box, std::vector<Item>* items, std::vector<ItemLocation>* out) {
  if (box.end - box.payload < 4) return r_.Fail(box.begin, "iloc box too small");
  std::string body;
  if (!walker_.ReadAll(box.payload, box.end, &body)) return false;
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
                               [this](const Item& item, uint32_t id) {
                                 r_.Compared();
                                 return item.id < id;
                               });
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
// FallBackUnlocated). So in HEIF item data may not sit inside a top-level ftyp or meta box, nor,
// for any meta box after the first to locate items, before the end of that meta box; in other
// files, nor before the end of any meta box. The refused data falls back, as `kind`.
bool MetaItems::ItemPlace(const Box& meta, uint64_t begin, uint64_t length, Redaction kind,
                          uint64_t where) {
  if (length == 0) return true;
  const Box* inside = nullptr;
  if (heif_) {
    // Top-level boxes are in file order and disjoint: the only candidate is the last one
    // beginning before the data ends (a binary search, not a loop per extent).
    auto it =
        std::lower_bound(structural_top_level_.begin(), structural_top_level_.end(), begin + length,
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
  return r_.Fail(
      where, absl::StrCat("item data at ", begin, " before the end of ",
                          heif_ ? "a second meta box locating items" : "the meta box locating it"));
}

// Turns an iloc entry of the items of `meta` into file extents. `where` is blamed on failure.
bool MetaItems::Resolve(const Box& meta, const ItemLocation& loc, const Box* idat, Redaction kind,
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
      return r_.Fail(where,
                     absl::StrCat("item extent of ", length, " bytes at ", begin,
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
bool MetaItems::Items(const Box& meta, const std::vector<Box>& iinf, const std::vector<Box>& iloc,
                      const Box* idat) {
  if (iinf.empty()) return r_.Fail(meta.begin, "meta box locates items but has no iinf");
  std::vector<Item> items;
  for (const Box& box : iinf) {
    if (!Iinf(box, &items)) return false;
  }
  if (items.empty()) return true;
  // Two Exif or XMP entries with one id: readers disagree on which one counts (one map keeps
  // the first, another the last), so neither can be vouched for.
  std::sort(items.begin(), items.end(), [this](const Item& a, const Item& b) {
    r_.Compared();
    return a.id < b.id;
  });
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
    auto it =
        std::lower_bound(items.begin(), items.end(), loc.id, [this](const Item& item, uint32_t id) {
          r_.Compared();
          return item.id < id;
        });
    ResolvedItem res{it->kind, {}};
    const Redaction kind = it->kind == ItemKind::kExif ? kExif : kXmp;
    if (!Resolve(meta, loc, idat, kind, where, &res.extents)) return false;
    if (!r_.Charge(where, sizeof(ResolvedItem))) return false;
    resolved.push_back(std::move(res));
  }
  // Every extent falls back now; ParseItems parses the items once the walk is over.
  for (ResolvedItem& res : resolved) {
    for (const Extent& e : res.extents) {
      AddRange(&fallback_, e.begin, e.begin + e.length, res.kind == ItemKind::kExif ? kExif : kXmp);
    }
    items_.push_back(std::move(res));
  }
  return true;
}

// The Exif item: a 32-bit offset to the TIFF header (past an "Exif\0\0" prefix, usually),
// then the TIFF structure up to the end of the item.
bool MetaItems::ExifItem(const std::vector<Extent>& extents) {
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
    return r_.Fail(item.FileOffset(inner.failed_at()), absl::StrCat("Exif item: ", inner.error()));
  }
  for (const LocationRange& range : found) item.MapRange(range, &ranges_);
  return true;
}

bool MetaItems::XmpItem(const std::vector<Extent>& extents) {
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
}  // namespace scopedfs::media::isobmff
