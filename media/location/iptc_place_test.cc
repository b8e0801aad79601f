// FindIptcPlaces on hand-written IPTC IIM blocks: every place dataset is found (its dataset number
// and its value), nothing else is, and where a reader stops or may resynchronise, the rest of the
// block goes. Also through the containers that hold IPTC: a JPEG's Photoshop resource 0x0404 and
// an Exif IFD's IPTC-NAA tag.
#include "media/location/iptc_place.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kPlace = REDACTION_IPTC_PLACE;

std::string Be16(uint16_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v)}; }
std::string Be32(uint32_t v) { return Be16(v >> 16) + Be16(v & 0xFFFF); }
std::string Le16(uint16_t v) { return {static_cast<char>(v), static_cast<char>(v >> 8)}; }
std::string Le32(uint32_t v) { return Le16(v & 0xFFFF) + Le16(v >> 16); }

std::string Dataset(uint8_t record, uint8_t dataset, absl::string_view value) {
  return absl::StrCat("\x1c", std::string(1, static_cast<char>(record)),
                      std::string(1, static_cast<char>(dataset)),
                      Be16(static_cast<uint16_t>(value.size())), value);
}

struct Found {
  bool ok;
  std::string error;
  std::vector<LocationRange> ranges;
};

Found Find(absl::string_view bytes, uint64_t begin, uint64_t end, const ScanLimits& limits = {}) {
  MemorySource src(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ScanReader r(src, limits);
  Found f;
  f.ok = FindIptcPlaces(r, begin, end, &f.ranges);
  f.error = r.error();
  return f;
}

Found FindAll(absl::string_view bytes) { return Find(bytes, 0, bytes.size()); }

// The dataset number byte and the value of the dataset that starts at `at` with `value`.
std::vector<LocationRange> PlaceRanges(uint64_t at, absl::string_view value) {
  return {{at + 2, at + 3, kPlace}, {at + 5, at + 5 + value.size(), kPlace}};
}

std::string Fill(absl::string_view bytes, const std::vector<LocationRange>& ranges) {
  std::string out(bytes);
  std::vector<LocationRange> sorted = ranges;
  NormalizeRanges(&sorted);
  ApplyFills(PlanFills(sorted, 1u << kPlace), 0,
             absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  return out;
}

TEST(IsIptcPlaceDatasetTest, ExactlyTheApplicationRecordPlaces) {
  for (int dataset : {26, 27, 90, 92, 95, 100, 101}) {
    EXPECT_TRUE(IsIptcPlaceDataset(2, static_cast<uint8_t>(dataset))) << dataset;
    // Record 1 dataset 90 is the coded character set, record 3 is another table.
    EXPECT_FALSE(IsIptcPlaceDataset(1, static_cast<uint8_t>(dataset))) << dataset;
    EXPECT_FALSE(IsIptcPlaceDataset(3, static_cast<uint8_t>(dataset))) << dataset;
  }
  for (int dataset : {0, 5, 25, 55, 80, 91, 93, 94, 96, 99, 102, 103, 105, 116, 120, 255}) {
    EXPECT_FALSE(IsIptcPlaceDataset(2, static_cast<uint8_t>(dataset))) << dataset;
  }
}

TEST(FindIptcPlacesTest, EveryPlaceDatasetAndNothingElse) {
  const std::vector<std::pair<uint8_t, std::string>> places = {
      {90, "Zzcity"},     {92, "Zzsub"}, {95, "Zzstate"},  {100, "ZZC"},
      {101, "Zzcountry"}, {26, "ZZL"},   {27, "Zzcontent"}};
  std::string block = Dataset(1, 90, "\x1b%G") + Dataset(2, 0, std::string("\0\4", 2)) +
                      Dataset(2, 5, "Title") + Dataset(2, 25, "keyword");
  std::vector<LocationRange> want;
  for (const auto& [dataset, value] : places) {
    for (const LocationRange& r : PlaceRanges(block.size(), value)) want.push_back(r);
    block += Dataset(2, dataset, value);
    block += Dataset(2, 116, "(c) someone");
  }
  Found f = FindAll(block);
  ASSERT_TRUE(f.ok) << f.error;
  EXPECT_EQ(f.ranges, want);

  // Filled, the block parses the same way and holds no place: each place dataset is now a 2:0
  // of zeros, and every other dataset is unchanged.
  std::string out = Fill(block, f.ranges);
  Found again = FindAll(out);
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.ranges.empty());
  for (const auto& [dataset, value] : places) {
    EXPECT_EQ(out.find(value), std::string::npos) << value;
  }
  for (absl::string_view kept : {"Title", "keyword", "(c) someone", "\x1b%G"}) {
    EXPECT_NE(out.find(std::string(kept)), std::string::npos) << kept;
  }
  EXPECT_EQ(out.size(), block.size());
}

TEST(FindIptcPlacesTest, ExtendedLengthIsRead) {
  // A 4-byte length (0x8004), then the value: the value is found after the length bytes.
  std::string block =
      Dataset(2, 5, "T") + "\x1c\x02\x5a" + Be16(0x8004) + Be32(6) + "Zzcity" + Dataset(2, 25, "k");
  uint64_t at = Dataset(2, 5, "T").size();
  Found f = FindAll(block);
  ASSERT_TRUE(f.ok) << f.error;
  std::vector<LocationRange> want = {{at + 2, at + 3, kPlace}, {at + 9, at + 15, kPlace}};
  EXPECT_EQ(f.ranges, want);
}

TEST(FindIptcPlacesTest, WhereReadersStopTheRestGoes) {
  const std::string head = Dataset(2, 5, "T");
  const uint64_t at = head.size();
  // A length past the block.
  std::string past = head + "\x1c\x02\x5a" + Be16(50) + "Zzcity";
  EXPECT_EQ(FindAll(past).ranges, (std::vector<LocationRange>{{at, past.size(), kPlace}}));
  // An extended length of more than 8 bytes, or running past the block.
  std::string wide = head + "\x1c\x02\x5a" + Be16(0x8009) + std::string(9, '\0') + "Zzcity";
  EXPECT_EQ(FindAll(wide).ranges, (std::vector<LocationRange>{{at, wide.size(), kPlace}}));
  std::string cut = head + "\x1c\x02\x5a" + Be16(0x8004) + "\0";
  EXPECT_EQ(FindAll(cut).ranges, (std::vector<LocationRange>{{at, cut.size(), kPlace}}));
  // A marker other than 0x1C: a resynchronising reader could find the city behind it.
  std::string junk = head + "junk" + Dataset(2, 90, "Zzcity");
  EXPECT_EQ(FindAll(junk).ranges, (std::vector<LocationRange>{{at, junk.size(), kPlace}}));
  // NUL padding ends the datasets quietly.
  std::string padded = head + std::string(16, '\0');
  Found f = FindAll(padded);
  EXPECT_TRUE(f.ok);
  EXPECT_TRUE(f.ranges.empty());
  // A header cut short after the last dataset is read by no one.
  EXPECT_TRUE(FindAll(head + "\x1c\x02").ranges.empty());
}

TEST(FindIptcPlacesTest, ByteSwappedBlocksGoWhole) {
  // ExifTool byte-swaps 32-bit words when the marker is at byte 3 instead of byte 0.
  std::string block = Dataset(2, 90, "Zzcity");
  block.resize((block.size() + 3) / 4 * 4, '\0');
  std::string swapped;
  for (size_t i = 0; i < block.size(); i += 4) {
    swapped += {block[i + 3], block[i + 2], block[i + 1], block[i]};
  }
  EXPECT_EQ(FindAll(swapped).ranges, (std::vector<LocationRange>{{0, swapped.size(), kPlace}}));
}

TEST(FindIptcPlacesTest, BoundedByTheStructureBudgetAndTheBlock) {
  std::string block;
  for (int i = 0; i < 100; ++i) block += Dataset(2, 25, "k");
  block += Dataset(2, 90, "Zzcity");
  ScanLimits limits;
  limits.max_structures = 50;
  Found f = Find(block, 0, block.size(), limits);
  EXPECT_FALSE(f.ok);
  EXPECT_FALSE(f.error.empty());
  // A block inside a larger source: nothing past `end` is read or reported.
  std::string inner = Dataset(2, 90, "Zzcity");
  std::string source = inner + Dataset(2, 92, "Zzsub");
  Found g = Find(source, 0, inner.size());
  ASSERT_TRUE(g.ok);
  EXPECT_EQ(g.ranges, PlaceRanges(0, "Zzcity"));
  // Bounds outside the source fail.
  EXPECT_FALSE(Find(inner, 0, inner.size() + 1).ok);
}

// ---- Through the containers ----

std::string PhotoshopResource(uint16_t id, absl::string_view data) {
  std::string r = absl::StrCat("8BIM", Be16(id), std::string(2, '\0'),
                               Be32(static_cast<uint32_t>(data.size())), data);
  if (data.size() % 2) r += '\0';
  return r;
}

std::string JpegWith(uint8_t marker, absl::string_view data, uint64_t* data_at) {
  std::string j = absl::StrCat("\xFF\xD8\xFF", std::string(1, static_cast<char>(marker)),
                               Be16(static_cast<uint16_t>(data.size() + 2)));
  *data_at = j.size();
  j += std::string(data);
  j += "\xFF\xD9";
  return j;
}

LocationScan ScanBytes(absl::string_view bytes) {
  MemorySource src(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  return ScanJpeg(src);
}

TEST(IptcInContainersTest, JpegPhotoshopIptcResource) {
  constexpr absl::string_view kPs("Photoshop 3.0\0", 14);
  std::string iptc = Dataset(2, 5, "Title") + Dataset(2, 90, "Zzcity");
  uint64_t data = 0;
  std::string jpeg = JpegWith(0xED, absl::StrCat(kPs, PhotoshopResource(0x0404, iptc)), &data);
  LocationScan scan = ScanBytes(jpeg);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t iptc_at = data + kPs.size() + 12;
  uint64_t city = iptc_at + Dataset(2, 5, "Title").size();
  std::vector<LocationRange> want = PlaceRanges(city, "Zzcity");
  EXPECT_EQ(scan.ranges, want);
  // The resource is the container the fallback lists.
  std::vector<LocationRange> container = {{iptc_at, iptc_at + iptc.size(), kPlace}};
  EXPECT_EQ(scan.fallback, container);
  // Place names are filled only when asked for.
  EXPECT_TRUE(
      RedactedFills(&scan, true, jpeg.size(), kAllLocationKinds & ~kPlaceNameKinds).empty());
  EXPECT_EQ(RedactedFills(&scan, true, jpeg.size()).size(), 2u);
}

TEST(IptcInContainersTest, ExifIptcNaaTag) {
  // A little-endian TIFF whose IFD0 holds IPTC-NAA (0x83BB, UNDEFINED) out of line.
  std::string iptc = Dataset(2, 92, "Zzsub");
  std::string tiff =
      absl::StrCat("II*", std::string(1, '\0'), Le32(8), Le16(1), Le16(0x83BB), Le16(7),
                   Le32(static_cast<uint32_t>(iptc.size())), Le32(8 + 2 + 12 + 4), Le32(0), iptc);
  uint64_t data = 0;
  std::string jpeg = JpegWith(0xE1, absl::StrCat(std::string("Exif\0\0", 6), tiff), &data);
  LocationScan scan = ScanBytes(jpeg);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, PlaceRanges(data + 6 + 26, "Zzsub"));
  // An IPTC-NAA tag of a type whose size is unknown cannot be delimited: malformed.
  tiff[8 + 2 + 2] = 99;
  scan = ScanBytes(JpegWith(0xE1, absl::StrCat(std::string("Exif\0\0", 6), tiff), &data));
  EXPECT_TRUE(scan.malformed);
}

}  // namespace
}  // namespace scopedfs::media
