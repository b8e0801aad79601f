// Box headers (32- and 64-bit sizes, size 0, uuid extended types), the walk over a run of boxes
// and the cursor over box bodies: the primitives every part of the ISO-BMFF walk reads through.
#include "media/location/isobmff_box.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media::isobmff {

bool BoxWalker::ForEachBox(uint64_t begin, uint64_t end, bool top_level, BoxVisitor visit) {
  for (uint64_t at = begin; at < end;) {
    if (!r_.Visit(at)) return false;
    if (!top_level && end - at == 4) {
      // QuickTime may close a list of atoms with a 32-bit zero.
      uint32_t word;
      if (!r_.Be32(at, &word)) return false;
      if (word == 0) return true;
    }
    Box box;
    if (!ReadHeader(at, end, top_level, &box) || !visit(box)) return false;
    at = box.end;
  }
  return true;
}

bool BoxWalker::ReadHeader(uint64_t at, uint64_t end, bool top_level, Box* box) {
  if (end - at < 8) {
    return r_.Fail(at, top_level ? "box header cut by the end of the file"
                                 : "box header cut by the end of its container");
  }
  uint8_t head[8];
  if (!r_.Read(at, 8, head)) return false;
  uint64_t size = LoadBe32(head);
  uint64_t header = 8;
  box->type = LoadBe32(head + 4);
  if (size == 1) {
    if (end - at < 16) return r_.Fail(at, "64-bit box size cut short");
    if (!r_.Be64(at + 8, &size)) return false;
    header = 16;
  } else if (size == 0) {
    // Only the last top-level box may run to the end of the file. Inside a container readers
    // disagree (some stop, some skip 4 bytes and carry on), so it cannot be vouched for.
    if (!top_level) return r_.Fail(at, "box of size 0 inside a container");
    size = end - at;
  }
  if (size < header) return r_.Fail(at, absl::StrCat("box size ", size, " below its header"));
  if (size > end - at) {
    return r_.Fail(at, absl::StrCat("box of ", size, " bytes overruns ",
                                    top_level ? "the end of the file" : "its container"));
  }
  if (box->type == kUuid) {
    if (size - header < 16) return r_.Fail(at, "uuid box too small for its extended type");
    if (!r_.Read(at + header, 16, box->extended_type)) return false;
    header += 16;
  }
  box->begin = at;
  box->payload = at + header;
  box->end = at + size;
  return true;
}

bool BoxWalker::ReadAll(uint64_t begin, uint64_t end, std::string* out) {
  const uint64_t n = end - begin;
  if (n > limits_.max_bytes_read - std::min(limits_.max_bytes_read, r_.bytes_read())) {
    return r_.Fail(begin, absl::StrCat("read budget of ", limits_.max_bytes_read,
                                       " bytes cannot cover ", n, " bytes"));
  }
  return r_.ReadString(begin, static_cast<size_t>(n), out);
}

bool Cursor::Uint(int width, uint64_t* v) {
  if (bytes_.size() - pos_ < static_cast<size_t>(width)) {
    return r_.Fail(offset(), absl::StrCat(what_, " is truncated"));
  }
  *v = 0;
  for (int i = 0; i < width; ++i) *v = (*v << 8) | static_cast<uint8_t>(bytes_[pos_++]);
  return true;
}

bool Cursor::String(bool to_end_ok, std::string* s) {
  size_t nul = bytes_.find('\0', pos_);
  if (nul == absl::string_view::npos) {
    if (!to_end_ok) return r_.Fail(offset(), absl::StrCat(what_, " has an unterminated string"));
    nul = bytes_.size();
  }
  *s = std::string(bytes_.substr(pos_, nul - pos_));
  pos_ = std::min(nul + 1, bytes_.size());
  return true;
}

}  // namespace scopedfs::media::isobmff
