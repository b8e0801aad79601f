// Metadata containers the parsers do not walk, inside formats they do: JPEG APPn segments of no
// known kind (GoPro GPMF in APP6, JUMBF/C2PA in APP11), PNG and WebP chunks of no known kind
// (caBX), user-data atoms and vendor uuid boxes in ISO-BMFF are filled whole; data after an image's
// end (motion photos, a second image) is walked as a file of its own or filled.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "media/location/location.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kExif = REDACTION_EXIF_GPS;
constexpr Redaction kBox = REDACTION_ISOBMFF_LOCATION;

std::string Be16(uint16_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v)}; }
std::string Be32(uint32_t v) { return Be16(v >> 16) + Be16(v & 0xFFFF); }
std::string Le32(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
          static_cast<char>(v >> 24)};
}

using Scanner = LocationScan (*)(ByteSource&, const ScanLimits&);

LocationScan Scan(Scanner scanner, absl::string_view bytes, const ScanLimits& limits = {}) {
  MemorySource src(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  return scanner(src, limits);
}

std::string Box(absl::string_view type, absl::string_view payload) {
  return absl::StrCat(Be32(static_cast<uint32_t>(8 + payload.size())), type, payload);
}

// A TIFF whose IFD0 is a one-entry GPS pointer to a GPS IFD with GPSLatitudeRef 'N' (the GPS IFD's
// count and entry are [26, 40) of the TIFF).
std::string GpsTiff() {
  return absl::StrCat(std::string("MM\0*", 4), Be32(8), Be16(1), Be16(0x8825), Be16(4), Be32(1),
                      Be32(26), Be32(0), Be16(1), Be16(1), Be16(2), Be32(2),
                      std::string("N\0\0\0", 4), Be32(0));
}

struct Jpeg {
  std::string bytes = "\xFF\xD8";
  uint64_t Segment(uint8_t marker, absl::string_view data) {
    bytes += absl::StrCat("\xFF", std::string(1, static_cast<char>(marker)),
                          Be16(static_cast<uint16_t>(data.size() + 2)), data);
    return bytes.size() - data.size();
  }
  // SOS, entropy-coded data with a stuffed zero, a restart marker and fill bytes, then EOI.
  std::string& End() {
    Segment(0xDA, std::string("\x01\x01\x00\x00\x3F\x00", 6));
    bytes += std::string("\x12\xFF\x00\x34\xFF\xD0\x56\xFF\xFF", 9) + "\xFF\xD9";
    return bytes;
  }
};

std::string GpmfGps() {
  return absl::StrCat("DEVC", std::string("\0\x04\0\x06", 4), "STRM",
                      std::string("\0\x04\0\x05", 4), "GPS5", std::string("l\x14\0\x01", 4),
                      Be32(377749000), Be32(0xB7084830), Be32(15000), Be32(0), Be32(0));
}

TEST(JpegContainersTest, AppSegmentsOfNoKnownKindAreFilledWhole) {
  Jpeg j;
  j.Segment(0xE0, std::string("JFIF\0\x01\x02\x00\x00\x01\x00\x01\x00\x00", 14));
  uint64_t app6 = j.Segment(0xE6, absl::StrCat(std::string("GoPro\0", 6), GpmfGps()));
  uint64_t app6_end = j.bytes.size();
  uint64_t app11 = j.Segment(0xEB, absl::StrCat("JP", std::string("\0\x01\0\0\0\x01", 6),
                                                Box("jumb", Box("jumd", "c2pa"))));
  uint64_t app11_end = j.bytes.size();
  uint64_t app2 = j.Segment(0xE2, std::string("MPF\0II*\0", 8));
  uint64_t app2_end = j.bytes.size();
  j.Segment(0xE2, std::string("ICC_PROFILE\0\x01\x01", 14));
  j.Segment(0xFE, "a comment is text, not metadata");
  LocationScan scan = Scan(ScanJpeg, j.End());
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {
      {app6, app6_end, kExif}, {app11, app11_end, kExif}, {app2, app2_end, kExif}};
  EXPECT_EQ(scan.ranges, want);
}

// An MP4 whose udta holds a ©xyz atom: ftyp, then moov > udta > ©xyz.
struct Mp4 {
  std::string bytes;
  uint64_t xyz_payload = 0, xyz_end = 0;
};

Mp4 LocatedMp4() {
  Mp4 m;
  std::string xyz = Box("\xA9xyz", absl::StrCat(Be16(18), Be16(0x15C7), "+37.7749-122.4194/"));
  std::string ftyp = Box("ftyp", std::string("isom\0\0\0\0isommp41", 16));
  m.bytes = ftyp + Box("moov", Box("udta", xyz)) + Box("mdat", "frames");
  m.xyz_payload = ftyp.size() + 8 + 8 + 8;
  m.xyz_end = m.xyz_payload + xyz.size() - 8;
  return m;
}

TEST(TrailerTest, MotionPhotoVideoIsWalkedAsAFileOfItsOwn) {
  Jpeg j;
  std::string jpeg = j.End();
  Mp4 mp4 = LocatedMp4();
  LocationScan scan = Scan(ScanJpeg, jpeg + mp4.bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  // Only the location atom goes: the video stays playable.
  std::vector<LocationRange> want = {
      {jpeg.size() + mp4.xyz_payload, jpeg.size() + mp4.xyz_end, kBox}};
  EXPECT_EQ(scan.ranges, want);
  EXPECT_GT(scan.bytes_swept, 0u);  // the entropy-coded data was read to find EOI
}

TEST(TrailerTest, WhatTheEmbeddedWalkCannotVouchForIsFilled) {
  Jpeg j;
  std::string jpeg = j.End();
  // An MP4 cut short inside its moov: the part past where its walk failed is filled, and the
  // outer JPEG stays clean (its own bytes are untouched).
  Mp4 mp4 = LocatedMp4();
  std::string cut = mp4.bytes.substr(0, mp4.xyz_payload + 4);
  LocationScan scan = Scan(ScanJpeg, jpeg + cut);
  ASSERT_FALSE(scan.malformed) << scan.error;
  ASSERT_FALSE(scan.ranges.empty());
  EXPECT_LE(scan.ranges.front().begin, jpeg.size() + mp4.xyz_payload);
  EXPECT_EQ(scan.ranges.back().end, jpeg.size() + cut.size());
  for (const LocationRange& r : scan.ranges) EXPECT_GE(r.begin, jpeg.size());
}

TEST(TrailerTest, UnknownTrailersAreFilledWhole) {
  Jpeg j;
  std::string jpeg = j.End();
  std::string vendor = "SEFH" + std::string(40, '\x01') + "GPS 37.7749 -122.4194 SEFT";
  LocationScan scan = Scan(ScanJpeg, jpeg + vendor);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{jpeg.size(), jpeg.size() + vendor.size(), kExif}};
  EXPECT_EQ(scan.ranges, want);
}

TEST(TrailerTest, SamsungMotionPhotoVideoIsWalkedAfterItsMarker) {
  Jpeg j;
  std::string jpeg = j.End();
  std::string before = std::string("\0\0Image_UTC_Data1700000000", 26) + "MotionPhoto_Data";
  Mp4 mp4 = LocatedMp4();
  std::string sef = "SEFH" + std::string(12, '\0') + "SEFT";
  std::string file = jpeg + before + mp4.bytes + sef;
  LocationScan scan = Scan(ScanJpeg, file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t video = jpeg.size() + before.size();
  // The blocks before the video are filled, the location atom in it, and the SEF directory after
  // it (where the video's walk stopped: with the user data it had delimited); the frames stay.
  std::vector<FillRange> plan = PlanFills(scan.ranges, (1u << kExif) | (1u << kBox));
  auto filled = [&](uint64_t at) {
    for (const FillRange& f : plan) {
      if (at >= f.begin && at < f.end) return true;
    }
    return false;
  };
  for (uint64_t at = 0; at < file.size(); ++at) {
    bool want = (at >= jpeg.size() && at < video) ||
                (at >= video + mp4.xyz_payload && at < video + mp4.xyz_end) ||
                at >= video + mp4.bytes.size();
    if (want) {
      EXPECT_TRUE(filled(at)) << "byte " << at;
    }
  }
  uint64_t frames = video + mp4.bytes.find("frames");
  for (uint64_t at = 0; at < jpeg.size(); ++at) {
    EXPECT_FALSE(filled(at)) << "byte " << at;
  }
  for (uint64_t at = frames; at < frames + 6; ++at) {
    EXPECT_FALSE(filled(at)) << "byte " << at;
  }
}

TEST(TrailerTest, ASecondJpegIsScannedAndChainsAreBounded) {
  Jpeg first;
  std::string a = first.End();
  Jpeg second;
  uint64_t exif = second.Segment(0xE1, absl::StrCat(std::string("Exif\0\0", 6), GpsTiff()));
  std::string b = second.End();
  LocationScan scan = Scan(ScanJpeg, a + b);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t tiff = a.size() + exif + 6;
  std::vector<LocationRange> want = {{tiff + 26, tiff + 40, kExif}};
  EXPECT_EQ(scan.ranges, want);
  // A chain longer than the bound: the JPEGs past it are filled, not walked.
  std::string chain;
  for (int i = 0; i < 6; ++i) chain += a;
  LocationScan deep = Scan(ScanJpeg, chain);
  ASSERT_FALSE(deep.malformed) << deep.error;
  std::vector<LocationRange> filled = {{a.size() * 5, chain.size(), kExif}};
  EXPECT_EQ(deep.ranges, filled);
}

TEST(TrailerTest, ImageDataCutShortHasNoTrailerAndStaysClean) {
  Jpeg j;
  std::string jpeg = j.End();
  for (size_t cut = jpeg.size() - 11; cut < jpeg.size() - 1; ++cut) {
    LocationScan scan = Scan(ScanJpeg, jpeg.substr(0, cut));
    EXPECT_FALSE(scan.malformed) << cut << ": " << scan.error;
    EXPECT_TRUE(scan.ranges.empty()) << cut;
  }
}

TEST(TrailerTest, EntropyDataPastTheSweepBudgetIsUncertain) {
  Jpeg j;
  j.Segment(0xDA, std::string("\x01\x01\x00\x00\x3F\x00", 6));
  j.bytes += std::string(100000, '\x11') + "\xFF\xD9";
  ScanLimits limits;
  limits.max_sweep_bytes = 50000;
  EXPECT_TRUE(Scan(ScanJpeg, j.bytes, limits).malformed);
  limits.max_sweep_bytes = 200000;
  EXPECT_FALSE(Scan(ScanJpeg, j.bytes, limits).malformed);
}

struct Png {
  std::string bytes = std::string("\x89PNG\r\n\x1A\n", 8);
  uint64_t Chunk(absl::string_view type, absl::string_view data) {
    bytes += absl::StrCat(Be32(static_cast<uint32_t>(data.size())), type, data, "CRC!");
    return bytes.size() - 4 - data.size();
  }
};

TEST(PngContainersTest, ChunksOfNoKnownKindAndXmpUnderOtherKeywordsAreFilled) {
  Png p;
  p.Chunk("IHDR", std::string(13, '\x01'));
  uint64_t cabx = p.Chunk("caBX", Box("jumb", Box("jumd", "c2pa")));
  uint64_t cabx_end = p.bytes.size() - 4;
  std::string text = "XML:com.example.xmp\0\0\0\0\0<x:xmpmeta>...</x:xmpmeta>";
  text = std::string("XML:com.example.xmp\0\0\0\0\0", 24) + "<x:xmpmeta>...</x:xmpmeta>";
  uint64_t itxt = p.Chunk("iTXt", text);
  uint64_t itxt_end = p.bytes.size() - 4;
  p.Chunk("tEXt", std::string("Comment\0plain words", 19));
  p.Chunk("pHYs", std::string(9, '\x01'));
  p.Chunk("IDAT", "pixels");
  p.Chunk("IEND", "");
  LocationScan scan = Scan(ScanPng, p.bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{cabx, cabx_end, kExif}, {itxt, itxt_end, kExif}};
  EXPECT_EQ(scan.ranges, want);
}

TEST(PngContainersTest, VideoAfterIendIsWalked) {
  Png p;
  p.Chunk("IHDR", std::string(13, '\x01'));
  p.Chunk("IEND", "");
  std::string png = p.bytes;
  // An MP4 after IEND reads as chunks at first (its ftyp box has a plausible length): those
  // chunks, of no known kind, are filled; what is not whole chunks is a trailer.
  LocationScan scan = Scan(ScanPng, png + LocatedMp4().bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  ASSERT_FALSE(scan.ranges.empty());
  EXPECT_EQ(scan.ranges.front().begin, png.size() + 8);
  Mp4 mp4 = LocatedMp4();
  for (uint64_t b = mp4.xyz_payload; b < mp4.xyz_end; ++b) {
    bool covered = false;
    for (const LocationRange& r : scan.ranges)
      covered |= r.begin <= png.size() + b && png.size() + b < r.end;
    EXPECT_TRUE(covered) << "byte " << b;
  }
}

TEST(WebpContainersTest, ChunksOfNoKnownKindAreFilled) {
  std::string chunks =
      absl::StrCat("VP8 ", Le32(4), "abcd", "C2PA", Le32(8), "jumbjumd", "ICCP", Le32(2), "cc");
  std::string file =
      absl::StrCat("RIFF", Le32(static_cast<uint32_t>(4 + chunks.size())), "WEBP", chunks);
  LocationScan scan = Scan(ScanWebp, file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{12 + 12 + 8, 12 + 12 + 8 + 8, kExif}};
  EXPECT_EQ(scan.ranges, want);
}

TEST(IsobmffContainersTest, UserDataAtomsAndVendorBoxesWithSignaturesAreFilled) {
  std::string ftyp = Box("ftyp", std::string("isom\0\0\0\0isom", 12));
  std::string gpmf = Box("GPMF", GpmfGps());
  // Text atoms are kept, unless they hold a coordinate.
  std::string make = Box("\xA9mak", absl::StrCat(Be16(5), Be16(0x15C7), "Pixel"));
  std::string note =
      Box("\xA9"
          "cmt",
          absl::StrCat(Be16(12), Be16(0x15C7), "+37.77-122.41"));
  std::string moov = Box("moov", Box("udta", gpmf + make + note));
  std::string c2pa_uuid = "\xD8\xFE\xC3\xD6\x1B\x0E\x48\x3C\x92\x97\x58\x28\x87\x7E\xC4\x81";
  std::string c2pa = Box("uuid", c2pa_uuid + Box("jumb", Box("jumd", "c2pa")));
  std::string other = Box("uuid", std::string(16, '\x42') + "sample encryption data");
  std::string file = ftyp + moov + c2pa + other;
  LocationScan scan = Scan(ScanMp4, file);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t gpmf_at = ftyp.size() + 16;
  uint64_t note_at = gpmf_at + gpmf.size() + make.size();
  uint64_t c2pa_at = ftyp.size() + moov.size();
  std::vector<LocationRange> want = {{gpmf_at + 8, gpmf_at + gpmf.size(), kBox},
                                     {note_at + 8, note_at + note.size(), kBox},
                                     {c2pa_at + 24, c2pa_at + c2pa.size(), kBox}};
  EXPECT_EQ(scan.ranges, want);
}

}  // namespace
}  // namespace scopedfs::media
