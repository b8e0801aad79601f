// PLACEHOLDER (being written): HEIF/AVIF and MP4-family location finders.
#include "policy/location.h"
#include "policy/scan_reader.h"
namespace scopedfs::policy {
namespace {
LocationScan Todo(ByteSource& s, const ScanLimits& l) {
  ScanReader r(s, l);
  r.Fail(0, "not implemented");
  LocationScan scan;
  r.Finish(&scan);
  return scan;
}
}  // namespace
LocationScan ScanHeif(ByteSource& s, const ScanLimits& l) { return Todo(s, l); }
LocationScan ScanMp4(ByteSource& s, const ScanLimits& l) { return Todo(s, l); }
}  // namespace scopedfs::policy
