// A file's content facts kept with it on the lower tree, so that a restarted daemon does not read
// the file again: the xattr trusted.scopedfs.facts (beside the creator's trusted.scopedfs.owner)
// holds the sniffed format and the location scan together with the version they were taken at.
// A record is trusted only while the version matches, including a bound on the file's ctime
// (docs/design.md, "Facts kept across restarts", says why that is sound and what it costs).
#ifndef SCOPEDFS_DAEMON_JUDGE_FACTS_RECORD_H_
#define SCOPEDFS_DAEMON_JUDGE_FACTS_RECORD_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/tables/object_id.h"
#include "media/content_facts.h"
#include "media/location/location.h"

namespace scopedfs::daemon {

inline constexpr char kFactsXattr[] = "trusted.scopedfs.facts";
// A scan with more ranges than this is not recorded (it is scanned again after a restart), so a
// record is at most 48 + 17 * 48 = 864 bytes: it fits in an ext4 inode's spare space or one block.
inline constexpr size_t kMaxRecordRanges = 48;
inline constexpr size_t kMaxRecordBytes = 1024;
// How far past the moment the daemon writes a record the file's ctime may be and the record still
// hold: the time the write itself takes. A write slower than this leaves no record.
inline constexpr absl::Duration kRecordCtimeSlack = absl::Milliseconds(2);

// A version younger than this (by its ctime) is not recorded: a file just made or written is
// likely to change again at once (tar sets each file's times right after writing it), and each
// record would be one setxattr on the request path for nothing.
inline constexpr absl::Duration kRecordQuietAge = absl::Milliseconds(20);

struct FactsRecord {
  // The version the facts were taken at: the object (inode number and handle digest, which
  // carries ext4's i_generation), its size and mtime, and a bound its ctime never passes while
  // the record holds (the record's own write moves the ctime, so it cannot hold the exact one).
  uint64_t ino = 0;
  uint64_t generation = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_bound_ns = 0;
  media::MediaFormat format = media::MediaFormat::kUnknown;
  // Null: only the format was read (a lookup that needs no location); else a complete,
  // well-formed scan (a malformed one is never recorded).
  std::shared_ptr<const media::LocationScan> scan;
};

// The bytes of `record`; empty if it cannot be recorded (a malformed scan, too many ranges).
std::string EncodeFactsRecord(const FactsRecord& record);
// A record from untrusted bytes: InvalidArgument, saying what is wrong, unless every field is
// well formed (magic, exact length, a known format and class, ranges of known kinds, sorted,
// non-empty, inside the file, not overlapping within a kind).
absl::StatusOr<FactsRecord> DecodeFactsRecord(absl::string_view bytes);
// Whether `record` describes the object `id` as stat'ed in `st`.
bool RecordMatches(const FactsRecord& record, const ObjectId& id, const struct stat& st);

// The record of the object `fd` (any fd of it; O_PATH too): NotFound if there is none (or the
// filesystem keeps no xattrs), InvalidArgument if its bytes are malformed or too long.
absl::StatusOr<FactsRecord> ReadFactsRecord(int fd);
// Writes the facts of object `id`, read at version `before` (stat'ed before its bytes were read),
// onto `fd`, and stats it again into `after`. Returns false, and leaves no record, unless the
// file was still at `before` just before the write and its ctime stayed within the record's bound
// after it (then `after` is the version the record holds for).
bool WriteFactsRecord(int fd, const ObjectId& id, const struct stat& before,
                      media::MediaFormat format, std::shared_ptr<const media::LocationScan> scan,
                      struct stat* after);
// Removes the record of `fd` (a change through the mount that a version might not show).
void DropFactsRecord(int fd);
// The same for `fd` open for reading or writing (not O_PATH): no path walk through /proc.
void DropFactsRecordOfOpenFile(int fd);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_FACTS_RECORD_H_
