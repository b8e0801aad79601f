// Bounded reads for the location parsers (see scan_reader.h).
#include "media/location/scan_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace scopedfs::media {

bool ScanReader::Read(uint64_t offset, size_t n, uint8_t* out) {
  if (!ok()) return false;
  if (offset > size() || n > size() - offset) {
    return Fail(offset,
                absl::StrCat("needs ", n, " bytes at ", offset, " but the file ends at ", size()));
  }
  if (n > limits_.max_bytes_read - bytes_read_ || bytes_read_ > limits_.max_bytes_read) {
    return Fail(offset, absl::StrCat("read budget of ", limits_.max_bytes_read, " bytes spent"));
  }
  bytes_read_ += n;
  if (n == 0) return true;
  if (!source_.Read(offset, n, out)) return Fail(offset, "read error");
  return true;
}

bool ScanReader::ReadSwept(uint64_t offset, size_t n, uint8_t* out) {
  if (!ok()) return false;
  if (offset > size() || n > size() - offset) {
    return Fail(offset,
                absl::StrCat("needs ", n, " bytes at ", offset, " but the file ends at ", size()));
  }
  if (!CanSweep(offset, offset + n)) return false;
  swept_ += n;
  if (n > 0 && !source_.Read(offset, n, out)) return Fail(offset, "read error");
  return true;
}

bool ScanReader::CanSweep(uint64_t begin, uint64_t end) {
  if (!ok()) return false;
  if (end < begin ||
      end - begin > limits_.max_sweep_bytes - std::min(limits_.max_sweep_bytes, swept_)) {
    return Fail(begin, absl::StrCat("sweep budget of ", limits_.max_sweep_bytes, " bytes spent"));
  }
  return true;
}

bool ScanReader::ReadString(uint64_t offset, size_t n, std::string* out) {
  // Refuse before allocating: a hostile length must not cost memory either.
  if (offset > size() || n > size() - offset || n > limits_.max_bytes_read - bytes_read_) {
    return Read(offset, n, nullptr);
  }
  out->resize(n);
  return Read(offset, n, reinterpret_cast<uint8_t*>(out->data()));
}

bool ScanReader::Be16(uint64_t offset, uint16_t* v) {
  uint8_t b[2];
  if (!Read(offset, 2, b)) return false;
  *v = static_cast<uint16_t>((b[0] << 8) | b[1]);
  return true;
}

bool ScanReader::Be32(uint64_t offset, uint32_t* v) {
  uint8_t b[4];
  if (!Read(offset, 4, b)) return false;
  *v = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  return true;
}

bool ScanReader::Be64(uint64_t offset, uint64_t* v) {
  uint32_t hi, lo;
  if (!Be32(offset, &hi) || !Be32(offset + 4, &lo)) return false;
  *v = (uint64_t{hi} << 32) | lo;
  return true;
}

bool ScanReader::Le16(uint64_t offset, uint16_t* v) {
  uint8_t b[2];
  if (!Read(offset, 2, b)) return false;
  *v = static_cast<uint16_t>(b[0] | (b[1] << 8));
  return true;
}

bool ScanReader::Le32(uint64_t offset, uint32_t* v) {
  uint8_t b[4];
  if (!Read(offset, 4, b)) return false;
  *v = uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) | (uint32_t{b[3]} << 24);
  return true;
}

bool ScanReader::Visit(uint64_t offset) {
  if (!ok()) return false;
  if (++structures_ > limits_.max_structures) {
    return Fail(offset, absl::StrCat("more than ", limits_.max_structures, " structures"));
  }
  return true;
}

bool ScanReader::Charge(uint64_t offset, uint64_t bytes) {
  if (!ok()) return false;
  if (bytes > limits_.max_alloc_bytes - std::min(limits_.max_alloc_bytes, allocated_)) {
    allocated_ = limits_.max_alloc_bytes;
    return Fail(offset, absl::StrCat("memory cap of ", limits_.max_alloc_bytes, " bytes reached"));
  }
  allocated_ += bytes;
  return true;
}

ScanLimits ScanReader::Remaining() const {
  ScanLimits left = limits_;
  left.max_bytes_read -= std::min(left.max_bytes_read, bytes_read_);
  left.max_sweep_bytes -= std::min(left.max_sweep_bytes, swept_);
  left.max_structures -= std::min(left.max_structures, structures_);
  left.max_alloc_bytes -= std::min(left.max_alloc_bytes, allocated_);
  left.max_depth = std::max(0, left.max_depth - depth_);
  return left;
}

void ScanReader::Absorb(const LocationScan& nested) {
  bytes_read_ += nested.bytes_read;
  swept_ += nested.bytes_swept;
  structures_ += nested.structures_visited;
  allocated_ += nested.bytes_allocated;
  comparisons_ += nested.item_comparisons;
}

bool ScanReader::Fail(uint64_t offset, absl::string_view what) {
  if (ok()) {
    error_ = absl::StrCat("at byte ", offset, ": ", what);
    if (error_.size() == 0) error_ = "failed";
    failed_at_ = offset < size() ? offset : size();
  }
  return false;
}

void ScanReader::Finish(LocationScan* scan) const {
  scan->bytes_read = bytes_read_;
  scan->structures_visited = structures_;
  scan->bytes_allocated = allocated_;
  scan->bytes_swept = swept_;
  scan->item_comparisons = comparisons_;
  if (ok()) return;
  scan->malformed = true;
  scan->error = error_;
  for (Redaction kind : kFallbackKinds) {
    AddRange(&scan->fallback, failed_at_, size(), kind);
  }
  NormalizeRanges(&scan->fallback);
}

}  // namespace scopedfs::media
