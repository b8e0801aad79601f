// FindTiffGps on hand-built TIFF structures: both byte orders, inline and out-of-line values,
// pointers from every IFD, and hostile layouts (truncation, loops, offsets past the end, absurd
// counts), which must fail closed without reading outside the TIFF.
#include "media/location/exif_gps.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr uint32_t kExifMask = 1u << kExif;

// One IFD entry; `inline_value` (4 bytes, already in the file's byte order) if set, else
// `offset` is written as the value field.
struct Entry {
  uint16_t tag;
  uint16_t type;
  uint32_t count;
  uint32_t offset = 0;
  std::string inline_value;
};

// Writes TIFF bytes at explicit offsets, in one byte order.
class TiffBuilder {
 public:
  explicit TiffBuilder(bool big_endian) : be_(big_endian) {
    Put(0, be_ ? absl::string_view("MM\0*", 4) : absl::string_view("II*\0", 4));
  }

  void Put(size_t at, absl::string_view s) {
    if (bytes.size() < at + s.size()) bytes.resize(at + s.size());
    for (size_t i = 0; i < s.size(); ++i) bytes[at + i] = static_cast<uint8_t>(s[i]);
  }
  std::string U16(uint16_t v) const {
    char b[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
    if (!be_) std::swap(b[0], b[1]);
    return std::string(b, 2);
  }
  std::string U32(uint32_t v) const {
    std::string s = be_ ? U16(v >> 16) + U16(v & 0xFFFF) : U16(v & 0xFFFF) + U16(v >> 16);
    return s;
  }
  // A SHORT value left-justified in a 4-byte value field.
  std::string InlineShort(uint16_t v) const { return U16(v) + std::string(2, '\0'); }

  void Ifd0At(uint32_t at) { Put(4, U32(at)); }
  void Ifd(uint32_t at, const std::vector<Entry>& entries, uint32_t next) {
    Put(at, U16(static_cast<uint16_t>(entries.size())));
    size_t p = at + 2;
    for (const Entry& e : entries) {
      Put(p, U16(e.tag) + U16(e.type) + U32(e.count));
      Put(p + 8, e.inline_value.empty() ? U32(e.offset) : e.inline_value);
      p += 12;
    }
    Put(p, U32(next));
  }
  void Rationals(uint32_t at, const std::vector<uint32_t>& parts) {
    for (size_t i = 0; i < parts.size(); ++i) Put(at + 4 * i, U32(parts[i]));
  }

  std::vector<uint8_t> bytes;

 private:
  bool be_;
};

// The standard layout (offsets relative to the TIFF header):
//   8   IFD0: Orientation (inline SHORT), GPSInfo -> 56; next -> 38
//   38  IFD1: Compression (inline SHORT); next 0
//   56  GPS IFD: VersionID BYTE[4], LatitudeRef ASCII[2], Latitude RATIONAL[3] -> 122,
//       LongitudeRef ASCII[2], Longitude RATIONAL[3] -> 146; next 0 (ends at 122)
//   122 latitude, 146 longitude, 170 "tail!!" (not location)
constexpr uint32_t kIfd0 = 8;
constexpr uint32_t kIfd1 = 38;
constexpr uint32_t kGps = 56;
constexpr uint32_t kGpsEntriesEnd = kGps + 2 + 5 * 12;  // 118; the next link follows
constexpr uint32_t kLat = 122;
constexpr uint32_t kLon = 146;
constexpr uint32_t kValuesEnd = 170;
constexpr uint32_t kTiffSize = 176;

std::vector<Entry> GpsEntries() {
  return {{0x0000, 1, 4, 0, std::string("\x02\x03\x00\x00", 4)},
          {0x0001, 2, 2, 0, std::string("N\0\0\0", 4)},
          {0x0002, 5, 3, kLat, ""},
          {0x0003, 2, 2, 0, std::string("W\0\0\0", 4)},
          {0x0004, 5, 3, kLon, ""}};
}

TiffBuilder StandardTiff(bool big_endian) {
  TiffBuilder t(big_endian);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x0112, 3, 1, 0, t.InlineShort(1)}, {0x8825, 4, 1, kGps, ""}}, kIfd1);
  t.Ifd(kIfd1, {{0x0103, 3, 1, 0, t.InlineShort(6)}}, 0);
  t.Ifd(kGps, GpsEntries(), 0);
  t.Rationals(kLat, {37, 1, 46, 1, 741, 25});
  t.Rationals(kLon, {122, 1, 25, 1, 246, 25});
  t.Put(kValuesEnd, "tail!!");
  return t;
}

