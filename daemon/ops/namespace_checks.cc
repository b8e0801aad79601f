// The checks a new name must pass before a create, link or rename makes it: no case-only twin
// under ANDROID semantics (a name exists in every case), no revealing a hidden name through
// EEXIST, the layout's move rules, and no app able to do more to any object than it could before
// (checked for every app and every operation, not only the caller's reads).
#include "daemon/ops/namespace_checks.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/tree_walk.h"
#include "daemon/ops/views.h"
#include "policy/app_registry.h"

namespace scopedfs::daemon {

// For create/mkdir/symlink/link/rename targets: an existing name the caller cannot find (strict
// visibility) must not be revealed by EEXIST, so it is refused as if the create itself were
// forbidden (EACCES). Under LISTING visibility the caller finds the name (FindsName), as on a
// device, and the create fails EEXIST. Under ANDROID semantics a name exists in every case
// (LowerName): a new name that folds onto an existing entry is that entry, as on a device's
// casefolded storage, at any depth. A directory too large to search is refused (EMFILE) rather
// than risk a twin.
int CheckFreeName(Filesystem* fs, const RequestContext& ctx, const Resolved& parent,
                  const char* name, bool* exists_visible, std::string* real) {
  *exists_visible = false;
  std::string lower;
  if (int err = LowerName(fs, parent, name, &lower)) return err;
  if (real != nullptr) *real = lower;
  Child existing;
  int err = OpenChild(fs, parent, lower.c_str(), &existing);
  if (err == ENOENT) return 0;
  if (err != 0) return err;
  if (!FindsName(ctx, existing.path, S_ISDIR(existing.st.st_mode), existing.info)) return EACCES;
  *exists_visible = true;
  return 0;
}

// A rename or link must not let anyone do more to an object than before: moving another app's
// photo into the caller's own directory would otherwise turn a redacted copy into the raw bytes,
// and a link there would turn a read-only photo into one the caller writes, truncates and
// deletes. So what each app may do to the object, operation by operation (Capabilities), is
// compared at the old name and the new one, and any gain refuses the move with EXDEV, so a mover
// falls back to copying, which reads what the caller may read. The owner xattr moves with the
// inode, so the destination is judged with the same owner.
//
// Every app counts, not only the caller: a video linked under Music/x.m4a must not become
// readable, raw, by an app that holds only READ_MEDIA_AUDIO. So the check runs for the caller,
// every registered app of the mounted user, and one unregistered app uid.
// The caller comes first, in its own domain; the others in their configured domains, under the
// same engine snapshot.
// `path`: where the object is (under the device layout, its storage's user is the one checked).
std::vector<RequestContext> ReadersToCheck(const RequestContext& ctx, const std::string& path) {
  std::vector<RequestContext> readers = {ctx};
  const policy::Engine* engine = ctx.engine();
  if (engine == nullptr) return readers;
  uid_t base = ctx.StorageUserOf(path) * policy::kPerUserRange;
  absl::flat_hash_set<uint32_t> registered;
  for (const policy::AppRecord& app : engine->apps().records()) {
    registered.insert(app.app_id);
    readers.push_back(ctx.ForReader(base + app.app_id));
  }
  for (uint32_t app_id = 10000; app_id < 20000; ++app_id) {
    if (!registered.contains(app_id)) {
      readers.push_back(ctx.ForReader(base + app_id));
      break;
    }
  }
  return readers;
}

namespace {

// What one app may do to an object under one name, a bit per operation. A raw read counts as a
// redacted one too, so a redacted reader that would read raw gains a bit.
enum Capability : uint32_t {
  kSee = 1 << 0,
  kReadRedacted = 1 << 1,
  kReadRaw = 1 << 2,
  kWrite = 1 << 3,
  kSetattr = 1 << 4,  // chmod, chown, utimes, user.* xattrs
  kRemove = 1 << 5,
  kRename = 1 << 6,
};

uint32_t Capabilities(const RequestContext& app, const std::string& path, const FileInfo& info,
                      bool dir) {
  uint32_t caps = 0;
  auto permits = [&](Op op) { return Verdict(app.Decide(op, path, dir, &info)) == 0; };
  if (app.Decide(OP_LOOKUP, path, dir, &info).Permits()) caps |= kSee;
  if (dir) {
    if (permits(OP_READ)) caps |= kReadRedacted | kReadRaw;
  } else {
    int rank = JudgeRead(app, path, info).Rank();
    if (rank >= 1) caps |= kReadRedacted;
    if (rank >= 2) caps |= kReadRaw;
    if (permits(OP_WRITE)) caps |= kWrite;
  }
  if (permits(OP_SETATTR)) caps |= kSetattr;
  if (permits(dir ? OP_RMDIR : OP_DELETE)) caps |= kRemove;
  if (permits(OP_RENAME)) caps |= kRename;
  return caps;
}

// One object, moved or linked from `from` to `to` (named `to_name` there).
int CheckObjectNoGain(const std::vector<RequestContext>& apps, const std::string& from,
                      const FileInfo& info, const std::string& to, absl::string_view to_name,
                      bool dir) {
  FileInfo after = info;
  if (!dir) {
    after.facts = media::FactsOfContent(to_name, info.facts.format, info.scan.get());
    if (!info.content_read) after.facts.location = info.facts.location;
  }
  for (const RequestContext& app : apps) {
    if (Capabilities(app, to, after, dir) & ~Capabilities(app, from, info, dir)) return EXDEV;
  }
  return 0;
}

// The content a file in a moved tree may hold by the time it lands: every media class, with
// location absent, present and unreadable. A tree is judged for all of them, so its verdict
// depends on names, kinds and creators alone, never on bytes a writer may change meanwhile (and no
// file needs scanning for it).
std::vector<media::ContentFacts> AnyContent() {
  std::vector<media::ContentFacts> all;
  const std::pair<MediaClass, media::MediaFormat> kinds[] = {
      {MEDIA_CLASS_IMAGE, media::MediaFormat::kJpeg},
      {MEDIA_CLASS_VIDEO, media::MediaFormat::kMp4},
      {MEDIA_CLASS_AUDIO, media::MediaFormat::kMp3},
      {MEDIA_CLASS_NONE, media::MediaFormat::kPdf}};
  for (const auto& [media_class, format] : kinds) {
    for (media::LocationPresence location :
         {media::LocationPresence::kAbsent, media::LocationPresence::kPresent,
          media::LocationPresence::kMalformed}) {
      media::ContentFacts facts;
      facts.format = format;
      facts.content_known = true;
      facts.media_class = media_class;
      facts.location = location;
      all.push_back(facts);
    }
  }
  return all;
}

// The same for everything under a directory being renamed, directories included, and for any
// content its files may hold (AnyContent). The answer must not depend on what the caller cannot
// see (how many such entries, of which kind): a tree holding anything hidden from the caller, or
// that would be hidden with other content, is refused as a whole before any of it is compared, and
// the walk's bound is reached only through entries the caller sees, so a refusal tells the caller
// one bit: the tree holds something it cannot see or could not see (a device's renameForFuse
// refuses a tree with files the caller may not change too). A tree too large to check is refused
// (EXDEV) rather than moved unchecked.
int CheckTreeNoGain(Filesystem* fs, const RequestContext& ctx,
                    const std::vector<RequestContext>& apps, int dir_fd, const std::string& from,
                    const std::string& to) {
  int budget = kMaxRenameCheckEntries;
  FactNeeds owner_only = NeedsOf(ctx.engine());
  owner_only.content = false;
  const std::vector<media::ContentFacts> contents = AnyContent();
  // Files whose old and new paths classify alike and that have one creator get one verdict: when
  // no rule looks at names, that is all a decision sees of them (a directory of 2,000 files of
  // one app is judged once, not 2,000 times).
  const policy::Engine* engine = ctx.engine();
  bool by_class = engine != nullptr && !engine->matches_names();
  absl::flat_hash_map<std::string, int> verdicts;
  auto class_of = [engine, &ctx](const std::string& path) {
    absl::StatusOr<policy::PathInfo> info =
        engine->layout().Classify(ctx.PolicyPath(path), policy::kAnyPathBytes);
    if (!info.ok()) return std::string("!");  // judged as such below: refused
    return absl::StrCat(info->depth, "|", absl::AsciiStrToLower(info->top_dir), "|",
                        info->standard_top_dir, "|", info->area, "|", info->area_package);
  };
  return ForEachEntryBelow(
      dir_fd, &budget,
      [&](int fd, const struct stat& st, const std::string& rel, absl::string_view name) {
        FileInfo info = fs->facts().Lookup(fd, st, name, owner_only);
        std::string old_path = ChildPath(from, rel);
        std::string new_path = ChildPath(to, rel);
        bool dir = S_ISDIR(st.st_mode);
        if (!S_ISREG(st.st_mode)) {
          if (!ctx.Decide(OP_LOOKUP, old_path, dir, &info).Permits()) return EXDEV;
          return CheckObjectNoGain(apps, old_path, info, new_path, name, dir);
        }
        std::string key;
        if (by_class) {
          key = absl::StrCat(class_of(old_path), ">", class_of(new_path), "@",
                             info.owner.has_value() ? absl::StrCat(*info.owner) : "-");
          if (auto it = verdicts.find(key); it != verdicts.end()) return it->second;
        }
        int verdict = 0;
        for (const media::ContentFacts& facts : contents) {
          FileInfo as = info;
          as.facts = facts;
          as.scan = nullptr;
          as.content_read = true;
          if (!ctx.Decide(OP_LOOKUP, old_path, false, &as).Permits()) verdict = EXDEV;
          for (const RequestContext& app : apps) {
            if (verdict != 0) break;
            if (Capabilities(app, new_path, as, false) & ~Capabilities(app, old_path, as, false)) {
              verdict = EXDEV;
            }
          }
          if (verdict != 0) break;
        }
        if (by_class) verdicts.emplace(std::move(key), verdict);
        return verdict;
      });
}

}  // namespace

void PrecheckTreeMove(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent,
                      const char* name, fuse_ino_t newparent, const char* newname,
                      TreeVerdict* verdict) {
  verdict->valid = false;
  if (ctx.engine() != nullptr && ctx.engine()->place_independent()) return;
  uint64_t generation = fs->namespace_generation();
  Resolved p, np;
  if (Resolve(fs, parent, &p) != 0 || Resolve(fs, newparent, &np) != 0) return;
  if (NameError(name, EINVAL) != 0 || NameError(newname, EINVAL) != 0) return;
  base::UniqueFd fd(openat(p.fd.get(), name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return;
  verdict->from = ChildPath(p.path, name);
  verdict->to = ChildPath(np.path, newname);
  verdict->err = CheckTreeNoGain(fs, ctx, ReadersToCheck(ctx, verdict->from), fd.get(),
                                 verdict->from, verdict->to);
  verdict->generation = generation;
  verdict->valid = true;
}

// `fd` is the moved object's O_PATH fd, `type` its S_IFMT bits. A directory's tree is judged by
// `tree` when it was judged outside the lock for these paths and no name has changed since
// (Filesystem::namespace_generation); otherwise here, under the lock.
int CheckNoGain(Filesystem* fs, const RequestContext& ctx, const std::string& from,
                const FileInfo& info, const std::string& to, absl::string_view to_name, mode_t type,
                int fd, const TreeVerdict* tree) {
  // Where no decision depends on the place, every app may do the same there as here (and a tree
  // of any size moves, as natively).
  if (ctx.engine() != nullptr && ctx.engine()->place_independent()) return 0;
  std::vector<RequestContext> apps = ReadersToCheck(ctx, from);
  bool dir = S_ISDIR(type);
  if (int err = CheckObjectNoGain(apps, from, info, to, to_name, dir)) return err;
  if (!dir) return 0;
  if (tree != nullptr && tree->valid && tree->generation == fs->namespace_generation() &&
      tree->from == from && tree->to == to) {
    fs->stats().tree_checks_unlocked.fetch_add(1);
    return tree->err;
  }
  fs->stats().tree_checks_locked.fetch_add(1);
  return CheckTreeNoGain(fs, ctx, apps, fd, from, to);
}

// The layout's move rules (policy.proto Layout), for app callers: privileged uids (below the
// first app id) are not held to them, as MediaProvider lets them rename anything. Under the
// device layout nobody moves an object from one user's storage to another's, nor a user's
// storage itself (RequestContext::SameStorage): EXDEV, so a mover copies.
int CheckLayoutMove(const RequestContext& ctx, const std::string& from, const std::string& to) {
  const policy::Engine* engine = ctx.engine();
  if (engine == nullptr) return EACCES;
  if (!ctx.SameStorage(from, to)) return EXDEV;
  if (policy::AppIdOf(ctx.uid()) < policy::kFirstAppId) return 0;
  const policy::StorageLayout& layout = engine->layout();
  if (!layout.has_move_rules()) return 0;
  absl::StatusOr<policy::PathInfo> f = layout.Classify(ctx.PolicyPath(from), policy::kAnyPathBytes);
  absl::StatusOr<policy::PathInfo> t = layout.Classify(ctx.PolicyPath(to), policy::kAnyPathBytes);
  if (!f.ok() || !t.ok()) return EACCES;
  switch (layout.JudgeMove(*f, *t)) {
    case policy::LayoutMove::kAllowed:
      return 0;
    case policy::LayoutMove::kCrossesMount:
      return EXDEV;
    case policy::LayoutMove::kRefused:
      break;
  }
  return EPERM;
}

// Checks whether the caller may put an object (`moving`: its facts; `directory`: its kind) at
// `parent/name` by a rename or link, `name` being the lower spelling (LowerName): a name there that
// the caller cannot find is refused as if the move were forbidden (EACCES), RENAME_NOREPLACE in
// `flags` refuses any existing name (EEXIST), a replaced name must be one the caller may delete, an
// `exchange` needs a name there, and the caller must be allowed to create the object there.
int CheckPlace(Filesystem* fs, const RequestContext& ctx, const Resolved& parent, const char* name,
               bool directory, const FileInfo& moving, bool exchange, unsigned int flags) {
  Child target;
  // Its content only where it decides whether the caller finds or may delete it (another app's
  // photo, not the caller's own file): read under the namespace lock, it would be a scan this
  // rename cannot wait for (kFactsNotCurrent), of a file no LOOKUP of its owner scans.
  FactNeeds needs = NeedsOf(ctx.engine());
  bool content_decides = true;
  std::function<bool(const FileInfo&)> gate =
      ContentDecidesForChild(ctx, &target, &content_decides, OP_DELETE);
  needs.content_decides = &gate;
  int err = OpenChild(fs, parent, name, &target, needs);
  bool exists = err == 0;
  if (err != 0 && err != ENOENT) return err;
  if (exists) {
    // Never reveal a name the caller cannot find (strict visibility).
    if (!FindsName(ctx, target.path, S_ISDIR(target.st.st_mode), target.info)) return EACCES;
    if (flags & RENAME_NOREPLACE) return EEXIST;
    if (!exchange) {
      bool target_dir = S_ISDIR(target.st.st_mode);
      if (int e = Verdict(ctx.Decide(target_dir ? OP_RMDIR : OP_DELETE, target.path, target_dir,
                                     &target.info))) {
        return e;
      }
    }
  } else if (exchange) {
    return ENOENT;
  }
  std::string path = ChildPath(parent.path, name);
  FileInfo placed = moving;
  if (!directory) placed.facts = media::FactsFromFormat(name, moving.facts.format);
  placed.owner.reset();
  return Verdict(
      ctx.Decide(directory ? OP_MKDIR : OP_CREATE, path, directory, directory ? nullptr : &placed));
}

// Scans the content of a file a rename will check before the namespace lock is taken: the check
// under the lock then finds its facts cached.
void WarmRenameFacts(Filesystem* fs, fuse_ino_t parent, const char* name) {
  std::shared_ptr<const policy::Engine> engine = fs->engine();
  if (engine != nullptr && engine->place_independent()) return;  // nothing will be checked
  Resolved p;
  if (Resolve(fs, parent, &p) != 0 || NameError(name, EINVAL) != 0) return;
  // The name as the lower tree spells it, as the rename will open it (another spelling of it, under
  // Android semantics, is the same file).
  std::string real;
  if (LowerName(fs, p, name, &real) != 0) return;
  base::UniqueFd fd(openat(p.fd.get(), real.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return;
  // A directory's tree is judged for any content (CheckTreeNoGain): nothing in it needs a scan.
  if (S_ISREG(st.st_mode)) fs->facts().Lookup(fd.get(), st, real);
}

}  // namespace scopedfs::daemon
