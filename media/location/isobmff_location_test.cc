// The ISO-BMFF walk (ScanMp4, ScanHeif, ScanLocation) over hand-built box trees: which bytes are
// location, that box headers survive, that broken, truncated or hostile files fail closed within
// the scan limits, and which content class the tracks and items prove.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "media/location/location.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr Redaction kXmp = REDACTION_XMP_GPS;
constexpr Redaction kBox = REDACTION_ISOBMFF_LOCATION;

std::string U8(uint8_t v) { return std::string(1, static_cast<char>(v)); }
std::string U16(uint16_t v) { return U8(v >> 8) + U8(v & 0xFF); }
std::string U32(uint32_t v) { return U16(v >> 16) + U16(v & 0xFFFF); }
std::string U64(uint64_t v) { return U32(v >> 32) + U32(v & 0xFFFFFFFF); }

std::string Box(absl::string_view type, absl::string_view payload) {
  return U32(static_cast<uint32_t>(8 + payload.size())) + std::string(type) + std::string(payload);
}
std::string LargeBox(absl::string_view type, absl::string_view payload) {
  return U32(1) + std::string(type) + U64(16 + payload.size()) + std::string(payload);
}
std::string FullBox(absl::string_view type, uint8_t version, absl::string_view payload) {
  return Box(type, U8(version) + std::string(3, '\0') + std::string(payload));
}

const std::string kXyz =
    "\xA9"
    "xyz";
const std::string kIso6709 = "+37.7749-122.4194/";
const std::string kXmpUuid = "\xBE\x7A\xCF\xCB\x97\xA9\x42\xE8\x9C\x71\x99\x94\x91\xE3\xAF\xAC";

std::string Ftyp(absl::string_view brand) {
  return Box("ftyp", std::string(brand) + U32(0) + std::string(brand));
}
std::string Mvhd() { return FullBox("mvhd", 0, std::string(96, '\0')); }
std::string Mdat() { return Box("mdat", std::string(64, '\x55')); }
// QuickTime user-data text: string size, language, string.
std::string XyzText() { return Box(kXyz, U16(kIso6709.size()) + U16(0x15C7) + kIso6709); }
std::string Data(absl::string_view value) {
  return Box("data", U32(1) + U32(0) + std::string(value));
}
std::string Hdlr(absl::string_view handler) {
  return FullBox("hdlr", 0, U32(0) + std::string(handler) + std::string(12, '\0') + U8(0));
}

std::string XmpPacket() {
  return "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
         "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
         "xmlns:exif=\"http://ns.adobe.com/exif/1.0/\" exif:GPSLatitude=\"37,46.494N\" "
         "exif:Make=\"x\"/></rdf:RDF></x:xmpmeta>";
}
const std::string kXmpGpsAttr = "exif:GPSLatitude=\"37,46.494N\"";

