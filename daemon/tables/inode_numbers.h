// The inode numbers apps see under ANDROID semantics: a keyed hash (SipHash-2-4) of the lower
// object's (device, inode), with a key drawn when the daemon starts. Lower filesystems hand
// numbers out in sequence (tmpfs does), so the gap between two of an app's own files would count
// the objects other apps made meanwhile, hidden ones included; a keyed hash is stable for an
// object and all its hard links, and says nothing about any other object.
#ifndef SCOPEDFS_DAEMON_TABLES_INODE_NUMBERS_H_
#define SCOPEDFS_DAEMON_TABLES_INODE_NUMBERS_H_

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace scopedfs::daemon {

// SipHash-2-4 of `data` under the 128-bit `key` (two little-endian 64-bit halves).
uint64_t SipHash24(const std::array<uint64_t, 2>& key, absl::Span<const uint8_t> data);

class InodeNumbers {
 public:
  // A key from getrandom(2), so no two daemon runs number alike.
  static InodeNumbers WithRandomKey();
  explicit InodeNumbers(const std::array<uint64_t, 2>& key) : key_(key) {}

  // The number apps see for the lower object (dev, ino). Never 0 (which readdir callers take
  // for an empty slot). FUSE node ids are separate, so two objects whose numbers collide
  // (about n^2 / 2^65 for n objects) still work; only tools that pair files by number (du,
  // tar's hard-link detection, find -samefile) could take them for one.
  ino_t Of(dev_t dev, ino_t ino) const;

 private:
  std::array<uint64_t, 2> key_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_INODE_NUMBERS_H_
