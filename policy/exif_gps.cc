// PLACEHOLDER (being written)
#include "policy/exif_gps.h"
namespace scopedfs::policy {
bool FindTiffGps(ScanReader& r, uint64_t tiff_begin, uint64_t, std::vector<LocationRange>*) {
  return r.Fail(tiff_begin, "not implemented");
}
}  // namespace scopedfs::policy
