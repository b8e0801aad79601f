// The metadata signatures a sweep looks for in bytes no parser understands (content of an unknown
// format, audio, the inside of a vendor box): Exif and TIFF headers, XMP packets, ISO-BMFF metadata
// boxes, GoPro GPMF, JUMBF (C2PA) and ID3 tags. A hit proves nothing about location, only that
// such bytes cannot be vouched for; the callers fill the container or call the file uncertain.
#ifndef SCOPEDFS_MEDIA_LOCATION_SIGNATURE_SWEEP_H_
#define SCOPEDFS_MEDIA_LOCATION_SIGNATURE_SWEEP_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {

struct SignatureHit {
  uint64_t offset = 0;     // where the signature starts (for a box: its size field)
  absl::string_view name;  // which signature, for error text ("XMP packet", "ISO-BMFF udta box")
};

// The first signature in `bytes`; offsets are relative to bytes.data().
std::optional<SignatureHit> FindMetadataSignature(absl::string_view bytes);

// The first signature in [begin, end) of the reader's source, read in blocks through
// ScanReader::ReadSwept (so bounded by max_sweep_bytes, and refused up front if the region does
// not fit). False on a failure, which the reader records; otherwise *hit is set or reset.
bool SweepForMetadata(ScanReader& r, uint64_t begin, uint64_t end,
                      std::optional<SignatureHit>* hit);

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_SIGNATURE_SWEEP_H_
