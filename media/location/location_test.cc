// Range arithmetic and the bounded reader: what every parser's output goes through.
#include "media/location/location.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr Redaction kXmp = REDACTION_XMP_GPS;
constexpr Redaction kBox = REDACTION_ISOBMFF_LOCATION;
constexpr uint32_t kAll = (1u << kExif) | (1u << kXmp) | (1u << kBox);

TEST(NormalizeRangesTest, SortsMergesTouchingAndDropsEmpty) {
  std::vector<LocationRange> r = {
      {20, 30, kExif}, {5, 10, kExif}, {10, 12, kExif}, {40, 40, kExif}, {25, 35, kExif}};
  NormalizeRanges(&r);
  std::vector<LocationRange> want = {{5, 12, kExif}, {20, 35, kExif}};
  EXPECT_EQ(r, want);
}

TEST(NormalizeRangesTest, KeepsKindsApart) {
  std::vector<LocationRange> r = {{10, 20, kXmp}, {0, 15, kExif}};
  NormalizeRanges(&r);
  std::vector<LocationRange> want = {{0, 15, kExif}, {10, 20, kXmp}};
  EXPECT_EQ(r, want);
}

TEST(PlanFillsTest, OnlySelectedKinds) {
  std::vector<LocationRange> r = {{0, 10, kExif}, {20, 30, kBox}, {40, 50, kXmp}};
  std::vector<FillRange> want = {{20, 30, 0}};
  EXPECT_EQ(PlanFills(r, 1u << kBox), want);
  EXPECT_TRUE(PlanFills(r, 0).empty());
}

TEST(PlanFillsTest, XmpIsSpaceAndZeroWinsOverlap) {
  std::vector<LocationRange> r = {{0, 10, kXmp}, {5, 15, kExif}, {15, 20, kXmp}};
  std::vector<FillRange> want = {{0, 5, ' '}, {5, 15, 0}, {15, 20, ' '}};
  EXPECT_EQ(PlanFills(r, kAll), want);
}

TEST(PlanFillsTest, MergesTouchingSameFill) {
  std::vector<LocationRange> r = {{0, 10, kExif}, {10, 20, kBox}, {30, 31, kExif}};
  std::vector<FillRange> want = {{0, 20, 0}, {30, 31, 0}};
  EXPECT_EQ(PlanFills(r, kAll), want);
}

// RedactedFills: what a redacted reader gets, for the daemon and scopedfsctl alike.
TEST(RedactedFillsTest, FormatWithoutLocationIsServedAsIs) {
  EXPECT_TRUE(RedactedFills(nullptr, /*content_read=*/true, 100).empty());
}

TEST(RedactedFillsTest, UnreadableFileIsFilledWhole) {
  std::vector<FillRange> want = {{0, 100, 0}};
  EXPECT_EQ(RedactedFills(nullptr, /*content_read=*/false, 100), want);
  EXPECT_TRUE(RedactedFills(nullptr, /*content_read=*/false, 0).empty());
}

TEST(RedactedFillsTest, CleanScanFillsEveryKindButNeverTheFallback) {
  LocationScan scan;
  scan.ranges = {{0, 10, kExif}, {20, 30, kXmp}, {40, 50, kBox}};
  scan.fallback = {{0, 60, kExif}};  // just the containers: not filled while the scan is clean
  std::vector<FillRange> want = {{0, 10, 0}, {20, 30, ' '}, {40, 50, 0}};
  EXPECT_EQ(RedactedFills(&scan, true, 100), want);
  // `content_read` only matters when there is no scan.
  EXPECT_EQ(RedactedFills(&scan, false, 100), want);
  // scan --kinds narrows the kinds filled.
  std::vector<FillRange> xmp_only = {{20, 30, ' '}};
  EXPECT_EQ(RedactedFills(&scan, true, 100, 1u << kXmp), xmp_only);
  EXPECT_TRUE(RedactedFills(&scan, true, 100, 0).empty());
}

TEST(RedactedFillsTest, MalformedScanAddsItsFallback) {
  LocationScan scan;
  scan.malformed = true;
  scan.ranges = {{0, 10, kExif}};
  scan.fallback = {{5, 20, kXmp}, {60, 100, kExif}};
  std::vector<FillRange> want = {{0, 10, 0}, {10, 20, ' '}, {60, 100, 0}};
  EXPECT_EQ(RedactedFills(&scan, true, 100), want);
}

TEST(RedactedFillsTest, MalformedScanWithNothingToFillIsFilledWhole) {
  LocationScan scan;
  scan.malformed = true;
  std::vector<FillRange> whole = {{0, 100, 0}};
  EXPECT_EQ(RedactedFills(&scan, true, 100), whole);
  // Also when the kinds asked for select none of its ranges.
  scan.fallback = {{50, 100, kBox}};
  EXPECT_EQ(RedactedFills(&scan, true, 100, 1u << kXmp), whole);
  EXPECT_TRUE(RedactedFills(&scan, true, 0, 1u << kXmp).empty());
  // A clean scan without ranges fills nothing.
  LocationScan clean;
  EXPECT_TRUE(RedactedFills(&clean, true, 100).empty());
}

TEST(RedactedFillsTest, AllKindsIsTheDefault) {
  EXPECT_EQ(kAllLocationKinds, kAll | (1u << REDACTION_IPTC_PLACE) | (1u << REDACTION_XMP_PLACE));
  EXPECT_EQ(kAllLocationKinds & ~kPlaceNameKinds, kAll);
  uint32_t listed = 0;
  for (Redaction kind : kLocationKindList) listed |= 1u << kind;
  EXPECT_EQ(listed, kAllLocationKinds);
}

