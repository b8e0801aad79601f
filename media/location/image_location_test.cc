// ScanJpeg, ScanPng and ScanWebp on hand-built files: exact ranges for Exif and XMP carried in
// each container, redaction that leaves no GPS and every other byte unchanged, and fail-closed
// behaviour on truncated or inconsistent containers.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "media/location/location.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr Redaction kXmp = REDACTION_XMP_GPS;
constexpr Redaction kBox = REDACTION_ISOBMFF_LOCATION;
constexpr uint32_t kAllKinds = (1u << kExif) | (1u << kXmp) | (1u << kBox);

using Scanner = LocationScan (*)(ByteSource&, const ScanLimits&);

std::string Be16(uint16_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v)}; }
std::string Le16(uint16_t v) { return {static_cast<char>(v), static_cast<char>(v >> 8)}; }
std::string Be32(uint32_t v) { return Be16(v >> 16) + Be16(v & 0xFFFF); }
std::string Le32(uint32_t v) { return Le16(v & 0xFFFF) + Le16(v >> 16); }

// ---- A TIFF with a GPS IFD (the same layout as exif_gps_test's, built more tersely) ----

// Offsets relative to the TIFF header: GPS IFD entries [56, 118), values [122, 170), and
// 6 bytes of non-location data after them.
constexpr uint64_t kGpsIfd = 56;
constexpr uint64_t kGpsEntriesEnd = 118;
constexpr uint64_t kGpsValues = 122;
constexpr uint64_t kGpsValuesEnd = 170;

std::string Tiff(bool big_endian) {
  auto u16 = [&](uint16_t v) { return big_endian ? Be16(v) : Le16(v); };
  auto u32 = [&](uint32_t v) { return big_endian ? Be32(v) : Le32(v); };
  auto entry = [&](uint16_t tag, uint16_t type, uint32_t count, const std::string& value) {
    return u16(tag) + u16(type) + u32(count) + value;
  };
  std::string t = big_endian ? std::string("MM\0*", 4) : std::string("II*\0", 4);
  t += u32(8);
  // IFD0 at 8: Orientation, GPSInfo -> 56; next -> 38.
  t += u16(2) + entry(0x0112, 3, 1, u16(1) + u16(0)) + entry(0x8825, 4, 1, u32(56)) + u32(38);
  // IFD1 at 38: Compression; next 0.
  t += u16(1) + entry(0x0103, 3, 1, u16(6) + u16(0)) + u32(0);
  // GPS IFD at 56.
  t += u16(5) + entry(0, 1, 4, std::string("\x02\x03\x00\x00", 4)) +
       entry(1, 2, 2, std::string("N\0\0\0", 4)) + entry(2, 5, 3, u32(122)) +
       entry(3, 2, 2, std::string("W\0\0\0", 4)) + entry(4, 5, 3, u32(146)) + u32(0);
  for (uint32_t v : {37u, 1u, 46u, 1u, 741u, 25u, 122u, 1u, 25u, 1u, 246u, 25u}) t += u32(v);
  t += "tail!!";
  EXPECT_EQ(t.size(), 176u);
  return t;
}

// The GPS ranges of a TIFF placed at file offset `at`.
std::vector<LocationRange> TiffRanges(uint64_t at) {
  return {{at + kGpsIfd, at + kGpsEntriesEnd, kExif}, {at + kGpsValues, at + kGpsValuesEnd, kExif}};
}

// ---- An XMP packet with two GPS attributes ----

const char kLatAttr[] = "exif:GPSLatitude='37,46.494N'";
const char kLonAttr[] = "exif:GPSLongitude='122,25.164W'";

std::string Xmp() {
  return absl::StrCat(
      "<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>"
      "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/"
      "22-rdf-syntax-ns#'><rdf:Description rdf:about='' xmlns:exif='http://ns.adobe.com/exif/"
      "1.0/' ",
      kLatAttr, " xmp:Rating='3' ", kLonAttr, "/></rdf:RDF></x:xmpmeta><?xpacket end='w'?>");
}

// The GPS ranges of Xmp() placed at file offset `at`.
std::vector<LocationRange> XmpRanges(uint64_t at) {
  std::string x = Xmp();
  uint64_t lat = x.find(kLatAttr), lon = x.find(kLonAttr);
  return {{at + lat, at + lat + strlen(kLatAttr), kXmp},
          {at + lon, at + lon + strlen(kLonAttr), kXmp}};
}

std::vector<LocationRange> Sorted(std::vector<LocationRange> ranges) {
  NormalizeRanges(&ranges);
  return ranges;
}

