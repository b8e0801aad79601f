// Case-insensitive names, as Android's casefolded /data/media has them, done by the daemon: this
// kernel has no CONFIG_UNICODE, so the lower tree is case-sensitive and the daemon finds the
// lower spelling of a name itself (ANDROID semantics only; POSIX names are the lower tree's).
//
// Folding is base/folded_name.h's: A-Z and a-z are one letter each, and the few code points whose
// ext4 fold is ASCII meet it ("Muſic", long s, finds "Music"), as on a casefolded lower; every
// other byte is itself. ext4's casefold does more (names are UTF-8, normalized (NFD) and
// casefolded by Unicode's full folding, so "É" meets "é" and a precomposed letter meets its
// decomposed spelling); such names are found here only under spellings that differ from them in
// what this folds.
#ifndef SCOPEDFS_DAEMON_TABLES_CASE_NAMES_H_
#define SCOPEDFS_DAEMON_TABLES_CASE_NAMES_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "daemon/observe/stats.h"
#include "daemon/tables/object_id.h"

namespace scopedfs::daemon {

// Whether two names are one name once folded (base::FoldsTogether).
bool SameFoldedName(absl::string_view a, absl::string_view b);

// A directory holds at most this many entries read per case-insensitive search; a larger one
// cannot be searched and the answer is EMFILE (callers decide what that means for them).
inline constexpr int kMaxCaseSearchEntries = 1 << 20;

// The entry of the directory `dir_fd` (any fd of it, O_PATH too) whose name folds to `name`'s
// but is not `name` itself: 0 with *match set, ENOENT when there is none, EMFILE past
// `max_entries`, or another errno. When several entries qualify (twins made in the lower tree
// behind the daemon's back), the first in byte order (strcmp) is the one, whatever order the
// directory lists them in. `*entries_read` (if given) counts what the search read.
int FindCaseMatch(int dir_fd, absl::string_view name, std::string* match,
                  int max_entries = kMaxCaseSearchEntries, int* entries_read = nullptr);

// The directory's state as far as its timestamps tell: any entry added, removed or renamed in it
// changes its mtime and ctime. (Kernels with multigrain timestamps, 6.13 and later on tmpfs, ext4,
// xfs and btrfs, give a change made after the last query a time of its own; older ones may give
// two changes within one clock tick one time, so a change made in the lower tree behind the
// daemon's back may go unseen until the directory changes again.)
struct DirStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t generation = 0;  // object_id.h: a directory that got a removed one's number differs
  int64_t mtime_ns = -1;
  int64_t ctime_ns = -1;
  bool operator==(const DirStamp& o) const {
    return dev == o.dev && ino == o.ino && generation == o.generation && mtime_ns == o.mtime_ns &&
           ctime_ns == o.ctime_ns;
  }
};
// The stamp of the directory `dir_fd`; mtime_ns -1 if it cannot be had.
DirStamp StampOf(int dir_fd);
// The same for a directory whose generation is known (its node's), without asking for its handle.
DirStamp StampOf(int dir_fd, uint64_t generation);

// FindCaseMatch without reading the directory at every miss: each directory gets an index, built
// by one read, kept while its stamp is unchanged, and updated for the names the daemon itself adds
// and removes (Added, Removed). Once built, a lookup costs one hash probe (and one fstatat when
// the name exists in another case), whatever the directory's size: a name that exists in no case
// is answered without any read. Small directories are indexed too, so that a name's answer costs
// the same steps whether it exists or not (LowerSpelling; docs/security.md, timing).
//
// The index keeps no names. Per name it keeps a keyed hash of the folded name and which of its
// ASCII letters are upper case (a bit each, none for an all-lower-case name): the lower spelling
// is the asked name with those letters' case, confirmed by an fstatat. That is 17-34 bytes per
// name plus 8 per 64 letters of a name with capitals, whatever the name's length; a directory of
// kMaxCaseSearchEntries names, the most a search reads, fits in kMaxIndexBytes. Two spellings of
// one folded name (twins made behind the daemon's back) or a hash collision make that one entry
// ambiguous: a lookup of it reads the directory, as FindCaseMatch does; so does a name folded
// beyond ASCII letters ("Muſic"), asked or held, whose spelling a mask cannot give. Indexes hold at
// most kMaxIndexBytes in all; past that the least recently used directory's index goes, and its
// next search reads it again.
class CaseIndex {
 public:
  static constexpr size_t kMaxIndexBytes = size_t{96} << 20;

  // `stats` (may be null) counts the directory reads (case_directory_reads).
  explicit CaseIndex(Stats* stats = nullptr);
  CaseIndex(const CaseIndex&) = delete;
  CaseIndex& operator=(const CaseIndex&) = delete;

