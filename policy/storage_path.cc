// Storage path validation and classification (see storage_path.h).
#include "policy/storage_path.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/folded_name.h"

namespace scopedfs::policy {
namespace {

constexpr absl::string_view kPackagePlaceholder = "{package}";

// Classify records this many leading segments without allocating, so an area pattern (prefix plus
// "{package}") may have at most this many segments.
constexpr size_t kMaxTracked = 8;

// Splits off the first segment of `rest`, advancing it.
absl::string_view NextSegment(absl::string_view* rest) {
  size_t slash = rest->find('/');
  absl::string_view segment = rest->substr(0, slash);
  rest->remove_prefix(slash == absl::string_view::npos ? rest->size() : slash + 1);
  return segment;
}

}  // namespace

absl::Status ValidateStoragePath(absl::string_view path, size_t max_bytes) {
  if (path.empty()) return absl::OkStatus();
  if (path.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("path is ", path.size(), " bytes, longer than ", max_bytes));
  }
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("path has a NUL byte");
  }
  if (path.front() == '/') return absl::InvalidArgumentError("path is absolute; want relative");
  if (path.back() == '/') return absl::InvalidArgumentError("path ends with '/'");
  absl::string_view rest = path;
  while (!rest.empty()) {
    absl::string_view segment = NextSegment(&rest);
    if (segment.empty()) return absl::InvalidArgumentError("path has an empty segment");
    if (segment == "." || segment == "..") {
      return absl::InvalidArgumentError(absl::StrCat("path has a '", segment, "' segment"));
    }
    if (segment.size() > kMaxNameBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("path segment is ", segment.size(), " bytes, longer than ", kMaxNameBytes));
    }
  }
  return absl::OkStatus();
}

absl::Status StorageLayout::ValidateAreaPattern(absl::string_view pattern) {
  if (pattern.empty()) return absl::InvalidArgumentError("area pattern is empty");
  if (absl::Status s = ValidateStoragePath(pattern); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("area pattern: ", s.message()));
  }
  if (!base::IsAsciiName(pattern)) {
    return absl::InvalidArgumentError(
        "area pattern is not ASCII (names are folded as a casefolded lower folds ASCII ones)");
  }
  std::vector<absl::string_view> segments = absl::StrSplit(pattern, '/');
  for (size_t i = 0; i < segments.size(); ++i) {
    bool last = i + 1 == segments.size();
    bool placeholder = segments[i] == kPackagePlaceholder;
    if (last && !placeholder) {
      return absl::InvalidArgumentError("area pattern must end with the segment \"{package}\"");
    }
    if (!last && (placeholder || absl::StrContains(segments[i], '{') ||
                  absl::StrContains(segments[i], '}'))) {
      return absl::InvalidArgumentError(
          "area pattern may use \"{package}\" only as its last segment");
    }
  }
  if (segments.size() < 2) {
    return absl::InvalidArgumentError(
        "area pattern needs a directory before \"{package}\"; an area cannot be top-level");
  }
  if (segments.size() > kMaxTracked) {
    return absl::InvalidArgumentError(
        absl::StrCat("area pattern has ", segments.size(), " segments; at most ", kMaxTracked));
  }
  return absl::OkStatus();
}

absl::StatusOr<StorageLayout> StorageLayout::Compile(const Layout& layout) {
  StorageLayout compiled;
  for (const std::string& dir : layout.top_level_dir()) {
    if (dir.empty() || absl::StrContains(dir, '/') || dir == "." || dir == ".." ||
        !base::IsAsciiName(dir)) {
      return absl::InvalidArgumentError(absl::StrCat("bad top-level directory \"", dir, "\""));
    }
    compiled.top_level_dirs_.push_back(dir);
  }
  for (const Area& area : layout.area()) {
    if (absl::Status s = ValidateAreaPattern(area.pattern()); !s.ok()) return s;
    CompiledArea ca;
    ca.name = area.name();
    ca.separate_mount = area.separate_mount();
    for (absl::string_view segment : absl::StrSplit(area.pattern(), '/')) {
      if (segment != kPackagePlaceholder) ca.prefix.emplace_back(segment);
    }
    compiled.areas_.push_back(std::move(ca));
  }
  return compiled;
}

bool StorageLayout::IsStandardTopDir(absl::string_view segment) const {
  for (const std::string& dir : top_level_dirs_) {
    if (base::FoldsTogether(dir, segment)) return true;
  }
  return false;
}

