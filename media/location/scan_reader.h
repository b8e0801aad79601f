// The bounded reader every location parser goes through: it counts bytes fetched, structures
// visited and nesting depth against ScanLimits, and records the first failure. Parsers stop as
// soon as ok() is false, so a hostile file costs at most the limits, never a crash.
#ifndef SCOPEDFS_MEDIA_LOCATION_SCAN_READER_H_
#define SCOPEDFS_MEDIA_LOCATION_SCAN_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "media/location/location.h"

namespace scopedfs::media {

class ScanReader {
 public:
  ScanReader(ByteSource& source, const ScanLimits& limits) : source_(source), limits_(limits) {}

  uint64_t size() const { return source_.size(); }
  ByteSource& source() { return source_; }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  uint64_t failed_at() const { return failed_at_; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint32_t structures() const { return structures_; }
  uint64_t allocated() const { return allocated_; }
  uint64_t bytes_swept() const { return swept_; }
  uint64_t comparisons() const { return comparisons_; }
  // Counts one comparison of in-memory tables (LocationScan::item_comparisons).
  void Compared() { ++comparisons_; }

  // Reads [offset, offset + n) into out; on failure (outside the source, budget spent, I/O)
  // records a failure at `offset` and returns false.
  bool Read(uint64_t offset, size_t n, uint8_t* out);
  bool ReadString(uint64_t offset, size_t n, std::string* out);
  bool Be16(uint64_t offset, uint16_t* v);
  bool Be32(uint64_t offset, uint32_t* v);
  bool Be64(uint64_t offset, uint64_t* v);
  bool Le16(uint64_t offset, uint16_t* v);
  bool Le32(uint64_t offset, uint32_t* v);

  // Reads [offset, offset + n) for a linear pass (a signature sweep, a walk over entropy-coded
  // image data), charged to max_sweep_bytes instead of max_bytes_read: such passes read every
  // byte of a region once and keep none of it, so they get a budget of their own.
  bool ReadSwept(uint64_t offset, size_t n, uint8_t* out);
  // Whether a pass over [begin, end) fits in what is left of max_sweep_bytes; records a failure
  // at `begin` if not, so that a pass that cannot finish fails before it reads anything.
  bool CanSweep(uint64_t begin, uint64_t end);

  // Counts one more structure (segment, chunk, box, IFD entry); false once over budget.
  bool Visit(uint64_t offset);

  // Charges `bytes` the parser is about to keep in memory against max_alloc_bytes, before it
  // allocates them; false (a failure at `offset`) once over the cap.
  bool Charge(uint64_t offset, uint64_t bytes);

  // What this reader may still spend, for a scan of a part of the file through its own reader
  // (a trailer walked as a file of its own); Absorb then charges what that scan spent here.
  ScanLimits Remaining() const;
  void Absorb(const LocationScan& nested);

  // Records a failure (the first one wins) and returns false, for `return r.Fail(...)`.
  bool Fail(uint64_t offset, absl::string_view what);

  // RAII nesting guard: `DepthGuard g(r, offset); if (!g.ok()) return false;`
  class DepthGuard {
   public:
    DepthGuard(ScanReader& r, uint64_t offset) : r_(r) {
      ok_ = ++r_.depth_ <= r_.limits_.max_depth || r_.Fail(offset, "nesting too deep");
    }
    ~DepthGuard() { --r_.depth_; }
    bool ok() const { return ok_; }

   private:
    ScanReader& r_;
    bool ok_;
  };

  // Finishes a scan: copies counters and error into `scan`; if failed, adds [failed_at, size)
  // of every kind to the fallback (after the containers the parser already put there).
  void Finish(LocationScan* scan) const;

 private:
  ByteSource& source_;
  ScanLimits limits_;
  uint64_t bytes_read_ = 0;
  uint32_t structures_ = 0;
  uint64_t allocated_ = 0;
  uint64_t swept_ = 0;
  uint64_t comparisons_ = 0;
  int depth_ = 0;
  std::string error_;
  uint64_t failed_at_ = 0;
};

// The bytes [base, base + size) of another source, as a source of their own.
class WindowSource : public ByteSource {
 public:
  WindowSource(ByteSource& inner, uint64_t base, uint64_t size)
      : inner_(inner), base_(base), size_(size) {}
  uint64_t size() const override { return size_; }
  bool Read(uint64_t offset, size_t n, uint8_t* out) override {
    if (offset > size_ || n > size_ - offset) return false;
    return inner_.Read(base_ + offset, n, out);
  }

 private:
  ByteSource& inner_;
  uint64_t base_;
  uint64_t size_;
};

// Adds [begin, end) of `kind` to `out` if non-empty.
inline void AddRange(std::vector<LocationRange>* out, uint64_t begin, uint64_t end,
                     Redaction kind) {
  if (end > begin) out->push_back({begin, end, kind});
}

}  // namespace scopedfs::media

#endif  // SCOPEDFS_MEDIA_LOCATION_SCAN_READER_H_