struct Result {
  bool ok;
  std::string error;
  std::vector<LocationRange> ranges;
};

// Runs FindTiffGps over `tiff` embedded at `prefix` bytes into a file that has `suffix` more
// bytes after it, so that offsets must be relative to the header and bounded by its end.
Result Find(const std::vector<uint8_t>& tiff, size_t prefix = 0, size_t suffix = 0,
            const ScanLimits& limits = {}) {
  std::vector<uint8_t> file(prefix, 0xAB);
  file.insert(file.end(), tiff.begin(), tiff.end());
  file.insert(file.end(), suffix, 0xCD);
  MemorySource src(file);
  ScanReader r(src, limits);
  Result res;
  res.ok = FindTiffGps(r, prefix, prefix + tiff.size(), &res.ranges);
  EXPECT_EQ(res.ok, r.ok());
  res.error = r.error();
  return res;
}

std::vector<LocationRange> Shifted(std::vector<LocationRange> ranges, uint64_t by) {
  for (LocationRange& r : ranges) {
    r.begin += by;
    r.end += by;
  }
  return ranges;
}

class ByteOrderTest : public testing::TestWithParam<bool> {};

TEST_P(ByteOrderTest, FindsGpsIfdAndOutOfLineValues) {
  std::vector<uint8_t> tiff = StandardTiff(GetParam()).bytes;
  ASSERT_EQ(tiff.size(), kTiffSize);
  constexpr size_t kPrefix = 10;
  Result res = Find(tiff, kPrefix, 7);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<LocationRange> want = {
      {kGps, kGpsEntriesEnd, kExif}, {kLat, kLon, kExif}, {kLon, kValuesEnd, kExif}};
  EXPECT_EQ(res.ranges, Shifted(want, kPrefix));
}

TEST_P(ByteOrderTest, RedactedTiffHasAnEmptyGpsIfdAndIsOtherwiseUnchanged) {
  std::vector<uint8_t> tiff = StandardTiff(GetParam()).bytes;
  Result res = Find(tiff);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<uint8_t> redacted = tiff;
  std::vector<FillRange> plan = PlanFills(res.ranges, kExifMask);
  ApplyFills(plan, 0, absl::MakeSpan(redacted));
  for (size_t i = 0; i < tiff.size(); ++i) {
    bool inside = (i >= kGps && i < kGpsEntriesEnd) || (i >= kLat && i < kValuesEnd);
    EXPECT_EQ(redacted[i], inside ? 0 : tiff[i]) << "byte " << i;
  }
  // Re-scanning finds the GPS IFD with a zero count: only its count field is reported.
  Result again = Find(redacted);
  ASSERT_TRUE(again.ok) << again.error;
  std::vector<LocationRange> want = {{kGps, kGps + 2, kExif}};
  EXPECT_EQ(again.ranges, want);
}

TEST_P(ByteOrderTest, EveryTruncationFailsClosedWithoutCrashing) {
  std::vector<uint8_t> tiff = StandardTiff(GetParam()).bytes;
  for (size_t n = 0; n <= tiff.size(); ++n) {
    std::vector<uint8_t> prefix(tiff.begin(), tiff.begin() + n);
    Result res = Find(prefix);
    // Everything up to the longitude's end is needed; the trailing "tail!!" is not.
    EXPECT_EQ(res.ok, n >= kValuesEnd) << "length " << n << ": " << res.error;
    for (const LocationRange& r : res.ranges) EXPECT_LE(r.end, n);
  }
}