std::vector<LocationRange> Concat(std::vector<LocationRange> a,
                                  const std::vector<LocationRange>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

LocationScan Scan(Scanner scanner, absl::string_view bytes, const ScanLimits& limits = {}) {
  MemorySource src(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  return scanner(src, limits);
}

// Fills the scan's ranges and checks the result: each byte inside a range holds its fill, every
// other byte is unchanged, and a new scan reports exactly `rescan` (what cannot go away: empty
// GPS IFD counts, blanked chunks that are still recognised).
std::string ExpectRedaction(Scanner scanner, const std::string& file, const LocationScan& scan,
                            const std::vector<LocationRange>& rescan) {
  std::string out = file;
  std::vector<FillRange> plan = PlanFills(scan.ranges, kAllKinds);
  ApplyFills(plan, 0, absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  for (size_t i = 0; i < file.size(); ++i) {
    int fill = -1;
    for (const FillRange& f : plan) {
      if (i >= f.begin && i < f.end) fill = f.fill;
    }
    EXPECT_EQ(static_cast<int>(static_cast<uint8_t>(out[i])),
              fill >= 0 ? fill : static_cast<uint8_t>(file[i]))
        << "byte " << i;
  }
  LocationScan again = Scan(scanner, out);
  EXPECT_FALSE(again.malformed) << again.error;
  EXPECT_EQ(again.ranges, rescan);
  return out;
}

bool Covered(const std::vector<LocationRange>& ranges, uint64_t at, Redaction kind) {
  for (const LocationRange& r : ranges) {
    if (r.kind == kind && at >= r.begin && at < r.end) return true;
  }
  return false;
}

// Scans every prefix of `file`: never a crash or an out-of-bounds range, malformed exactly when
// `clean_at(n)` is false, and every location byte of the full file that the prefix still holds
// is covered by the prefix's ranges, or by its fallback if malformed.
void ExpectEveryTruncationFailsClosed(Scanner scanner, const std::string& file,
                                      const std::function<bool(size_t)>& clean_at) {
  LocationScan full = Scan(scanner, file);
  ASSERT_FALSE(full.malformed) << full.error;
  for (size_t n = 0; n <= file.size(); ++n) {
    LocationScan scan = Scan(scanner, absl::string_view(file).substr(0, n));
    EXPECT_EQ(scan.malformed, !clean_at(n)) << "length " << n << ": " << scan.error;
    for (const auto* list : {&scan.ranges, &scan.fallback}) {
      for (const LocationRange& r : *list) EXPECT_LE(r.end, n) << "length " << n;
    }
    for (const LocationRange& r : full.ranges) {
      for (uint64_t b = r.begin; b < r.end && b < n; ++b) {
        bool ok = Covered(scan.ranges, b, r.kind) ||
                  (scan.malformed && Covered(scan.fallback, b, r.kind));
        ASSERT_TRUE(ok) << "length " << n << ": byte " << b << " of kind " << r.kind;
      }
    }
  }
}

// ---- JPEG ----

constexpr absl::string_view kExifId("Exif\0\0", 6);
constexpr absl::string_view kXmpId("http://ns.adobe.com/xap/1.0/\0", 29);
constexpr absl::string_view kExtId("http://ns.adobe.com/xmp/extension/\0", 35);

struct Jpeg {
  std::string bytes = "\xFF\xD8";
  // Appends a segment and returns the offset of its data.
  uint64_t Segment(uint8_t marker, absl::string_view data) {
    bytes += absl::StrCat("\xFF", std::string(1, static_cast<char>(marker)),
                          Be16(static_cast<uint16_t>(data.size() + 2)), data);
    return bytes.size() - data.size();
  }
  void EndWithScan() {
    sos = bytes.size();
    Segment(0xDA, std::string("\x01\x01\x00\x00\x3F\x00", 6));
    bytes += std::string("\x12\xFF\x00\x34\xFF\xD0\x56", 7) + "\xFF\xD9";
  }
  size_t sos = 0;
};

struct JpegLayout {
  std::string file;
  uint64_t exif_data, exif_end, xmp_data, xmp_end, ext_data, ext_end, vendor_data, vendor_end, sos;
};

JpegLayout FullJpeg(bool big_endian) {
  Jpeg j;
  JpegLayout l;
  j.Segment(0xE0, std::string("JFIF\0\x01\x02\x00\x00\x01\x00\x01\x00\x00", 14));
  j.Segment(0xE2, "");  // an empty segment (length 2)
  l.exif_data = j.Segment(0xE1, absl::StrCat(kExifId, Tiff(big_endian)));
  l.exif_end = j.bytes.size();
  j.bytes += "\xFF\xFF\xFF";  // fill bytes before the next marker
  l.xmp_data = j.Segment(0xE1, absl::StrCat(kXmpId, Xmp()));
  l.xmp_end = j.bytes.size();
  j.bytes += "\xFF\xD3";  // a stray RST marker, which has no length
  l.ext_data = j.Segment(0xE1, absl::StrCat(kExtId, std::string(32, 'A'), Be32(1000), Be32(0),
                                            "<exif:GPSAltitude>1</exif:GPSA"));
  l.ext_end = j.bytes.size();
  j.Segment(0xFE, "a comment");
  l.vendor_data = j.Segment(0xE1, "unknown APP1");
  l.vendor_end = j.bytes.size();
  j.EndWithScan();
  l.sos = j.sos;
  l.file = j.bytes;
  return l;
}

// The APP1 segment of no known kind is filled whole: nothing vouches for it.
std::vector<LocationRange> FullJpegRanges(const JpegLayout& l) {
  return Sorted(Concat(Concat(TiffRanges(l.exif_data + 6), XmpRanges(l.xmp_data + 29)),
                       {{l.ext_data + 75, l.ext_end, kXmp}, {l.vendor_data, l.vendor_end, kExif}}));
}

class JpegByteOrderTest : public testing::TestWithParam<bool> {};

TEST_P(JpegByteOrderTest, FindsExifXmpAndExtendedXmp) {
  JpegLayout l = FullJpeg(GetParam());
  LocationScan scan = Scan(ScanJpeg, l.file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, FullJpegRanges(l));
  std::vector<LocationRange> fallback = {{l.exif_data, l.exif_end, kExif},
                                         {l.xmp_data, l.xmp_end, kXmp},
                                         {l.ext_data, l.ext_end, kXmp},
                                         {l.vendor_data, l.vendor_end, kExif}};
  EXPECT_EQ(scan.fallback, fallback);
  // After redaction only the empty GPS IFD's count, the (blank) ExtendedXMP chunk and the
  // (zeroed) vendor segment remain.
  std::vector<LocationRange> rescan = {
      {l.exif_data + 6 + kGpsIfd, l.exif_data + 6 + kGpsIfd + 2, kExif},
      {l.ext_data + 75, l.ext_end, kXmp},
      {l.vendor_data, l.vendor_end, kExif}};
  std::string out = ExpectRedaction(ScanJpeg, l.file, scan, rescan);
  EXPECT_EQ(out.find("GPS"), std::string::npos);
}

TEST_P(JpegByteOrderTest, EveryTruncationFailsClosed) {
  JpegLayout l = FullJpeg(GetParam());
  ExpectEveryTruncationFailsClosed(ScanJpeg, l.file, [&](size_t n) { return n >= l.sos + 2; });
}

INSTANTIATE_TEST_SUITE_P(BothOrders, JpegByteOrderTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "BigEndian" : "LittleEndian";
                         });

TEST(ScanJpegTest, NotAJpegFailsWholeFile) {
  std::string file = "GIF89a and more";
  LocationScan scan = Scan(ScanJpeg, file);
  EXPECT_TRUE(scan.malformed);
  std::vector<LocationRange> want = {
      {0, file.size(), kExif}, {0, file.size(), kXmp}, {0, file.size(), kBox}};
  EXPECT_EQ(scan.fallback, want);
}

TEST(ScanJpegTest, SegmentLengthBelowTwoIsMalformed) {
  for (uint16_t length : {0, 1}) {
    std::string file = absl::StrCat("\xFF\xD8\xFF\xE0", Be16(length), "\xFF\xD9");
    LocationScan scan = Scan(ScanJpeg, file);
    EXPECT_TRUE(scan.malformed) << length;
    EXPECT_NE(scan.error.find("below 2"), std::string::npos) << scan.error;
  }
}

TEST(ScanJpegTest, SegmentPastTheEndIsMalformed) {
  std::string file = absl::StrCat("\xFF\xD8\xFF\xE1", Be16(500), "Exif");
  LocationScan scan = Scan(ScanJpeg, file);
  EXPECT_TRUE(scan.malformed);
  EXPECT_EQ(scan.fallback.front().begin, 2u);  // from the segment's marker on
}

TEST(ScanJpegTest, GarbageInsteadOfAMarkerIsMalformed) {
  LocationScan scan = Scan(ScanJpeg, std::string("\xFF\xD8\x00\x01\xFF\xD9", 6));
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("expected a marker"), std::string::npos) << scan.error;
}

TEST(ScanJpegTest, BrokenTiffInsideAnApp1FailsClosed) {
  Jpeg j;
  std::string tiff = Tiff(false);
  tiff[7] = '\x7F';  // IFD0 offset (little-endian) far past the end of the TIFF
  uint64_t data = j.Segment(0xE1, absl::StrCat(kExifId, tiff));
  uint64_t end = j.bytes.size();
  j.EndWithScan();
  LocationScan scan = Scan(ScanJpeg, j.bytes);
  EXPECT_TRUE(scan.malformed);
  EXPECT_TRUE(scan.ranges.empty());
  // The whole APP1 data, and from the failure to the end of the file, of every kind.
  EXPECT_TRUE(Covered(scan.fallback, data, kExif));
  EXPECT_TRUE(Covered(scan.fallback, end - 1, kExif));
  EXPECT_TRUE(Covered(scan.fallback, j.bytes.size() - 1, kXmp));
  EXPECT_TRUE(Covered(scan.fallback, j.bytes.size() - 1, kBox));
}

TEST(ScanJpegTest, ExifIdentifierWithNonZeroPadIsStillExif) {
  Jpeg j;
  uint64_t data = j.Segment(0xE1, absl::StrCat(std::string("Exif\0\xFF", 6), Tiff(true)));
  j.EndWithScan();
  LocationScan scan = Scan(ScanJpeg, j.bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, TiffRanges(data + 6));
}

TEST(ScanJpegTest, ExifIdentifierInAnyCaseAndAfterGarbageIsExif) {
  // ExifTool matches /^(.{0,4})Exif\0/is and takes the TIFF 6 bytes after the match.
  for (absl::string_view head : {absl::string_view("EXIF\0\0", 6), absl::string_view("exif\0\0", 6),
                                 absl::string_view("eXiF\0X", 6),
                                 absl::string_view("ab"
                                                   "Exif\0\0",
                                                   8),
                                 absl::string_view("abcd"
                                                   "EXIF\0\0",
                                                   10)}) {
    Jpeg j;
    uint64_t data = j.Segment(0xE1, absl::StrCat(head, Tiff(false)));
    j.EndWithScan();
    LocationScan scan = Scan(ScanJpeg, j.bytes);
    ASSERT_FALSE(scan.malformed) << absl::CEscape(head) << ": " << scan.error;
    EXPECT_EQ(scan.ranges, TiffRanges(data + head.size())) << absl::CEscape(head);
  }
  // Five bytes of garbage is past what ExifTool accepts: not Exif, so the TIFF is not walked, and
  // the segment, of no known kind, is filled whole.
  Jpeg j;
  uint64_t data = j.Segment(0xE1, absl::StrCat("abcde", kExifId, Tiff(false)));
  uint64_t end = j.bytes.size();
  j.EndWithScan();
  LocationScan scan = Scan(ScanJpeg, j.bytes);
  EXPECT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{data, end, kExif}};
  EXPECT_EQ(scan.ranges, want);
}

