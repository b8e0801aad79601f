// Promises every location scan keeps whatever its input, checked by the libFuzzer targets in this
// directory on each input. A broken promise traps, so libFuzzer saves the input like a crash and
// the message printed before it says which promise broke.
#ifndef SCOPEDFS_MEDIA_LOCATION_FUZZ_SCAN_INVARIANTS_H_
#define SCOPEDFS_MEDIA_LOCATION_FUZZ_SCAN_INVARIANTS_H_

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "absl/types/span.h"
#include "media/location/location.h"

namespace scopedfs::media::fuzz {

// Prints the broken promise and traps: a trap, not abort(), so that no handler can swallow it.
[[noreturn]] inline void Violated(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "INVARIANT VIOLATED: ");
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
  __builtin_trap();
}

inline constexpr uint32_t kAllKinds = kAllLocationKinds;

// Every range is a known kind and a non-empty part of [0, size). With `merged` (what
// LocationScan::ranges promises), they are also sorted by begin and ranges of one kind neither
// overlap nor touch.
inline void CheckRanges(const std::vector<LocationRange>& ranges, uint64_t size, bool merged,
                        const char* list) {
  uint64_t last_begin = 0;
  uint64_t kind_end[REDACTION_XMP_PLACE + 1] = {};
  bool kind_seen[REDACTION_XMP_PLACE + 1] = {};
  for (const LocationRange& r : ranges) {
    if (r.kind < REDACTION_EXIF_GPS || r.kind > REDACTION_XMP_PLACE) {
      Violated("%s: range [%llu, %llu) has kind %d", list, (unsigned long long)r.begin,
               (unsigned long long)r.end, static_cast<int>(r.kind));
    }
    if (r.begin >= r.end || r.end > size) {
      Violated("%s: range [%llu, %llu) is empty or not inside [0, %llu)", list,
               (unsigned long long)r.begin, (unsigned long long)r.end, (unsigned long long)size);
    }
    if (!merged) continue;
    if (r.begin < last_begin) {
      Violated("%s: not sorted: [%llu, ...) after a range beginning at %llu", list,
               (unsigned long long)r.begin, (unsigned long long)last_begin);
    }
    last_begin = r.begin;
    if (kind_seen[r.kind] && r.begin <= kind_end[r.kind]) {
      Violated("%s: [%llu, %llu) overlaps or touches an earlier range of kind %d ending at %llu",
               list, (unsigned long long)r.begin, (unsigned long long)r.end,
               static_cast<int>(r.kind), (unsigned long long)kind_end[r.kind]);
    }
    kind_seen[r.kind] = true;
    kind_end[r.kind] = r.end;
  }
}

// What each byte of a redacted copy must be: -1 for the original byte, else the fill (zero where
// a zero range and a space range overlap, as PlanFills promises).
inline std::vector<int> ExpectedFills(absl::Span<const LocationRange> ranges, uint32_t kinds,
                                      size_t size) {
  std::vector<int> want(size, -1);
  for (const LocationRange& r : ranges) {
    if (!(kinds & (1u << r.kind))) continue;
    int fill = FillFor(r.kind);
    for (uint64_t i = r.begin; i < r.end && i < size; ++i) {
      if (want[i] == -1 || fill == 0) want[i] = fill;
    }
  }
  return want;
}

// PlanFills + ApplyFills change exactly the bytes inside `ranges` of `kinds`, to their fill, and
// give the same bytes whether the file is filled whole or in pieces (as the daemon's reads are).
inline void CheckFills(absl::Span<const uint8_t> data, absl::Span<const LocationRange> ranges,
                       uint32_t kinds) {
  std::vector<FillRange> plan = PlanFills(ranges, kinds);
  uint64_t last_end = 0;
  for (const FillRange& f : plan) {
    if (f.begin >= f.end || f.begin < last_end || f.end > data.size() ||
        (f.fill != 0 && f.fill != ' ')) {
      Violated(
          "plan: fill [%llu, %llu) with 0x%02x is empty, unsorted, overlapping or outside "
          "the file",
          (unsigned long long)f.begin, (unsigned long long)f.end, f.fill);
    }
    last_end = f.end;
  }
  std::vector<uint8_t> whole(data.begin(), data.end());
  ApplyFills(plan, 0, absl::MakeSpan(whole));
  std::vector<int> want = ExpectedFills(ranges, kinds, data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    int expected = want[i] == -1 ? data[i] : want[i];
    if (whole[i] != expected) {
      Violated("fills: byte %zu is 0x%02x, expected 0x%02x (%s)", i, whole[i], expected,
               want[i] == -1 ? "outside every range: unchanged" : "inside a range: the fill");
    }
  }
  // Pieces of an odd size, so that piece boundaries fall inside fill ranges.
  std::vector<uint8_t> pieces(data.begin(), data.end());
  const size_t piece = 1 + data.size() / 7;
  for (size_t at = 0; at < pieces.size(); at += piece) {
    size_t n = pieces.size() - at < piece ? pieces.size() - at : piece;
    ApplyFills(plan, at, absl::MakeSpan(pieces.data() + at, n));
  }
  if (pieces != whole) {
    Violated("fills: applying the plan in pieces differs from applying it whole");
  }
}

