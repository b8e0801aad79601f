// What follows an image's end (a JPEG's EOI, the last whole chunk of a PNG or WebP): motion-photo
// video, a second image, vendor trailers. Such data is walked as a file of its own when it is one
// the parsers know (a JPEG, an ISO-BMFF file), and filled whole otherwise.
#ifndef SCOPEDFS_MEDIA_LOCATION_TRAILER_H_
#define SCOPEDFS_MEDIA_LOCATION_TRAILER_H_

#include <cstdint>

#include "media/location/location.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {

// How many files a trailer chain may hold (a JPEG after a JPEG after ...); the rest is filled.
inline constexpr int kMaxTrailerDepth = 4;

// Adds to `scan` the ranges that make [pos, end of file) safe to serve: the location ranges of an
// embedded file the walk could vouch for, and for anything it could not (an unknown trailer, the
// part of an embedded file past where its walk failed) the bytes themselves. Never makes the outer
// scan malformed except through the reader's own failures. `depth` counts enclosing trailers.
bool ScanTrailer(ScanReader& r, uint64_t pos, int depth, LocationScan* scan);

// Moves *pos, the start of a JPEG's entropy-coded data (after an SOS segment), to the marker that
// ends it, or to the end of the file. Every byte is read (through ReadSwept), since only a walk
// over the data finds where the image ends and what follows it begins.
bool SkipJpegEntropyData(ScanReader& r, uint64_t* pos);

// ScanJpeg for a JPEG that is itself `depth` trailers deep.
LocationScan ScanJpegAtDepth(ByteSource& source, const ScanLimits& limits, int depth);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_TRAILER_H_