TEST(ScanJpegTest, XmpWithNonStandardHeadersIsScanned) {
  // ExifTool parses an APP1 segment as XMP from its first byte if it starts with "http" or
  // "XMP\0", or holds "<exif:" or "<?xpacket" anywhere.
  for (absl::string_view head :
       {absl::string_view("XMP\0", 4), absl::string_view("http://ns.adobe.com/xap/1.0/ ", 29),
        absl::string_view("http://example.com/\0", 20), absl::string_view(""),
        absl::string_view("junk\0", 5)}) {
    Jpeg j;
    uint64_t data = j.Segment(0xE1, absl::StrCat(head, Xmp()));
    j.EndWithScan();
    LocationScan scan = Scan(ScanJpeg, j.bytes);
    ASSERT_FALSE(scan.malformed) << scan.error;
    EXPECT_EQ(scan.ranges, XmpRanges(data + head.size())) << absl::CEscape(head);
  }
  // Broken XML there is blanked whole, header included; a segment with none of those markers
  // is of no known kind and is zero-filled whole.
  Jpeg j;
  uint64_t data =
      j.Segment(0xE1, absl::StrCat(absl::string_view("XMP\0", 4), "<a><exif:GPSLatitude>1</a>"));
  uint64_t end = j.bytes.size();
  uint64_t other = j.Segment(0xE1, "some other <app> data");
  uint64_t other_end = j.bytes.size();
  j.EndWithScan();
  LocationScan scan = Scan(ScanJpeg, j.bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{data, end, kXmp}, {other, other_end, kExif}};
  EXPECT_EQ(scan.ranges, want);
}

