// Tests for content_facts: every sample is a hand-made minimal header built from the public format
// specs, so the tests need no media files or external tools.

#include "media/content_facts.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace scopedfs::media {

// Readable failure messages for the enum class (found by ADL, so outside the anonymous namespace).
void PrintTo(MediaFormat format, std::ostream* os) { *os << FormatName(format); }

namespace {

using namespace std::string_view_literals;  // NOLINT: "\0"sv keeps embedded NULs.
using Bytes = std::vector<uint8_t>;

Bytes B(std::string_view text) { return Bytes(text.begin(), text.end()); }

Bytes B(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out.push_back(static_cast<uint8_t>(v));
  return out;
}

Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

Bytes Be32(uint32_t v) {
  return B({int(v >> 24), int((v >> 16) & 0xFF), int((v >> 8) & 0xFF), int(v & 0xFF)});
}

// An exact-size copy, so that under ASan any read past `n` bytes is a heap overflow.
Bytes Prefix(const Bytes& bytes, size_t n) { return Bytes(bytes.begin(), bytes.begin() + n); }

MediaFormat Sniff(const Bytes& bytes) { return SniffFormat(absl::MakeConstSpan(bytes)); }

// ftyp box: size, "ftyp", major brand, minor version 0, compatible brands. `declared_size`
// overrides the size field (0 keeps the true size).
Bytes Ftyp(std::string_view major, std::vector<std::string_view> compatible,
           uint32_t declared_size = 0) {
  const uint32_t size = static_cast<uint32_t>(16 + 4 * compatible.size());
  Bytes box = Cat({Be32(declared_size != 0 ? declared_size : size), B("ftyp"), B(major), Be32(0)});
  for (std::string_view brand : compatible) box = Cat({box, B(brand)});
  return box;
}

// EBML header as mkvmerge writes it: versions, max ID/size lengths, DocType, DocType versions.
// With `wide_sizes` every size field uses the 8-byte form, as some older muxers did.
Bytes Ebml(std::string_view doc_type, bool wide_sizes = false) {
  auto size = [&](size_t n) {
    if (!wide_sizes) return B({int(0x80 | n)});
    return B({0x01, 0, 0, 0, 0, 0, 0, int(n)});
  };
  const Bytes body = Cat({
      B({0x42, 0x86}), size(1),
      B({0x01}),  // EBMLVersion 1
      B({0x42, 0xF7}), size(1),
      B({0x01}),  // EBMLReadVersion 1
      B({0x42, 0xF2}), size(1),
      B({0x04}),  // EBMLMaxIDLength 4
      B({0x42, 0xF3}), size(1),
      B({0x08}),  // EBMLMaxSizeLength 8
      B({0x42, 0x82}), size(doc_type.size()),
      B(doc_type),  // DocType
      B({0x42, 0x87}), size(1),
      B({0x04}),  // DocTypeVersion 4
      B({0x42, 0x85}), size(1),
      B({0x02}),  // DocTypeReadVersion 2
  });
  return Cat({B({0x1A, 0x45, 0xDF, 0xA3}), size(body.size()), body});
}

// ---- Samples ------------------------------------------------------------------------------------

Bytes Jpeg() {
  return Cat({B({0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10}), B("JFIF\0"sv),
              B({0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00})});
}
Bytes Png() {
  return Cat(
      {B({0x89}), B("PNG\r\n\x1A\n"), Be32(13), B("IHDR"), Be32(1), Be32(1), B({8, 6, 0, 0, 0})});
}
Bytes Gif87() { return Cat({B("GIF87a"), B({1, 0, 1, 0, 0x80, 0, 0})}); }
Bytes Gif89() { return Cat({B("GIF89a"), B({1, 0, 1, 0, 0x80, 0, 0})}); }
Bytes Webp() {
  return Cat({B("RIFF"), B({0x24, 0, 0, 0}), B("WEBPVP8L"), B({0x0D, 0, 0, 0, 0x2F})});
}
Bytes Wav() {
  return Cat({B("RIFF"), B({0x24, 0, 0, 0}), B("WAVEfmt "), B({16, 0, 0, 0, 1, 0, 2, 0})});
}
Bytes Heic() { return Ftyp("heic", {"mif1", "heic"}); }
Bytes Avif() { return Ftyp("avif", {"avif", "mif1", "miaf", "MA1B"}); }
Bytes Mp4() { return Ftyp("isom", {"isom", "iso2", "avc1", "mp41"}); }
Bytes MovFtyp() { return Ftyp("qt  ", {"qt  "}); }
Bytes MovClassic() { return Cat({Be32(0x6C), B("moov"), Be32(0x64), B("mvhd")}); }
Bytes ThreeGp() { return Ftyp("3gp4", {"isom", "3gp4"}); }
Bytes M4a() { return Ftyp("M4A ", {"M4A ", "mp42", "isom"}); }
Bytes Mkv() { return Ebml("matroska"); }
Bytes Webm() { return Ebml("webm"); }
Bytes Mp3Id3() { return Cat({B("ID3"), B({4, 0, 0, 0, 0, 0, 0x0A})}); }
// MPEG-1 Layer III, 128 kbit/s, 44.1 kHz.
Bytes Mp3Frame() { return B({0xFF, 0xFB, 0x90, 0x64, 0, 0, 0, 0}); }
// ADTS, AAC LC, 44.1 kHz, stereo, 16-byte frame, no CRC.
Bytes Aac() { return B({0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC}); }
Bytes Flac() { return Cat({B("fLaC"), B({0x00, 0x00, 0x00, 0x22})}); }
Bytes Ogg() { return Cat({B("OggS"), B({0x00, 0x02}), Bytes(8, 0)}); }
Bytes Pdf() { return B("%PDF-1.7\n%\xE2\xE3\xCF\xD3\n"); }
Bytes Zip() { return Cat({B("PK\x03\x04"), B({0x14, 0, 0, 0, 8, 0})}); }

struct Sample {
  std::string name;
  Bytes bytes;
  MediaFormat format;
};

void PrintTo(const Sample& sample, std::ostream* os) { *os << sample.name; }

std::vector<Sample> AllSamples() {
  return {
      {"jpeg", Jpeg(), MediaFormat::kJpeg},
      {"png", Png(), MediaFormat::kPng},
      {"gif87a", Gif87(), MediaFormat::kGif},
      {"gif89a", Gif89(), MediaFormat::kGif},
      {"webp", Webp(), MediaFormat::kWebp},
      {"wav", Wav(), MediaFormat::kWav},
      {"heic", Heic(), MediaFormat::kHeif},
      {"avif", Avif(), MediaFormat::kAvif},
      {"mp4", Mp4(), MediaFormat::kMp4},
      {"mov_ftyp", MovFtyp(), MediaFormat::kQuickTime},
      {"mov_classic", MovClassic(), MediaFormat::kQuickTime},
      {"threegp", ThreeGp(), MediaFormat::k3gp},
      {"m4a", M4a(), MediaFormat::kM4a},
      {"matroska", Mkv(), MediaFormat::kMatroska},
      {"matroska_wide_sizes", Ebml("matroska", /*wide_sizes=*/true), MediaFormat::kMatroska},
      {"webm", Webm(), MediaFormat::kWebm},
      {"mp3_id3", Mp3Id3(), MediaFormat::kMp3},
      {"mp3_frame", Mp3Frame(), MediaFormat::kMp3},
      {"aac_adts", Aac(), MediaFormat::kAac},
      {"flac", Flac(), MediaFormat::kFlac},
      {"ogg", Ogg(), MediaFormat::kOgg},
      {"pdf", Pdf(), MediaFormat::kPdf},
      {"zip", Zip(), MediaFormat::kZip},
  };
}

class SampleTest : public testing::TestWithParam<Sample> {};

TEST_P(SampleTest, IsRecognised) { EXPECT_EQ(Sniff(GetParam().bytes), GetParam().format); }

// Every truncation of a valid header is either still recognised as the same format or unknown;
// under ASan this also proves no read goes past the span.
TEST_P(SampleTest, TruncationsAreUnknownOrSameFormat) {
  const Sample& sample = GetParam();
  for (size_t n = 0; n < sample.bytes.size(); ++n) {
    const MediaFormat format = Sniff(Prefix(sample.bytes, n));
    EXPECT_TRUE(format == MediaFormat::kUnknown || format == sample.format)
        << "prefix of " << n << " bytes sniffed as " << FormatName(format);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, SampleTest, testing::ValuesIn(AllSamples()),
                         [](const auto& info) { return info.param.name; });

// ---- Generic ------------------------------------------------------------------------------------

TEST(SniffFormatTest, EmptyInputIsUnknown) {
  EXPECT_EQ(SniffFormat(absl::Span<const uint8_t>()), MediaFormat::kUnknown);
}

TEST(SniffFormatTest, ZeroBytesAreUnknown) {
  EXPECT_EQ(Sniff(Bytes(64, 0)), MediaFormat::kUnknown);
}

TEST(SniffFormatTest, TextIsUnknown) {
  EXPECT_EQ(Sniff(B("hello, world\nthis is not media\n")), MediaFormat::kUnknown);
}

// ---- Still images -------------------------------------------------------------------------------

TEST(SniffFormatTest, PngFirstThreeBytesAreUnknown) {
  EXPECT_EQ(Sniff(Prefix(Png(), 3)), MediaFormat::kUnknown);
}

TEST(SniffFormatTest, PngWithLineEndingsMangledIsUnknown) {
  // The CR LF in the signature exists to catch text-mode transfers that turn it into LF.
  Bytes mangled = Cat({B({0x89}), B("PNG\n\x1A\n"), Be32(13), B("IHDR")});
  EXPECT_EQ(Sniff(mangled), MediaFormat::kUnknown);
}

TEST(SniffFormatTest, JpegNeedsThirdMarkerByte) {
  EXPECT_EQ(Sniff(B({0xFF, 0xD8, 0x00, 0xE0})), MediaFormat::kUnknown);
}

TEST(SniffFormatTest, GifWithUnknownVersionIsUnknown) {
  EXPECT_EQ(Sniff(Cat({B("GIF88a"), B({1, 0, 1, 0})})), MediaFormat::kUnknown);
}

TEST(SniffFormatTest, RiffWithOtherFormTypeIsUnknown) {
  EXPECT_EQ(Sniff(Cat({B("RIFF"), B({0x24, 0, 0, 0}), B("AVI LIST")})), MediaFormat::kUnknown);
}

TEST(SniffFormatTest, Rf64WaveIsWav) {
  EXPECT_EQ(Sniff(Cat({B("RF64"), B({0xFF, 0xFF, 0xFF, 0xFF}), B("WAVEds64")})), MediaFormat::kWav);
}

// ---- ISO-BMFF brands ----------------------------------------------------------------------------

class BrandTest : public testing::TestWithParam<std::pair<std::string_view, MediaFormat>> {};

TEST_P(BrandTest, MajorBrandDecides) {
  const auto& [brand, format] = GetParam();
  EXPECT_EQ(Sniff(Ftyp(brand, {})), format) << brand;
}

INSTANTIATE_TEST_SUITE_P(
    Brands, BrandTest,
    testing::Values(
        std::pair{"heic"sv, MediaFormat::kHeif}, std::pair{"heix"sv, MediaFormat::kHeif},
        std::pair{"hevc"sv, MediaFormat::kHeif}, std::pair{"hevx"sv, MediaFormat::kHeif},
        std::pair{"heim"sv, MediaFormat::kHeif}, std::pair{"heis"sv, MediaFormat::kHeif},
        std::pair{"mif1"sv, MediaFormat::kHeif}, std::pair{"msf1"sv, MediaFormat::kHeif},
        std::pair{"avif"sv, MediaFormat::kAvif}, std::pair{"avis"sv, MediaFormat::kAvif},
        std::pair{"isom"sv, MediaFormat::kMp4}, std::pair{"iso2"sv, MediaFormat::kMp4},
        std::pair{"iso6"sv, MediaFormat::kMp4}, std::pair{"mp41"sv, MediaFormat::kMp4},
        std::pair{"mp42"sv, MediaFormat::kMp4}, std::pair{"avc1"sv, MediaFormat::kMp4},
        std::pair{"M4V "sv, MediaFormat::kMp4}, std::pair{"dash"sv, MediaFormat::kMp4},
        std::pair{"mmp4"sv, MediaFormat::kMp4}, std::pair{"f4v "sv, MediaFormat::kMp4},
        std::pair{"qt  "sv, MediaFormat::kQuickTime}, std::pair{"3gp4"sv, MediaFormat::k3gp},
        std::pair{"3gp6"sv, MediaFormat::k3gp}, std::pair{"3g2a"sv, MediaFormat::k3gp},
        std::pair{"M4A "sv, MediaFormat::kM4a}, std::pair{"M4B "sv, MediaFormat::kM4a},
        std::pair{"M4P "sv, MediaFormat::kM4a}, std::pair{"m4a "sv, MediaFormat::kUnknown},
        std::pair{"jxl "sv, MediaFormat::kUnknown}),
    [](const auto& info) {
      std::string name;
      for (char c : info.param.first) name += (c == ' ') ? '_' : c;
      return name;
    });

TEST(SniffFtypTest, MajorBrandWinsOverCompatibleBrands) {
  EXPECT_EQ(Sniff(Ftyp("M4A ", {"isom", "mp42"})), MediaFormat::kM4a);
}

TEST(SniffFtypTest, UnknownMajorBrandFallsBackToFirstKnownCompatibleBrand) {
  // Canon CR3 and similar vendor formats name themselves first and list isom after.
  EXPECT_EQ(Sniff(Ftyp("crx ", {"crx ", "isom", "M4A "})), MediaFormat::kMp4);
}

TEST(SniffFtypTest, HeifCompatibleBrandOutranksEarlierGenericBrand) {
  EXPECT_EQ(Sniff(Ftyp("XXXX", {"iso8", "mif1", "miaf"})), MediaFormat::kHeif);
}

TEST(SniffFtypTest, StructuralMajorBrandWithAvifCompatibleBrandIsAvif) {
  EXPECT_EQ(Sniff(Ftyp("mif1", {"mif1", "miaf", "avif"})), MediaFormat::kAvif);
}

TEST(SniffFtypTest, StructuralMajorBrandWithVideoCompatibleBrandStaysHeif) {
  EXPECT_EQ(Sniff(Ftyp("msf1", {"iso8", "mp42"})), MediaFormat::kHeif);
}

TEST(SniffFtypTest, NoKnownBrandIsUnknown) {
  EXPECT_EQ(Sniff(Ftyp("XXXX", {"YYYY", "miaf"})), MediaFormat::kUnknown);
}

class FtypBadSizeTest : public testing::TestWithParam<uint32_t> {};

// Sizes 0 and 1 are ISO-BMFF escapes (to end of file, 64-bit size) that no ftyp uses; below 16
// the box cannot hold its major brand and minor version.
TEST_P(FtypBadSizeTest, IsUnknown) {
  Bytes box = Ftyp("isom", {"isom", "mp41"});
  const Bytes size = Be32(GetParam());
  std::copy(size.begin(), size.end(), box.begin());
  EXPECT_EQ(Sniff(box), MediaFormat::kUnknown);
}

INSTANTIATE_TEST_SUITE_P(Sizes, FtypBadSizeTest, testing::Values(0u, 1u, 7u, 8u, 12u, 15u));

TEST(SniffFtypTest, BoxLongerThanHeadIsJudgedOnVisibleBrands) {
  EXPECT_EQ(Sniff(Ftyp("mp42", {"isom"}, /*declared_size=*/0x1000)), MediaFormat::kMp4);
}

TEST(SniffFtypTest, CompatibleBrandCutOffByHeadIsNotRead) {
  const Bytes box = Ftyp("XXXX", {"YYYY", "heic"}, /*declared_size=*/0x1000);
  EXPECT_EQ(Sniff(Prefix(box, box.size() - 1)), MediaFormat::kUnknown);
}

TEST(SniffFtypTest, BrandsAfterTheBoxAreNotCompatibleBrands) {
  // A 16-byte ftyp with no compatible brands, then bytes that spell "heic" in the next box.
  EXPECT_EQ(Sniff(Cat({Ftyp("XXXX", {}), Be32(8), B("heic")})), MediaFormat::kUnknown);
}

TEST(SniffFtypTest, MajorBrandNeedsTwelveBytes) {
  EXPECT_EQ(Sniff(Prefix(Mp4(), 11)), MediaFormat::kUnknown);
}

// ---- Classic QuickTime --------------------------------------------------------------------------

class ClassicAtomTest : public testing::TestWithParam<std::string_view> {};

TEST_P(ClassicAtomTest, LeadingAtomIsQuickTime) {
  EXPECT_EQ(Sniff(Cat({Be32(8), B(GetParam()), Be32(8), B("mdat")})), MediaFormat::kQuickTime);
}

INSTANTIATE_TEST_SUITE_P(Atoms, ClassicAtomTest,
                         testing::Values("moov"sv, "mdat"sv, "wide"sv, "free"sv, "skip"sv,
                                         "pnot"sv));

TEST(SniffQuickTimeTest, AtomSmallerThanItsHeaderIsUnknown) {
  EXPECT_EQ(Sniff(Cat({Be32(7), B("moov"), Be32(8), B("mvhd")})), MediaFormat::kUnknown);
}

TEST(SniffQuickTimeTest, OtherLeadingAtomIsUnknown) {
  EXPECT_EQ(Sniff(Cat({Be32(16), B("abcd"), Be32(8), B("mdat")})), MediaFormat::kUnknown);
}

// ---- Matroska / WebM ----------------------------------------------------------------------------

TEST(SniffEbmlTest, DocTypeBeyondByte64IsFoundWithinSniffBytes) {
  const Bytes header = Ebml("matroska", /*wide_sizes=*/true);
  ASSERT_GT(header.size(), 64u);  // the case that made kSniffBytes grow
  ASSERT_LE(header.size(), kSniffBytes);
  EXPECT_EQ(Sniff(header), MediaFormat::kMatroska);
}

TEST(SniffEbmlTest, ZeroPaddedDocTypeIsRecognised) {
  EXPECT_EQ(Sniff(Ebml("webm\0\0\0\0"sv)), MediaFormat::kWebm);
}

TEST(SniffEbmlTest, OtherDocTypeIsUnknown) {
  EXPECT_EQ(Sniff(Ebml("webmx")), MediaFormat::kUnknown);
}

TEST(SniffEbmlTest, MagicAloneIsUnknown) {
  EXPECT_EQ(Sniff(B({0x1A, 0x45, 0xDF, 0xA3})), MediaFormat::kUnknown);
}

TEST(SniffEbmlTest, DocTypeCutOffByHeadIsUnknown) {
  EXPECT_EQ(Sniff(Prefix(Mkv(), Mkv().size() - 12)), MediaFormat::kUnknown);
}

TEST(SniffEbmlTest, DocTypeAfterTheHeaderIsIgnored) {
  // The header holds only EBMLVersion; the DocType-looking bytes follow it.
  const Bytes bytes = Cat({B({0x1A, 0x45, 0xDF, 0xA3, 0x84, 0x42, 0x86, 0x81, 0x01}),
                           B({0x42, 0x82, 0x84}), B("webm")});
  EXPECT_EQ(Sniff(bytes), MediaFormat::kUnknown);
}

TEST(SniffEbmlTest, DocTypeBytesInsideAnotherValueAreSkipped) {
  // An EBMLVoid (0xEC) whose payload looks like a "webm" DocType precedes the real one.
  const Bytes body =
      Cat({B({0xEC, 0x87, 0x42, 0x82, 0x84}), B("webm"), B({0x42, 0x82, 0x88}), B("matroska")});
  const Bytes bytes = Cat({B({0x1A, 0x45, 0xDF, 0xA3, int(0x80 | body.size())}), body});
  EXPECT_EQ(Sniff(bytes), MediaFormat::kMatroska);
}

TEST(SniffEbmlTest, ElementIdLongerThanFourBytesIsUnknown) {
  // EBMLMaxIDLength is 4 in every EBML header, so a 5-byte ID means this is not one.
  const Bytes body =
      Cat({B({0x08, 0x01, 0x02, 0x03, 0x04, 0x81, 0x00, 0x42, 0x82, 0x84}), B("webm")});
  const Bytes bytes = Cat({B({0x1A, 0x45, 0xDF, 0xA3, int(0x80 | body.size())}), body});
  EXPECT_EQ(Sniff(bytes), MediaFormat::kUnknown);
}

TEST(SniffEbmlTest, UnknownHeaderSizeIsUnknown) {
  Bytes bytes = Webm();
  bytes[4] = 0xFF;  // one-byte size with every value bit set: "unknown size"
  EXPECT_EQ(Sniff(bytes), MediaFormat::kUnknown);
}

// ---- MPEG audio, AAC, Ogg -----------------------------------------------------------------------

TEST(SniffAudioTest, Id3WithImpossibleVersionIsUnknown) {
  EXPECT_EQ(Sniff(Cat({B("ID3"), B({0xFF, 0, 0, 0, 0, 0, 0x0A})})), MediaFormat::kUnknown);
}

TEST(SniffAudioTest, Id3WithNonSyncsafeSizeIsUnknown) {
  EXPECT_EQ(Sniff(Cat({B("ID3"), B({3, 0, 0, 0x80, 0, 0, 0x0A})})), MediaFormat::kUnknown);
}

class MpegFrameTest : public testing::TestWithParam<std::pair<Bytes, MediaFormat>> {};

TEST_P(MpegFrameTest, Sniffs) { EXPECT_EQ(Sniff(GetParam().first), GetParam().second); }

INSTANTIATE_TEST_SUITE_P(
    Headers, MpegFrameTest,
    testing::Values(
        std::pair{B({0xFF, 0xF3, 0x90, 0xC4}), MediaFormat::kMp3},      // MPEG-2 Layer III
        std::pair{B({0xFF, 0xE3, 0x90, 0xC4}), MediaFormat::kMp3},      // MPEG-2.5 Layer III
        std::pair{B({0xFF, 0xFD, 0x90, 0x04}), MediaFormat::kMp3},      // MPEG-1 Layer II
        std::pair{B({0xFF, 0xEB, 0x90, 0x64}), MediaFormat::kUnknown},  // reserved version 01
        std::pair{B({0xFF, 0xFB, 0xF0, 0x64}), MediaFormat::kUnknown},  // bitrate index 1111
        std::pair{B({0xFF, 0xFB, 0x00, 0x64}), MediaFormat::kUnknown},  // free-format bitrate
        std::pair{B({0xFF, 0xFB, 0x9C, 0x64}), MediaFormat::kUnknown},  // sample rate index 11
        std::pair{B({0xFF, 0xFB, 0x90, 0x66}), MediaFormat::kUnknown},  // emphasis 10
        std::pair{B({0xFF, 0xFB, 0x90}), MediaFormat::kUnknown}));      // truncated

TEST(SniffAudioTest, Mpeg2AdtsIsAac) {
  EXPECT_EQ(Sniff(B({0xFF, 0xF9, 0x50, 0x80, 0x02, 0x1F, 0xFC})), MediaFormat::kAac);
}

TEST(SniffAudioTest, AdtsWithCrcIsAac) {
  EXPECT_EQ(Sniff(B({0xFF, 0xF0, 0x50, 0x80, 0x02, 0x1F, 0xFC})), MediaFormat::kAac);
}

TEST(SniffAudioTest, AdtsWithReservedSampleRateIsUnknown) {
  // Sampling-frequency index 13 (bits 2..5 of byte 2).
  EXPECT_EQ(Sniff(B({0xFF, 0xF1, 0x74, 0x80, 0x02, 0x1F, 0xFC})), MediaFormat::kUnknown);
}

TEST(SniffAudioTest, AdtsFrameShorterThanItsHeaderIsUnknown) {
  EXPECT_EQ(Sniff(B({0xFF, 0xF1, 0x50, 0x80, 0x00, 0x1F, 0xFC})), MediaFormat::kUnknown);
}

TEST(SniffAudioTest, OggWithNonZeroStreamVersionIsUnknown) {
  EXPECT_EQ(Sniff(Cat({B("OggS"), B({0x01, 0x02})})), MediaFormat::kUnknown);
}

// ---- FormatName ---------------------------------------------------------------------------------

TEST(FormatNameTest, EveryFormatHasADistinctLowerCaseName) {
  std::set<std::string> seen;
  for (int i = 0; i <= static_cast<int>(MediaFormat::kZip); ++i) {
    const std::string name(FormatName(static_cast<MediaFormat>(i)));
    EXPECT_FALSE(name.empty()) << i;
    for (char c : name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << name;
    EXPECT_TRUE(seen.insert(name).second) << "duplicate " << name;
  }
}

TEST(FormatNameTest, NamesMatchTheDocumentedSpelling) {
  EXPECT_EQ(FormatName(MediaFormat::kUnknown), "unknown");
  EXPECT_EQ(FormatName(MediaFormat::kJpeg), "jpeg");
  EXPECT_EQ(FormatName(MediaFormat::kQuickTime), "quicktime");
  EXPECT_EQ(FormatName(MediaFormat::k3gp), "3gp");
  EXPECT_EQ(FormatName(MediaFormat::kMatroska), "matroska");
  EXPECT_EQ(FormatName(MediaFormat::kZip), "zip");
}

TEST(FormatNameTest, OutOfRangeValueIsUnknown) {
  EXPECT_EQ(FormatName(static_cast<MediaFormat>(200)), "unknown");
}

// ---- ClassOfName --------------------------------------------------------------------------------

struct NameCase {
  std::string name;
  MediaClass media_class;
};

void PrintTo(const NameCase& name_case, std::ostream* os) { *os << '"' << name_case.name << '"'; }

class ClassOfNameTest : public testing::TestWithParam<NameCase> {};

TEST_P(ClassOfNameTest, ClassifiesExtension) {
  EXPECT_EQ(ClassOfName(GetParam().name), GetParam().media_class) << GetParam().name;
}

std::vector<NameCase> ExtensionCases() {
  std::vector<NameCase> cases;
  for (std::string_view ext :
       {"jpg", "jpeg", "jpe", "png", "gif", "webp", "heic", "heif", "avif", "bmp", "dng"}) {
    cases.push_back({"name." + std::string(ext), MEDIA_CLASS_IMAGE});
  }
  for (std::string_view ext :
       {"mp4", "m4v", "mov", "3gp", "3gpp", "3g2", "mkv", "webm", "ts", "avi"}) {
    cases.push_back({"name." + std::string(ext), MEDIA_CLASS_VIDEO});
  }
  for (std::string_view ext :
       {"mp3", "m4a", "aac", "flac", "ogg", "oga", "opus", "wav", "amr", "mka"}) {
    cases.push_back({"name." + std::string(ext), MEDIA_CLASS_AUDIO});
  }
  return cases;
}

std::string NameCaseLabel(const testing::TestParamInfo<NameCase>& info) {
  std::string label;
  for (char c : info.param.name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    label += alnum ? c : '_';
  }
  return label + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Extensions, ClassOfNameTest, testing::ValuesIn(ExtensionCases()),
                         NameCaseLabel);

INSTANTIATE_TEST_SUITE_P(
    Names, ClassOfNameTest,
    testing::ValuesIn(std::vector<NameCase>{
        {"a.JPG", MEDIA_CLASS_IMAGE},  // case-insensitive
        {"b.Mp4", MEDIA_CLASS_VIDEO},
        {"c.FLAC", MEDIA_CLASS_AUDIO},
        {"d.pdf", MEDIA_CLASS_NONE},
        {"e", MEDIA_CLASS_NONE},  // no extension
        {"f.tar", MEDIA_CLASS_NONE},
        {"g.jpg.txt", MEDIA_CLASS_NONE},  // only the last extension counts
        {"h.txt.jpg", MEDIA_CLASS_IMAGE},
        {"DCIM/Camera/IMG_1.jpg", MEDIA_CLASS_IMAGE},
        {"album.jpg/track", MEDIA_CLASS_NONE},  // the dot is in a directory, not the name
        {"album.jpg/", MEDIA_CLASS_NONE},       // empty last segment
        {".jpg", MEDIA_CLASS_NONE},             // dotfile named "jpg", no extension
        {"Pictures/.jpg", MEDIA_CLASS_NONE},
        {".x.jpg", MEDIA_CLASS_IMAGE},  // dotfile that does have an extension
        {"i.", MEDIA_CLASS_NONE},       // empty extension
        {"", MEDIA_CLASS_NONE},
        {"j.jp", MEDIA_CLASS_NONE},  // no prefix matching
        {"k.jpegx", MEDIA_CLASS_NONE},
        {"l.mp4 ", MEDIA_CLASS_NONE},  // a trailing space is part of the extension
    }),
    NameCaseLabel);

// ---- The format table: FormatName, ClassesOfFormat, FormatMayCarryLocation ---------------------

constexpr uint32_t kImage = 1u << MEDIA_CLASS_IMAGE;
constexpr uint32_t kVideo = 1u << MEDIA_CLASS_VIDEO;
constexpr uint32_t kAudio = 1u << MEDIA_CLASS_AUDIO;

struct FormatRow {
  MediaFormat format;
  const char* name;
  uint32_t classes;
  bool carrier;
};

// Written out apart from the table it checks, one row for every format.
constexpr FormatRow kExpectedFormats[] = {
    {MediaFormat::kUnknown, "unknown", 0, false},
    {MediaFormat::kJpeg, "jpeg", kImage, true},
    {MediaFormat::kPng, "png", kImage, true},
    {MediaFormat::kGif, "gif", kImage, true},
    {MediaFormat::kWebp, "webp", kImage, true},
    {MediaFormat::kHeif, "heif", kImage, true},
    {MediaFormat::kAvif, "avif", kImage, true},
    {MediaFormat::kMp4, "mp4", kVideo | kAudio, true},
    {MediaFormat::kQuickTime, "quicktime", kVideo | kAudio, true},
    {MediaFormat::k3gp, "3gp", kVideo | kAudio, true},
    {MediaFormat::kM4a, "m4a", kAudio, true},
    {MediaFormat::kMatroska, "matroska", kVideo | kAudio, true},
    {MediaFormat::kWebm, "webm", kVideo | kAudio, true},
    {MediaFormat::kMp3, "mp3", kAudio, true},
    {MediaFormat::kAac, "aac", kAudio, true},
    {MediaFormat::kFlac, "flac", kAudio, true},
    {MediaFormat::kOgg, "ogg", kVideo | kAudio, true},
    {MediaFormat::kWav, "wav", kAudio, true},
    {MediaFormat::kPdf, "pdf", 0, false},
    {MediaFormat::kZip, "zip", 0, false},
    {MediaFormat::kTiff, "tiff", kImage, true},
};

// The table, and the rows expected of it, have one row per format in enum order.
TEST(FormatTableTest, EveryFormatHasOneRowInEnumOrder) {
  const absl::Span<const FormatTraits> table = AllFormats();
  ASSERT_EQ(table.size(), static_cast<size_t>(kLastFormat) + 1);
  ASSERT_EQ(std::size(kExpectedFormats), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(table[i].format), i) << table[i].name;
    EXPECT_EQ(static_cast<size_t>(kExpectedFormats[i].format), i) << kExpectedFormats[i].name;
  }
}

class FormatTableRowTest : public testing::TestWithParam<FormatRow> {};

TEST_P(FormatTableRowTest, Entry) {
  const FormatRow& want = GetParam();
  const FormatTraits& row = AllFormats()[static_cast<size_t>(want.format)];
  EXPECT_EQ(row.format, want.format);
  EXPECT_EQ(row.name, want.name);
  EXPECT_EQ(row.classes, want.classes);
  EXPECT_EQ(row.may_carry_location, want.carrier);
  // The three functions read that row.
  EXPECT_EQ(FormatName(want.format), want.name);
  EXPECT_EQ(ClassesOfFormat(want.format), want.classes);
  EXPECT_EQ(FormatMayCarryLocation(want.format), want.carrier);
}

INSTANTIATE_TEST_SUITE_P(Formats, FormatTableRowTest, testing::ValuesIn(kExpectedFormats),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FormatTableTest, AValueOutsideTheEnumReadsAsUnknown) {
  const MediaFormat stray = static_cast<MediaFormat>(200);
  EXPECT_EQ(FormatName(stray), "unknown");
  EXPECT_EQ(ClassesOfFormat(stray), 0u);
  EXPECT_FALSE(FormatMayCarryLocation(stray));
}

// ---- FactsFromName ------------------------------------------------------------------------------

TEST(FactsFromNameTest, ImageNameIsImageWithUnknownLocation) {
  const ContentFacts facts = FactsFromName("DCIM/IMG_1.jpg");
  EXPECT_FALSE(facts.content_known);
  EXPECT_EQ(facts.format, MediaFormat::kUnknown);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_IMAGE);
  EXPECT_EQ(facts.location, LocationPresence::kUnknown);
  EXPECT_TRUE(facts.MayHaveLocation());
}

TEST(FactsFromNameTest, VideoNameHasUnknownLocation) {
  const ContentFacts facts = FactsFromName("clip.MOV");
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_VIDEO);
  EXPECT_EQ(facts.location, LocationPresence::kUnknown);
}

