// Path classification for emulated storage: where a relative path sits in the Android layout
// (root, top-level directory, per-package area such as Android/data/<pkg>). Hostile paths
// ("..", ".", empty segments, NUL bytes, over-long names) are refused, never interpreted.
#ifndef SCOPEDFS_POLICY_STORAGE_PATH_H_
#define SCOPEDFS_POLICY_STORAGE_PATH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {

inline constexpr size_t kMaxNameBytes = 255;   // NAME_MAX
inline constexpr size_t kMaxPathBytes = 4095;  // PATH_MAX - 1
// No bound on a whole path: the kernel allows any depth below the storage root.
inline constexpr size_t kAnyPathBytes = static_cast<size_t>(-1);

// Where a path sits. Views point into the classified path; they live as long as it does.
struct PathInfo {
  absl::string_view path;  // "" for the root
  Depth depth = DEPTH_ROOT;
  absl::string_view top_dir;  // first segment; empty at the root
  bool standard_top_dir = false;
  int area = -1;                   // index into the layout's areas, -1 if in none
  absl::string_view area_package;  // the {package} segment when area >= 0
  absl::string_view name;          // last segment; empty at the root
};

// What the layout's move rules (policy.proto Layout) say about moving one path to another.
enum class LayoutMove {
  kAllowed,       // the rules decide
  kRefused,       // never, for an app (EPERM)
  kCrossesMount,  // into or out of a separate-mount area (EXDEV)
};

// Checks a relative storage path without classifying it: no leading or trailing '/', no empty,
// "." or ".." segment, no NUL byte, segments of at most kMaxNameBytes, at most `max_bytes` in
// all. The empty path is the root and is valid.
absl::Status ValidateStoragePath(absl::string_view path, size_t max_bytes = kMaxPathBytes);

// The layout part of a policy, compiled for classification.
class StorageLayout {
 public:
  // Fails with InvalidArgument on a malformed layout (the config loader reports these with
  // locations first; this is the backstop).
  static absl::StatusOr<StorageLayout> Compile(const Layout& layout);

  // Classifies a valid path (at most `max_bytes` long); InvalidArgument (from
  // ValidateStoragePath) otherwise. Allocates nothing when the path is valid.
  absl::StatusOr<PathInfo> Classify(absl::string_view path, size_t max_bytes = kMaxPathBytes) const;

  size_t area_count() const { return areas_.size(); }
  const std::string& area_name(size_t i) const { return areas_[i].name; }
  bool area_separate_mount(size_t i) const { return areas_[i].separate_mount; }
  // Names a child of the directory `dir` may have that the layout classifies apart from any
  // other name there: the default top-level directories at the root, and the next segment of
  // every area prefix that extends `dir` ("data" under "Android"). *holds_area_roots: `dir` is
  // an area's prefix, so each child is the root of some package's area.
  std::vector<std::string> ChildNamesClassifiedApart(absl::string_view dir,
                                                     bool* holds_area_roots) const;
  bool IsStandardTopDir(absl::string_view segment) const;
  // True when the layout declares top-level directories or areas: its move rules apply.
  bool has_move_rules() const { return !top_level_dirs_.empty() || !areas_.empty(); }
  // The layout's move rules for an app moving `from` to `to` (both classified by this layout).
  // Pure path arithmetic: the same answer whatever the tree holds.
  LayoutMove JudgeMove(const PathInfo& from, const PathInfo& to) const;

  // Checks one Area.pattern: a valid relative path of 2 to 8 segments whose last segment, and only
  // that one, is "{package}". Used by the loader to report bad patterns with a location.
  static absl::Status ValidateAreaPattern(absl::string_view pattern);

 private:
  struct CompiledArea {
    std::string name;
    std::vector<std::string> prefix;  // segments before {package}
    bool separate_mount = false;
  };
  // Whether `path` is a directory that holds areas (a strict prefix of an area's prefix, or the
  // prefix itself: "Android", "Android/data") or an area's root ("Android/data/<pkg>").
  bool HoldsOrIsAreaRoot(absl::string_view path) const;
  // Whether `path` is at or below a directory that holds areas ("Android/...").
  bool UnderAreaHolder(const PathInfo& info) const;
  std::vector<std::string> top_level_dirs_;
  std::vector<CompiledArea> areas_;
};

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_STORAGE_PATH_H_