std::string PhotoshopResource(uint16_t id, absl::string_view name, absl::string_view data) {
  std::string r =
      absl::StrCat("8BIM", Be16(id), std::string(1, static_cast<char>(name.size())), name);
  if (name.size() % 2 == 0) r += '\0';  // the Pascal name is padded to an even size
  r += absl::StrCat(Be32(static_cast<uint32_t>(data.size())), data);
  if (data.size() % 2) r += '\0';
  return r;
}

TEST(ScanJpegTest, PhotoshopResourcesInApp13AreScanned) {
  constexpr absl::string_view kPs("Photoshop 3.0\0", 14);
  std::string iptc = PhotoshopResource(0x0404, "", "\x1c\x02\x00\x00\x02\x00\x04");
  std::string exif = PhotoshopResource(0x0422, "ex", Tiff(true));
  std::string xmp = PhotoshopResource(0x0424, "x", Xmp());
  Jpeg j;
  uint64_t data = j.Segment(0xED, absl::StrCat(kPs, iptc, exif, xmp));
  j.EndWithScan();
  LocationScan scan = Scan(ScanJpeg, j.bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t exif_data = data + kPs.size() + iptc.size() + 4 + 2 + 1 + 2 + 1 + 4;
  uint64_t xmp_data = data + kPs.size() + iptc.size() + exif.size() + 4 + 2 + 1 + 1 + 4;
  EXPECT_EQ(scan.ranges, Sorted(Concat(TiffRanges(exif_data), XmpRanges(xmp_data))));
  std::string out = ExpectRedaction(ScanJpeg, j.bytes, scan,
                                    {{exif_data + kGpsIfd, exif_data + kGpsIfd + 2, kExif}});
  EXPECT_EQ(out.find("GPS"), std::string::npos);

  // The old identifier works too; a resource running past its segment (ExifTool would join the
  // next APP13 segment to it) is malformed, with the segment in the fallback.
  Jpeg old;
  uint64_t old_data =
      old.Segment(0xED, absl::StrCat("Adobe_Photoshop2.5:", std::string(8, '\0'), exif));
  old.EndWithScan();
  scan = Scan(ScanJpeg, old.bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, TiffRanges(old_data + 27 + 4 + 2 + 1 + 2 + 1 + 4));

  Jpeg split;
  std::string cut = exif.substr(0, 100);
  uint64_t split_data = split.Segment(0xED, absl::StrCat(kPs, cut));
  split.Segment(0xED, absl::StrCat(kPs, exif.substr(100)));
  split.EndWithScan();
  scan = Scan(ScanJpeg, split.bytes);
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("past its segment"), std::string::npos) << scan.error;
  EXPECT_TRUE(Covered(scan.fallback, split_data + 50, kExif));
}

