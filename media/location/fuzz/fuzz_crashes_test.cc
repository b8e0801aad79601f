// Replays every input the fuzzers once crashed on (media/location/testdata/fuzz_crashes/<target>-N)
// through the same checks as its fuzz target (scan_invariants.h), in every `bazel test` run and not
// only when tools/fuzz.sh runs: a fixed crash that comes back fails here, with the input's name.
#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "media/location/fuzz/scan_invariants.h"
#include "media/location/location.h"

namespace scopedfs::media {
namespace {

constexpr char kDir[] = "media/location/testdata/fuzz_crashes";

LocationScan AsHeif(ByteSource& source, const ScanLimits& limits) {
  return ScanLocation(MediaFormat::kHeif, source, limits);
}
LocationScan AsMp4(ByteSource& source, const ScanLimits& limits) {
  return ScanLocation(MediaFormat::kMp4, source, limits);
}

// The scan each fuzz target runs, by the target's name (an input's name up to its last '-').
const std::map<std::string, fuzz::ScanFunction>& Targets() {
  static const auto* targets = new std::map<std::string, fuzz::ScanFunction>{
      {"heif", &AsHeif}, {"mp4", &AsMp4},     {"jpeg", &ScanJpeg},
      {"png", &ScanPng}, {"webp", &ScanWebp}, {"unparsed", &ScanUnparsed},
  };
  return *targets;
}

std::vector<std::string> Inputs() {
  std::vector<std::string> names;
  DIR* dir = opendir(kDir);
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') names.push_back(e->d_name);
  }
  closedir(dir);
  return names;
}

TEST(FuzzCrashesTest, EveryReproducerScansWithinItsTargetsPromises) {
  std::vector<std::string> names = Inputs();
  ASSERT_FALSE(names.empty()) << "no reproducers under " << kDir;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    auto target = Targets().find(name.substr(0, name.rfind('-')));
    ASSERT_NE(target, Targets().end()) << "no fuzz target is named by " << name;
    std::ifstream in(std::string(kDir) + "/" + name, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string data = bytes.str();
    ASSERT_FALSE(data.empty());
    const auto* p = reinterpret_cast<const uint8_t*>(data.data());
    fuzz::ScanFunction scan = target->second;
    // A broken promise traps: run it in a child, so the report names the input.
    EXPECT_EXIT(
        {
          fuzz::CheckScan(p, data.size(), scan);
          fuzz::CheckMemoryCap(p, data.size(), scan);
          std::exit(0);
        },
        ::testing::ExitedWithCode(0), "")
        << name << " breaks a promise of its fuzz target again";
  }
}

}  // namespace
}  // namespace scopedfs::media
