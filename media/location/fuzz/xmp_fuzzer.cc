// libFuzzer target for FindXmpGps on arbitrary text. Besides the range promises it checks the
// one redaction relies on: a packet it accepts, once its ranges are filled with spaces, is still
// accepted and holds no GPS property. Built and run by tools/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "media/location/fuzz/scan_invariants.h"
#include "media/location/location.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media::fuzz {
namespace {

// A nonzero packet offset, so that offset arithmetic is exercised too.
constexpr uint64_t kOffset = 1000;
constexpr int kMaxDepth = 16;

void Check(absl::string_view packet) {
  std::vector<LocationRange> found;
  bool ok = FindXmpGps(packet, kOffset, kMaxDepth, &found);
  bool whole = false;
  for (const LocationRange& r : found) {
    if (r.kind != REDACTION_XMP_GPS && r.kind != REDACTION_XMP_PLACE) {
      Violated("range of kind %d", static_cast<int>(r.kind));
    }
    if (r.begin < kOffset || r.begin >= r.end || r.end > kOffset + packet.size()) {
      Violated("range [%llu, %llu) is empty or outside the packet [%llu, %llu)",
               (unsigned long long)r.begin, (unsigned long long)r.end, (unsigned long long)kOffset,
               (unsigned long long)(kOffset + packet.size()));
    }
    whole |= r.begin == kOffset && r.end == kOffset + packet.size();
  }
  if (!ok) {
    if (!packet.empty() && !whole) Violated("rejected packet not covered whole");
    return;
  }
  // Fill as a redacted reader would see it; the fills themselves must touch only the ranges.
  std::vector<LocationRange> ranges = found;
  NormalizeRanges(&ranges);
  std::vector<uint8_t> bytes(packet.begin(), packet.end());
  constexpr uint32_t kXmpKinds = (1u << REDACTION_XMP_GPS) | (1u << REDACTION_XMP_PLACE);
  std::vector<FillRange> plan = PlanFills(ranges, kXmpKinds);
  std::vector<uint8_t> padded(kOffset, 0);
  padded.insert(padded.end(), bytes.begin(), bytes.end());
  CheckFills(padded, ranges, kXmpKinds);
  ApplyFills(plan, kOffset, absl::MakeSpan(bytes));
  absl::string_view redacted(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::vector<LocationRange> again;
  if (!FindXmpGps(redacted, kOffset, kMaxDepth, &again)) {
    Violated("the packet no longer parses once its GPS and place ranges are filled with spaces");
  }
  if (!again.empty()) {
    Violated("GPS or a place left after filling: [%llu, %llu)", (unsigned long long)again[0].begin,
             (unsigned long long)again[0].end);
  }
}

}  // namespace
}  // namespace scopedfs::media::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scopedfs::media::fuzz::Check(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