TEST(ScanJpegTest, TooShortExifAndExtendedXmpSegmentsAreMalformed) {
  for (std::string data : {std::string(kExifId), std::string("Exif\0", 5),
                           absl::StrCat(kExtId, std::string(39, 'A'))}) {
    Jpeg j;
    j.Segment(0xE1, data);
    j.EndWithScan();
    LocationScan scan = Scan(ScanJpeg, j.bytes);
    EXPECT_TRUE(scan.malformed) << absl::CEscape(data);
  }
}

TEST(ScanJpegTest, MalformedXmpIsRedactedWholeAndTheScanStaysClean) {
  Jpeg j;
  std::string packet = "<x:xmpmeta><rdf:RDF></x:xmpmeta>";
  uint64_t data = j.Segment(0xE1, absl::StrCat(kXmpId, packet));
  j.EndWithScan();
  LocationScan scan = Scan(ScanJpeg, j.bytes);
  EXPECT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{data + 29, data + 29 + packet.size(), kXmp}};
  EXPECT_EQ(scan.ranges, want);
}

TEST(ScanJpegTest, NoMetadataIsClean) {
  Jpeg j;
  j.Segment(0xE0, std::string("JFIF\0\x01\x02\x00\x00\x01\x00\x01\x00\x00", 14));
  j.Segment(0xE2, std::string("ICC_PROFILE\0\x01\x01", 14));
  j.Segment(0xEE, "Adobe\x00\x64");
  j.EndWithScan();
  LocationScan scan = Scan(ScanJpeg, j.bytes);
  EXPECT_FALSE(scan.malformed) << scan.error;
  EXPECT_TRUE(scan.ranges.empty());
  EXPECT_TRUE(scan.fallback.empty());
  EXPECT_TRUE(Scan(ScanJpeg, "\xFF\xD8\xFF\xD9").ranges.empty());
}

TEST(ScanJpegTest, FillBytesCountAgainstTheStructureBudget) {
  std::string file = "\xFF\xD8" + std::string(5000, '\xFF') + "\xD9";
  EXPECT_FALSE(Scan(ScanJpeg, file).malformed);
  ScanLimits limits;
  limits.max_structures = 1000;
  LocationScan scan = Scan(ScanJpeg, file, limits);
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("structures"), std::string::npos) << scan.error;
}

TEST(ScanJpegTest, ReadBudgetIsCheckedBeforeReadingAPacket) {
  JpegLayout l = FullJpeg(false);
  ScanLimits limits;
  limits.max_bytes_read = 300;
  LocationScan scan = Scan(ScanJpeg, l.file, limits);
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("budget"), std::string::npos) << scan.error;
  EXPECT_LE(scan.bytes_read, 300u);
}

// ---- PNG ----

const char kPngSignature[] = "\x89PNG\r\n\x1A\n";

