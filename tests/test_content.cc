// The mount harness's test content (see mount_harness.h): deterministic bytes, files that sniff
// as each media format, and the default layout's names.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {

std::string Pattern(size_t size, uint32_t seed) {
  std::string out(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1103515245u + 12345u;
    out[i] = static_cast<char>(x >> 24);
  }
  return out;
}

namespace {
std::string WithMagic(absl::string_view magic, size_t size, uint32_t seed) {
  std::string out = Pattern(std::max(size, magic.size()), seed);
  out.replace(0, magic.size(), magic.data(), magic.size());
  return out;
}
}  // namespace

std::string JpegBytes(size_t size) {
  static constexpr char kMagic[] = "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00";
  return WithMagic(absl::string_view(kMagic, sizeof(kMagic) - 1), size, 1);
}

std::string Mp4Bytes(size_t size) {
  static constexpr char kMagic[] =
      "\x00\x00\x00\x18"
      "ftypisom\x00\x00\x02\x00isommp41";
  return WithMagic(absl::string_view(kMagic, sizeof(kMagic) - 1), size, 2);
}

std::string Mp3Bytes(size_t size) {
  static constexpr char kMagic[] = "ID3\x04\x00\x00\x00\x00\x00\x00";
  return WithMagic(absl::string_view(kMagic, sizeof(kMagic) - 1), size, 3);
}

std::string GpsExiftoolFinds(const std::string& bytes, const std::string& copy_path) {
  FILE* f = fopen(copy_path.c_str(), "w");
  if (f == nullptr) return absl::StrCat("cannot write a copy to ", copy_path);
  size_t written = fwrite(bytes.data(), 1, bytes.size(), f);
  if (fclose(f) != 0 || written != bytes.size()) return "cannot write a copy";
  std::string out;
  RunCommand({"exiftool", "-q", "-q", "-n", "-p", "$GPSLatitude $GPSLongitude", copy_path}, &out);
  return std::string(absl::StripAsciiWhitespace(out));
}

std::string AndroidRulesUnderPosixSemantics() {
  std::string policy = ReadFileOrDie("policy/configs/android-strict.textproto");
  const std::string kAndroid = "semantics: SEMANTICS_ANDROID";
  size_t at = policy.find(kAndroid);
  EXPECT_NE(at, std::string::npos) << "android-strict.textproto names no semantics";
  if (at == std::string::npos) return "";
  policy.replace(at, kAndroid.size(), "semantics: SEMANTICS_POSIX");
  std::string path = absl::StrCat(::testing::TempDir(), "/android_rules_posix.textproto");
  std::ofstream(path) << policy;
  return path;
}

std::string PdfBytes(size_t size) {
  std::string out = "%PDF-1.7\n";
  while (out.size() < size) out += "% scopedfs test document\n";
  out.resize(size);
  return out;
}

const std::vector<std::string>& DefaultTopLevelDirs() {
  static const auto* dirs = new std::vector<std::string>{
      "Alarms", "Android",       "Audiobooks", "DCIM",     "Documents",  "Download", "Movies",
      "Music",  "Notifications", "Pictures",   "Podcasts", "Recordings", "Ringtones"};
  return *dirs;
}

}  // namespace scopedfs::tests
