// Reader for Android's /data/system/packages.list, which maps each installed package to its uid.
// Line format (space separated, written by PackageManager's Settings.writePackageListLPr):
//   <package> <uid> <debuggable 0|1> <data dir> <seinfo> <gids "a,b,c" | "none"> [<profileable>
//   <version code> ...]
// Only the first five fields are required; later fields are optional and extra fields are ignored,
// because their number has grown across Android releases.
#ifndef SCOPEDFS_POLICY_PACKAGES_LIST_H_
#define SCOPEDFS_POLICY_PACKAGES_LIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopedfs::policy {

struct PackagesListEntry {
  std::string package;
  uint32_t uid = 0;
  bool debuggable = false;
  std::string data_dir;
  // Whole seinfo field, e.g. "default:targetSdkVersion=33" or
  // "platform:privapp:targetSdkVersion=29".
  std::string seinfo;
  // Parsed from ":targetSdkVersion=N" in seinfo; 0 if absent.
  uint32_t target_sdk = 0;
  std::vector<uint32_t> gids;
  int line = 0;  // 1-based line in the file
};

// Parses the text of a packages.list. Blank lines (including lines of only spaces) are skipped, a
// run of spaces separates fields, and "\r\n" line endings are accepted. On any malformed line the
// result is InvalidArgument whose message lists every problem, one per line, as
// "<filename>:<line>:<col>: <message>" (1-based; col points at the first character of the
// offending field, or just past the end of the line for too few fields). Problems include:
//   - too few fields;
//   - a package name that fails IsValidPackageName, except the framework package "android",
//     which real files list and which PackageManager exempts from the rule too;
//   - a uid that is not a decimal number in [0, 2^31) (no sign, no hex);
//   - debuggable not 0/1;
//   - a malformed number in ":targetSdkVersion=N" inside seinfo;
//   - a gid list that is not "none" or a comma list of decimal numbers in [0, 2^31);
//   - a package listed twice (reported on the second line, naming the first);
//   - a NUL, tab or other control character (col points at that byte, and the line's fields are
//     then not checked). Tabs are rejected rather than treated as separators because Android
//     only writes spaces and its own native reader splits on spaces alone.
// Reporting stops after 1000 problems so that a binary file cannot produce an enormous message.
absl::StatusOr<std::vector<PackagesListEntry>> ParsePackagesList(absl::string_view text,
                                                                 absl::string_view filename);

// Reads and parses a file. Errors name the path. I/O errors carry the code absl::ErrnoToStatus
// gives their errno (NotFound if the file does not exist, PermissionDenied if it may not be
// opened); a file larger than 64 MiB is FailedPrecondition (no real packages.list comes close).
absl::StatusOr<std::vector<PackagesListEntry>> ReadPackagesList(const std::string& path);

// True if `name` is a valid Android package name: two or more '.'-separated segments, each starting
// with a letter and made of [A-Za-z0-9_]. (Mirrors PackageParser's validateName, which is also
// strict about this; its caller is what exempts "android".)
bool IsValidPackageName(absl::string_view name);

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_PACKAGES_LIST_H_
