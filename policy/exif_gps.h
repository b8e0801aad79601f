// Exif GPS finder: walks a TIFF structure (as embedded in JPEG APP1, PNG eXIf, WebP EXIF and the
// HEIF Exif item) from IFD0 to the GPS IFD and reports the GPS entries and their out-of-line
// values, in either byte order.
#ifndef SCOPEDFS_POLICY_EXIF_GPS_H_
#define SCOPEDFS_POLICY_EXIF_GPS_H_

#include <cstdint>
#include <vector>

#include "policy/location.h"
#include "policy/scan_reader.h"

namespace scopedfs::policy {

// Scans the TIFF structure occupying [tiff_begin, tiff_end) of the reader's source ("II*\0" or
// "MM\0*" at tiff_begin; IFD offsets are relative to tiff_begin and must stay below tiff_end).
// Appends REDACTION_EXIF_GPS ranges to `out`: for every GPS IFD reached through a GPSInfo tag
// (0x8825) in the IFD0 chain or in an Exif (0x8769) or Interoperability (0xA005) IFD, its entry
// count and entries ([ifd, ifd + 2 + 12 * count)) and each entry's out-of-line value, so a reader
// finds an empty GPS IFD. The GPSInfo entry and the GPS IFD's next-IFD link stay intact so the
// structure still parses. Returns false (with r.Fail called) if the structure is malformed: bad
// header, offsets outside the TIFF, an IFD reached twice (loops), too many entries, a GPS entry
// of unknown type (its value cannot be delimited), a pointer tag that is not one LONG/IFD.
bool FindTiffGps(ScanReader& r, uint64_t tiff_begin, uint64_t tiff_end,
                 std::vector<LocationRange>* out);

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_EXIF_GPS_H_
