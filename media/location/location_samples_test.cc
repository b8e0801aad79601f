// The location parsers on real files: photos and videos that ImageMagick, exiftool and ffmpeg
// made at build time (tests/media/make_samples.sh), as users' devices would hold them. What is
// left after redaction is judged by the coordinates the samples were made with
// (tests/media/sample_secrets.h), not by scanning again with the same parsers.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "media/content_facts.h"
#include "media/location/location.h"
#include "tests/media/sample_secrets.h"

namespace scopedfs::media {
namespace {

constexpr uint32_t kAllKinds =
    (1u << REDACTION_EXIF_GPS) | (1u << REDACTION_XMP_GPS) | (1u << REDACTION_ISOBMFF_LOCATION);

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

LocationScan Scan(const std::string& bytes) {
  MemorySource source(Bytes(bytes));
  MediaFormat format = SniffFormat(Bytes(bytes).subspan(0, kSniffBytes));
  return ScanLocation(format, source);
}

std::string Redact(const std::string& bytes, const LocationScan& scan) {
  std::string out = bytes;
  ApplyFills(PlanFills(scan.ranges, kAllKinds), 0,
             absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  return out;
}

struct Expectation {
  const char* name;
  MediaFormat format;
  std::vector<Redaction> kinds;  // kinds of range the sample must yield
};

const std::vector<Expectation>& Expectations() {
  static const auto* all = new std::vector<Expectation>{
      Expectation{"gps.jpg", MediaFormat::kJpeg, {REDACTION_EXIF_GPS, REDACTION_XMP_GPS}},
      Expectation{"gps_le.jpg", MediaFormat::kJpeg, {REDACTION_EXIF_GPS}},
      Expectation{"gps.png", MediaFormat::kPng, {REDACTION_EXIF_GPS, REDACTION_XMP_GPS}},
      Expectation{"gps.webp", MediaFormat::kWebp, {REDACTION_EXIF_GPS, REDACTION_XMP_GPS}},
      Expectation{"gps.heic", MediaFormat::kHeif, {REDACTION_EXIF_GPS, REDACTION_XMP_GPS}},
      Expectation{"gps.avif", MediaFormat::kAvif, {REDACTION_EXIF_GPS, REDACTION_XMP_GPS}},
      Expectation{"loc.mp4", MediaFormat::kMp4, {REDACTION_ISOBMFF_LOCATION}},
      Expectation{"loc.mov", MediaFormat::kQuickTime, {REDACTION_ISOBMFF_LOCATION}},
      Expectation{"keys.mov", MediaFormat::kQuickTime, {REDACTION_ISOBMFF_LOCATION}},
      Expectation{"loc.3gp", MediaFormat::k3gp, {REDACTION_ISOBMFF_LOCATION}},
      Expectation{"loc.m4a", MediaFormat::kM4a, {REDACTION_ISOBMFF_LOCATION}}};
  return *all;
}

class SamplesTest : public testing::TestWithParam<Expectation> {};

TEST_P(SamplesTest, FindsTheLocationToolsWroteAndNothingAfterRedaction) {
  const Expectation& e = GetParam();
  std::string bytes = Slurp(std::string("tests/media/") + e.name);
  ASSERT_FALSE(bytes.empty()) << e.name;
  EXPECT_EQ(FormatName(SniffFormat(Bytes(bytes).subspan(0, kSniffBytes))), FormatName(e.format));
  LocationScan scan = Scan(bytes);
  ASSERT_FALSE(scan.malformed) << scan.error;
  std::map<Redaction, int> found;
  for (const LocationRange& r : scan.ranges) {
    EXPECT_LT(r.begin, r.end);
    EXPECT_LE(r.end, bytes.size());
    ++found[r.kind];
  }
  for (Redaction kind : e.kinds) {
    EXPECT_GT(found[kind], 0) << Redaction_Name(kind) << " not found in " << e.name;
  }
  EXPECT_EQ(found.size(), e.kinds.size()) << "unexpected kinds of range in " << e.name;

  // The redacted copy holds none of the bytes the location was written as, and still parses.
  std::string redacted = Redact(bytes, scan);
  EXPECT_TRUE(redacted != bytes) << e.name << ": nothing was filled";
  const tests::SampleSecrets* secrets = nullptr;
  for (const tests::SampleSecrets& s : tests::AllSampleSecrets()) {
    if (s.name == e.name) secrets = &s;
  }
  ASSERT_NE(secrets, nullptr) << e.name << " has no secrets in tests/media/sample_secrets.h";
  for (const std::string& secret : secrets->secrets) {
    ASSERT_NE(bytes.find(secret), std::string::npos)
        << e.name << " lacks a secret it was made with";
    EXPECT_EQ(redacted.find(secret), std::string::npos)
        << e.name << ": a location secret is left after redaction";
  }
  LocationScan again = Scan(redacted);
  EXPECT_FALSE(again.malformed) << again.error;
}

// Every sample that carries location is tested here.
TEST(SamplesListTest, EverySampleWithSecretsIsTested) {
  for (const tests::SampleSecrets& s : tests::AllSampleSecrets()) {
    bool tested = false;
    for (const Expectation& e : Expectations()) tested = tested || s.name == e.name;
    EXPECT_TRUE(tested) << s.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Media, SamplesTest, testing::ValuesIn(Expectations()),
                         [](const testing::TestParamInfo<Expectation>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return name;
                         });

TEST(CleanSamplesTest, NoLocationNoRanges) {
  for (const char* name : {"clean.jpg", "clean.mp4"}) {
    SCOPED_TRACE(name);
    std::string bytes = Slurp(std::string("tests/media/") + name);
    ASSERT_FALSE(bytes.empty());
    LocationScan scan = Scan(bytes);
    EXPECT_FALSE(scan.malformed) << scan.error;
    EXPECT_TRUE(scan.ranges.empty());
  }
}

}  // namespace
}  // namespace scopedfs::media