// What a redacted reader of this scan gets filled: the ranges, plus the fallback if it failed.
inline std::vector<LocationRange> Redacted(const LocationScan& scan) {
  std::vector<LocationRange> filled = scan.ranges;
  if (scan.malformed) filled.insert(filled.end(), scan.fallback.begin(), scan.fallback.end());
  return filled;
}

using ScanFunction = LocationScan (*)(ByteSource&, const ScanLimits&);

inline void CheckOneScan(absl::Span<const uint8_t> data, const LocationScan& scan,
                         const ScanLimits& limits) {
  if (scan.malformed == scan.error.empty()) {
    Violated("malformed is %d but error is \"%s\"", scan.malformed, scan.error.c_str());
  }
  if (scan.bytes_read > limits.max_bytes_read) {
    Violated("read %llu bytes, over the limit of %llu", (unsigned long long)scan.bytes_read,
             (unsigned long long)limits.max_bytes_read);
  }
  CheckRanges(scan.ranges, data.size(), /*merged=*/true, "ranges");
  // A clean scan may list fallback too (the containers it walked, for the tests and explain);
  // it is only ever filled when the scan is malformed, which Redacted() mirrors.
  CheckRanges(scan.fallback, data.size(), /*merged=*/false, "fallback");
  std::vector<LocationRange> filled = Redacted(scan);
  CheckFills(data, filled, kAllKinds);
  // One kind alone must leave the others' bytes untouched; which kind varies with the input.
  CheckFills(data, filled, 1u << (REDACTION_EXIF_GPS + data.size() % 5));
}

// Per byte, the kinds (bits 1 << Redaction) of the ranges covering it.
inline std::vector<uint8_t> KindsPerByte(absl::Span<const LocationRange> ranges, size_t size) {
  std::vector<uint8_t> kinds(size, 0);
  for (const LocationRange& r : ranges) {
    for (uint64_t i = r.begin; i < r.end && i < size; ++i) kinds[i] |= 1u << r.kind;
  }
  return kinds;
}

// Scans `data` with the default limits and with tight ones and checks both results. Limits may
// only make a scan more cautious: whatever the generous scan finds, the tight scan's redaction
// (its ranges, or on failure its ranges and fallback) must cover with the same kind, or with a
// coordinate kind, which every policy fills (below).
inline void CheckScan(const uint8_t* bytes, size_t size, ScanFunction scan_function) {
  absl::Span<const uint8_t> data(bytes, size);
  const ScanLimits generous;
  ScanLimits tight;
  tight.max_bytes_read = 2048;
  tight.max_depth = 4;
  tight.max_structures = 24;

  MemorySource source(data);
  LocationScan full = scan_function(source, generous);
  CheckOneScan(data, full, generous);
  MemorySource again(data);
  LocationScan limited = scan_function(again, tight);
  CheckOneScan(data, limited, tight);

  std::vector<uint8_t> found = KindsPerByte(full.ranges, size);
  std::vector<uint8_t> covered = KindsPerByte(Redacted(limited), size);
  for (size_t i = 0; i < size; ++i) {
    // A byte under any coordinate kind is filled under every policy: a policy's kinds
    // (Engine::redaction_kinds) are every kind, less the place names under redact_place_names
    // FALSE, so the coordinate kinds are always filled together (kFallbackKinds, which a failed
    // scan's fallback is listed under, are those). Whatever kind the generous scan gives such a
    // byte, coordinates of another container or a place name, the tight scan's fill covers it.
    if (covered[i] & ~kPlaceNameKinds) covered[i] |= kAllKinds;
    if (found[i] & ~covered[i]) {
      Violated(
          "byte %zu holds location (kinds 0x%x) that a scan under tight limits leaves "
          "unfilled (covers 0x%x; tight scan %s)",
          i, found[i], covered[i], limited.malformed ? limited.error.c_str() : "succeeded");
    }
  }
}

// What a scan keeps in memory is charged before it is allocated, so it never exceeds the cap,
// however small.
inline void CheckMemoryCap(const uint8_t* bytes, size_t size, ScanFunction scan_function) {
  ScanLimits small;
  small.max_alloc_bytes = 1024;
  MemorySource source(absl::MakeConstSpan(bytes, size));
  LocationScan scan = scan_function(source, small);
  if (scan.bytes_allocated > small.max_alloc_bytes) {
    Violated("allocated %llu bytes, over the cap of %llu",
             static_cast<unsigned long long>(scan.bytes_allocated),
             static_cast<unsigned long long>(small.max_alloc_bytes));
  }
}

}  // namespace scopedfs::media::fuzz

#endif  // SCOPEDFS_MEDIA_LOCATION_FUZZ_SCAN_INVARIANTS_H_