TEST_P(ByteOrderTest, SingleByteCorruptionsStayInBounds) {
  // A cheap deterministic fuzz: each byte set to a few values that tend to break offsets and
  // counts. Whatever the outcome, reported ranges must lie inside the TIFF.
  std::vector<uint8_t> tiff = StandardTiff(GetParam()).bytes;
  for (size_t i = 0; i < tiff.size(); ++i) {
    for (uint8_t v : {0x00, 0x01, 0x7F, 0xFF}) {
      std::vector<uint8_t> bad = tiff;
      bad[i] = v;
      Result res = Find(bad, 3, 3);
      for (const LocationRange& r : res.ranges) {
        EXPECT_GE(r.begin, 3u);
        EXPECT_LE(r.end, 3u + tiff.size());
        EXPECT_LT(r.begin, r.end);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothOrders, ByteOrderTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "BigEndian" : "LittleEndian";
                         });

TEST(FindTiffGpsTest, NoGpsPointerIsCleanAndEmpty) {
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x0112, 3, 1, 0, t.InlineShort(1)}}, 0);
  Result res = Find(t.bytes);
  EXPECT_TRUE(res.ok) << res.error;
  EXPECT_TRUE(res.ranges.empty());
}

TEST(FindTiffGpsTest, InlineValuesOnlyCoverTheEntries) {
  TiffBuilder t(true);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x8825, 13, 1, 26, ""}}, 0);  // type IFD is accepted like LONG
  t.Ifd(26,
        {{0x0000, 1, 4, 0, std::string("\x02\x02\x00\x00", 4)},
         {0x0001, 2, 2, 0, std::string("S\0\0\0", 4)}},
        0);
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<LocationRange> want = {{26, 26 + 2 + 24, kExif}};
  EXPECT_EQ(res.ranges, want);
}

TEST(FindTiffGpsTest, GpsPointerInIfd1Counts) {
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x0112, 3, 1, 0, t.InlineShort(1)}}, kIfd1);
  t.Ifd(kIfd1, {{0x8825, 4, 1, kGps, ""}}, 0);
  t.Ifd(kGps, GpsEntries(), 0);
  t.Rationals(kLat, {1, 1, 2, 1, 3, 1});
  t.Rationals(kLon, {4, 1, 5, 1, 6, 1});
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<LocationRange> want = {
      {kGps, kGpsEntriesEnd, kExif}, {kLat, kLon, kExif}, {kLon, kValuesEnd, kExif}};
  EXPECT_EQ(res.ranges, want);
}

TEST(FindTiffGpsTest, GpsPointerInsideTheExifIfdCounts) {
  // Non-standard, but ExifTool and Android's ExifInterface follow it.
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x8769, 4, 1, 26, ""}}, 0);
  t.Ifd(26, {{0x8825, 4, 1, 44, ""}}, 0);
  t.Ifd(44, {{0x0006, 5, 1, 62, ""}}, 0);  // GPSAltitude
  t.Rationals(62, {125, 10});
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<LocationRange> want = {{44, 44 + 14, kExif}, {62, 70, kExif}};
  EXPECT_EQ(res.ranges, want);
}

TEST(FindTiffGpsTest, BadHeaders) {
  for (absl::string_view header : {absl::string_view("IM*\0", 4), absl::string_view("II\0*", 4),
                                   absl::string_view("MM*\0", 4), absl::string_view("II+\0", 4)}) {
    TiffBuilder t = StandardTiff(false);
    t.Put(0, header);
    Result res = Find(t.bytes);
    EXPECT_FALSE(res.ok) << header;
    EXPECT_NE(res.error.find("TIFF header"), std::string::npos) << res.error;
  }
}

TEST(FindTiffGpsTest, EmptyOrReversedBoundsFail) {
  std::vector<uint8_t> file(20, 0);
  MemorySource src(file);
  std::vector<LocationRange> out;
  ScanReader r1(src, {});
  EXPECT_FALSE(FindTiffGps(r1, 10, 5, &out));
  ScanReader r2(src, {});
  EXPECT_FALSE(FindTiffGps(r2, 0, 21, &out));  // past the end of the file
  ScanReader r3(src, {});
  EXPECT_FALSE(FindTiffGps(r3, 20, 20, &out));
  EXPECT_TRUE(out.empty());
}

