// libFuzzer target for the ISO-BMFF walk as MP4, MOV, 3GP and M4A files reach it (ScanLocation
// with kMp4: no ftyp needed). Every input must scan without a crash or sanitizer report, keep the
// promises scan_invariants.h checks and stay within the memory cap. Built by tools/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "media/location/fuzz/scan_invariants.h"
#include "media/location/location.h"

namespace {

using scopedfs::media::ByteSource;
using scopedfs::media::LocationScan;
using scopedfs::media::MediaFormat;
using scopedfs::media::ScanLimits;

LocationScan ScanAsMp4(ByteSource& source, const ScanLimits& limits) {
  return scopedfs::media::ScanLocation(MediaFormat::kMp4, source, limits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scopedfs::media::fuzz::CheckScan(data, size, &ScanAsMp4);
  scopedfs::media::fuzz::CheckMemoryCap(data, size, &ScanAsMp4);
  return 0;
}