TEST(FactsFromNameTest, AudioNameHasNoLocation) {
  const ContentFacts facts = FactsFromName("song.mp3");
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_AUDIO);
  EXPECT_EQ(facts.location, LocationPresence::kAbsent);
  EXPECT_FALSE(facts.MayHaveLocation());
}

TEST(FactsFromNameTest, DocumentNameIsNone) {
  const ContentFacts facts = FactsFromName("report.pdf");
  EXPECT_FALSE(facts.content_known);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_NONE);
  EXPECT_EQ(facts.location, LocationPresence::kAbsent);
}

// ---- FactsFromContent ---------------------------------------------------------------------------

ContentFacts Facts(std::string_view name, const Bytes& head) {
  return FactsFromContent(absl::string_view(name.data(), name.size()), absl::MakeConstSpan(head));
}

TEST(FactsFromContentTest, PdfNamedJpgIsNotMedia) {
  const ContentFacts facts = Facts("x.jpg", Pdf());
  EXPECT_TRUE(facts.content_known);
  EXPECT_EQ(facts.format, MediaFormat::kPdf);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_NONE);
  EXPECT_EQ(facts.location, LocationPresence::kAbsent);
}

// Not media, but its bytes still carry whatever location they hold (Policy.location_guard).
TEST(FactsFromContentTest, JpegNamedTxtIsNotMediaButMayCarryLocation) {
  const ContentFacts facts = Facts("x.txt", Jpeg());
  EXPECT_EQ(facts.format, MediaFormat::kJpeg);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_NONE);
  EXPECT_EQ(facts.location, LocationPresence::kUnknown);
}

