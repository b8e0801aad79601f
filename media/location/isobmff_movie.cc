// QuickTime and iTunes metadata (keys and ilst): which tags are location, by their 4cc, keys name
// or freeform name, and which bytes of their values to empty.
#include "media/location/isobmff_movie.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "media/location/isobmff_box.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media::isobmff {
namespace {

constexpr uint32_t kData = FourCc("data");
constexpr uint32_t kName = FourCc("name");
constexpr uint32_t kFreeform = FourCc("----");

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

}  // namespace

bool FindLocationKeys(BoxWalker& walker, const Box& box, std::vector<uint32_t>* location_keys) {
  ScanReader& r = walker.reader();
  uint32_t count;
  if (box.end - box.payload < 8) return r.Fail(box.begin, "keys box too small");
  if (!r.Be32(box.payload + 4, &count)) return false;
  uint64_t at = box.payload + 8;
  for (uint64_t index = 1; index <= count; ++index) {
    if (!r.Visit(at)) return false;
    uint32_t key_size;
    if (box.end - at < 8) return r.Fail(at, "keys entry past the end of the keys box");
    if (!r.Be32(at, &key_size)) return false;
    if (key_size < 8 || key_size > box.end - at) {
      return r.Fail(at, absl::StrCat("keys entry of bad size ", key_size));
    }
    std::string name;
    if (!walker.ReadAll(at + 8, at + key_size, &name)) return false;
    if (NamesLocation(name)) {
      if (!r.Charge(at, sizeof(uint32_t))) return false;
      location_keys->push_back(static_cast<uint32_t>(index));
    }
    at += key_size;
  }
  return true;
}

bool FindIlstLocation(BoxWalker& walker, const Box& box, const std::vector<uint32_t>& location_keys,
                      std::vector<LocationRange>* ranges) {
  ScanReader& r = walker.reader();
  ScanReader::DepthGuard guard(r, box.begin);
  if (!guard.ok()) return false;
  return walker.ForEachBox(box.payload, box.end, false, [&](const Box& item) {
    bool location = item.type == kXyz || item.type == kAtXyz ||
                    std::binary_search(location_keys.begin(), location_keys.end(), item.type);
    if (!location && item.type != kFreeform) return true;
    ScanReader::DepthGuard item_guard(r, item.begin);
    if (!item_guard.ok()) return false;
    // Values are few per item; each is charged, so a hostile item cannot grow this unbounded.
    std::vector<Box> values;
    if (!walker.ForEachBox(item.payload, item.end, false, [&](const Box& child) {
          if (child.type == kData) {
            if (!r.Charge(child.begin, sizeof(Box))) return false;
            values.push_back(child);
          }
          if (child.type == kName) {
            // FullBox: version and flags, then the name up to the end of the box.
            std::string name;
            if (child.end - child.payload < 4) return r.Fail(child.begin, "name box too small");
            if (!walker.ReadAll(child.payload + 4, child.end, &name)) return false;
            if (NamesLocation(name)) location = true;
          }
          return true;
        })) {
      return false;
    }
    if (!location) return true;
    for (const Box& value : values) {
      // Keep the value's type and locale so the tag still parses, as an empty value.
      if (value.end - value.payload < 8) return r.Fail(value.begin, "data box too small");
      AddRange(ranges, value.payload + 8, value.end, kBox);
    }
    return true;
  });
}

}  // namespace scopedfs::media::isobmff