absl::StatusOr<PathInfo> StorageLayout::Classify(absl::string_view path, size_t max_bytes) const {
  if (absl::Status s = ValidateStoragePath(path, max_bytes); !s.ok()) return s;
  PathInfo info;
  info.path = path;
  if (path.empty()) return info;

  // Segments up to the deepest area prefix are all we need; record them without allocating.
  absl::string_view segments[kMaxTracked];
  size_t count = 0;
  absl::string_view rest = path;
  while (!rest.empty()) {
    absl::string_view segment = NextSegment(&rest);
    if (count < kMaxTracked) segments[count] = segment;
    ++count;
    info.name = segment;
  }
  info.top_dir = segments[0];
  info.depth = count == 1 ? DEPTH_TOP : DEPTH_NESTED;
  info.standard_top_dir = IsStandardTopDir(info.top_dir);

  for (size_t a = 0; a < areas_.size(); ++a) {
    const std::vector<std::string>& prefix = areas_[a].prefix;
    if (prefix.size() >= kMaxTracked || count <= prefix.size()) continue;
    bool match = true;
    for (size_t i = 0; i < prefix.size() && match; ++i) {
      match = base::FoldsTogether(prefix[i], segments[i]);
    }
    if (match) {
      info.area = static_cast<int>(a);
      info.area_package = segments[prefix.size()];
      break;
    }
  }
  return info;
}

std::vector<std::string> StorageLayout::ChildNamesClassifiedApart(absl::string_view dir,
                                                                  bool* holds_area_roots) const {
  *holds_area_roots = false;
  std::vector<std::string> names;
  if (dir.empty()) names = top_level_dirs_;
  std::vector<absl::string_view> segments;
  if (!dir.empty()) segments = absl::StrSplit(dir, '/');
  for (const CompiledArea& area : areas_) {
    if (segments.size() > area.prefix.size()) continue;
    bool match = true;
    for (size_t i = 0; i < segments.size() && match; ++i) {
      match = base::FoldsTogether(area.prefix[i], segments[i]);
    }
    if (!match) continue;
    if (segments.size() == area.prefix.size()) {
      *holds_area_roots = true;
    } else {
      names.push_back(area.prefix[segments.size()]);
    }
  }
  return names;
}

bool StorageLayout::HoldsOrIsAreaRoot(absl::string_view path) const {
  std::vector<absl::string_view> segments = absl::StrSplit(path, '/');
  for (const CompiledArea& area : areas_) {
    if (segments.size() > area.prefix.size() + 1) continue;
    bool match = true;
    for (size_t i = 0; i < segments.size() && i < area.prefix.size() && match; ++i) {
      match = base::FoldsTogether(area.prefix[i], segments[i]);
    }
    if (match) return true;
  }
  return false;
}

bool StorageLayout::UnderAreaHolder(const PathInfo& info) const {
  for (const CompiledArea& area : areas_) {
    if (base::FoldsTogether(area.prefix[0], info.top_dir)) return true;
  }
  return false;
}

// The rules MediaProvider's renameForFuse applies, and what vold's bind mounts imply, from the
// layout alone (see policy.proto Layout for the list).
LayoutMove StorageLayout::JudgeMove(const PathInfo& from, const PathInfo& to) const {
  if (!has_move_rules()) return LayoutMove::kAllowed;
  if (from.path.empty() || to.path.empty()) return LayoutMove::kRefused;
  if (from.depth == DEPTH_TOP && from.standard_top_dir) return LayoutMove::kRefused;
  if (to.depth == DEPTH_TOP) return LayoutMove::kRefused;
  if (HoldsOrIsAreaRoot(from.path) || HoldsOrIsAreaRoot(to.path)) return LayoutMove::kRefused;
  // Below an area-holding directory, only an area's inside takes new entries.
  if (UnderAreaHolder(to) && to.area < 0) return LayoutMove::kRefused;
  bool same_instance = from.area >= 0 && from.area == to.area &&
                       base::FoldsTogether(from.area_package, to.area_package);
  if (!same_instance) {
    for (const PathInfo* end : {&from, &to}) {
      if (end->area >= 0 && areas_[end->area].separate_mount) return LayoutMove::kCrossesMount;
    }
  }
  return LayoutMove::kAllowed;
}

}  // namespace scopedfs::policy