struct Png {
  std::string bytes = std::string(kPngSignature, 8);
  // Appends a chunk (with a dummy CRC: the scanner does not check it) and returns its data's
  // offset.
  uint64_t Chunk(absl::string_view type, absl::string_view data) {
    bytes += absl::StrCat(Be32(static_cast<uint32_t>(data.size())), type, data, "CRC!");
    return bytes.size() - 4 - data.size();
  }
};

struct PngLayout {
  std::string file;
  std::vector<LocationRange> ranges;
  std::vector<LocationRange> rescan;
  std::vector<size_t> chunk_ends;
};

PngLayout FullPng() {
  Png p;
  PngLayout l;
  p.Chunk("IHDR", std::string(13, '\x01'));
  uint64_t exif = p.Chunk("eXIf", Tiff(true));
  std::string itxt_head = std::string("XML:com.adobe.xmp\0\0\0en\0\0", 24);
  uint64_t xmp = p.Chunk("iTXt", itxt_head + Xmp());
  // ImageMagick's per-property copies: the text goes, the keyword stays.
  std::string lat_kw = std::string("exif:GPSLatitude\0", 17);
  uint64_t lat = p.Chunk("tEXt", lat_kw + "37/1, 46/1, 741/25");
  std::string lon_kw = std::string("xmp:GPSLongitude\0", 17);
  uint64_t lon = p.Chunk("tEXt", lon_kw + "122,25.164W");
  p.Chunk("tEXt", std::string("Comment\0GPS is fun", 18));
  // A hex raw profile, uncompressed: the text after the keyword goes.
  std::string raw_kw = std::string("Raw profile type exif\0", 22);
  uint64_t raw = p.Chunk("tEXt", raw_kw + "\nexif\n      4\n45786966\n");
  // Compressed chunks go whole.
  std::string zxmp = std::string("XML:com.adobe.xmp\0\x01\x00\0\0", 22) + "\x78\x9C" + "zzzz";
  uint64_t itxt_z = p.Chunk("iTXt", zxmp);
  std::string zraw = std::string("Raw profile type APP1\0\0", 23) + "\x78\x9C" + "yyyy";
  uint64_t ztxt = p.Chunk("zTXt", zraw);
  p.Chunk("IDAT", "pixels");
  p.Chunk("IEND", "");
  l.file = p.bytes;
  l.ranges = Sorted(Concat(Concat(TiffRanges(exif), XmpRanges(xmp + itxt_head.size())),
                           {{lat + lat_kw.size(), lat + lat_kw.size() + 18, kExif},
                            {lon + lon_kw.size(), lon + lon_kw.size() + 11, kXmp},
                            {raw + raw_kw.size(), raw + raw_kw.size() + 23, kExif},
                            {itxt_z, itxt_z + zxmp.size(), kXmp},
                            {ztxt, ztxt + zraw.size(), kExif},
                            {ztxt, ztxt + zraw.size(), kXmp}}));
  // What still matches after redaction: the empty GPS IFD and the chunks whose keyword stays.
  l.rescan = Sorted({{exif + kGpsIfd, exif + kGpsIfd + 2, kExif},
                     {lat + lat_kw.size(), lat + lat_kw.size() + 18, kExif},
                     {lon + lon_kw.size(), lon + lon_kw.size() + 11, kXmp},
                     {raw + raw_kw.size(), raw + raw_kw.size() + 23, kExif}});
  return l;
}

TEST(ScanPngTest, FindsExifXmpAndTextChunks) {
  PngLayout l = FullPng();
  LocationScan scan = Scan(ScanPng, l.file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, l.ranges);
  std::string out = ExpectRedaction(ScanPng, l.file, scan, l.rescan);
  EXPECT_EQ(out.find("37"), std::string::npos);
  EXPECT_NE(out.find("GPS is fun"), std::string::npos);  // an unrelated keyword
}

TEST(ScanPngTest, EveryTruncationFailsClosed) {
  PngLayout l = FullPng();
  // Nothing short of the IEND chunk's CRC is a complete PNG.
  ExpectEveryTruncationFailsClosed(ScanPng, l.file, [&](size_t n) { return n == l.file.size(); });
}