TEST(FactsFromContentTest, TiffIsAnImageThatMayCarryLocation) {
  const Bytes tiff = {'I', 'I', '*', 0, 8, 0, 0, 0};
  const ContentFacts facts = Facts("raw.dng", tiff);
  EXPECT_EQ(facts.format, MediaFormat::kTiff);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_IMAGE);
  EXPECT_TRUE(FormatMayCarryLocation(facts.format));
  EXPECT_EQ(Facts("raw.tif", Bytes{'M', 'M', 0, '*', 0, 0, 0, 8}).format, MediaFormat::kTiff);
}

TEST(FactsFromContentTest, JpegNamedUpperCaseJpgIsImageWithUnknownLocation) {
  const ContentFacts facts = Facts("x.JPG", Jpeg());
  EXPECT_TRUE(facts.content_known);
  EXPECT_EQ(facts.format, MediaFormat::kJpeg);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_IMAGE);
  EXPECT_EQ(facts.location, LocationPresence::kUnknown);
}

TEST(FactsFromContentTest, AudioOnlyBrandNamedMp4IsNotMedia) {
  EXPECT_EQ(Facts("x.mp4", M4a()).media_class, MEDIA_CLASS_NONE);
}

// ISO-BMFF audio holds the same udta location boxes as video.
TEST(FactsFromContentTest, IsomMp4NamedM4aIsAudioThatMayCarryLocation) {
  const ContentFacts facts = Facts("song.m4a", Mp4());
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_AUDIO);
  EXPECT_EQ(facts.location, LocationPresence::kUnknown);
}

