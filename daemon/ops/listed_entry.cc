#include "daemon/ops/listed_entry.h"

#include <sys/stat.h>

#include <functional>

#include "daemon/ops/tree_walk.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

int ListedEntry(Filesystem* fs, const RequestContext& ctx, const Resolved& r, const dirent* ent,
                DirEntry* out, bool* shown, bool* depends_on_content, ListedChild* keep) {
  *shown = false;
  if (keep != nullptr) *keep = ListedChild();
  if (IsDot(ent->d_name)) {
    *out = {ent->d_name, ent->d_ino, ent->d_type};
    *shown = true;
    return 0;
  }
  Child child;
  FactNeeds needs = NeedsOf(ctx.engine());
  bool content_decides = true;
  std::function<bool(const FileInfo&)> gate = ContentDecidesForChild(ctx, &child, &content_decides);
  needs.content_decides = &gate;  // the content only where it decides (an app's own files: never)
  if (int err = OpenChild(fs, r, ent->d_name, &child, needs)) {
    return err == ENOENT ? 0 : err;
  }
  bool judge_view = ViewJudged(ctx, child.st.st_mode);
  media::ContentFacts located = child.info.facts;
  located.location = media::LocationPresence::kPresent;
  bool could_carry = judge_view && CouldCarryLocation(child.info);
  policy::LookupDecisions d = ctx.DecideLookup(child.path, S_ISDIR(child.st.st_mode), &child.info,
                                               could_carry ? &located : nullptr);
  const policy::Decision& seen = d.lookup;
  if (depends_on_content != nullptr && !S_ISDIR(child.st.st_mode) &&
      ctx.DependsOnContent(OP_LOOKUP, child.path, child.info)) {
    *depends_on_content = true;
  }
  if (seen.outcome == OUTCOME_HIDE || seen.outcome == OUTCOME_DENY) {
    ctx.RefusalSuperseded();
    return 0;
  }
  *out = {ent->d_name, ent->d_ino, ent->d_type, child.st.st_dev};
  if (child.identity) {
    out->generation = child.identity->id.generation;
    out->identified = true;
  }
  out->raw_view = !judge_view || ViewFor(d.read, d.read_if_located) == kRawView;
  *shown = true;
  if (keep != nullptr) {
    keep->child = std::move(child);
    keep->decided = d;
  }
  return 0;
}

}  // namespace scopedfs::daemon
