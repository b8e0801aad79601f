// libFuzzer target for ScanUnparsed: content no parser understands (audio, RIFF, unknown), as the
// signature sweep, the ID3v2 tag and the RIFF chunk walk see it. Every input must scan without a
// crash or sanitizer report and keep the promises scan_invariants.h checks. Built by tools/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "media/location/fuzz/scan_invariants.h"
#include "media/location/location.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scopedfs::media::fuzz::CheckScan(data, size, &scopedfs::media::ScanUnparsed);
  return 0;
}
