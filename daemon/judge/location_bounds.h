// Bounds on what one file's location scan may make the daemon keep: its ranges are coalesced
// and capped before the facts cache stores them or a redaction plan is made from them, so a file
// crafted with a million tiny location fields costs a few hundred KiB, not tens of MiB per copy.
#ifndef SCOPEDFS_DAEMON_JUDGE_LOCATION_BOUNDS_H_
#define SCOPEDFS_DAEMON_JUDGE_LOCATION_BOUNDS_H_

#include <cstddef>
#include <cstdint>

#include "media/location/location.h"

namespace scopedfs::daemon {

// Most ranges (location and fallback together) a bounded scan keeps: 4,096 ranges of 24 bytes.
inline constexpr size_t kMaxLocationRanges = 4096;
// Ranges of one kind closer than this are merged when a scan has too many: filling the bytes in
// between fills more than needed, which is never less safe. Scans under the cap are left exact,
// so ordinary files keep every byte that is not location.
inline constexpr uint64_t kLocationMergeGap = 64;

// Makes `scan` bounded: at most kMaxLocationRanges ranges in all. Past the cap even after
// merging near ranges, the file is uncertain (malformed, as for the policy's uncertain_location):
// each kind's ranges, and each kind's fallback, become one range from its first byte to its last,
// so a REDACT_ALL reader still gets every location byte filled.
void BoundScan(media::LocationScan* scan);

// The bytes a scan keeps (what the facts cache counts).
uint64_t ScanBytes(const media::LocationScan& scan);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_LOCATION_BOUNDS_H_
