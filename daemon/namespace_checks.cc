// The checks a new name must pass before a create, link or rename makes it: no case-only twin
// where the policy's names live, no revealing a hidden name through EEXIST, and no app reading
// more of any file than it could before (checked for every app, not only the caller).
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "daemon/fs_internal.h"
#include "policy/app_registry.h"

namespace scopedfs::daemon {

namespace {

// Android's shared storage is case-insensitive and the rules match names case-insensitively, so
// where the policy's names live (the root, the top-level directories, and Android/<dir>/ with
// its per-package areas) the lower tree must never hold two names that differ only in case: a
// new name there that case-folds onto an existing entry fails EEXIST, as on Android (EACCES if
// that entry is hidden from the caller, as for any hidden name). Deeper down, names are as
// case-sensitive as the lower filesystem; lookups are case-sensitive everywhere.
constexpr int kCaseFoldedParentDepth = 2;
constexpr int kMaxCaseCheckEntries = 1 << 20;

}  // namespace

int CheckCaseTwin(Filesystem* fs, const RequestContext& ctx, const Resolved& parent,
                  const char* name) {
  int depth = parent.path.empty()
                  ? 0
                  : 1 + static_cast<int>(std::count(parent.path.begin(), parent.path.end(), '/'));
  if (depth > kCaseFoldedParentDepth) return 0;
  int fd = openat(parent.node->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return errno;
  }
  std::string twin;
  int seen = 0;
  int err = 0;
  while (dirent* ent = readdir(d)) {
    if (++seen > kMaxCaseCheckEntries) {
      err = EMFILE;  // cannot vouch for the name: refuse rather than risk a twin
      break;
    }
    if (strcasecmp(ent->d_name, name) == 0 && strcmp(ent->d_name, name) != 0) {
      twin = ent->d_name;
      break;
    }
  }
  closedir(d);
  if (err != 0 || twin.empty()) return err;
  Child existing;
  if (OpenChild(fs, parent, twin.c_str(), &existing) != 0) return EEXIST;
  policy::Decision d_seen =
      ctx.Decide(OP_LOOKUP, existing.path, S_ISDIR(existing.st.st_mode), &existing.info);
  return d_seen.outcome == OUTCOME_HIDE ? EACCES : EEXIST;
}

// For create/mkdir/symlink/link/rename targets: an existing name the caller cannot see must not
// be revealed by EEXIST, so it is refused as if the create itself were forbidden.
int CheckFreeName(Filesystem* fs, const RequestContext& ctx, const Resolved& parent,
                  const char* name, bool* exists_visible) {
  *exists_visible = false;
  Child existing;
  int err = OpenChild(fs, parent, name, &existing);
  if (err == ENOENT) return CheckCaseTwin(fs, ctx, parent, name);
  if (err != 0) return err;
  policy::Decision d =
      ctx.Decide(OP_LOOKUP, existing.path, S_ISDIR(existing.st.st_mode), &existing.info);
  if (d.outcome == OUTCOME_HIDE) return EACCES;
  *exists_visible = true;
  return 0;
}

// A rename or link must not show the caller more of a file than it sees now: moving another
// app's photo into the caller's own directory would otherwise turn a redacted copy into the raw
// bytes. Refused with EXDEV, so a mover falls back to copying, which reads what the caller may
// read. The owner xattr moves with the inode, so the destination is judged with the same owner.
//
// Every reader counts, not only the caller: a video linked under Music/x.m4a must not become
// readable, raw, by an app that holds only READ_MEDIA_AUDIO. So the check runs for the caller,
// every registered app of the mounted user, and one unregistered app uid.
// The caller comes first, in its own domain; the others in their configured domains, under the
// same engine snapshot.
std::vector<RequestContext> ReadersToCheck(const RequestContext& ctx) {
  std::vector<RequestContext> readers = {ctx};
  const policy::Engine* engine = ctx.engine();
  if (engine == nullptr) return readers;
  uid_t base = ctx.storage_user_id() * policy::kPerUserRange;
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

int CheckFileNoReadGain(const std::vector<RequestContext>& readers, const std::string& from,
                        const FileInfo& info, const std::string& to, absl::string_view to_name) {
  FileInfo after = info;
  after.facts = policy::FactsOfContent(to_name, info.facts.format, info.scan.get());
  if (!info.content_read) after.facts.location = info.facts.location;
  for (const RequestContext& reader : readers) {
    if (JudgeRead(reader, to, after).Rank() > JudgeRead(reader, from, info).Rank()) {
      return EXDEV;
    }
  }
  return 0;
}

// The same for every regular file under a directory being renamed. A tree too large to check is
// refused (EXDEV) rather than moved unchecked.
int CheckTreeNoReadGain(Filesystem* fs, const std::vector<RequestContext>& readers, int dir_fd,
                        const std::string& from, const std::string& to, int depth, int* budget) {
  if (depth > 64) return EXDEV;
  int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return errno;
  }
  int err = 0;
  while (dirent* ent = readdir(d)) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    if (--*budget < 0) {
      err = EXDEV;
      break;
    }
    int child = openat(dirfd(d), ent->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) {
      err = errno == ENOENT ? 0 : EXDEV;  // an entry that cannot be checked is not moved unchecked
      if (err != 0) break;
      continue;
    }
    struct stat st;
    if (fstatat(child, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0) {
      std::string from_child = ChildPath(from, ent->d_name);
      std::string to_child = ChildPath(to, ent->d_name);
      if (S_ISDIR(st.st_mode)) {
        err = CheckTreeNoReadGain(fs, readers, child, from_child, to_child, depth + 1, budget);
      } else if (S_ISREG(st.st_mode)) {
        FileInfo info = fs->facts().Lookup(child, st, ent->d_name);
        err = CheckFileNoReadGain(readers, from_child, info, to_child, ent->d_name);
      }
    }
    close(child);
    if (err != 0) break;
  }
  closedir(d);
  return err;
}

// `fd` is the moved object's O_PATH fd, `type` its S_IFMT bits.
int CheckNoReadGain(Filesystem* fs, const RequestContext& ctx, const std::string& from,
                    const FileInfo& info, const std::string& to, absl::string_view to_name,
                    mode_t type, int fd) {
  std::vector<RequestContext> readers = ReadersToCheck(ctx);
  if (S_ISREG(type)) return CheckFileNoReadGain(readers, from, info, to, to_name);
  if (!S_ISDIR(type)) return 0;  // symlinks and specials hold no bytes to read
  int budget = kMaxRenameCheckEntries;
  return CheckTreeNoReadGain(fs, readers, fd, from, to, 0, &budget);
}

// Checks whether the caller may put the object described by `info` (from `from_path`) at
// `parent/name`, replacing what is there if `replace`.
int CheckPlace(Filesystem* fs, const RequestContext& ctx, const Resolved& parent, const char* name,
               bool directory, const FileInfo& moving, bool exchange, unsigned int flags) {
  Child target;
  int err = OpenChild(fs, parent, name, &target);
  bool exists = err == 0;
  if (err != 0 && err != ENOENT) return err;
  if (exists) {
    policy::Decision seen =
        ctx.Decide(OP_LOOKUP, target.path, S_ISDIR(target.st.st_mode), &target.info);
    if (seen.outcome == OUTCOME_HIDE) return EACCES;  // never reveal a hidden name
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
  } else if (int twin = CheckCaseTwin(fs, ctx, parent, name)) {
    return twin;
  }
  std::string path = ChildPath(parent.path, name);
  FileInfo placed = moving;
  if (!directory) placed.facts = policy::FactsFromFormat(name, moving.facts.format);
  placed.owner.reset();
  return Verdict(
      ctx.Decide(directory ? OP_MKDIR : OP_CREATE, path, directory, directory ? nullptr : &placed));
}

// Scans the content of every file a directory rename will check (at most the check's budget),
// before the namespace lock is taken: the check under the lock then finds the facts cached, so a
// tree of slow-to-scan files does not hold every other app's creates and renames back.
void WarmTreeFacts(Filesystem* fs, int dir_fd, int depth, int* budget) {
  if (depth > 64) return;
  int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return;
  }
  while (dirent* ent = readdir(d)) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    if (--*budget < 0) break;
    int child = openat(dirfd(d), ent->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) continue;
    struct stat st;
    if (fstatat(child, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISDIR(st.st_mode)) {
        WarmTreeFacts(fs, child, depth + 1, budget);
      } else if (S_ISREG(st.st_mode)) {
        fs->facts().Lookup(child, st, ent->d_name);
      }
    }
    close(child);
  }
  closedir(d);
}

void WarmRenameFacts(Filesystem* fs, fuse_ino_t parent, const char* name) {
  Resolved p;
  if (Resolve(fs, parent, &p) != 0 || NameError(name, EINVAL) != 0) return;
  int fd = openat(p.node->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0) {
    int budget = kMaxRenameCheckEntries;
    if (S_ISDIR(st.st_mode)) WarmTreeFacts(fs, fd, 0, &budget);
    if (S_ISREG(st.st_mode)) fs->facts().Lookup(fd, st, name);
  }
  close(fd);
}

}  // namespace scopedfs::daemon
