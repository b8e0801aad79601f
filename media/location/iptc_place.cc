// IPTC IIM place finder (see iptc_place.h). Reads one dataset header at a time, so what it keeps
// is constant and what it reads is bounded by the structure budget.
#include "media/location/iptc_place.h"

#include <cstdint>
#include <vector>

namespace scopedfs::media {
namespace {

constexpr uint8_t kMarker = 0x1C;
constexpr uint64_t kHeaderSize = 5;     // marker, record, dataset, 16-bit length
constexpr uint64_t kMaxLengthSize = 8;  // ExifTool's bound on an extended length's own size

}  // namespace

bool IsIptcPlaceDataset(uint8_t record, uint8_t dataset) {
  if (record != 2) return false;
  switch (dataset) {
    case 26:   // Content Location Code
    case 27:   // Content Location Name
    case 90:   // City
    case 92:   // Sub-location
    case 95:   // Province/State
    case 100:  // Country/Primary Location Code
    case 101:  // Country/Primary Location Name
      return true;
    default:
      return false;
  }
}

bool FindIptcPlaces(ScanReader& r, uint64_t begin, uint64_t end, std::vector<LocationRange>* out) {
  if (!r.ok()) return false;
  if (end < begin || end > r.size()) return r.Fail(begin, "IPTC bounds invalid");
  if (end - begin >= 4) {
    uint8_t head[4];
    if (!r.Read(begin, sizeof(head), head)) return false;
    if (head[0] != kMarker && head[3] == kMarker) {
      // ExifTool takes this for IPTC written with its 32-bit words byte-swapped and reads the
      // swapped copy; rather than map datasets through the swap, the block goes whole.
      AddRange(out, begin, end, REDACTION_IPTC_PLACE);
      return true;
    }
  }
  uint64_t pos = begin;
  while (end - pos >= kHeaderSize) {
    if (!r.Visit(pos)) return false;
    uint8_t h[kHeaderSize];
    if (!r.Read(pos, sizeof(h), h)) return false;
    // A NUL ends the datasets (iMatch pads blocks with them): readers stop there.
    if (h[0] == 0) return true;
    // Readers stop at any other byte too, but one that resynchronises could read on.
    if (h[0] != kMarker) {
      AddRange(out, pos, end, REDACTION_IPTC_PLACE);
      return true;
    }
    uint64_t data = pos + kHeaderSize;
    uint64_t length = (uint64_t{h[3]} << 8) | h[4];
    if (length & 0x8000) {
      uint64_t size = length & 0x7FFF;
      if (size > kMaxLengthSize || size > end - data) {
        AddRange(out, pos, end, REDACTION_IPTC_PLACE);
        return true;
      }
      uint8_t bytes[kMaxLengthSize];
      if (!r.Read(data, size, bytes)) return false;
      length = 0;
      for (uint64_t i = 0; i < size; ++i) {
        // Past 2^56 no dataset can fit anyway: saturate rather than wrap.
        length = length >> 56 ? UINT64_MAX : (length << 8) | bytes[i];
      }
      data += size;
    }
    if (length > end - data) {
      AddRange(out, pos, end, REDACTION_IPTC_PLACE);
      return true;
    }
    if (IsIptcPlaceDataset(h[1], h[2])) {
      AddRange(out, pos + 2, pos + 3, REDACTION_IPTC_PLACE);
      AddRange(out, data, data + length, REDACTION_IPTC_PLACE);
    }
    pos = data + length;
  }
  return true;
}

}  // namespace scopedfs::media