TEST(FindTiffGpsTest, OffsetsPastTheEndFail) {
  {
    TiffBuilder t = StandardTiff(false);
    t.Ifd0At(kTiffSize);  // IFD0 right at the end
    EXPECT_FALSE(Find(t.bytes, 0, 100).ok);
  }
  {
    TiffBuilder t = StandardTiff(false);
    t.Ifd0At(0xFFFFFFFF);
    EXPECT_FALSE(Find(t.bytes).ok);
  }
  {
    TiffBuilder t = StandardTiff(true);
    t.Ifd(kIfd0, {{0x8825, 4, 1, kTiffSize - 1, ""}}, 0);  // count needs 2 bytes
    Result res = Find(t.bytes, 0, 100);  // the file goes on, but the TIFF does not
    EXPECT_FALSE(res.ok);
  }
  {
    // A value offset whose sum with the size would wrap a 32-bit (and test 64-bit) sum.
    TiffBuilder t = StandardTiff(false);
    std::vector<Entry> gps = GpsEntries();
    gps[2].offset = 0xFFFFFFF8;
    t.Ifd(kGps, gps, 0);
    Result res = Find(t.bytes);
    EXPECT_FALSE(res.ok);
    EXPECT_NE(res.error.find("outside the TIFF"), std::string::npos) << res.error;
  }
  {
    // A count so large that count * 8 overflows 32 bits.
    TiffBuilder t = StandardTiff(true);
    std::vector<Entry> gps = GpsEntries();
    gps[4].count = 0xFFFFFFFF;
    t.Ifd(kGps, gps, 0);
    EXPECT_FALSE(Find(t.bytes).ok);
  }
  {
    // The value ends exactly at the TIFF's end: fine; one byte more: not.
    TiffBuilder t = StandardTiff(false);
    std::vector<Entry> gps = GpsEntries();
    gps[4].count = (kTiffSize - kLon) / 8;
    t.Ifd(kGps, gps, 0);
    EXPECT_TRUE(Find(t.bytes).ok);
    gps[4].count += 1;
    t.Ifd(kGps, gps, 0);
    EXPECT_FALSE(Find(t.bytes).ok);
  }
}

TEST(FindTiffGpsTest, IfdChainLoopFails) {
  TiffBuilder t = StandardTiff(false);
  t.Ifd(kIfd1, {{0x0103, 3, 1, 0, t.InlineShort(6)}}, kIfd0);  // IFD1 -> IFD0
  Result res = Find(t.bytes);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("loop"), std::string::npos) << res.error;
}

TEST(FindTiffGpsTest, IfdPointingToItselfFails) {
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x0112, 3, 1, 0, t.InlineShort(1)}}, kIfd0);
  EXPECT_FALSE(Find(t.bytes).ok);
}

TEST(FindTiffGpsTest, GpsPointerBackToItsOwnIfdFails) {
  TiffBuilder t = StandardTiff(true);
  t.Ifd(kIfd0, {{0x8825, 4, 1, kIfd0, ""}}, 0);  // "GPS IFD" is IFD0 itself
  Result res = Find(t.bytes);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("loop"), std::string::npos) << res.error;
}

TEST(FindTiffGpsTest, ExifIfdLoopFails) {
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x8769, 4, 1, 26, ""}}, 0);
  t.Ifd(26, {{0xA005, 4, 1, 26, ""}}, 0);  // Interop pointer back to the Exif IFD
  EXPECT_FALSE(Find(t.bytes).ok);
}

TEST(FindTiffGpsTest, AbsurdEntryCountFailsBeforeReading) {
  for (uint32_t at : {kIfd0, kGps}) {
    TiffBuilder t = StandardTiff(false);
    t.Put(at, t.U16(65535));
    ScanLimits limits;
    Result res = Find(t.bytes, 0, 1 << 20, limits);  // plenty of file after the TIFF
    EXPECT_FALSE(res.ok) << at;
    EXPECT_NE(res.error.find("65535 entries"), std::string::npos) << res.error;
  }
}