LocationScan Mp4(const std::string& file, const ScanLimits& limits = {}) {
  MemorySource src(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
  return ScanMp4(src, limits);
}
LocationScan Heif(const std::string& file, const ScanLimits& limits = {}) {
  MemorySource src(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
  return ScanHeif(src, limits);
}

// Offset of the `nth` occurrence of `needle` (which the test put there).
uint64_t At(const std::string& file, absl::string_view needle, int nth = 0) {
  size_t at = file.find(std::string(needle));
  for (int i = 0; i < nth && at != std::string::npos; ++i)
    at = file.find(std::string(needle), at + 1);
  EXPECT_NE(at, std::string::npos) << needle;
  return at;
}

// The end of the box whose type sits at `type_at`.
uint64_t BoxEnd(const std::string& file, uint64_t type_at) {
  uint64_t size = 0;
  for (int i = 0; i < 4; ++i) size = (size << 8) | static_cast<uint8_t>(file[type_at - 4 + i]);
  return type_at - 4 + size;
}

std::vector<LocationRange> Only(LocationRange r) { return {r}; }

TEST(ScanMp4Test, XyzInMoovUdta) {
  std::string file = Ftyp("isom") + Box("moov", Mvhd() + Box("udta", XyzText())) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t xyz = At(file, kXyz);
  EXPECT_EQ(scan.ranges, Only({xyz + 4, BoxEnd(file, xyz), kBox}));
  uint64_t udta = At(file, "udta");
  EXPECT_EQ(scan.fallback, Only({udta + 4, BoxEnd(file, udta), kBox}));
}

TEST(ScanMp4Test, XyzInTrakUdta) {
  std::string trak =
      Box("trak", FullBox("tkhd", 0, std::string(80, '\0')) +
                      Box("mdia", Box("mdhd", std::string(24, '\0'))) + Box("udta", XyzText()));
  std::string file = Ftyp("isom") + Box("moov", Mvhd() + trak) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t xyz = At(file, kXyz);
  EXPECT_EQ(scan.ranges, Only({xyz + 4, BoxEnd(file, xyz), kBox}));
}

TEST(ScanMp4Test, LociKeepsVersionAndFlags) {
  std::string loci = FullBox("loci", 0,
                             U16(0x15C7) + "Home" + U8(0) + U8(0) + U32(0x1234) + U32(0x5678) +
                                 U32(0) + "earth" + U8(0) + U8(0));
  std::string file = Ftyp("3gp4") + Mdat() + Box("moov", Mvhd() + Box("udta", loci));
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t at = At(file, "loci");
  EXPECT_EQ(scan.ranges, Only({at + 8, BoxEnd(file, at), kBox}));
}

TEST(ScanMp4Test, GpsBoxesAnywhereWalked) {
  std::string file = Ftyp("isom") + Box("gps0", "dashcam-track") +
                     Box("moov", Mvhd() + Box("gps ", U32(0x101) + U32(7) + "fixes")) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t gps0 = At(file, "gps0"), gps = At(file, "gps ");
  std::vector<LocationRange> want = {{gps0 + 4, BoxEnd(file, gps0), kBox},
                                     {gps + 4, BoxEnd(file, gps), kBox}};
  EXPECT_EQ(scan.ranges, want);
}

TEST(ScanMp4Test, IlstXyzRedactsOnlyTheDataValue) {
  std::string ilst = Box("ilst", Box("\xA9too", Data("Lavf59")) + Box(kXyz, Data(kIso6709)));
  std::string meta = FullBox("meta", 0, Hdlr("mdir") + ilst);
  std::string file = Ftyp("M4A ") + Box("moov", Mvhd() + Box("udta", meta)) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t data = At(file, "data", 1);
  // size, "data", type and locale stay; only the value goes.
  EXPECT_EQ(scan.ranges, Only({data + 12, BoxEnd(file, data), kBox}));
  EXPECT_EQ(file.substr(data + 12, kIso6709.size()), kIso6709);
}

std::string Keys(const std::vector<std::string>& names) {
  std::string entries;
  for (const std::string& n : names) entries += U32(8 + n.size()) + "mdta" + n;
  return FullBox("keys", 0, U32(names.size()) + entries);
}

TEST(ScanMp4Test, QuickTimeKeysNameTheLocationItem) {
  for (bool keys_first : {true, false}) {
    std::string keys = Keys({"com.apple.quicktime.make", "com.apple.quicktime.location.ISO6709"});
    std::string ilst = Box("ilst", Box(U32(1), Data("Apple")) + Box(U32(2), Data(kIso6709)));
    // QuickTime's meta has no version and flags.
    std::string meta = Box("meta", Hdlr("mdta") + (keys_first ? keys + ilst : ilst + keys));
    std::string file = Ftyp("qt  ") + Box("moov", Mvhd() + meta) + Mdat();
    LocationScan scan = Mp4(file);
    ASSERT_FALSE(scan.malformed) << scan.error;
    uint64_t data = At(file, "data", 1);
    EXPECT_EQ(scan.ranges, Only({data + 12, BoxEnd(file, data), kBox})) << keys_first;
    uint64_t meta_at = At(file, "meta");
    EXPECT_EQ(scan.fallback, Only({meta_at + 4, BoxEnd(file, meta_at), kBox}));
  }
}

TEST(ScanMp4Test, FreeformLocationItem) {
  std::string item =
      Box("----", FullBox("mean", 0, "com.apple.iTunes") +
                      FullBox("name", 0, "com.apple.quicktime.location.ISO6709") + Data(kIso6709));
  std::string file =
      Ftyp("isom") +
      Box("moov", Box("udta", FullBox("meta", 0, Hdlr("mdir") + Box("ilst", item)))) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t data = At(file, "data");
  EXPECT_EQ(scan.ranges, Only({data + 12, BoxEnd(file, data), kBox}));
}

TEST(ScanMp4Test, UuidXmpAndUdtaXmp) {
  std::string file = Ftyp("isom") + Box("uuid", kXmpUuid + XmpPacket()) +
                     Box("moov", Mvhd() + Box("udta", Box("XMP_", XmpPacket()))) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t a = At(file, kXmpGpsAttr, 0), b = At(file, kXmpGpsAttr, 1);
  std::vector<LocationRange> want = {{a, a + kXmpGpsAttr.size(), kXmp},
                                     {b, b + kXmpGpsAttr.size(), kXmp}};
  EXPECT_EQ(scan.ranges, want);
  uint64_t p0 = At(file, "<x:xmpmeta", 0), p1 = At(file, "<x:xmpmeta", 1);
  uint64_t udta = At(file, "udta");
  std::vector<LocationRange> fallback = {{p0, p0 + XmpPacket().size(), kXmp},
                                         {udta + 4, BoxEnd(file, udta), kBox},
                                         {p1, p1 + XmpPacket().size(), kXmp}};
  EXPECT_EQ(scan.fallback, fallback);
}

TEST(ScanMp4Test, OtherUuidWithoutMetadataIsSkipped) {
  std::string file = Ftyp("isom") + Box("uuid", std::string(16, '\x11') + "PROF0000") + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_TRUE(scan.ranges.empty());
}

// A vendor uuid is looked into: an XMP packet in it is still XMP, wherever it starts.
TEST(ScanMp4Test, OtherUuidHoldingXmpIsParsed) {
  std::string file =
      Ftyp("isom") + Box("uuid", std::string(16, '\x11') + "vendor\x01\x02" + XmpPacket()) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t a = At(file, kXmpGpsAttr);
  EXPECT_EQ(scan.ranges, Only({a, a + kXmpGpsAttr.size(), kXmp}));
}

TEST(ScanMp4Test, SizeZeroTopLevelRunsToTheEnd) {
  std::string file = Ftyp("isom") + Box("moov", Box("udta", XyzText())) + U32(0) + "mdat" +
                     std::string(40, '\x55') + Box("moov", Box("udta", XyzText()));
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  // The second moov is inside the open-ended mdat, so it is media data, not metadata.
  uint64_t xyz = At(file, kXyz);
  EXPECT_EQ(scan.ranges, Only({xyz + 4, BoxEnd(file, xyz), kBox}));
}

TEST(ScanMp4Test, SizeZeroInsideAContainerFails) {
  std::string zero = U32(0) + "free" + std::string(8, '\0');
  std::string file = Ftyp("isom") + Box("moov", Mvhd() + zero + Box("udta", XyzText())) + Mdat();
  LocationScan scan = Mp4(file);
  EXPECT_TRUE(scan.malformed);
  uint64_t at = At(file, "free") - 4;
  EXPECT_NE(scan.error.find("size 0"), std::string::npos) << scan.error;
  for (Redaction kind : {kExif, kXmp, kBox}) {
    EXPECT_NE(
        std::find(scan.fallback.begin(), scan.fallback.end(), LocationRange{at, file.size(), kind}),
        scan.fallback.end());
  }
}

TEST(ScanMp4Test, QuickTimeZeroTerminatorEndsUserData) {
  std::string file = Ftyp("qt  ") + Box("moov", Box("udta", XyzText() + U32(0))) + Mdat();
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t xyz = At(file, kXyz);
  EXPECT_EQ(scan.ranges, Only({xyz + 4, BoxEnd(file, xyz), kBox}));

  // Four non-zero bytes are not a terminator but a cut header.
  std::string bad = Ftyp("qt  ") + Box("moov", Box("udta", XyzText() + U32(7))) + Mdat();
  EXPECT_TRUE(Mp4(bad).malformed);
}

TEST(ScanMp4Test, LargeSizes) {
  std::string xyz = LargeBox(kXyz, U16(kIso6709.size()) + U16(0) + kIso6709);
  std::string file = Ftyp("isom") + LargeBox("moov", LargeBox("udta", xyz)) +
                     LargeBox("mdat", std::string(30, '\x55'));
  LocationScan scan = Mp4(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t at = At(file, kXyz);
  EXPECT_EQ(scan.ranges, Only({at + 12, at - 4 + xyz.size(), kBox}));
}

TEST(ScanMp4Test, SizesThatDoNotFit) {
  std::string good = Ftyp("isom") + Box("moov", Box("udta", XyzText())) + Mdat();
  uint64_t moov = At(good, "moov") - 4;
  {
    std::string file = good;
    file.replace(moov, 4, U32(0x7FFFFFFF));  // past the end of the file
    LocationScan scan = Mp4(file);
    EXPECT_TRUE(scan.malformed);
    EXPECT_TRUE(scan.ranges.empty());
    EXPECT_EQ(scan.fallback.front(), (LocationRange{moov, file.size(), kExif}));
  }
  {
    std::string file = good;
    file.replace(moov, 4, U32(4));  // smaller than its own header
    EXPECT_TRUE(Mp4(file).malformed);
  }
  {
    std::string file = good;
    uint64_t udta = At(file, "udta") - 4;
    file.replace(udta, 4, U32(0x1000));  // past its parent's end, not the file's
    LocationScan scan = Mp4(file);
    EXPECT_TRUE(scan.malformed);
    EXPECT_NE(scan.error.find("container"), std::string::npos) << scan.error;
  }
  {
    std::string file = good;
    file.replace(moov, 4, U32(1));
    file.insert(moov + 8, U64(~uint64_t{0}));  // a 64-bit size that would wrap
    EXPECT_TRUE(Mp4(file).malformed);
  }
  EXPECT_TRUE(Mp4(good + "abc").malformed);  // trailing bytes too few for a header
}

TEST(ScanMp4Test, NestingLimit) {
  ScanLimits limits;
  limits.max_depth = 4;
  auto nested = [](int udtas) {
    std::string inner = XyzText();
    for (int i = 0; i < udtas; ++i) inner = Box("udta", inner);
    return Ftyp("isom") + Box("moov", inner) + Mdat();
  };
  std::string ok = nested(3);  // moov + 3 udta = depth 4
  LocationScan scan = Mp4(ok, limits);
  EXPECT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges.size(), 1u);
  scan = Mp4(nested(4), limits);
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("too deep"), std::string::npos) << scan.error;
}

TEST(ScanMp4Test, StructureLimit) {
  std::string frees;
  for (int i = 0; i < 50; ++i) frees += Box("free", "");
  std::string file = Ftyp("isom") + Box("moov", frees + Box("udta", XyzText()));
  ScanLimits limits;
  limits.max_structures = 40;
  LocationScan scan = Mp4(file, limits);
  EXPECT_TRUE(scan.malformed);
  limits.max_structures = 100;
  EXPECT_FALSE(Mp4(file, limits).malformed);
}

TEST(ScanMp4Test, ReadBudgetBoundsXmp) {
  std::string file = Ftyp("isom") + Box("uuid", kXmpUuid + XmpPacket());
  ScanLimits limits;
  limits.max_bytes_read = 100;
  LocationScan scan = Mp4(file, limits);
  EXPECT_TRUE(scan.malformed);
  EXPECT_LE(scan.bytes_read, 100u);
}

// ---- HEIF ----

std::string ExifTiff() {
  auto entry = [](uint16_t tag, uint16_t type, uint32_t count, uint32_t value) {
    return U16(tag) + U16(type) + U32(count) + U32(value);
  };
  std::string tiff = std::string("MM\0*", 4) + U32(8);
  tiff += U16(1) + entry(0x8825, 4, 1, 26) + U32(0);                          // IFD0 [8, 26)
  tiff += U16(2) + entry(1, 2, 2, 0x4E000000) + entry(2, 5, 3, 56) + U32(0);  // GPS [26, 56)
  for (uint32_t v : {37u, 1u, 46u, 1u, 2964u, 100u}) tiff += U32(v);          // [56, 80)
  return tiff;
}
// The Exif item: offset to the TIFF header past "Exif\0\0", so the TIFF starts at 10.
std::string ExifItemBytes() { return U32(6) + std::string("Exif\0\0", 6) + ExifTiff(); }
// What the Exif finder reports, relative to the item's start.
const std::vector<std::pair<uint64_t, uint64_t>> kGpsInItem = {{36, 62}, {66, 90}};

std::string InfeV2(uint16_t id, absl::string_view type,
                   absl::string_view rest = std::string(1, '\0')) {
  return FullBox("infe", 2, U16(id) + U16(0) + std::string(type) + std::string(rest));
}
std::string XmpInfe(uint16_t id) {
  return InfeV2(id, "mime", std::string("\0application/rdf+xml\0", 21));
}
std::string Iinf(const std::vector<std::string>& infes) {
  std::string body = U16(infes.size());
  for (const std::string& i : infes) body += i;
  return FullBox("iinf", 0, body);
}
struct IlocItem {
  uint16_t id;
  uint16_t method;
  std::vector<std::pair<uint32_t, uint32_t>> extents;  // offset, length
};
std::string Iloc(const std::vector<IlocItem>& items) {
  std::string body = U8(0x44) + U8(0x00) + U16(items.size());
  for (const IlocItem& item : items) {
    body += U16(item.id) + U16(item.method) + U16(0) + U16(item.extents.size());
    for (const auto& [offset, length] : item.extents) body += U32(offset) + U32(length);
  }
  return FullBox("iloc", 1, body);
}

// ftyp, meta (children built for where the mdat payload lands), mdat.
std::string HeifFile(const std::function<std::string(uint32_t mdat_payload)>& children,
                     const std::string& mdat) {
  std::string ftyp = Ftyp("heic");
  uint32_t at = static_cast<uint32_t>(ftyp.size() + FullBox("meta", 0, children(0)).size() + 8);
  return ftyp + FullBox("meta", 0, children(at)) + Box("mdat", mdat);
}

std::vector<LocationRange> GpsAt(uint64_t item) {
  std::vector<LocationRange> out;
  for (const auto& [b, e] : kGpsInItem) out.push_back({item + b, item + e, kExif});
  return out;
}

// Where the Exif item starts in `file`.
uint64_t ExifItemAt(const std::string& file, int nth = 0) {
  return At(file, std::string("Exif\0\0MM", 8), nth) - 4;
}

TEST(ScanHeifTest, ExifItemInMdat) {
  std::string exif = ExifItemBytes();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iinf({InfeV2(1, "hvc1"), InfeV2(2, "Exif")}) +
               Iloc({{1, 0, {{mdat, 20}}}, {2, 0, {{mdat + 20, uint32_t(exif.size())}}}});
      },
      std::string(20, '\x77') + exif);
  LocationScan scan = Heif(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t item = ExifItemAt(file);
  EXPECT_EQ(scan.ranges, GpsAt(item));
  // A later failure would blank the whole item.
  EXPECT_EQ(scan.fallback, Only({item, item + exif.size(), kExif}));
}