TEST(ScanPngTest, ExifVariants) {
  Png p;
  uint64_t prefixed = p.Chunk("eXIf", absl::StrCat(kExifId, Tiff(false)));
  uint64_t upper = p.Chunk("EXIF", Tiff(true));
  uint64_t compressed = p.Chunk("zxIf", std::string("\0\0\0\0\0x\x9C", 7));
  uint64_t nul_form = p.Chunk("eXIf", std::string("\0\0\0\0\0x\x9C", 7));
  p.Chunk("IEND", "");
  LocationScan scan = Scan(ScanPng, p.bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want =
      Sorted(Concat(Concat(TiffRanges(prefixed + 6), TiffRanges(upper)),
                    {{compressed, compressed + 7, kExif}, {nul_form, nul_form + 7, kExif}}));
  EXPECT_EQ(scan.ranges, want);
}

TEST(ScanPngTest, StructuralErrors) {
  EXPECT_TRUE(Scan(ScanPng, "\x89PNG\r\n\x1A\x0B").malformed);  // bad signature
  {
    Png p;
    p.bytes += Be32(0x80000000u) + "IDAT";
    LocationScan scan = Scan(ScanPng, p.bytes);
    EXPECT_TRUE(scan.malformed);
    EXPECT_NE(scan.error.find("2^31"), std::string::npos) << scan.error;
  }
  {
    Png p;
    p.Chunk("IHDR", "x");  // no IEND
    EXPECT_TRUE(Scan(ScanPng, p.bytes).malformed);
  }
  {
    // An XMP iTXt whose language tag is not terminated.
    Png p;
    uint64_t data = p.Chunk("iTXt", std::string("XML:com.adobe.xmp\0\0\0en", 22));
    p.Chunk("IEND", "");
    LocationScan scan = Scan(ScanPng, p.bytes);
    EXPECT_TRUE(scan.malformed);
    EXPECT_TRUE(Covered(scan.fallback, data, kXmp));
  }
  {
    Png p;
    uint64_t data = p.Chunk("eXIf", std::string("MM\0*garbage", 11));
    p.Chunk("IEND", "");
    LocationScan scan = Scan(ScanPng, p.bytes);
    EXPECT_TRUE(scan.malformed);
    EXPECT_TRUE(Covered(scan.fallback, data, kExif));
  }
}

TEST(ScanPngTest, ChunksAfterIendAreScanned) {
  // ExifTool reads data after IEND as more chunks for as long as they are whole.
  Png p;
  p.Chunk("IHDR", std::string(13, '\x01'));
  p.Chunk("IEND", "");
  uint64_t exif = p.Chunk("eXIf", Tiff(false));
  std::string itxt_head = std::string("XML:com.adobe.xmp\0\0\0\0\0", 22);
  uint64_t xmp = p.Chunk("iTXt", itxt_head + Xmp());
  std::string file = p.bytes;
  LocationScan scan = Scan(ScanPng, file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, Sorted(Concat(TiffRanges(exif), XmpRanges(xmp + itxt_head.size()))));
  // A trailer that stops being whole chunks ends the chunk walk, as it ends ExifTool's; what is
  // left is not PNG and is filled (trailer.h).
  for (std::string tail : {std::string("garbage"), std::string("\0\0\0\x40"
                                                               "eXIfII*\0",
                                                               12)}) {
    LocationScan t = Scan(ScanPng, file + tail);
    EXPECT_FALSE(t.malformed) << t.error;
    std::vector<LocationRange> want = scan.ranges;
    want.push_back({file.size(), file.size() + tail.size(), kExif});
    EXPECT_EQ(t.ranges, Sorted(want));
  }
}

TEST(ScanPngTest, PhotoshopRawProfilesAreBlanked) {
  for (absl::string_view keyword : {absl::string_view("Raw profile type 8bim\0", 22),
                                    absl::string_view("Raw profile type iptc\0", 22)}) {
    Png p;
    uint64_t data = p.Chunk("tEXt", absl::StrCat(keyword, "\n8bim\n 4\n3842494d\n"));
    p.Chunk("IEND", "");
    LocationScan scan = Scan(ScanPng, p.bytes);
    ASSERT_FALSE(scan.malformed) << scan.error;
    uint64_t text = data + keyword.size();
    std::vector<LocationRange> want = {{text, text + 18, kExif}, {text, text + 18, kXmp}};
    EXPECT_EQ(scan.ranges, want) << keyword;
  }
}

TEST(ScanPngTest, TextChunksWithoutKeywordTerminatorAreIgnored) {
  Png p;
  p.Chunk("tEXt", std::string(100, 'k'));
  p.Chunk("IEND", "");
  LocationScan scan = Scan(ScanPng, p.bytes);
  EXPECT_FALSE(scan.malformed) << scan.error;
  EXPECT_TRUE(scan.ranges.empty());
}

// ---- WebP ----

struct Webp {
  std::string body;  // after "RIFF" size "WEBP"
  uint64_t Chunk(absl::string_view fourcc, absl::string_view data) {
    body += absl::StrCat(fourcc, Le32(static_cast<uint32_t>(data.size())), data);
    uint64_t at = 12 + body.size() - data.size();
    ends.push_back(12 + body.size());
    if (data.size() % 2) {
      body += '\0';
      ends.push_back(12 + body.size());
    }
    return at;
  }
  std::string File(int64_t size_adjust = 0) const {
    return absl::StrCat("RIFF", Le32(static_cast<uint32_t>(4 + body.size() + size_adjust)), "WEBP",
                        body);
  }
  std::vector<size_t> ends;  // of each chunk, and of each pad byte
};

TEST(ScanWebpTest, FindsExifAndXmp) {
  Webp w;
  w.Chunk("VP8X", std::string(10, '\0'));
  uint64_t exif = w.Chunk("EXIF", Tiff(false) + "!");  // odd size: a pad byte follows
  uint64_t xmp = w.Chunk("XMP ", Xmp());
  uint64_t prefixed = w.Chunk("EXIF", absl::StrCat(kExifId, Tiff(true)));
  w.Chunk("VP8 ", "frame");
  std::string file = w.File();
  LocationScan scan = Scan(ScanWebp, file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges,
            Sorted(Concat(Concat(TiffRanges(exif), XmpRanges(xmp)), TiffRanges(prefixed + 6))));
  std::vector<LocationRange> rescan = {{exif + kGpsIfd, exif + kGpsIfd + 2, kExif},
                                       {prefixed + 6 + kGpsIfd, prefixed + 6 + kGpsIfd + 2, kExif}};
  std::string out = ExpectRedaction(ScanWebp, file, scan, rescan);
  EXPECT_EQ(out.find("GPS"), std::string::npos);
}

TEST(ScanWebpTest, EveryTruncationFailsClosed) {
  Webp w;
  w.Chunk("VP8X", std::string(10, '\0'));
  w.Chunk("EXIF", Tiff(true) + "!");
  w.Chunk("XMP ", Xmp());
  w.Chunk("VP8 ", "frame");
  // Clean at every chunk boundary, with or without the pad byte that follows odd chunks (a
  // missing pad at the very end is tolerated).
  std::vector<size_t> clean = w.ends;
  clean.push_back(12);
  ExpectEveryTruncationFailsClosed(ScanWebp, w.File(), [&](size_t n) {
    return std::find(clean.begin(), clean.end(), n) != clean.end();
  });
}

TEST(ScanWebpTest, ChunksPastTheRiffSizeAreScanned) {
  // ExifTool reads chunks to the end of the file whatever the RIFF size says.
  Webp w;
  w.Chunk("VP8 ", "frame!");
  size_t riff_end = 12 + w.body.size();
  uint64_t exif = w.Chunk("EXIF", Tiff(false));
  uint64_t xmp = w.Chunk("XMP ", Xmp());
  std::string file = w.File(-static_cast<int64_t>(w.body.size() - (riff_end - 12)));
  LocationScan scan = Scan(ScanWebp, file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, Sorted(Concat(TiffRanges(exif), XmpRanges(xmp))));
  // A RIFF size that ends inside a chunk does not end that chunk either.
  scan = Scan(ScanWebp, w.File(-10));
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, Sorted(Concat(TiffRanges(exif), XmpRanges(xmp))));
  // Past the RIFF size, an incomplete chunk ends the walk (as it ends ExifTool's); inside it,
  // one cut short by the end of the file is malformed.
  LocationScan t = Scan(ScanWebp, file + "EXIF\xFF\0\0\0II*");
  EXPECT_FALSE(t.malformed) << t.error;
  t = Scan(ScanWebp, file.substr(0, file.size() - 3) + "XYZ");
  EXPECT_FALSE(t.malformed) << t.error;
  t = Scan(ScanWebp, w.File().substr(0, exif + 20));
  EXPECT_TRUE(t.malformed);
  EXPECT_NE(t.error.find("past the RIFF end"), std::string::npos) << t.error;
}