TEST(FindTiffGpsTest, UnknownTypeOnlyMattersInTheGpsIfd) {
  {
    TiffBuilder t = StandardTiff(false);
    std::vector<Entry> gps = GpsEntries();
    gps[1].type = 14;
    t.Ifd(kGps, gps, 0);
    Result res = Find(t.bytes);
    EXPECT_FALSE(res.ok);
    EXPECT_NE(res.error.find("unknown type 14"), std::string::npos) << res.error;
  }
  {
    TiffBuilder t = StandardTiff(false);
    t.Ifd(kIfd1, {{0x0103, 99, 1, 0, t.InlineShort(6)}}, 0);
    EXPECT_TRUE(Find(t.bytes).ok);
  }
}

TEST(FindTiffGpsTest, GpsPointerOfANonIntegerTypeOrWithoutValueFails) {
  // ExifTool would even follow a RATIONAL 56/1 or an ASCII "56"; we cannot vouch for that.
  for (Entry bad : {Entry{0x8825, 5, 1, kGps, ""}, Entry{0x8825, 2, 4, kGps, ""},
                    Entry{0x8825, 4, 0, kGps, ""}}) {
    TiffBuilder t = StandardTiff(false);
    t.Ifd(kIfd0, {bad}, 0);
    Result res = Find(t.bytes);
    EXPECT_FALSE(res.ok) << bad.type;
    EXPECT_NE(res.error.find("not an IFD offset"), std::string::npos) << res.error;
  }
}

// A TIFF whose only route to a GPS IFD is IFD0 -> `via` (of `type`) -> IFD at 26 -> GPSInfo ->
// GPS IFD at 44 holding one GPSAltitude whose value is at 62. IFDs of one entry take 18 bytes.
TiffBuilder ViaIfd(bool big_endian, uint16_t via, uint16_t type) {
  TiffBuilder t(big_endian);
  t.Ifd0At(kIfd0);
  std::string inline_value;
  if (type == 1 || type == 6) inline_value = std::string("\x1a\0\0\0", 4);
  if (type == 3 || type == 8) inline_value = t.InlineShort(26);
  t.Ifd(kIfd0, {{via, type, 1, 26, inline_value}}, 0);
  t.Ifd(26, {{0x8825, 4, 1, 44, ""}}, 0);
  t.Ifd(44, {{0x0006, 5, 1, 62, ""}}, 0);  // GPSAltitude
  t.Rationals(62, {125, 10});
  return t;
}

const std::vector<LocationRange>& ViaIfdRanges() {
  static const auto* ranges = new std::vector<LocationRange>{{44, 44 + 14, kExif}, {62, 70, kExif}};
  return *ranges;
}

TEST(FindTiffGpsTest, PointersOfEveryIntegerTypeAreFollowed) {
  // ExifTool takes an offset from any integer type, ExifInterface from SHORT, SSHORT, LONG and
  // SLONG; the Exif IFD pointer (and through it the GPS pointer) may be any of them.
  for (bool be : {false, true}) {
    for (uint16_t type : {1, 3, 4, 6, 8, 9, 13}) {
      Result res = Find(ViaIfd(be, 0x8769, type).bytes);
      ASSERT_TRUE(res.ok) << type << ": " << res.error;
      EXPECT_EQ(res.ranges, ViaIfdRanges()) << type;
    }
  }
  // A SHORT GPS pointer straight from IFD0.
  TiffBuilder t = StandardTiff(true);
  t.Ifd(kIfd0, {{0x8825, 3, 1, 0, t.InlineShort(kGps)}}, kIfd1);
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.ranges.front(), (LocationRange{kGps, kGpsEntriesEnd, kExif}));
}

TEST(FindTiffGpsTest, GpsPointerWithSeveralOffsetsUsesTheFirst) {
  // As ExifTool does (MaxSubdirs 1): the offsets are out of line, at 200.
  TiffBuilder t = StandardTiff(false);
  t.Ifd(kIfd0, {{0x8825, 4, 2, 200, ""}}, kIfd1);
  t.Put(200, t.U32(kGps) + t.U32(0xFFFFFFF0));
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<LocationRange> want = {
      {kGps, kGpsEntriesEnd, kExif}, {kLat, kLon, kExif}, {kLon, kValuesEnd, kExif}};
  EXPECT_EQ(res.ranges, want);
  // Offsets outside the TIFF fail closed.
  t.Ifd(kIfd0, {{0x8825, 4, 2, 0xFFFFFFF0, ""}}, kIfd1);
  EXPECT_FALSE(Find(t.bytes).ok);
}