TEST(ScanHeifTest, ExifItemRunningToTheEndOfTheFile) {
  std::string exif = ExifItemBytes();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) + Iloc({{2, 0, {{mdat, 0}}}});
      },
      exif);
  LocationScan scan = Heif(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, GpsAt(ExifItemAt(file)));
}

TEST(ScanHeifTest, ExifItemInIdat) {
  std::string exif = ExifItemBytes();
  std::string file = HeifFile(
      [&](uint32_t) {
        return Hdlr("pict") + Iinf({InfeV2(5, "Exif")}) +
               Iloc({{5, 1, {{4, uint32_t(exif.size())}}}}) + Box("idat", "grid" + exif);
      },
      std::string(20, '\x77'));
  LocationScan scan = Heif(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t item = ExifItemAt(file);
  EXPECT_EQ(item, At(file, "idat") + 8);
  EXPECT_EQ(scan.ranges, GpsAt(item));
  std::vector<LocationRange> fallback = {{item - 4, item + exif.size(), kExif},
                                         {item - 4, item + exif.size(), kXmp}};
  EXPECT_EQ(scan.fallback, fallback);
}

TEST(ScanHeifTest, ExifItemInTwoExtentsSplitsRanges) {
  std::string exif = ExifItemBytes();
  ASSERT_EQ(exif.size(), 90u);
  // Logical [0, 40) and [40, 90), stored second part first, apart: the GPS IFD [36, 62) straddles
  // the split.
  std::string first = exif.substr(0, 40), second = exif.substr(40);
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) +
               Iloc({{2, 0, {{mdat + 58, 40}, {mdat, 50}}}});
      },
      second + std::string(8, '\x66') + first);
  LocationScan scan = Heif(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t b = At(file, "mdat") + 4, a = b + 58;
  std::vector<LocationRange> want = {
      {b, b + 22, kExif}, {b + 26, b + 50, kExif}, {a + 36, a + 40, kExif}};
  EXPECT_EQ(scan.ranges, want);
  std::vector<LocationRange> fallback = {{b, b + 50, kExif}, {a, a + 40, kExif}};
  EXPECT_EQ(scan.fallback, fallback);
}

TEST(ScanHeifTest, ExifItemPastTheEndOfTheFile) {
  std::string exif = ExifItemBytes();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) + Iloc({{2, 0, {{mdat, 4096}}}});
      },
      exif);
  LocationScan scan = Heif(file);
  EXPECT_TRUE(scan.malformed);
  EXPECT_TRUE(scan.ranges.empty());
  EXPECT_NE(scan.error.find("end of the file"), std::string::npos) << scan.error;
  // Everything from the iloc box on, which includes the item's bytes.
  uint64_t iloc = At(file, "iloc") - 4;
  EXPECT_EQ(scan.fallback.front(), (LocationRange{iloc, file.size(), kExif}));
}

TEST(ScanHeifTest, ItemsWithoutIinfFail) {
  std::string exif = ExifItemBytes();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iloc({{2, 0, {{mdat, 90}}}});
      },
      exif);
  LocationScan scan = Heif(file);
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("iinf"), std::string::npos) << scan.error;
}

