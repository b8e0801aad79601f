// What the daemon knows about a lower file's content when it judges a request: its type facts, its
// recorded creator and where its location metadata sits. Produced by the facts cache, read by the
// request context and the ops.
#ifndef SCOPEDFS_DAEMON_JUDGE_FILE_INFO_H_
#define SCOPEDFS_DAEMON_JUDGE_FILE_INFO_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "media/content_facts.h"
#include "media/location/location.h"

namespace scopedfs::daemon {

// xattr holding the creator's uid (decimal) on every file and directory created through the mount.
inline constexpr char kOwnerXattr[] = "trusted.scopedfs.owner";

struct FileInfo {
  media::ContentFacts facts;
  std::optional<uint32_t> owner;
  // Where location metadata sits; null: not a location carrier, or its bytes could not be read.
  std::shared_ptr<const media::LocationScan> scan;
  // False when a regular file's bytes could not be read (no format, no scan): nothing about its
  // location can be vouched for.
  bool content_read = true;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_FILE_INFO_H_