TEST(FindTiffGpsTest, SubIfdsAndGlobalParametersLeadToGps) {
  for (bool be : {false, true}) {
    for (uint16_t via : {0x014A, 0x0190, 0xA005}) {
      Result res = Find(ViaIfd(be, via, 4).bytes);
      ASSERT_TRUE(res.ok) << via << ": " << res.error;
      EXPECT_EQ(res.ranges, ViaIfdRanges()) << via;
    }
  }
}

TEST(FindTiffGpsTest, EverySubIfdIsWalked) {
  // SubIFDs lists two IFDs (out of line, at 100); the GPS pointer is in the second.
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x014A, 13, 2, 100, ""}}, 0);
  t.Put(100, t.U32(26) + t.U32(120));
  t.Ifd(26, {{0x00FE, 4, 1, 1, ""}}, 0);
  t.Ifd(120, {{0x8825, 4, 1, 44, ""}}, 0);
  t.Ifd(44, {{0x0006, 5, 1, 62, ""}}, 0);
  t.Rationals(62, {125, 10});
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.ranges, ViaIfdRanges());
}

TEST(FindTiffGpsTest, SubIfdInsideTheExifIfdIsWalked) {
  TiffBuilder t(true);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x8769, 4, 1, 100, ""}}, 0);
  t.Ifd(100, {{0x014A, 4, 1, 26, ""}}, 0);
  t.Ifd(26, {{0x8825, 4, 1, 44, ""}}, 0);
  t.Ifd(44, {{0x0006, 5, 1, 62, ""}}, 0);
  t.Rationals(62, {125, 10});
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.ranges, ViaIfdRanges());
}

TEST(FindTiffGpsTest, LinksAfterSubIfdsAreFollowedWhenTheyLandOnAnIfd) {
  // The Exif IFD at 26 links to an IFD at 100 holding the GPS pointer: ExifInterface reads it.
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x8769, 4, 1, 26, ""}}, 0);
  t.Ifd(26, {{0x9000, 7, 4, 0, "0232"}}, 100);
  t.Ifd(100, {{0x8825, 4, 1, 44, ""}}, 0);
  t.Ifd(44, {{0x0006, 5, 1, 62, ""}}, 0);
  t.Rationals(62, {125, 10});
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.ranges, ViaIfdRanges());

  // Links no reader could follow are not followed, and do not make the TIFF malformed: past the
  // end, onto an IFD running past the end, back to an IFD already walked, or missing entirely
  // (the sub-IFD ends where the TIFF does).
  for (uint32_t link : {0xFFFFFFF0u, 4u, 26u, kIfd0}) {
    TiffBuilder u = t;
    u.Ifd(26, {{0x9000, 7, 4, 0, "0232"}}, link);
    u.Ifd(100, {}, 0);  // the GPS IFD is now reachable only through the link
    Result bad = Find(u.bytes);
    EXPECT_TRUE(bad.ok) << link << ": " << bad.error;
    EXPECT_TRUE(bad.ranges.empty()) << link;
  }
  TiffBuilder v(false);
  v.Ifd0At(kIfd0);
  v.Ifd(kIfd0, {{0x8769, 4, 1, 26, ""}}, 0);
  v.Ifd(26, {{0x9000, 7, 4, 0, "0232"}}, 0);
  v.bytes.resize(26 + 2 + 12);  // no room for the Exif IFD's link
  Result none = Find(v.bytes);
  EXPECT_TRUE(none.ok) << none.error;
  EXPECT_TRUE(none.ranges.empty());
}

TEST(FindTiffGpsTest, LinkAfterTheGpsIfdIsFollowed) {
  // ExifInterface reads the IFD after the GPS IFD as one more IFD: a GPS pointer there counts.
  TiffBuilder t(true);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x8825, 4, 1, 44, ""}}, 0);
  t.Ifd(44, {{0x0006, 5, 1, 62, ""}}, 80);
  t.Rationals(62, {125, 10});
  t.Ifd(80, {{0x8825, 4, 1, 100, ""}}, 0);
  t.Ifd(100, {{0x0006, 5, 1, 118, ""}}, 0);
  t.Rationals(118, {7, 1});
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<LocationRange> want = {
      {44, 58, kExif}, {62, 70, kExif}, {100, 114, kExif}, {118, 126, kExif}};
  EXPECT_EQ(res.ranges, want);
}