TEST(ScanHeifTest, IinfCountingMoreEntriesThanItHoldsFails) {
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        std::string iinf = FullBox("iinf", 0, U16(2) + InfeV2(2, "Exif"));
        return Hdlr("pict") + iinf + Iloc({{2, 0, {{mdat, 90}}}});
      },
      ExifItemBytes());
  EXPECT_TRUE(Heif(file).malformed);
}

TEST(ScanHeifTest, ItemConstructedFromOtherItemsFails) {
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) + Iloc({{2, 2, {{mdat, 90}}}});
      },
      ExifItemBytes());
  LocationScan scan = Heif(file);
  EXPECT_TRUE(scan.malformed);
}

TEST(ScanHeifTest, XmpMimeItem) {
  std::string xmp = XmpPacket();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iinf({InfeV2(1, "hvc1"), XmpInfe(3)}) +
               Iloc({{3, 0, {{mdat, uint32_t(xmp.size())}}}});
      },
      xmp);
  LocationScan scan = Heif(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t attr = At(file, kXmpGpsAttr);
  EXPECT_EQ(scan.ranges, Only({attr, attr + kXmpGpsAttr.size(), kXmp}));
  uint64_t packet = At(file, "<x:xmpmeta");
  EXPECT_EQ(scan.fallback, Only({packet, packet + xmp.size(), kXmp}));
}

TEST(ScanHeifTest, WideFieldVersions) {
  // iinf version 1 (32-bit count), infe version 3 (32-bit IDs), iloc version 2 with 8-byte
  // offsets, a base offset and an extent index.
  std::string exif = ExifItemBytes();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        std::string infe = FullBox("infe", 3, U32(70000) + U16(0) + "Exif" + U8(0));
        std::string iinf = FullBox("iinf", 1, U32(1) + infe);
        std::string iloc =
            FullBox("iloc", 2,
                    U8(0x84) + U8(0x44) + U32(1) + U32(70000) + U16(0) + U16(0) + U32(mdat - 100) +
                        U16(1) + U32(0) + U64(100) + U32(exif.size()));
        return Hdlr("pict") + iinf + iloc;
      },
      exif);
  LocationScan scan = Heif(file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_EQ(scan.ranges, GpsAt(ExifItemAt(file)));
}

TEST(ScanHeifTest, NeedsFtypFirst) {
  std::string file = FullBox("meta", 0, Hdlr("pict")) + Ftyp("heic");
  EXPECT_TRUE(Heif(file).malformed);
  EXPECT_TRUE(Heif("").malformed);
}

TEST(ScanHeifTest, NoMetaIsClean) {
  LocationScan scan = Heif(Ftyp("heic") + Mdat());
  EXPECT_FALSE(scan.malformed) << scan.error;
  EXPECT_TRUE(scan.ranges.empty());
}

// Whether what a reader of `scan` gets filled (its ranges, and its fallback if it failed) covers
// every byte of `want` with want's kind.
bool Covers(const LocationScan& scan, const LocationRange& want) {
  for (uint64_t i = want.begin; i < want.end; ++i) {
    bool covered = false;
    for (const auto* list : {&scan.ranges, &scan.fallback}) {
      if (list == &scan.fallback && !scan.malformed) continue;
      for (const LocationRange& got : *list) {
        covered |= got.kind == want.kind && got.begin <= i && i < got.end;
      }
    }
    if (!covered) return false;
  }
  return true;
}

// Scans `file` with the default limits and with `tight` ones, as the fuzzers' CheckScan does:
// the tight scan, here expected to fail, must still cover whatever the default one finds.
LocationScan CheckTightCoversDefault(const std::string& file, bool heif, const ScanLimits& tight) {
  LocationScan whole = heif ? Heif(file) : Mp4(file);
  EXPECT_FALSE(whole.ranges.empty()) << whole.error;
  LocationScan scan = heif ? Heif(file, tight) : Mp4(file, tight);
  EXPECT_TRUE(scan.malformed);
  for (const LocationRange& want : whole.ranges) {
    EXPECT_TRUE(Covers(scan, want)) << "the tight scan loses [" << want.begin << ", " << want.end
                                    << ") of kind " << want.kind << ": " << scan.error;
  }
  return scan;
}

// An XMP packet padded past `size` bytes.
std::string BigXmpPacket(size_t size) {
  std::string xmp = XmpPacket();
  return xmp.insert(xmp.size() - std::string("</x:xmpmeta>").size(), std::string(size, ' '));
}

// A failure in item data, which may lie past boxes the walk has not reached yet, used to end the
// scan there: a top-level loci box between the meta box and the item was neither walked nor in
// the fallback [item, end) (media/location/testdata/fuzz_crashes/heif-1).
TEST(ScanHeifTest, ItemFailingPastUnwalkedBoxesStillCoversThem) {
  std::string xmp = BigXmpPacket(4000);
  std::string loci = FullBox(
      "loci", 0,
      U16(0x15C7) + "x" + U8(0) + U8(0) + U32(1) + U32(2) + U32(3) + "earth" + U8(0) + U8(0));
  std::string ftyp = Ftyp("heic");
  auto meta = [&](uint32_t mdat) {
    return FullBox("meta", 0,
                   Hdlr("pict") + Iinf({InfeV2(1, "hvc1"), XmpInfe(3)}) +
                       Iloc({{1, 0, {{mdat, 20}}}, {3, 0, {{mdat + 20, uint32_t(xmp.size())}}}}));
  };
  const uint32_t mdat = static_cast<uint32_t>(ftyp.size() + meta(0).size() + loci.size() + 8);
  std::string file = ftyp + meta(mdat) + loci + Box("mdat", std::string(20, '\x77') + xmp);
  ScanLimits tight;
  tight.max_bytes_read = 2048;  // enough for the boxes, not for the XMP item
  LocationScan scan = CheckTightCoversDefault(file, /*heif=*/true, tight);
  EXPECT_NE(scan.error.find("XMP item larger than the read budget"), std::string::npos)
      << scan.error;
  uint64_t at = At(file, "loci");
  EXPECT_EQ(scan.ranges, Only({at + 8, BoxEnd(file, at), kBox}));
  // The image data before the item stays intact.
  for (const LocationRange& r : scan.fallback) EXPECT_GE(r.begin, mdat + 20) << r.begin;
}

TEST(ScanMp4Test, ItemFailingPastUnwalkedBoxesStillCoversThem) {
  std::string xmp = BigXmpPacket(4000);
  std::string ftyp = Ftyp("isom");
  auto moov = [&](uint32_t item) {
    std::string meta =
        FullBox("meta", 0,
                Hdlr("pict") + Iinf({XmpInfe(3)}) + Iloc({{3, 0, {{item, uint32_t(xmp.size())}}}}));
    return Box("moov", Mvhd() + meta + Box("udta", XyzText()));
  };
  const uint32_t item = static_cast<uint32_t>(ftyp.size() + moov(0).size() + 8);
  std::string file = ftyp + moov(item) + Box("mdat", xmp);
  ScanLimits tight;
  tight.max_bytes_read = 2048;
  LocationScan scan = CheckTightCoversDefault(file, /*heif=*/false, tight);
  uint64_t xyz = At(file, kXyz);
  EXPECT_EQ(scan.ranges, Only({xyz + 4, BoxEnd(file, xyz), kBox}));
}

