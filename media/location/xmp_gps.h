// XMP GPS and place finder: locates GPS properties (exif:GPS*, and any GPS* property of another
// prefix) and place names (photoshop:City, Iptc4xmpExt:LocationShown, ...) in an XMP packet, both
// as elements and as attributes, without a full XML parser.
#ifndef SCOPEDFS_MEDIA_LOCATION_XMP_GPS_H_
#define SCOPEDFS_MEDIA_LOCATION_XMP_GPS_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "media/location/location.h"

namespace scopedfs::media {

// Whether an XMP property name (prefix:local) is a place name: its local name is, in any case and
// whatever the prefix (a prefix can be bound to any namespace), one of City, State, Country
// (photoshop:), Location, CountryCode (Iptc4xmpCore:), LocationCreated, LocationShown (the
// Iptc4xmpExt structures, whole) or their members Sublocation, ProvinceState, CountryName,
// WorldRegion, LocationName, LocationId, or shotLocation (xmpDM:).
bool IsXmpPlaceName(absl::string_view name);

// Appends ranges (file offsets: `packet_offset` is where packet[0] sits) to `out`, each covering
// a whole property attribute (name="value") or a whole property element
// (<x:GPSFoo ...>...</x:GPSFoo> or <x:GPSFoo .../>), so filling them with spaces leaves
// well-formed XML:
//   - REDACTION_XMP_GPS for GPS properties: a local name that starts with "GPS" in any case
//     (exif:, exifEX:, vendor schemas such as drone-dji:GpsLatitude), also inside a place;
//   - REDACTION_XMP_PLACE for place names (IsXmpPlaceName), unless a place or GPS element
//     around them is reported already.
// Namespace declarations are never properties.
// Returns false and appends only the whole packet if the XML is malformed (unbalanced or
// mismatched tags, unterminated quotes, comments, CDATA or processing instructions, a DOCTYPE,
// nesting deeper than `max_depth`, UTF-16/32 text).
bool FindXmpGps(absl::string_view packet, uint64_t packet_offset, int max_depth,
                std::vector<LocationRange>* out);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_XMP_GPS_H_
