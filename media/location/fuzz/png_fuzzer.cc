// libFuzzer target for ScanPng: PNG files (eXIf, XMP text chunks, ImageMagick raw profiles).
// Every input must scan without a crash or sanitizer report and keep the promises
// scan_invariants.h checks. Built and run by tools/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "media/location/fuzz/scan_invariants.h"
#include "media/location/location.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scopedfs::media::fuzz::CheckScan(data, size, &scopedfs::media::ScanPng);
  return 0;
}
