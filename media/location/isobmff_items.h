// The item part of the ISO-BMFF location walk (isobmff_location.cc): the Exif and XMP items that
// meta boxes list (iinf/infe), locate (iloc) and may hold (idat), whose data can lie anywhere in
// the file. Private to //media/location.
#ifndef SCOPEDFS_MEDIA_LOCATION_ISOBMFF_ITEMS_H_
#define SCOPEDFS_MEDIA_LOCATION_ISOBMFF_ITEMS_H_

#include <cstdint>
#include <vector>

#include "media/location/isobmff_box.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media::isobmff {

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

// The Exif and XMP items of every meta box of one walk. The walk hands it the top-level boxes
// and each meta box's item boxes; item data is parsed only once the walk is over.
class MetaItems {
 public:
  // `heif`: items may lie before their meta box (see ItemPlace). GPS found in items goes to
  // `ranges`, what a failure falls back to (item data, top-level boxes) to `fallback`.
  MetaItems(BoxWalker& walker, const ScanLimits& limits, bool heif,
            std::vector<LocationRange>* ranges, std::vector<LocationRange>* fallback)
      : walker_(walker),
        r_(walker.reader()),
        limits_(limits),
        ranges_(*ranges),
        fallback_(*fallback),
        heif_(heif) {}

  // An image brand in ftyp makes the file a HEIF for item placement.
  void MarkHeif() { heif_ = true; }
  bool heif() const { return heif_; }

  // Records a top-level box, in file order, charging the scan's memory cap for it.
  bool AddTopLevel(const Box& box);

  // Locates the Exif and XMP items of `meta` from its iinf and iloc boxes (and `idat`, null if it
  // has none); their data falls back at once.
  bool Locate(const Box& meta, const std::vector<Box>& iinf, const std::vector<Box>& iloc,
              const Box* idat);

  // Once the walk is over: finds the GPS in the located items, until the scan fails.
  void ParseItems();

  // Once the walk is over: if it failed in a HEIF before any meta box's items were located, the
  // top-level boxes where item data may lie fall back.
  void FallBackUnlocated();

  bool saw_image_item() const { return image_items_; }

 private:
  bool Iinf(const Box& box, std::vector<Item>* items);
  bool Infe(const Box& box, std::vector<Item>* items);
  bool Iloc(const Box& box, std::vector<Item>* items, std::vector<ItemLocation>* out);
  bool ItemPlace(const Box& meta, uint64_t begin, uint64_t length, Redaction kind, uint64_t where);
  bool Resolve(const Box& meta, const ItemLocation& loc, const Box* idat, Redaction kind,
               uint64_t where, std::vector<Extent>* out);
  bool Items(const Box& meta, const std::vector<Box>& iinf, const std::vector<Box>& iloc,
             const Box* idat);
  bool ExifItem(const std::vector<Extent>& extents);
  bool XmpItem(const std::vector<Extent>& extents);

  BoxWalker& walker_;
  ScanReader& r_;
  const ScanLimits& limits_;
  std::vector<LocationRange>& ranges_;
  std::vector<LocationRange>& fallback_;
  bool heif_;                              // items may precede their meta box (see ItemPlace)
  bool image_items_ = false;               // an infe of a coded image item
  bool items_resolved_ = false;            // some meta box's items are located
  std::vector<ResolvedItem> items_;        // parsed after the walk
  std::vector<Box> structural_top_level_;  // HEIF: ftyp and meta boxes at the top level
  std::vector<Box> other_top_level_;       // HEIF: the others
};

}  // namespace scopedfs::media::isobmff

#endif  // SCOPEDFS_MEDIA_LOCATION_ISOBMFF_ITEMS_H_
