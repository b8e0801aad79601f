// ScanUnparsed and the signature sweep under it: content no parser understands (unknown formats,
// audio, RIFF files) is uncertain when a metadata signature is in it, an ID3v2 tag or a RIFF
// metadata chunk with one is filled whole, and the sweep is bounded (past its budget: uncertain).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "media/content_facts.h"
#include "media/location/location.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kExif = REDACTION_EXIF_GPS;

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
std::string Le32(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
          static_cast<char>(v >> 24)};
}

const char kPacket[] =
    "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF><rdf:Description "
    "exif:GPSLatitude='37,46.494N'/></rdf:RDF></x:xmpmeta>";

LocationScan Scan(absl::string_view bytes, const ScanLimits& limits = {},
                  MediaFormat format = MediaFormat::kUnknown) {
  MemorySource src(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  return ScanLocation(format, src, limits);
}

// Bytes that look like compressed media: no signature anywhere.
std::string Noise(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (char& c : s) {
    x = x * 1103515245 + 12345;
    c = static_cast<char>((x >> 16) & 0x7F);  // never 0xFF, 0xA9
  }
  return s;
}

void ExpectWholeFileFallback(const LocationScan& scan, uint64_t size) {
  EXPECT_TRUE(scan.malformed);
  for (Redaction kind : {REDACTION_EXIF_GPS, REDACTION_XMP_GPS, REDACTION_ISOBMFF_LOCATION}) {
    LocationRange whole{0, size, kind};
    EXPECT_NE(std::find(scan.fallback.begin(), scan.fallback.end(), whole), scan.fallback.end())
        << "kind " << kind;
  }
}

TEST(ScanUnparsedTest, EachSignatureInUnknownContentIsUncertain) {
  std::string tiff_le = std::string("II*\0", 4) + Le32(8);
  std::string tiff_be = std::string("MM\0*", 4) + Be32(8);
  std::string id3 = std::string("ID3\x03\x00\x00\x00\x00\x01\x00", 10);
  for (std::string sig :
       {std::string("Exif\0\0", 6), tiff_le, tiff_be, std::string("<x:xmpmeta"),
        std::string("<?xpacket begin"), std::string("<rdf:RDF"),
        std::string("http://ns.adobe.com/xap/1.0/"), std::string("\xA9xyz"),
        Be32(16) + "udta" + std::string(8, 'x'), Be32(16) + "meta" + std::string(8, 'x'),
        Be32(16) + "loci" + std::string(8, 'x'), Be32(16) + "GPMF" + std::string(8, 'x'),
        Be32(16) + "jumb" + std::string(8, 'x'), std::string("GPS5l\x14\x00\x01"),
        std::string("DEVC\0\x04", 6), std::string("_PMX"), id3}) {
    std::string file = Noise(1000) + sig + Noise(1000);
    LocationScan scan = Scan(file);
    ExpectWholeFileFallback(scan, file.size());
    EXPECT_NE(scan.error.find("at byte 1000"), std::string::npos) << scan.error;
  }
}

TEST(ScanUnparsedTest, CleanContentAndImplausibleLookalikesAreClean) {
  // Text that names the boxes and headers without their structure: box sizes of printable bytes
  // are far larger than the file, "II*" offsets of printable bytes too.
  std::string text =
      "the meta box and the udta box; II*\x00zzzz; MM\x00*abcd. loci, jumb, GPMF are words here.";
  text += Noise(200000);
  LocationScan scan = Scan(text);
  EXPECT_FALSE(scan.malformed) << scan.error;
  EXPECT_TRUE(scan.ranges.empty());
  EXPECT_EQ(scan.bytes_swept, text.size());
}

TEST(ScanUnparsedTest, SignaturesAcrossSweepBlocksAreFound) {
  // The sweep reads 64 KiB blocks; a signature may straddle any block edge, and a box's size
  // field may sit in the block before its type.
  for (size_t at : {65536 - 1, 65536 - 4, 65536 - 9, 65536 + 3, 2 * 65536 - 30}) {
    for (std::string sig : {std::string("<x:xmpmeta"), Be32(16) + "udta" + std::string(8, 'x'),
                            std::string("http://ns.adobe.com/xap/1.0/")}) {
      std::string file = Noise(at) + sig + Noise(70000);
      LocationScan scan = Scan(file);
      EXPECT_TRUE(scan.malformed) << "at " << at << ": " << sig;
      EXPECT_NE(scan.error.find(absl::StrCat("at byte ", at, ":")), std::string::npos)
          << scan.error;
    }
  }
}

TEST(ScanUnparsedTest, ContentPastTheSweepBudgetIsUncertainBeforeItIsRead) {
  std::string file = Noise(5000);
  ScanLimits limits;
  limits.max_sweep_bytes = 4096;
  LocationScan scan = Scan(file, limits);
  ExpectWholeFileFallback(scan, file.size());
  EXPECT_EQ(scan.bytes_swept, 0u);
  limits.max_sweep_bytes = 5000;
  EXPECT_FALSE(Scan(file, limits).malformed);
}

std::string Id3Tag(absl::string_view frames) {
  uint32_t n = static_cast<uint32_t>(frames.size());
  std::string size = {static_cast<char>((n >> 21) & 0x7F), static_cast<char>((n >> 14) & 0x7F),
                      static_cast<char>((n >> 7) & 0x7F), static_cast<char>(n & 0x7F)};
  return absl::StrCat(std::string("ID3\x03\x00\x00", 6), size, frames);
}

std::string Id3Frame(absl::string_view id, absl::string_view data) {
  return absl::StrCat(id, Be32(static_cast<uint32_t>(data.size())), std::string(2, '\0'), data);
}

// MPEG audio frames: a valid header and no signature in them.
std::string MpegFrames() { return std::string("\xFF\xFB\x90\x64", 4) + Noise(4000); }

TEST(ScanUnparsedTest, Id3TagWithXmpIsFilledWholeAndTheAudioKept) {
  std::string tag = Id3Tag(Id3Frame("PRIV", absl::StrCat(std::string("XMP\0", 4), kPacket)));
  std::string file = tag + MpegFrames();
  LocationScan scan = Scan(file, {}, MediaFormat::kMp3);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{10, tag.size(), kExif}};
  EXPECT_EQ(scan.ranges, want);
  // A tag with text frames only is left alone.
  std::string plain = Id3Tag(Id3Frame("TIT2", std::string("\0A song", 7))) + MpegFrames();
  LocationScan clean = Scan(plain, {}, MediaFormat::kMp3);
  EXPECT_FALSE(clean.malformed) << clean.error;
  EXPECT_TRUE(clean.ranges.empty());
}

