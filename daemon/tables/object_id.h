// What names one lower object, written once. An inode number alone does not: ext4 hands a freed
// number to the next file at once, while the kernel may still hold the old object's node (an
// open or O_PATH fd, a dentry under another spelling). Every table and cache that remembers
// something about a lower file or directory (nodes, content facts, fill plans, locks, case
// indexes) keys it by ObjectId, so nothing learned about one object reaches the next to get its
// number.
#ifndef SCOPEDFS_DAEMON_TABLES_OBJECT_ID_H_
#define SCOPEDFS_DAEMON_TABLES_OBJECT_ID_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <utility>

#include "absl/strings/string_view.h"

namespace scopedfs::daemon {

struct ObjectId {
  dev_t dev = 0;
  ino_t ino = 0;
  // A digest of the object's kernel file handle (name_to_handle_at), which carries the inode's
  // generation on every filesystem that can export handles (ext4, xfs, btrfs, tmpfs): a number
  // reused for a new object comes with a new handle. 0 when the filesystem gives no handle; such
  // objects are told apart by (dev, ino) alone, which holds while the daemon keeps an fd of the
  // object (node_table.h keeps one for every node without a handle).
  uint64_t generation = 0;

  bool operator==(const ObjectId& o) const {
    return dev == o.dev && ino == o.ino && generation == o.generation;
  }
  bool operator!=(const ObjectId& o) const { return !(*this == o); }
  template <typename H>
  friend H AbslHashValue(H h, const ObjectId& id) {
    return H::combine(std::move(h), id.dev, id.ino, id.generation);
  }
};

// The digest ObjectId::generation holds for a handle of `type` with `bytes` (never 0 for a
// non-empty handle; 0 for an empty one).
uint64_t HandleDigest(int type, absl::string_view bytes);

// The ObjectId of the object `fd` (any fd of it, O_PATH included) as stat'ed in `st`. One
// name_to_handle_at; generation 0 when the filesystem exports no handle.
ObjectId ObjectIdOf(int fd, const struct stat& st);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_OBJECT_ID_H_