  // As FindCaseMatch(dir_fd, name, match).
  int Find(int dir_fd, absl::string_view name, std::string* match) ABSL_LOCKS_EXCLUDED(mu_);
  // The same for a directory whose generation is known (its node's): no name_to_handle_at.
  int Find(int dir_fd, uint64_t generation, absl::string_view name, std::string* match)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The spelling the directory's index holds of `name`, whichever it is, `name` itself included:
  // 0 with *lower set (still to be confirmed by opening it), ENOENT when the index holds no
  // spelling of it, or EAGAIN when the index cannot tell (no index fits, twins or a collision,
  // the directory cannot be stamped; the caller then opens `name` and calls Find). Builds the
  // directory's index if it has none for its current state. A name is thus resolved by the same
  // steps whether it exists, in its own spelling or another, or not at all.
  // `generation` is the directory's ObjectId::generation (its node's).
  int LowerSpelling(int dir_fd, uint64_t generation, absl::string_view name, std::string* lower)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The stamp to give Added or Removed for a change about to be made in directory `dir_fd`
  // (object `dir`, its node's). Only a directory the index holds is stamped: any other (every
  // directory under POSIX semantics, where nothing is ever indexed) is left unasked, with no
  // system call, and its stamp says so (mtime_ns -1), which makes Added and Removed drop an index
  // built meanwhile rather than update it.
  DirStamp Before(int dir_fd, const ObjectId& dir) ABSL_LOCKS_EXCLUDED(mu_);
  // `name` was just added to the directory by the daemon, which had the stamp `before` of this
  // `dir_fd` (Before) just before: an index of that state learns the name; any other index of
  // the directory goes.
  void Added(int dir_fd, const DirStamp& before, absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);
  // The same for a name the daemon just removed.
  void Removed(int dir_fd, const DirStamp& before, absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);
  size_t indexed_names() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t indexed_bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whole reads of a directory made by Find so far (to build an index, or to search one that has
  // none, is too small for one, or holds the asked name ambiguously).
  uint64_t directory_reads() const { return directory_reads_.load(); }

 private:
  // Where a folded name's case mask is: masks[at, at + words), no words for all lower case.
  struct Spelling {
    uint32_t mask_at = 0;
    uint8_t mask_words = 0;
    bool ambiguous = false;
  };
  struct Dir {
    DirStamp stamp;
    absl::flat_hash_map<uint64_t, Spelling> by_folded;  // keyed hash of the folded name
    std::vector<uint64_t> masks;
    size_t dead_words = 0;  // of removed names, compacted when they are half
    size_t names = 0;
    size_t bytes = 0;  // Bytes() when last counted in total_bytes_
    uint64_t last_use = 0;
    // Too large to index (past kMaxCaseSearchEntries, or past kMaxIndexBytes): kept, with no
    // names, only so that LowerSpelling does not read it at every lookup; Find reads it.
    bool unindexable = false;
    size_t Bytes() const;
  };
  using Key = std::pair<dev_t, ino_t>;
  enum class Answer { kNone, kFound, kUnsure };

  uint64_t FoldedHash(absl::string_view name) const;
  // Adds `name` to `dir`; false if a spelling of its folded name was there (it is then ambiguous).
  static bool Insert(Dir* dir, uint64_t hash, absl::string_view name);
  // The answer of `dir` for `name`, *match set when found (still to be confirmed by an fstatat).
  // `name` itself is a match only if `exact_matches`.
  Answer Lookup(const Dir& dir, absl::string_view name, bool exact_matches,
                std::string* match) const;
  // A full read (FindCaseMatch), counted.
  int Search(int dir_fd, absl::string_view name, std::string* match);
  // One read of the directory of state `stamp`, which answers as FindCaseMatch and files the
  // directory's index if it fits (else a Dir::unindexable one); *indexed says whether it did.
  int ReadAndIndex(int dir_fd, const DirStamp& stamp, absl::string_view name, std::string* match,
                   bool* indexed) ABSL_LOCKS_EXCLUDED(mu_);
  // Find with the directory's stamp, taken before the directory is read: a change during the read
  // makes the index stale at once.
  int Find(int dir_fd, const DirStamp& stamp, absl::string_view name, std::string* match)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Applies one change the daemon made (`added` or removed) to an index of the state `before`.
  void Changed(int dir_fd, const DirStamp& before, absl::string_view name, bool added)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Recount(Dir* dir) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void File(const Key& key, std::unique_ptr<Dir> dir) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Stats* const stats_;
  const uint64_t seed_;  // keys the hash: names cannot be chosen to collide
  std::atomic<uint64_t> directory_reads_{0};
  mutable absl::Mutex mu_;  // a leaf
  absl::flat_hash_map<Key, std::unique_ptr<Dir>> dirs_ ABSL_GUARDED_BY(mu_);
  size_t total_names_ ABSL_GUARDED_BY(mu_) = 0;
  size_t total_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_CASE_NAMES_H_
