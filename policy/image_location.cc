// PLACEHOLDER (being written): JPEG, PNG and WebP location finders.
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
LocationScan ScanJpeg(ByteSource& s, const ScanLimits& l) { return Todo(s, l); }
LocationScan ScanPng(ByteSource& s, const ScanLimits& l) { return Todo(s, l); }
LocationScan ScanWebp(ByteSource& s, const ScanLimits& l) { return Todo(s, l); }
}  // namespace scopedfs::policy
