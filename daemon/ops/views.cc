// The decisions every op shares: errnos of decisions, modes an app may give, what an app sees of a
// directory, whether a caller finds a name, and the one rule for which view (inode) of a file a
// caller reads (ViewFor).
#include "daemon/ops/views.h"

#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "daemon/ops/resolve.h"

namespace scopedfs::daemon {

// 0 if the decision lets the operation go ahead on raw bytes. A redacted read is not a raw one:
// the callers that can honour it (LOOKUP's view choice, OPEN) look at the outcome themselves.
int Verdict(const policy::Decision& d) {
  if (d.outcome == OUTCOME_ALLOW) return 0;
  if (d.outcome == OUTCOME_ALLOW_REDACTED) return EACCES;
  return ErrnoOf(d);
}

// Android semantics: the permission bits of a new file are 0664 and of a new directory 0775,
// whatever the caller asked and whatever its umask, as MediaProvider's pf_create, pf_mknod and
// pf_mkdir make them. Modes from callers other than root never carry set-uid or set-gid either:
// the daemon creates as root, so such a bit would make a root set-uid program (or a set-gid root
// directory) in the lower tree; apps' directories lose the sticky bit.
mode_t AndroidNewMode(const RequestContext& ctx, mode_t mode, bool directory) {
  mode = (mode & 07000) | (directory ? 0775 : 0664);
  if (ctx.uid() == 0) return mode;
  mode &= ~mode_t{S_ISUID | S_ISGID};
  if (ctx.IsApp()) mode &= ~mode_t{S_ISVTX};
  return mode;
}

// What every caller sees of a directory. Its real link count counts subdirectories an app may
// not see, and its size counts every entry (ext4 grows it by blocks, tmpfs by 20 bytes a name), so
// neither may count hidden names. Under STRICT visibility its timestamps, which change when anyone
// adds or removes a hidden entry, are fixed too: nlink 1 (as filesystems that do not count
// subdirectories report; find and fts then make no leaf assumptions), size 4096 and the daemon's
// start time. Under LISTING (Android's) the lower owner, group, mode and times, as on a device,
// and the real link count wherever the rules show every subdirectory to every caller
// (Engine::SubdirectoriesVisibleToEveryCaller: Android's shared directories, not Android/data),
// else 1; the size stays 4096. Root and the system uids get the same: the kernel keeps one set of
// attributes per inode, which any caller reads without a request (statx AT_STATX_DONT_SYNC), so
// whatever one caller's GETATTR leaves there must be what every caller may see. Only a
// caller-independent policy, under which nothing is hidden, gives the lower directory as it is.
void DirectoryAsSeen(Filesystem* fs, const RequestContext& ctx, const std::string* path,
                     struct stat* st) {
  if (!S_ISDIR(st->st_mode) || CallerIndependent(ctx)) return;
  st->st_size = 4096;
  st->st_blocks = 8;
  const policy::Engine* engine = ctx.engine();
  if (engine != nullptr && engine->visibility() == VISIBILITY_LISTING) {
    if (path == nullptr || !ctx.SubdirectoriesVisibleToEveryCaller(*path)) st->st_nlink = 1;
    return;
  }
  st->st_nlink = 1;
  st->st_atim = st->st_mtim = st->st_ctim = fs->started();
}

bool FindsName(const RequestContext& ctx, const std::string& path, bool directory,
               const FileInfo& info) {
  if (ctx.Decide(OP_LOOKUP, path, directory, &info).outcome != OUTCOME_HIDE) return true;
  if (ctx.OfAnotherUser(path) || !ctx.FoundByEveryCaller(path)) return false;
  ctx.RefusalSuperseded();
  return true;
}

bool CachesAttrsWithName(const Filesystem* fs, const RequestContext& ctx, const std::string* path,
                         mode_t) {
  const FilesystemOptions& options = fs->options();
  if (!options.mount_reached_by_one_user || ctx.engine() == nullptr ||
      ctx.engine()->visibility() != VISIBILITY_LISTING) {
    return false;
  }
  if (!ctx.device_layout()) return !OfAnotherUser(ctx);
  return policy::UserIdOf(ctx.uid()) == options.user_id &&
         (path == nullptr || !ctx.OfAnotherUser(*path));
}

bool RedactedNamesCached(const Filesystem* fs) { return fs->options().mount_reached_by_one_user; }

bool OfAnotherUserAt(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino) {
  if (!ctx.device_layout()) return OfAnotherUser(ctx);
  std::string path;
  return !fs->nodes().PathOf(ino, &path) || ctx.OfAnotherUser(path);
}

bool ViewJudged(const RequestContext& ctx, mode_t mode) {
  return S_ISREG(mode) && ctx.engine() != nullptr && ctx.engine()->may_redact();
}

// Beyond ALLOW_REDACTED decisions, a caller that would be redacted if the file carried location
// reads the redacted view of every file that could carry it (an image or video, or content of no
// known format, such as an empty file still being written), even while it holds none: location
// the owner writes later must reach such a caller filled, also through an fd or a mapping it
// already holds. Only files of a known non-carrier format (PDF, MP3, ...) are read raw.
bool CouldCarryLocation(const FileInfo& info) {
  media::MediaFormat format = info.facts.format;
  return !info.content_read || format == media::MediaFormat::kUnknown ||
         media::FormatMayCarryLocation(format);
}

View ViewFor(const policy::Decision& read, const policy::Decision& read_if_located) {
  if (read.outcome == OUTCOME_ALLOW_REDACTED) return kRedactedView;
  if (read.outcome == OUTCOME_ALLOW && read_if_located.outcome == OUTCOME_ALLOW_REDACTED) {
    return kRedactedView;
  }
  return kRawView;
}

ReadJudgement JudgeRead(const RequestContext& ctx, const std::string& path, const FileInfo& info) {
  ReadJudgement j;
  j.decision = ctx.Decide(OP_READ, path, false, &info);
  policy::Decision if_located = j.decision;
  if (j.decision.outcome == OUTCOME_ALLOW && CouldCarryLocation(info)) {
    FileInfo located = info;
    located.facts.location = media::LocationPresence::kPresent;
    if_located = ctx.Decide(OP_READ, path, false, &located);
  }
  j.view = ViewFor(j.decision, if_located);
  return j;
}

View CallerView(const RequestContext& ctx, const Child& child) {
  if (!ViewJudged(ctx, child.st.st_mode)) return kRawView;
  return JudgeRead(ctx, child.path, child.info).view;
}

}  // namespace scopedfs::daemon