// Place ranges are filled like their coordinates: IPTC with zeros, XMP with spaces, and only when
// their kind is asked for.
TEST(RedactedFillsTest, PlaceKindsFillLikeTheirContainers) {
  EXPECT_EQ(FillFor(REDACTION_IPTC_PLACE), 0);
  EXPECT_EQ(FillFor(REDACTION_XMP_PLACE), ' ');
  LocationScan scan;
  scan.ranges = {{2, 3, REDACTION_IPTC_PLACE},
                 {5, 9, REDACTION_IPTC_PLACE},
                 {20, 30, REDACTION_XMP_PLACE},
                 {40, 42, REDACTION_XMP_GPS}};
  std::vector<FillRange> all = {{2, 3, 0}, {5, 9, 0}, {20, 30, ' '}, {40, 42, ' '}};
  EXPECT_EQ(RedactedFills(&scan, true, 50), all);
  std::vector<FillRange> coordinates = {{40, 42, ' '}};
  EXPECT_EQ(RedactedFills(&scan, true, 50, kAllLocationKinds & ~kPlaceNameKinds), coordinates);
}

TEST(ApplyFillsTest, StraddlingWindows) {
  std::vector<FillRange> plan = {{4, 8, 0}, {12, 14, ' '}};
  std::vector<uint8_t> file(20, 'x');
  std::vector<uint8_t> whole = file;
  ApplyFills(plan, 0, absl::MakeSpan(whole));
  EXPECT_EQ(std::string(whole.begin(), whole.end()), std::string("xxxx\0\0\0\0xxxx  xxxxxx", 20));
  // Every window, at every offset, must agree with the whole-file result.
  for (size_t off = 0; off < file.size(); ++off) {
    for (size_t len = 0; off + len <= file.size(); ++len) {
      std::vector<uint8_t> window(file.begin() + off, file.begin() + off + len);
      ApplyFills(plan, off, absl::MakeSpan(window));
      ASSERT_TRUE(std::equal(window.begin(), window.end(), whole.begin() + off))
          << "off " << off << " len " << len;
    }
  }
}

TEST(ScanReaderTest, RefusesReadsPastTheEnd) {
  std::vector<uint8_t> bytes(10, 1);
  MemorySource src(bytes);
  ScanReader r(src, {});
  uint8_t out[4];
  EXPECT_TRUE(r.Read(6, 4, out));
  EXPECT_FALSE(r.Read(7, 4, out));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("at byte 7"), std::string::npos) << r.error();
}

TEST(ScanReaderTest, HugeOffsetDoesNotWrap) {
  std::vector<uint8_t> bytes(10, 1);
  MemorySource src(bytes);
  ScanReader r(src, {});
  uint8_t out[4];
  EXPECT_FALSE(r.Read(UINT64_MAX - 1, 4, out));
}

TEST(ScanReaderTest, ByteBudget) {
  std::vector<uint8_t> bytes(100, 1);
  MemorySource src(bytes);
  ScanLimits limits;
  limits.max_bytes_read = 10;
  ScanReader r(src, limits);
  uint8_t out[8];
  EXPECT_TRUE(r.Read(0, 8, out));
  EXPECT_FALSE(r.Read(8, 8, out));
  EXPECT_NE(r.error().find("budget"), std::string::npos) << r.error();
}

TEST(ScanReaderTest, StructureBudgetAndDepth) {
  std::vector<uint8_t> bytes(100, 1);
  MemorySource src(bytes);
  ScanLimits limits;
  limits.max_structures = 2;
  limits.max_depth = 1;
  ScanReader r(src, limits);
  {
    ScanReader::DepthGuard g1(r, 0);
    EXPECT_TRUE(g1.ok());
    ScanReader::DepthGuard g2(r, 0);
    EXPECT_FALSE(g2.ok());
  }
  ScanReader r2(src, limits);
  EXPECT_TRUE(r2.Visit(0));
  EXPECT_TRUE(r2.Visit(1));
  EXPECT_FALSE(r2.Visit(2));
}

TEST(ScanReaderTest, FinishFallsBackFromTheFailurePoint) {
  std::vector<uint8_t> bytes(100, 1);
  MemorySource src(bytes);
  ScanReader r(src, {});
  r.Fail(60, "broken");
  LocationScan scan;
  r.Finish(&scan);
  EXPECT_TRUE(scan.malformed);
  ASSERT_EQ(scan.fallback.size(), 3u);
  for (const LocationRange& f : scan.fallback) {
    EXPECT_EQ(f.begin, 60u);
    EXPECT_EQ(f.end, 100u);
  }
}

TEST(ScanLocationTest, FormatsWithoutLocationScanClean) {
  std::vector<uint8_t> bytes(100, 1);
  MemorySource src(bytes);
  for (MediaFormat f : {MediaFormat::kPdf, MediaFormat::kMp3, MediaFormat::kUnknown}) {
    LocationScan scan = ScanLocation(f, src);
    EXPECT_FALSE(scan.malformed);
    EXPECT_TRUE(scan.ranges.empty());
  }
}

TEST(ScanLocationTest, UnparsedLocationCarriersFailClosed) {
  std::vector<uint8_t> bytes(100, 1);
  MemorySource src(bytes);
  LocationScan scan = ScanLocation(MediaFormat::kGif, src);
  EXPECT_TRUE(scan.malformed);
  ASSERT_FALSE(scan.fallback.empty());
  EXPECT_EQ(scan.fallback[0].begin, 0u);
  EXPECT_EQ(scan.fallback[0].end, 100u);
}

}  // namespace
}  // namespace scopedfs::media