TEST(ScanUnparsedTest, Id3TagAfterTheAudioIsUncertain) {
  std::string file =
      MpegFrames() + Id3Tag(Id3Frame("PRIV", absl::StrCat(std::string("XMP\0", 4), kPacket)));
  ExpectWholeFileFallback(Scan(file, {}, MediaFormat::kMp3), file.size());
}

std::string RiffChunk(absl::string_view id, absl::string_view data) {
  std::string c = absl::StrCat(id, Le32(static_cast<uint32_t>(data.size())), data);
  if (data.size() % 2) c += '\0';
  return c;
}

std::string Riff(absl::string_view type, absl::string_view chunks) {
  return absl::StrCat("RIFF", Le32(static_cast<uint32_t>(4 + chunks.size())), type, chunks);
}

TEST(ScanUnparsedTest, RiffMetadataChunksWithSignaturesAreFilledWhole) {
  std::string fmt = RiffChunk("fmt ", std::string(16, '\x01'));
  std::string data = RiffChunk("data", Noise(3000));
  std::string pmx = RiffChunk("_PMX", kPacket);
  std::string info = RiffChunk("LIST", "INFOINAM\x05\0\0\0name\0");
  std::string wav = Riff("WAVE", fmt + info + data + pmx);
  LocationScan scan = Scan(wav, {}, MediaFormat::kWav);
  ASSERT_FALSE(scan.malformed) << scan.error;
  uint64_t pmx_data = wav.size() - pmx.size() + 8;
  std::vector<LocationRange> want = {{pmx_data, pmx_data + strlen(kPacket), kExif}};
  EXPECT_EQ(scan.ranges, want);
  // AVI: the same before the movi list.
  std::string avi = Riff("AVI ", RiffChunk("LIST", "hdrlavih" + Le32(0)) + pmx +
                                     RiffChunk("LIST", "movi" + Noise(500)));
  LocationScan avi_scan = Scan(avi);
  ASSERT_FALSE(avi_scan.malformed) << avi_scan.error;
  ASSERT_EQ(avi_scan.ranges.size(), 1u);
}

