// libFuzzer target for the ISO-BMFF walk as HEIF and AVIF files reach it (ScanLocation with
// kHeif: ftyp first, items anywhere). Every input must scan without a crash or sanitizer report,
// keep the promises scan_invariants.h checks and stay within the memory cap. Built by
// tools/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "media/location/fuzz/scan_invariants.h"
#include "media/location/location.h"

namespace {

using scopedfs::media::ByteSource;
using scopedfs::media::LocationScan;
using scopedfs::media::MediaFormat;
using scopedfs::media::ScanLimits;

LocationScan ScanAsHeif(ByteSource& source, const ScanLimits& limits) {
  return scopedfs::media::ScanLocation(MediaFormat::kHeif, source, limits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scopedfs::media::fuzz::CheckScan(data, size, &ScanAsHeif);
  scopedfs::media::fuzz::CheckMemoryCap(data, size, &ScanAsHeif);
  return 0;
}