// The meta box's children used to be all delimited, then keys parsed, then the rest handled: a
// failure on the way (out of structures, keys over the read budget) skipped children before it.
TEST(ScanHeifTest, MetaFailureStillCoversEarlierChildren) {
  std::string frees;
  for (int i = 0; i < 30; ++i) frees += Box("free", "");
  {
    std::string file =
        Ftyp("heic") + FullBox("meta", 0, Hdlr("pict") + Box("XMP_", XmpPacket()) + frees) + Mdat();
    ScanLimits tight;
    tight.max_structures = 24;
    LocationScan scan = CheckTightCoversDefault(file, /*heif=*/true, tight);
    EXPECT_NE(scan.error.find("structures"), std::string::npos) << scan.error;
  }
  {
    std::string keys = Keys({std::string(3000, 'k')});
    std::string ilst = Box("ilst", Box(kXyz, Data(kIso6709)));
    std::string file = Ftyp("heic") + FullBox("meta", 0, Hdlr("mdta") + ilst + keys) + Mdat();
    ScanLimits tight;
    tight.max_bytes_read = 2048;
    CheckTightCoversDefault(file, /*heif=*/true, tight);
  }
}

// Before a meta box's items are located, a failed scan covers the top-level boxes before the
// failure point other than ftyp and meta; so item data may not sit inside those
// (media/location/testdata/fuzz_crashes/heif-2: an XMP item starting in an ftyp box).
TEST(ScanHeifTest, ItemDataInsideFtypOrMetaFails) {
  std::string exif = ExifItemBytes();
  {
    std::string ftyp = Box("ftyp", "heic" + U32(0) + "mif1" + exif);
    std::string file = ftyp +
                       FullBox("meta", 0,
                               Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) +
                                   Iloc({{2, 0, {{16, uint32_t(exif.size())}}}})) +
                       Mdat();
    LocationScan scan = Heif(file);
    EXPECT_TRUE(scan.malformed);
    EXPECT_TRUE(scan.ranges.empty());
    EXPECT_NE(scan.error.find("inside the ftyp box"), std::string::npos) << scan.error;
    EXPECT_TRUE(Covers(scan, {16, 16 + exif.size(), kExif}));
  }
  {
    std::string ftyp = Ftyp("heic");
    auto meta = [&](uint32_t free) {
      return FullBox("meta", 0,
                     Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) +
                         Iloc({{2, 0, {{free, uint32_t(exif.size())}}}}) + Box("free", exif));
    };
    const uint32_t free = static_cast<uint32_t>(ftyp.size() + meta(0).size() - exif.size());
    std::string file = ftyp + meta(free) + Mdat();
    ASSERT_EQ(ExifItemAt(file), free);
    LocationScan scan = Heif(file);
    EXPECT_TRUE(scan.malformed);
    EXPECT_TRUE(scan.ranges.empty());
    EXPECT_NE(scan.error.find("inside the meta box"), std::string::npos) << scan.error;
    EXPECT_TRUE(Covers(scan, {free, free + exif.size(), kExif}));
  }
}

// Only the first meta box to locate items may point back at earlier boxes: a failure before a
// later one, once the first one's items are known, covers only what follows the failure point.
TEST(ScanHeifTest, LaterMetaBoxItemsBeforeItFail) {
  std::string exif = ExifItemBytes();
  std::string ftyp = Ftyp("heic");
  std::string mdat = Box("mdat", exif);
  const uint32_t item = static_cast<uint32_t>(ftyp.size() + 8);
  std::string first =
      FullBox("meta", 0, Hdlr("pict") + Iinf({InfeV2(1, "hvc1")}) + Iloc({{1, 0, {{item, 10}}}}));
  std::string second = FullBox(
      "meta", 0,
      Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) + Iloc({{2, 0, {{item, uint32_t(exif.size())}}}}));
  LocationScan scan = Heif(ftyp + mdat + first + second);
  EXPECT_TRUE(scan.malformed);
  EXPECT_TRUE(scan.ranges.empty());
  EXPECT_NE(scan.error.find("second meta box"), std::string::npos) << scan.error;
  EXPECT_TRUE(Covers(scan, {item, item + exif.size(), kExif}));

  // A meta box that locates no items does not count: the second one is the first to locate
  // items, and a failure before it still covers the mdat.
  std::string frees;
  for (int i = 0; i < 30; ++i) frees += Box("free", "");
  std::string file = ftyp + mdat + FullBox("meta", 0, Hdlr("pict")) + frees + second;
  ASSERT_EQ(ExifItemAt(file), item);
  EXPECT_EQ(Heif(file).ranges, GpsAt(item));
  ScanLimits tight;
  tight.max_structures = 24;
  CheckTightCoversDefault(file, /*heif=*/true, tight);
}

// MP4 has no fallback for the boxes before a failure when the items are unknown (which would
// blank the mdat that usually comes before moov): item data must follow its meta box.
TEST(ScanMp4Test, ItemDataBeforeItsMetaBoxFails) {
  std::string exif = ExifItemBytes();
  std::string ftyp = Ftyp("isom");
  const uint32_t item = static_cast<uint32_t>(ftyp.size() + 8);
  std::string meta = FullBox(
      "meta", 0,
      Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) + Iloc({{2, 0, {{item, uint32_t(exif.size())}}}}));
  std::string file = ftyp + Box("mdat", exif) + Box("moov", Mvhd() + meta);
  ASSERT_EQ(ExifItemAt(file), item);
  LocationScan scan = Mp4(file);
  EXPECT_TRUE(scan.malformed);
  EXPECT_TRUE(scan.ranges.empty());
  EXPECT_NE(scan.error.find("before the end of the meta box"), std::string::npos) << scan.error;
  EXPECT_TRUE(Covers(scan, {item, item + exif.size(), kExif}));
}

// Every prefix of a valid file either scans clean or fails closed, and whatever the whole file's
// scan finds inside the prefix is still covered by the prefix's ranges or fallback.
void CheckPrefixes(const std::string& file, bool heif) {
  LocationScan whole = heif ? Heif(file) : Mp4(file);
  ASSERT_FALSE(whole.malformed) << whole.error;
  ASSERT_FALSE(whole.ranges.empty());
  for (size_t n = 0; n < file.size(); ++n) {
    std::string prefix = file.substr(0, n);
    LocationScan scan = heif ? Heif(prefix) : Mp4(prefix);
    for (const LocationRange& r : scan.ranges) ASSERT_LE(r.end, n);
    for (const LocationRange& want : whole.ranges) {
      if (want.end > n) continue;
      ASSERT_TRUE(Covers(scan, want))
          << "prefix " << n << " loses [" << want.begin << ", " << want.end << ") " << scan.error;
    }
  }
}

TEST(ScanMp4Test, EveryPrefix) {
  std::string keys = Keys({"com.apple.quicktime.location.ISO6709"});
  std::string qt_meta = Box("meta", Hdlr("mdta") + keys + Box("ilst", Box(U32(1), Data(kIso6709))));
  std::string itunes = FullBox("meta", 0, Hdlr("mdir") + Box("ilst", Box(kXyz, Data(kIso6709))));
  std::string loci = FullBox("loci", 0, U16(0) + "x" + U8(0) + U8(0) + U32(1) + U32(2) + U32(3));
  std::string udta = Box("udta", XyzText() + loci + itunes + Box("XMP_", XmpPacket()));
  std::string trak =
      Box("trak", FullBox("tkhd", 0, std::string(80, '\0')) + Box("udta", XyzText()));
  std::string file = Ftyp("isom") + Box("moov", Mvhd() + trak + udta + qt_meta) +
                     Box("uuid", kXmpUuid + XmpPacket()) + LargeBox("mdat", std::string(40, 'm'));
  CheckPrefixes(file, /*heif=*/false);
}