TEST(ScanUnparsedTest, SignatureInRiffSampleDataIsUncertain) {
  std::string wav = Riff("WAVE", RiffChunk("fmt ", std::string(16, '\x01')) +
                                     RiffChunk("data", Noise(100) + kPacket + Noise(100)));
  ExpectWholeFileFallback(Scan(wav, {}, MediaFormat::kWav), wav.size());
  // Past the RIFF size, what reads as a chunk is a chunk of no known kind: filled whole.
  std::string riff = Riff("WAVE", RiffChunk("fmt ", std::string(16, '\x01')));
  std::string tail = riff + "xx" + kPacket;
  LocationScan scan = Scan(tail, {}, MediaFormat::kWav);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::vector<LocationRange> want = {{riff.size() + 8, tail.size(), kExif}};
  EXPECT_EQ(scan.ranges, want);
}

TEST(ScanUnparsedTest, EveryFormatGetsAVerdict) {
  // Audio, documents, archives and unknown content are swept; none is served unexamined.
  std::string file = "%PDF-1.4\n" + std::string(kPacket);
  for (MediaFormat format : {MediaFormat::kPdf, MediaFormat::kZip, MediaFormat::kFlac,
                             MediaFormat::kOgg, MediaFormat::kAac, MediaFormat::kUnknown}) {
    EXPECT_TRUE(Scan(file, {}, format).malformed) << FormatName(format);
  }
}

TEST(SniffFormatTest, TiffStructuresUnderOtherMagicsAreTiff) {
  auto sniff = [](absl::string_view head) {
    return SniffFormat(
        absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(head.data()), head.size()));
  };
  for (absl::string_view magic :
       {absl::string_view("IIRO"), absl::string_view("IIRS"), absl::string_view("IIU\0", 4)}) {
    EXPECT_EQ(sniff(absl::StrCat(magic, Le32(8), Noise(40))), MediaFormat::kTiff) << magic;
  }
  EXPECT_EQ(sniff(absl::StrCat("MMOR", Be32(8), Noise(40))), MediaFormat::kTiff);
  EXPECT_EQ(sniff(absl::StrCat(std::string("II+\0\x08\0\0\0", 8), Noise(40))), MediaFormat::kTiff);
  // Text that starts with the same letters is not.
  EXPECT_EQ(sniff("IIIIIIII and so on"), MediaFormat::kUnknown);
  EXPECT_EQ(sniff("MMMM, said the cat"), MediaFormat::kUnknown);
}

TEST(FormatMayCarryLocationTest, RecordingsAreCarriers) {
  for (MediaFormat format : {MediaFormat::kMp3, MediaFormat::kAac, MediaFormat::kFlac,
                             MediaFormat::kOgg, MediaFormat::kWav}) {
    EXPECT_TRUE(FormatMayCarryLocation(format)) << FormatName(format);
  }
}

}  // namespace
}  // namespace scopedfs::media
