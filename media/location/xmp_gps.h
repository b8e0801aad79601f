// XMP GPS finder: locates GPS properties (exif:GPS*, and any GPS* property of another prefix) in
// an XMP packet, both as elements and as attributes, without a full XML parser.
#ifndef SCOPEDFS_MEDIA_LOCATION_XMP_GPS_H_
#define SCOPEDFS_MEDIA_LOCATION_XMP_GPS_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "media/location/location.h"

namespace scopedfs::media {

// Appends REDACTION_XMP_GPS ranges (file offsets: `packet_offset` is where packet[0] sits) to
// `out`, each covering a whole GPS attribute (name="value") or a whole GPS element
// (<x:GPSFoo ...>...</x:GPSFoo> or <x:GPSFoo .../>), so filling them with spaces leaves
// well-formed XML. A property is GPS if its local name starts with "GPS" in any case (exif:,
// exifEX:, vendor schemas such as drone-dji:GpsLatitude); namespace declarations never are.
// Returns false and appends only the whole packet if the XML is malformed (unbalanced or
// mismatched tags, unterminated quotes, comments, CDATA or processing instructions, a DOCTYPE,
// nesting deeper than `max_depth`, UTF-16/32 text).
bool FindXmpGps(absl::string_view packet, uint64_t packet_offset, int max_depth,
                std::vector<LocationRange>* out);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_XMP_GPS_H_