TEST(ScanHeifTest, EveryPrefix) {
  std::string exif = ExifItemBytes();
  std::string xmp = XmpPacket();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") +
               Iinf({InfeV2(1, "hvc1"), InfeV2(2, "Exif"), XmpInfe(3), InfeV2(4, "Exif")}) +
               Iloc({{1, 0, {{mdat, 20}}},
                     {2, 0, {{mdat + 20, 40}, {mdat + 20 + 40, 50}}},
                     {3, 0, {{mdat + 20 + 90, uint32_t(xmp.size())}}},
                     {4, 1, {{0, uint32_t(exif.size())}}}}) +
               Box("idat", exif);
      },
      std::string(20, 'p') + exif + xmp);
  CheckPrefixes(file, /*heif=*/true);
}

// ---- Hostile item tables (bounded scans) ----

LocationScan Scan(MediaFormat format, const std::string& file, const ScanLimits& limits = {}) {
  MemorySource src(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
  return ScanLocation(format, src, limits);
}

// iinf version 1 / iloc version 2 with 32-bit counts, built directly for big tables.
std::string BigIinf(uint32_t count, const std::function<std::string(uint32_t)>& infe) {
  std::string body = U32(count);
  for (uint32_t i = 0; i < count; ++i) body += infe(i);
  return FullBox("iinf", 1, body);
}
std::string BigIloc(uint32_t count, const std::function<uint32_t(uint32_t)>& id, uint32_t offset,
                    uint32_t length, uint16_t extents = 1) {
  std::string body = U8(0x44) + U8(0x00) + U32(count);
  for (uint32_t i = 0; i < count; ++i) {
    body += U32(id(i)) + U16(0) + U16(0) + U16(extents);
    for (uint16_t e = 0; e < extents; ++e) body += U32(offset) + U32(length);
  }
  return FullBox("iloc", 2, body);
}
std::string InfeV3(uint32_t id, absl::string_view type) {
  return FullBox("infe", 3, U32(id) + U16(0) + std::string(type) + U8(0));
}

// What every hostile scan must stay within, whatever its verdict: the limits.
void ExpectBounded(const LocationScan& scan, const ScanLimits& limits) {
  EXPECT_LE(scan.structures_visited, limits.max_structures + 1);
  EXPECT_LE(scan.bytes_read, limits.max_bytes_read);
  EXPECT_LE(scan.bytes_allocated, limits.max_alloc_bytes);
}

LocationScan BoundedScan(MediaFormat format, const std::string& file,
                         const ScanLimits& limits = {}) {
  LocationScan scan = Scan(format, file, limits);
  ExpectBounded(scan, limits);
  return scan;
}

// 10,000 infe and 10,000 iloc entries, all with one id, used to be resolved pairwise: 10^8
// results, 5 GB and 18 s for a 290 KB file. An Exif item listed or located twice is malformed.
TEST(BoundedScanTest, TenThousandItemsTimesTenThousandEntries) {
  std::string exif = ExifItemBytes();
  for (bool same_infe_id : {true, false}) {
    std::string ftyp = Ftyp("heic");
    auto meta = [&](uint32_t mdat) {
      return FullBox(
          "meta", 0,
          Hdlr("pict") +
              BigIinf(10000, [&](uint32_t i) { return InfeV3(same_infe_id ? 7 : 7 + i, "Exif"); }) +
              BigIloc(
                  10000, [](uint32_t) { return 7; }, mdat, exif.size()));
    };
    const uint32_t mdat = static_cast<uint32_t>(ftyp.size() + meta(0).size() + 8);
    std::string file = ftyp + meta(mdat) + Box("mdat", exif);
    ASSERT_GT(file.size(), 200000u);
    LocationScan scan = BoundedScan(MediaFormat::kHeif, file);
    EXPECT_TRUE(scan.malformed);
    EXPECT_NE(scan.error.find("twice"), std::string::npos) << scan.error;
    EXPECT_TRUE(Covers(scan, {mdat, mdat + exif.size(), kExif}));
  }
}

// n distinct Exif items, each located once, all on the same bytes.
std::string DistinctItems(uint32_t n, uint32_t* mdat_at) {
  std::string exif = ExifItemBytes();
  std::string ftyp = Ftyp("heic");
  auto meta = [&](uint32_t mdat) {
    return FullBox("meta", 0,
                   Hdlr("pict") + BigIinf(n, [](uint32_t i) { return InfeV3(i, "Exif"); }) +
                       BigIloc(
                           n, [n](uint32_t i) { return n - 1 - i; }, mdat, exif.size()));
  };
  const uint32_t mdat = static_cast<uint32_t>(ftyp.size() + meta(0).size() + 8);
  *mdat_at = mdat;
  return ftyp + meta(mdat) + Box("mdat", exif);
}

// 10,000 distinct Exif items, each located once, all on the same bytes: correct, and the work the
// scan counts grows with the items as n log n at most, not n^2: ten times the items, at most 20
// times the comparisons (n log n makes it about 14 times, a pairwise join 100 times), and at most
// 14 times the bytes read and structures visited.
TEST(BoundedScanTest, TenThousandDistinctItemsEachLocatedOnce) {
  std::string exif = ExifItemBytes();
  uint32_t mdat = 0, small_mdat = 0;
  std::string file = DistinctItems(10000, &mdat);
  LocationScan scan = Scan(MediaFormat::kHeif, file);
  ExpectBounded(scan, {});
  // Either every item is parsed (each re-reads the same 90 bytes) or a limit stops it: never a
  // clean scan that missed the GPS.
  if (!scan.malformed) {
    EXPECT_EQ(scan.ranges, GpsAt(mdat));
  } else {
    EXPECT_TRUE(Covers(scan, {mdat, mdat + exif.size(), kExif})) << scan.error;
  }
  LocationScan small = Scan(MediaFormat::kHeif, DistinctItems(1000, &small_mdat));
  ASSERT_FALSE(small.malformed) << small.error;
  ASSERT_FALSE(scan.malformed) << scan.error;
  EXPECT_GT(small.item_comparisons, 1000u);  // each item is looked up: the count is kept
  EXPECT_LE(scan.item_comparisons, 20 * small.item_comparisons)
      << small.item_comparisons << " comparisons for 1,000 items";
  EXPECT_LE(scan.bytes_read, 14 * small.bytes_read) << small.bytes_read;
  EXPECT_LE(scan.structures_visited, 14 * small.structures_visited) << small.structures_visited;
}

// One item of 65,535 extents (the iloc maximum), and 20 items of 65,535 each: the extents are
// counted as structures and charged as memory.
TEST(BoundedScanTest, ManyExtentsPerItem) {
  std::string exif = ExifItemBytes();
  for (uint32_t items : {1u, 20u}) {
    std::string ftyp = Ftyp("heic");
    auto meta = [&](uint32_t mdat) {
      return FullBox("meta", 0,
                     Hdlr("pict") + BigIinf(items, [](uint32_t i) { return InfeV3(i, "Exif"); }) +
                         BigIloc(
                             items, [](uint32_t i) { return i; }, mdat, 1, 65535));
    };
    const uint32_t mdat = static_cast<uint32_t>(ftyp.size() + meta(0).size() + 8);
    std::string file = ftyp + meta(mdat) + Box("mdat", exif);
    LocationScan scan = BoundedScan(MediaFormat::kHeif, file);
    // 65,535 one-byte extents of the same byte make no TIFF: malformed either way.
    EXPECT_TRUE(scan.malformed);
    EXPECT_TRUE(Covers(scan, {mdat, mdat + 1, kExif})) << scan.error;
  }
}

TEST(BoundedScanTest, MemoryCapFailsClosed) {
  std::string exif = ExifItemBytes();
  std::string ftyp = Ftyp("heic");
  auto meta = [&](uint32_t mdat) {
    return FullBox("meta", 0,
                   Hdlr("pict") + BigIinf(1, [](uint32_t) { return InfeV3(1, "Exif"); }) +
                       BigIloc(
                           1, [](uint32_t) { return 1; }, mdat, 1, 5000));
  };
  const uint32_t mdat = static_cast<uint32_t>(ftyp.size() + meta(0).size() + 8);
  std::string file = ftyp + meta(mdat) + Box("mdat", exif);
  ScanLimits limits;
  limits.max_alloc_bytes = 4096;
  LocationScan scan = BoundedScan(MediaFormat::kHeif, file, limits);
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("memory cap"), std::string::npos) << scan.error;
  EXPECT_TRUE(Covers(scan, {mdat, mdat + exif.size(), kExif}));
}