TEST(ScanWebpTest, AdobeXmpChunkAndNestedRiff) {
  Webp inner;
  uint64_t exif_in_inner = inner.Chunk("EXIF", Tiff(true));
  Webp w;
  w.Chunk("VP8 ", "frame!");
  uint64_t pmx = w.Chunk("_PMX", Xmp());
  // A concatenated RIFF: ExifTool reads on into its chunks.
  uint64_t riff = w.Chunk("RIFF", absl::StrCat("WEBP", inner.body));
  LocationScan scan = Scan(ScanWebp, w.File());
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, Sorted(Concat(XmpRanges(pmx), TiffRanges(riff + 4 + exif_in_inner - 12))));
}

TEST(ScanWebpTest, StructuralErrors) {
  EXPECT_TRUE(Scan(ScanWebp, std::string("RIFF\x04\0\0\0WEBQ", 12)).malformed);
  EXPECT_TRUE(Scan(ScanWebp, "RIFF").malformed);
  EXPECT_FALSE(Scan(ScanWebp, std::string("RIFF\x04\0\0\0WEBP", 12)).malformed);
  Webp w;
  uint64_t data = w.Chunk("EXIF", std::string("II*\0garbage", 11));
  LocationScan scan = Scan(ScanWebp, w.File());
  EXPECT_TRUE(scan.malformed);
  EXPECT_TRUE(Covered(scan.fallback, data, kExif));
}

}  // namespace
}  // namespace scopedfs::media
