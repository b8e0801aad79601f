// IPTC IIM place finder: walks the datasets of an IPTC IIM block (as a JPEG's Photoshop resource
// 0x0404 or an Exif IFD's IPTC-NAA tag holds it) and reports the place names among them.
#ifndef SCOPEDFS_MEDIA_LOCATION_IPTC_PLACE_H_
#define SCOPEDFS_MEDIA_LOCATION_IPTC_PLACE_H_

#include <cstdint>
#include <vector>

#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {

// Whether IPTC IIM dataset `record`:`dataset` is a place name: 2:26 Content Location Code, 2:27
// Content Location Name, 2:90 City, 2:92 Sub-location, 2:95 Province/State, 2:100 Country Code,
// 2:101 Country Name.
bool IsIptcPlaceDataset(uint8_t record, uint8_t dataset);

// Scans the IPTC IIM datasets in [begin, end) of the reader's source as ExifTool reads them: a
// 0x1C marker, record and dataset numbers, a 16-bit length (or, with its top bit set, the number
// of bytes of a longer big-endian length that follows), the value. Appends REDACTION_IPTC_PLACE
// ranges to `out`: for each place dataset, its dataset number byte and its value, so that a
// reader finds a dataset 2:0 (ApplicationRecordVersion) of zeros where the place was, and every
// other dataset where it was. The marker and the length stay, so the block still parses.
// Where a reader stops reading (a marker other than 0x1C or 0, a length past `end`, an extended
// length of more than 8 bytes), everything from there to `end` is reported, since another reader
// may resynchronise; a block a reader would byte-swap (ExifTool: no marker first but one at byte
// 3) is reported whole. Each dataset counts as one structure against the reader's budget.
// Returns false (r.Fail called) only if the reader fails (budget spent, read error).
bool FindIptcPlaces(ScanReader& r, uint64_t begin, uint64_t end, std::vector<LocationRange>* out);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_IPTC_PLACE_H_