TEST(BoundedScanTest, DeepNesting) {
  std::string inner = XyzText();
  for (int i = 0; i < 5000; ++i) inner = Box(i % 2 ? "udta" : "trak", inner);
  std::string file = Ftyp("isom") + Box("moov", inner) + Mdat();
  LocationScan scan = BoundedScan(MediaFormat::kMp4, file);
  EXPECT_TRUE(scan.malformed);
  EXPECT_NE(scan.error.find("too deep"), std::string::npos) << scan.error;
}

// Counts of 2^32 - 1 entries in boxes that hold none: nothing is allocated from the count.
TEST(BoundedScanTest, HugeDeclaredCountsAbsent) {
  const std::string counts[] = {
      FullBox("iinf", 1, U32(0xFFFFFFFF)) + FullBox("iloc", 2, U8(0x44) + U8(0) + U32(0xFFFFFFFF)),
      Iinf({InfeV2(1, "Exif")}) + FullBox("iloc", 2, U8(0x44) + U8(0) + U32(0xFFFFFFFF)),
      Iinf({InfeV2(1, "Exif")}) +
          FullBox("iloc", 1, U8(0x44) + U8(0) + U16(1) + U16(1) + U16(0) + U16(0) + U16(0xFFFF)),
      Box("keys", U32(0) + U32(0xFFFFFFFF)) + Box("ilst", ""),
  };
  for (const std::string& children : counts) {
    std::string file = Ftyp("heic") + FullBox("meta", 0, Hdlr("pict") + children) + Mdat();
    LocationScan scan = BoundedScan(MediaFormat::kHeif, file);
    EXPECT_TRUE(scan.malformed);
    EXPECT_LT(scan.bytes_allocated, 1024u);
  }
}

// Many keys naming a location and many ilst items: each item is looked up, not compared with
// every key.
TEST(BoundedScanTest, ManyKeysTimesManyItems) {
  std::vector<std::string> names(20000, "com.apple.quicktime.location.ISO6709");
  std::string items;
  for (uint32_t i = 1; i <= 20000; ++i) items += Box(U32(i), "");
  std::string file =
      Ftyp("qt  ") + Box("moov", Box("meta", Hdlr("mdta") + Keys(names) + Box("ilst", items)));
  LocationScan scan = BoundedScan(MediaFormat::kQuickTime, file);
  EXPECT_FALSE(scan.malformed) << scan.error;
}

// ---- One walk for the whole family ----

TEST(UnifiedWalkTest, HeifWithMoovUdtaXyz) {
  std::string exif = ExifItemBytes();
  std::string file = HeifFile(
      [&](uint32_t mdat) {
        return Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) +
               Iloc({{2, 0, {{mdat, uint32_t(exif.size())}}}});
      },
      exif);
  file += Box("moov", Mvhd() + Box("udta", XyzText()));
  for (MediaFormat format : {MediaFormat::kHeif, MediaFormat::kAvif, MediaFormat::kMp4}) {
    LocationScan scan = Scan(format, file);
    ASSERT_FALSE(scan.malformed) << scan.error;
    uint64_t xyz = At(file, kXyz);
    std::vector<LocationRange> want = GpsAt(ExifItemAt(file));
    want.push_back({xyz + 4, BoxEnd(file, xyz), kBox});
    EXPECT_EQ(scan.ranges, want) << static_cast<int>(format);
  }
}

// A HEIF whose ftyp says mp42 (sniffed as MP4, named .mp4) keeps its Exif item found.
TEST(UnifiedWalkTest, FileLevelExifItemUnderVideoBrands) {
  std::string exif = ExifItemBytes();
  for (MediaFormat format :
       {MediaFormat::kMp4, MediaFormat::kQuickTime, MediaFormat::k3gp, MediaFormat::kM4a}) {
    std::string ftyp = Ftyp("mp42");
    auto meta = [&](uint32_t mdat) {
      return FullBox("meta", 0,
                     Hdlr("pict") + Iinf({InfeV2(1, "hvc1"), InfeV2(2, "Exif")}) +
                         Iloc({{2, 0, {{mdat, uint32_t(exif.size())}}}}));
    };
    const uint32_t mdat = static_cast<uint32_t>(ftyp.size() + meta(0).size() + 8);
    std::string file = ftyp + meta(mdat) + Box("mdat", exif);
    LocationScan scan = Scan(format, file);
    ASSERT_FALSE(scan.malformed) << scan.error;
    EXPECT_EQ(scan.ranges, GpsAt(mdat));
    EXPECT_EQ(scan.content_class, MEDIA_CLASS_IMAGE);
  }
}

// Item data before the meta box: allowed when a brand says image (HEIF places mdat first), else
// refused (fail closed), as an MP4 is walked.
TEST(UnifiedWalkTest, ItemBeforeMetaFollowsTheBrands) {
  std::string exif = ExifItemBytes();
  for (bool image_brand : {true, false}) {
    std::string ftyp = Box("ftyp", "mp42" + U32(0) + "isom" + (image_brand ? "mif1" : "avc1"));
    const uint32_t item = static_cast<uint32_t>(ftyp.size() + 8);
    std::string file = ftyp + Box("mdat", exif) +
                       FullBox("meta", 0,
                               Hdlr("pict") + Iinf({InfeV2(2, "Exif")}) +
                                   Iloc({{2, 0, {{item, uint32_t(exif.size())}}}}));
    LocationScan scan = Scan(MediaFormat::kMp4, file);
    EXPECT_EQ(scan.malformed, !image_brand) << scan.error;
    EXPECT_TRUE(Covers(scan, {item + kGpsInItem[0].first, item + kGpsInItem[0].second, kExif}));
  }
}

// ---- Content class ----

std::string Trak(absl::string_view handler) {
  return Box("trak", FullBox("tkhd", 0, std::string(80, '\0')) +
                         Box("mdia", FullBox("mdhd", 0, std::string(20, '\0')) + Hdlr(handler) +
                                         Box("minf", "")));
}

TEST(ContentClassTest, FromTrackHandlers) {
  struct Case {
    std::vector<std::string> handlers;
    MediaClass want;
  };
  const Case cases[] = {
      {{"vide"}, MEDIA_CLASS_VIDEO},
      {{"soun", "vide"}, MEDIA_CLASS_VIDEO},
      {{"soun"}, MEDIA_CLASS_AUDIO},
      {{"soun", "soun"}, MEDIA_CLASS_AUDIO},
      {{"soun", "text"}, MEDIA_CLASS_UNSPECIFIED},
      {{"pict"}, MEDIA_CLASS_IMAGE},
      {{}, MEDIA_CLASS_UNSPECIFIED},
  };
  for (const Case& c : cases) {
    std::string traks;
    for (const std::string& h : c.handlers) traks += Trak(h);
    std::string file = Ftyp("isom") + Box("moov", Mvhd() + traks) + Mdat();
    for (MediaFormat format : {MediaFormat::kMp4, MediaFormat::kM4a, MediaFormat::kHeif}) {
      LocationScan scan = Scan(format, file);
      ASSERT_FALSE(scan.malformed) << scan.error;
      EXPECT_EQ(scan.content_class, c.want) << c.handlers.size() << " " << int(format);
    }
  }
}

