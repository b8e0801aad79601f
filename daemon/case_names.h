// Case-insensitive names, as Android's casefolded /data/media has them, done by the daemon: this
// kernel has no CONFIG_UNICODE, so the lower tree is case-sensitive and the daemon finds the
// lower spelling of a name itself (ANDROID semantics only; POSIX names are the lower tree's).
//
// Folding is ASCII only: A-Z and a-z are one letter each, every other byte is itself. ext4's
// casefold does more (names are UTF-8, normalized (NFD) and casefolded by Unicode's full folding,
// so "É" meets "é" and a precomposed letter meets its decomposed spelling); a name with non-ASCII
// letters is found here only under spellings that differ from it in ASCII letters.
#ifndef SCOPEDFS_DAEMON_CASE_NAMES_H_
#define SCOPEDFS_DAEMON_CASE_NAMES_H_

#include <string>

#include "absl/strings/string_view.h"

namespace scopedfs::daemon {

// Whether two names are one name once folded (ASCII letters without case).
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

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_CASE_NAMES_H_
