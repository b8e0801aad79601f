// Exif GPS finder: walks a TIFF structure (as embedded in JPEG APP1, PNG eXIf, WebP EXIF and the
// HEIF Exif item) along every route a reader takes to a GPS IFD and reports the GPS entries and
// their out-of-line values, in either byte order.
#ifndef SCOPEDFS_MEDIA_LOCATION_EXIF_GPS_H_
#define SCOPEDFS_MEDIA_LOCATION_EXIF_GPS_H_

#include <cstdint>
#include <vector>

#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {

// Scans the TIFF structure occupying [tiff_begin, tiff_end) of the reader's source ("II*\0" or
// "MM\0*" at tiff_begin; IFD offsets are relative to tiff_begin and must stay below tiff_end).
// It walks every IFD the most liberal common readers (ExifTool, Android's ExifInterface) parse
// with the IFD0 tag table: the IFD0 chain; the IFDs that Exif (0x8769), Interoperability
// (0xA005), SubIFDs (0x014A, every listed offset) and GlobalParameters (0x0190) pointers of any
// integer type lead to; and the chains those IFDs and the GPS IFD link to, where a link lands on
// a new IFD wholly inside the TIFF. Appends to `out`:
//   - REDACTION_EXIF_GPS ranges: for every GPS IFD reached through a GPSInfo tag (0x8825, first
//     offset) in any of those IFDs, its entry count and entries ([ifd, ifd + 2 + 12 * count))
//     and each entry's out-of-line value, so a reader finds an empty GPS IFD. The GPSInfo entry
//     and the GPS IFD's next-IFD link stay intact so the structure still parses.
//   - REDACTION_XMP_GPS and REDACTION_XMP_PLACE ranges: the GPS and place properties of an XMP
//     packet kept in an ApplicationNotes tag (0x02BC), or the whole packet if it is not XML the
//     XMP finder can vouch for.
//   - REDACTION_IPTC_PLACE ranges: the place datasets of IPTC IIM kept in an IPTC-NAA tag
//     (0x83BB) of any of those IFDs (iptc_place.h).
// Returns false (with r.Fail called) if the structure is malformed: bad header, offsets outside
// the TIFF, an IFD reached twice through pointers (loops), too many entries, a GPS entry of
// unknown type (its value cannot be delimited), a pointer tag of a non-integer type or without a
// value, an ApplicationNotes tag of a multi-byte type, an IPTC-NAA tag of unknown type.
bool FindTiffGps(ScanReader& r, uint64_t tiff_begin, uint64_t tiff_end,
                 std::vector<LocationRange>* out);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_EXIF_GPS_H_
