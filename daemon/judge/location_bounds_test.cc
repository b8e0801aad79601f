// BoundScan: scans under the cap are left exact; too many near ranges are merged; too many far
// ranges make the file uncertain, with every original range still covered.
#include "daemon/judge/location_bounds.h"

#include <vector>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

using media::LocationRange;

media::LocationScan Spaced(size_t n, uint64_t stride, uint64_t width) {
  media::LocationScan scan;
  for (size_t i = 0; i < n; ++i) {
    scan.ranges.push_back({i * stride, i * stride + width, REDACTION_XMP_GPS});
  }
  return scan;
}

bool Covered(const media::LocationScan& scan, const LocationRange& r) {
  for (const std::vector<LocationRange>* list : {&scan.ranges, &scan.fallback}) {
    for (const LocationRange& c : *list) {
      if (c.kind == r.kind && c.begin <= r.begin && r.end <= c.end) return true;
    }
  }
  return false;
}

TEST(BoundScanTest, ScansUnderTheCapStayExact) {
  media::LocationScan scan = Spaced(kMaxLocationRanges, 100, 10);
  media::LocationScan before = scan;
  BoundScan(&scan);
  EXPECT_EQ(scan.ranges, before.ranges);
  EXPECT_FALSE(scan.malformed);
}

TEST(BoundScanTest, NearRangesPastTheCapAreMerged) {
  media::LocationScan scan = Spaced(100000, 30, 15);  // gaps of 15 bytes
  media::LocationScan before = scan;
  BoundScan(&scan);
  EXPECT_FALSE(scan.malformed);
  EXPECT_EQ(scan.ranges.size(), 1u);
  for (const LocationRange& r : before.ranges) ASSERT_TRUE(Covered(scan, r));
}

TEST(BoundScanTest, FarRangesPastTheCapMakeTheFileUncertainAndStayCovered) {
  media::LocationScan scan = Spaced(100000, 1000, 15);
  scan.ranges.push_back({7, 9, REDACTION_EXIF_GPS});
  scan.fallback.push_back({0, 50, REDACTION_EXIF_GPS});
  media::LocationScan before = scan;
  BoundScan(&scan);
  EXPECT_TRUE(scan.malformed);
  EXPECT_FALSE(scan.error.empty());
  EXPECT_LE(scan.ranges.size() + scan.fallback.size(), 4u);
  for (const LocationRange& r : before.ranges) ASSERT_TRUE(Covered(scan, r));
  for (const LocationRange& r : before.fallback) ASSERT_TRUE(Covered(scan, r));
  EXPECT_LT(ScanBytes(scan), 1024u);
}

}  // namespace
}  // namespace scopedfs::daemon
