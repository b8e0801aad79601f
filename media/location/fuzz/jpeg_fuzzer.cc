// libFuzzer target for ScanJpeg: JPEG files (APP1 Exif, XMP and ExtendedXMP segments).
// Every input must scan without a crash or sanitizer report and keep the promises
// scan_invariants.h checks. Built and run by tools/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "media/location/fuzz/scan_invariants.h"
#include "media/location/location.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scopedfs::media::fuzz::CheckScan(data, size, &scopedfs::media::ScanJpeg);
  return 0;
}