TEST(ContentClassTest, ImageItemsUnlessVideo) {
  auto heif = [](const std::string& extra) {
    return Ftyp("heic") + FullBox("meta", 0, Hdlr("pict") + Iinf({InfeV2(1, "hvc1")})) + extra;
  };
  EXPECT_EQ(Scan(MediaFormat::kHeif, heif("")).content_class, MEDIA_CLASS_IMAGE);
  EXPECT_EQ(Scan(MediaFormat::kHeif, heif(Box("moov", Trak("soun")))).content_class,
            MEDIA_CLASS_IMAGE);
  EXPECT_EQ(Scan(MediaFormat::kHeif, heif(Box("moov", Trak("vide")))).content_class,
            MEDIA_CLASS_VIDEO);
  // Metadata items only (an Exif item) prove no image.
  std::string exif_only =
      Ftyp("heic") + FullBox("meta", 0, Hdlr("pict") + Iinf({InfeV2(1, "Exif")}));
  EXPECT_EQ(Scan(MediaFormat::kHeif, exif_only).content_class, MEDIA_CLASS_UNSPECIFIED);
}

TEST(ContentClassTest, MalformedKeepsOnlyVideo) {
  std::string cut = U32(0x1000) + "free";
  EXPECT_EQ(Scan(MediaFormat::kMp4, Ftyp("isom") + Box("moov", Trak("vide")) + cut).content_class,
            MEDIA_CLASS_VIDEO);
  EXPECT_EQ(Scan(MediaFormat::kMp4, Ftyp("isom") + Box("moov", Trak("soun")) + cut).content_class,
            MEDIA_CLASS_UNSPECIFIED);
}

// ---- Liberal in what holds metadata (as exiftool and ffmpeg are) ----

TEST(LiberalTest, LocationBoxesInEveryUserDataAndMeta) {
  std::string loci = FullBox("LOCI", 0, U16(0) + "x" + U8(0) + U8(0) + U32(1) + U32(2) + U32(3));
  std::string itunes = FullBox("meta", 0, Hdlr("mdir") + Box("ilst", Box(kXyz, Data(kIso6709))));
  const std::string files[] = {
      // root-level udta and meta
      Ftyp("isom") + Box("udta", XyzText()) + Mdat(),
      Ftyp("isom") + itunes + Mdat(),
      // trak/meta, mdia/udta, moov/udta/ilst without a meta box
      Ftyp("isom") + Box("moov", Box("trak", itunes)) + Mdat(),
      Ftyp("isom") + Box("moov", Box("trak", Box("mdia", Box("udta", XyzText())))) + Mdat(),
      Ftyp("isom") + Box("moov", Box("udta", Box("ilst", Box(kXyz, Data(kIso6709))))) + Mdat(),
      // case and spelling variants; 64-bit sizes
      Ftyp("isom") + Box("moov", Box("udta", loci)) + Mdat(),
      Ftyp("isom") + Box("moov", Box("udta", Box("@xyz", kIso6709))) + Mdat(),
      Ftyp("isom") + LargeBox("moov", LargeBox("trak", LargeBox("udta", XyzText()))) + Mdat(),
      // fragments
      Ftyp("isom") + Box("moof", Box("traf", Box("udta", XyzText()))) + Mdat(),
  };
  for (const std::string& file : files) {
    for (MediaFormat format : {MediaFormat::kMp4, MediaFormat::kHeif}) {
      LocationScan scan = Scan(format, file);
      ASSERT_FALSE(scan.malformed) << scan.error;
      ASSERT_EQ(scan.ranges.size(), 1u) << At(file, "moov");
      EXPECT_EQ(scan.ranges[0].kind, kBox);
      // The coordinates themselves are covered.
      const uint64_t c =
          file.find(kIso6709) != std::string::npos ? file.find(kIso6709) : scan.ranges[0].begin;
      EXPECT_LE(scan.ranges[0].begin, c);
      EXPECT_GT(scan.ranges[0].end, c);
    }
  }
}

TEST(LiberalTest, ExifInVendorBoxes) {
  std::string tiff = ExifTiff();
  // A udta atom holding "Exif\0\0" + TIFF, a uuid holding a bare TIFF.
  for (const std::string& box : {Box("udta", Box("NCDT", std::string("Exif\0\0", 6) + tiff)),
                                 Box("uuid", std::string(16, '\x42') + tiff)}) {
    std::string file = Ftyp("isom") + Box("moov", box) + Mdat();
    LocationScan scan = Scan(MediaFormat::kMp4, file);
    ASSERT_FALSE(scan.malformed) << scan.error;
    const uint64_t t = At(file, std::string("MM\0*", 4));
    std::vector<LocationRange> want = {{t + 26, t + 52, kExif}, {t + 56, t + 80, kExif}};
    EXPECT_EQ(scan.ranges, want);
  }
  // Canon's uuid: CMT4 is a TIFF whose IFD0 is the GPS IFD; all of it after the header goes.
  std::string canon_uuid("\x85\xC0\xB6\x87\x82\x0F\x11\xE0\x81\x11\xF4\xCE\x46\x2B\x6A\x48", 16);
  std::string cmt4 = std::string("MM\0*", 4) + U32(8) + U16(1) + U16(1) + U16(2) + U32(2) + "N" +
                     std::string(3, '\0') + U32(0);
  std::string file =
      Ftyp("crx ") + Box("moov", Box("uuid", canon_uuid + Box("CMT4", cmt4))) + Mdat();
  LocationScan scan = Scan(MediaFormat::kMp4, file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  const uint64_t c = At(file, "CMT4") + 4;
  EXPECT_EQ(scan.ranges, Only({c + 8, c + cmt4.size(), kExif}));
  // Exif not at the start of a user-data atom cannot be delimited: uncertain, never clean.
  std::string buried =
      Ftyp("isom") +
      Box("moov", Box("udta", Box("PENT", "junk" + std::string("Exif\0\0", 6) + tiff))) + Mdat();
  LocationScan uncertain = Scan(MediaFormat::kMp4, buried);
  EXPECT_TRUE(uncertain.malformed);
  const uint64_t t = At(buried, std::string("MM\0*", 4));
  EXPECT_TRUE(Covers(uncertain, {t, t + tiff.size(), kExif}));
}

TEST(LiberalTest, XmpInMetaXmlAndUdtaAtoms) {
  const std::string files[] = {
      Ftyp("heic") + FullBox("meta", 0, Hdlr("pict") + FullBox("xml ", 0, XmpPacket())) + Mdat(),
      Ftyp("isom") + Box("moov", Box("udta", Box("Xmp_", XmpPacket()))) + Mdat(),
      Ftyp("isom") + Box("moov", Box("udta", Box("MTDT", "\x01\x02" + XmpPacket()))) + Mdat(),
  };
  for (const std::string& file : files) {
    LocationScan scan = Scan(MediaFormat::kHeif, file);
    ASSERT_FALSE(scan.malformed) << scan.error;
    uint64_t a = At(file, kXmpGpsAttr);
    EXPECT_EQ(scan.ranges, Only({a, a + kXmpGpsAttr.size(), kXmp}));
  }
}

}  // namespace
}  // namespace scopedfs::media