TEST(FindTiffGpsTest, ApplicationNotesXmpGpsIsReported) {
  const std::string xmp =
      "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF><rdf:Description exif:GPSLatitude='37,46N' "
      "xmp:Rating='1'/></rdf:RDF></x:xmpmeta>";
  const size_t lat = xmp.find("exif:GPSLatitude");
  const size_t lat_size = strlen("exif:GPSLatitude='37,46N'");
  for (bool be : {false, true}) {
    for (uint16_t type : {1, 7}) {
      TiffBuilder t(be);
      t.Ifd0At(kIfd0);
      t.Ifd(kIfd0, {{0x02BC, type, static_cast<uint32_t>(xmp.size()), 26, ""}}, 0);
      t.Put(26, xmp);
      Result res = Find(t.bytes, 5);
      ASSERT_TRUE(res.ok) << res.error;
      std::vector<LocationRange> want = {
          {5 + 26 + lat, 5 + 26 + lat + lat_size, REDACTION_XMP_GPS}};
      EXPECT_EQ(res.ranges, want);
    }
  }
  // Broken XML is reported whole; a value outside the TIFF or of a multi-byte type fails.
  TiffBuilder t(false);
  t.Ifd0At(kIfd0);
  t.Ifd(kIfd0, {{0x02BC, 7, 10, 26, ""}}, 0);
  t.Put(26, "<a><b></a>");
  Result res = Find(t.bytes);
  ASSERT_TRUE(res.ok) << res.error;
  std::vector<LocationRange> whole = {{26, 36, REDACTION_XMP_GPS}};
  EXPECT_EQ(res.ranges, whole);
  t.Ifd(kIfd0, {{0x02BC, 7, 100, 26, ""}}, 0);
  EXPECT_FALSE(Find(t.bytes).ok);
  t.Ifd(kIfd0, {{0x02BC, 3, 5, 26, ""}}, 0);
  EXPECT_FALSE(Find(t.bytes).ok);
}

TEST(FindTiffGpsTest, IfdOverlappingTheHeaderFails) {
  TiffBuilder t = StandardTiff(false);
  t.Ifd0At(4);
  EXPECT_FALSE(Find(t.bytes).ok);
  t.Ifd0At(0);
  EXPECT_FALSE(Find(t.bytes).ok);
}

TEST(FindTiffGpsTest, LimitsApply) {
  std::vector<uint8_t> tiff = StandardTiff(false).bytes;
  ScanLimits shallow;
  shallow.max_depth = 0;
  Result res = Find(tiff, 0, 0, shallow);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("nesting"), std::string::npos) << res.error;

  ScanLimits few;
  few.max_structures = 5;  // 3 IFDs + 8 entries are needed
  res = Find(tiff, 0, 0, few);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("structures"), std::string::npos) << res.error;

  ScanLimits cheap;
  cheap.max_bytes_read = 40;
  res = Find(tiff, 0, 0, cheap);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("budget"), std::string::npos) << res.error;
}

TEST(FindTiffGpsTest, LongIfdChainIsBoundedByTheStructureBudget) {
  // 2000 empty IFDs, each linking to the next: fine by default, refused under a small budget.
  TiffBuilder t(true);
  t.Ifd0At(8);
  constexpr uint32_t kCount = 2000;
  for (uint32_t i = 0; i < kCount; ++i) {
    uint32_t at = 8 + 6 * i;
    t.Ifd(at, {}, i + 1 < kCount ? at + 6 : 0);
  }
  EXPECT_TRUE(Find(t.bytes).ok);
  ScanLimits limits;
  limits.max_structures = 1000;
  EXPECT_FALSE(Find(t.bytes, 0, 0, limits).ok);
}

}  // namespace
}  // namespace scopedfs::media
