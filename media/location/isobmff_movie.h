// The QuickTime metadata part of the ISO-BMFF location walk (isobmff_location.cc): keys boxes,
// whose entries name tags, and ilst boxes, whose items hold the tags' values (iTunes 4cc, keys
// index or freeform name). Private to //media/location.
#ifndef SCOPEDFS_MEDIA_LOCATION_ISOBMFF_MOVIE_H_
#define SCOPEDFS_MEDIA_LOCATION_ISOBMFF_MOVIE_H_

#include <cstdint>
#include <vector>

#include "media/location/isobmff_box.h"
#include "media/location/location.h"

namespace scopedfs::media::isobmff {

// keys (FullBox): entry_count, then entries of key_size (counting itself and the namespace),
// namespace and name. Collects the 1-based indices of keys that name a location.
bool FindLocationKeys(BoxWalker& walker, const Box& box, std::vector<uint32_t>* location_keys);

// ilst: one box per tag, named by a 4cc (iTunes), a keys index (QuickTime) or "----" with a
// name child (freeform); each holds data boxes of type, locale and value. Appends the values of
// location tags to `ranges`. `location_keys` is sorted, so that a lookup per item costs a
// logarithm, not the number of keys.
bool FindIlstLocation(BoxWalker& walker, const Box& box, const std::vector<uint32_t>& location_keys,
                      std::vector<LocationRange>* ranges);

}  // namespace scopedfs::media::isobmff

#endif  // SCOPEDFS_MEDIA_LOCATION_ISOBMFF_MOVIE_H_