TEST(FactsFromContentTest, Mp4NamedMp4IsVideoWithUnknownLocation) {
  const ContentFacts facts = Facts("clip.mp4", Mp4());
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_VIDEO);
  EXPECT_EQ(facts.location, LocationPresence::kUnknown);
}

TEST(FactsFromContentTest, OggNamedOggIsAudio) {
  EXPECT_EQ(Facts("x.ogg", Ogg()).media_class, MEDIA_CLASS_AUDIO);
}

TEST(FactsFromContentTest, MatroskaNamedMkaIsAudio) {
  EXPECT_EQ(Facts("x.mka", Mkv()).media_class, MEDIA_CLASS_AUDIO);
}

// Agreement is per class: both say "image", so a mislabelled image stays an image.
TEST(FactsFromContentTest, WebpNamedPngIsImage) {
  const ContentFacts facts = Facts("x.png", Webp());
  EXPECT_EQ(facts.format, MediaFormat::kWebp);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_IMAGE);
}

TEST(FactsFromContentTest, HeicNamedHeicIsImage) {
  EXPECT_EQ(Facts("IMG_2.HEIC", Heic()).media_class, MEDIA_CLASS_IMAGE);
}

TEST(FactsFromContentTest, VideoContainerNamedJpgIsNotMedia) {
  EXPECT_EQ(Facts("x.jpg", Mp4()).media_class, MEDIA_CLASS_NONE);
}

// A created-but-still-empty x.jpg has no content to back its claim; its CREATE-time facts came
// from FactsFromName.
TEST(FactsFromContentTest, EmptyContentNamedJpgIsNotMedia) {
  const ContentFacts facts = Facts("x.jpg", Bytes());
  EXPECT_TRUE(facts.content_known);
  EXPECT_EQ(facts.format, MediaFormat::kUnknown);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_NONE);
}

// BMP has no MediaFormat yet, so real BMP bytes cannot back the .bmp claim.
TEST(FactsFromContentTest, ExtensionWithoutSniffedFormatIsNotMedia) {
  EXPECT_EQ(Facts("x.bmp", Cat({B("BM"), Bytes(12, 0)})).media_class, MEDIA_CLASS_NONE);
}

TEST(FactsFromContentTest, MatchingDocumentIsStillNone) {
  const ContentFacts facts = Facts("report.pdf", Pdf());
  EXPECT_EQ(facts.format, MediaFormat::kPdf);
  EXPECT_EQ(facts.media_class, MEDIA_CLASS_NONE);
}

}  // namespace
}  // namespace scopedfs::media
