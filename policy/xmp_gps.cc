// PLACEHOLDER (being written)
#include "policy/xmp_gps.h"
#include "policy/scan_reader.h"
namespace scopedfs::policy {
bool FindXmpGps(absl::string_view packet, uint64_t packet_offset, int,
                std::vector<LocationRange>* out) {
  AddRange(out, packet_offset, packet_offset + packet.size(), REDACTION_XMP_GPS);
  return false;
}
}  // namespace scopedfs::policy
