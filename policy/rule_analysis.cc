// The config validator's static analysis of compiled rules (see rule_set.h): whether an earlier
// rule covers a later one, and why a rule can never match.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "policy/rule_set.h"

namespace scopedfs::policy {
namespace {

// Ops that only ever target one kind of node (how the daemon asks).
constexpr EnumMask kFileOnlyOps = Bit(OP_CREATE) | Bit(OP_DELETE) | Bit(OP_WRITE);
constexpr EnumMask kDirectoryOnlyOps = Bit(OP_MKDIR) | Bit(OP_RMDIR);
constexpr EnumMask kCreatingOps = Bit(OP_CREATE) | Bit(OP_MKDIR);

// "Unconstrained on E, or L is constrained to a subset of E."
template <typename T, typename Within>
bool ListCovers(const std::vector<T>& earlier, const std::vector<T>& later, Within within) {
  if (earlier.empty()) return true;
  if (later.empty()) return false;
  return std::all_of(later.begin(), later.end(), [&](const T& l) {
    return std::any_of(earlier.begin(), earlier.end(), [&](const T& e) { return within(l, e); });
  });
}

bool MaskCovers(EnumMask earlier, EnumMask later) {
  return earlier == 0 || (later != 0 && (later & ~earlier) == 0);
}

template <typename E>
bool EnumCovers(E earlier, E later) {
  return static_cast<int>(earlier) == 0 || earlier == later;
}

// Is there a uid in `uids` whose app id lies in `app_ids`?
bool SpansShareAppId(const IdSpan& uids, const IdSpan& app_ids) {
  if (uids.last - uids.first >= kPerUserRange - 1) return true;
  uint32_t lo = AppIdOf(uids.first), hi = AppIdOf(uids.last);
  auto overlaps = [&app_ids](uint32_t a, uint32_t b) {
    return a <= app_ids.last && app_ids.first <= b;
  };
  return lo <= hi ? overlaps(lo, hi) : overlaps(lo, kPerUserRange - 1) || overlaps(0, hi);
}

}  // namespace

bool Covers(const CompiledRule& e, const CompiledRule& l) {
  auto span_within = [](const IdSpan& inner, const IdSpan& outer) {
    return outer.first <= inner.first && inner.last <= outer.last;
  };
  auto same_ci = [](const std::string& a, const std::string& b) {
    return absl::EqualsIgnoreCase(a, b);
  };
  auto same = [](const auto& a, const auto& b) { return a == b; };

  if (!MaskCovers(e.ops, l.ops)) return false;
  if (!ListCovers(e.packages, l.packages, same_ci)) return false;
  if (!ListCovers(e.uids, l.uids, span_within)) return false;
  if (!ListCovers(e.app_ids, l.app_ids, span_within)) return false;
  if (!ListCovers(e.user_ids, l.user_ids, same)) return false;
  if ((e.holds_all & ~l.holds_all).any()) return false;
  if (e.holds_any.any()) {
    bool implied = (l.holds_any.any() && (l.holds_any & ~e.holds_any).none()) ||
                   (l.holds_all & e.holds_any).any();
    if (!implied) return false;
  }
  if ((e.holds_none & ~l.holds_none).any()) return false;
  if (!ListCovers(e.selinux_domains, l.selinux_domains, same)) return false;
  if (!EnumCovers(e.owner, l.owner) || !EnumCovers(e.cross_user, l.cross_user) ||
      !EnumCovers(e.registered, l.registered) || !EnumCovers(e.user_selected, l.user_selected)) {
    return false;
  }
  if (!ListCovers(e.top_dirs, l.top_dirs, same_ci)) return false;
  if (!e.globs.empty()) {
    bool e_matches_all = std::any_of(e.globs.begin(), e.globs.end(),
                                     [](const Glob& g) { return g.pattern() == "**"; });
    // The root is never matched by a glob; a later rule limited to DEPTH_TOP/NESTED never
    // reaches it either.
    bool l_not_root = !l.globs.empty() || !l.top_dirs.empty() ||
                      (l.depth != DEPTH_UNSPECIFIED && l.depth != DEPTH_ROOT);
    if (!(e_matches_all && l_not_root) &&
        !ListCovers(e.globs, l.globs, [](const Glob& a, const Glob& b) {
          // Case folding applies to matched characters, not to class range bounds: "[A-z]" also
          // holds "[\]^_`", "[a-z]" does not. Only patterns without a class compare ignoring case.
          return a.pattern() == b.pattern() || (!absl::StrContains(a.pattern(), '[') &&
                                                absl::EqualsIgnoreCase(a.pattern(), b.pattern()));
        })) {
      return false;
    }
  }
  if (!EnumCovers(e.depth, l.depth) || !EnumCovers(e.standard_top_dir, l.standard_top_dir) ||
      !EnumCovers(e.node_type, l.node_type)) {
    return false;
  }
  if (e.area != AREA_RELATION_UNSPECIFIED) {
    if (e.area != l.area) return false;
    // OWN/OTHER over fewer areas is narrower; NONE over more areas is narrower.
    bool narrower = e.area == AREA_RELATION_NONE ? (e.area_mask & ~l.area_mask) == 0
                                                 : (l.area_mask & ~e.area_mask) == 0;
    if (!narrower) return false;
  }
  if (!MaskCovers(e.media_classes, l.media_classes)) return false;
  if (!EnumCovers(e.has_location, l.has_location)) return false;
  return true;
}

std::string WhyNeverMatches(const CompiledRule& r, const StorageLayout& layout) {
  if ((r.holds_all & r.holds_none).any()) {
    return "holds_all and holds_none name the same permission";
  }
  if (r.holds_any.any() && (r.holds_any & ~r.holds_none).none()) {
    return "every holds_any permission is also in holds_none";
  }
  if (!r.uids.empty() && !r.user_ids.empty()) {
    bool any = std::any_of(r.uids.begin(), r.uids.end(), [&r](IdSpan s) {
      return std::any_of(r.user_ids.begin(), r.user_ids.end(), [s](uint32_t user) {
        return UserIdOf(s.first) <= user && user <= UserIdOf(s.last);
      });
    });
    if (!any) return "no uid in the uid ranges belongs to any of the user_ids";
  }
  if (!r.uids.empty() && !r.app_ids.empty()) {
    bool any = std::any_of(r.uids.begin(), r.uids.end(), [&r](IdSpan u) {
      return std::any_of(r.app_ids.begin(), r.app_ids.end(),
                         [u](IdSpan a) { return SpansShareAppId(u, a); });
    });
    if (!any) return "no uid in the uid ranges has an app id in the app_id ranges";
  }
  if (r.owner == OWNERSHIP_CALLER_OWNS && r.ops != 0 && (r.ops & ~kCreatingOps) == 0) {
    return "owner CALLER_OWNS with only CREATE/MKDIR: nobody owns a file that does not exist yet";
  }
  if (r.depth == DEPTH_ROOT) {
    if (!r.top_dirs.empty()) return "depth ROOT with top_dir: the root has no top-level directory";
    if (!r.globs.empty()) return "depth ROOT with glob: globs never match the root";
    if (r.standard_top_dir != TRISTATE_UNSPECIFIED) {
      return "depth ROOT with standard_top_dir: the root has no top-level directory";
    }
    if (r.area == AREA_RELATION_OWN || r.area == AREA_RELATION_OTHER) {
      return "depth ROOT with area OWN/OTHER: the root is in no area";
    }
    if (r.node_type == NODE_TYPE_FILE)
      return "depth ROOT with node_type FILE: the root is a directory";
  }
  if (r.depth == DEPTH_TOP && (r.area == AREA_RELATION_OWN || r.area == AREA_RELATION_OTHER)) {
    // Area roots sit at least two segments deep ("x/{package}") in every valid layout.
    return "depth TOP with area OWN/OTHER: areas lie below the top level";
  }
  if (!r.top_dirs.empty() && r.standard_top_dir != TRISTATE_UNSPECIFIED) {
    bool want = r.standard_top_dir == TRISTATE_TRUE;
    bool any = std::any_of(r.top_dirs.begin(), r.top_dirs.end(), [&](const std::string& d) {
      return layout.IsStandardTopDir(d) == want;
    });
    if (!any) {
      return want ? "standard_top_dir TRUE but no top_dir is a layout.top_level_dir"
                  : "standard_top_dir FALSE but every top_dir is a layout.top_level_dir";
    }
  }
  constexpr EnumMask kLocationClasses = Bit(MEDIA_CLASS_IMAGE) | Bit(MEDIA_CLASS_VIDEO);
  if (r.node_type == NODE_TYPE_DIRECTORY) {
    if (r.media_classes != 0 && (r.media_classes & Bit(MEDIA_CLASS_NONE)) == 0) {
      return "node_type DIRECTORY with a media class: directories are MEDIA_CLASS_NONE";
    }
    if (r.has_location == TRISTATE_TRUE) {
      return "node_type DIRECTORY with has_location TRUE: directories carry no location";
    }
    if (r.ops != 0 && (r.ops & ~kFileOnlyOps) == 0) {
      return "node_type DIRECTORY with only file operations (CREATE/DELETE/WRITE)";
    }
  }
  if (r.node_type == NODE_TYPE_FILE && r.ops != 0 && (r.ops & ~kDirectoryOnlyOps) == 0) {
    return "node_type FILE with only directory operations (MKDIR/RMDIR)";
  }
  if (r.has_location == TRISTATE_TRUE && r.media_classes != 0 &&
      (r.media_classes & kLocationClasses) == 0) {
    return "has_location TRUE but only images and video carry location";
  }
  return "";
}

}  // namespace scopedfs::policy
