// FUSE operations for scopedfs (see filesystem.h). Each sfs_<op> wrapper resolves its context,
// calls Do<Op> which returns 0 or an errno, and replies in exactly one place.
//
// Cache choices: entry_timeout is 0 for every name, because whether a name exists depends on who
// asks; the kernel therefore re-asks LOOKUP on every path walk and never serves one app a dentry
// another app filled. Negative entries are never cached. Attributes of a visible node may be
// cached for a second: they do not depend on the caller.
//
// Views: a regular file a caller may only read redacted is answered with the nodeid of its
// redacted view (node_table.h), a separate kernel inode served here with location ranges filled.
// Its page cache is kept between opens while the lower file is unchanged; it never gets
// passthrough. A caller holding the wrong view's inode (fd passed over, policy reloaded) gets
// ESTALE at open, which makes the kernel redo a path-based open's lookup.
#include "daemon/filesystem.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/fuse_kernel_abi.h"

namespace scopedfs::daemon {

struct OpenFile {
  OpenFile(int fd_in, std::shared_ptr<Node> node_in) : fd(fd_in), node(std::move(node_in)) {}

  int fd = -1;
  std::shared_ptr<Node> node;
  bool passthrough = false;
  bool writable = false;
  // Redacted views: the fills for the file version last read through this handle.
  absl::Mutex plan_mu;
  Filesystem::FileVersion plan_version ABSL_GUARDED_BY(plan_mu);
  std::shared_ptr<const std::vector<policy::FillRange>> plan ABSL_GUARDED_BY(plan_mu);

  bool redacted() const { return node->view != kRawView; }
};

struct DirEntry {
  std::string name;
  ino_t ino;
  unsigned char type;
};

struct OpenDir {
  int fd = -1;
  std::vector<DirEntry> entries;
  bool loaded = false;
};

namespace {

using policy::Decision;
using policy::FactsFromFormat;
using policy::FactsFromName;

constexpr double kAttrTimeout = 1.0;
constexpr double kEntryTimeout = 0.0;
constexpr size_t kMaxFactsCache = 1 << 18;
constexpr uint32_t kAllLocationKinds = (1u << REDACTION_EXIF_GPS) | (1u << REDACTION_XMP_GPS) |
                                       (1u << REDACTION_ISOBMFF_LOCATION);

Filesystem* Fs(fuse_req_t req) {
  return static_cast<Filesystem*>(FuseSession::FilesystemOf(req));
}

Filesystem::Ctx CtxOf(fuse_req_t req) {
  const fuse_ctx* c = fuse_req_ctx(req);
  return {c->uid, c->pid};
}

std::string ProcPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

// Names the kernel hands us are single components; anything else is refused, never interpreted
// (`invalid` is the errno for that). FUSE lets names run to 1024 bytes, so a name longer than the
// lower tree can hold gets ENAMETOOLONG here, as it would natively.
int NameError(const char* name, int invalid) {
  size_t len = strnlen(name, NAME_MAX + 1);
  if (len > NAME_MAX) return ENAMETOOLONG;
  bool valid =
      len > 0 && strchr(name, '/') == nullptr && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
  return valid ? 0 : invalid;
}

// The creator recorded on a lower object. getxattr through the /proc link of its O_PATH fd reads
// the object's own attribute, also for a symlink: a magic link is not followed any further.
std::optional<uint32_t> RecordedOwner(int fd) {
  char value[16];
  ssize_t len = getxattr(ProcPath(fd).c_str(), kOwnerXattr, value, sizeof(value) - 1);
  uint32_t owner;
  if (len > 0 && absl::SimpleAtoi(absl::string_view(value, static_cast<size_t>(len)), &owner)) {
    return owner;
  }
  return std::nullopt;
}

std::string ChildPath(const std::string& parent, absl::string_view name) {
  return parent.empty() ? std::string(name) : absl::StrCat(parent, "/", name);
}

int ErrnoOf(const Decision& d) {
  if (d.outcome == OUTCOME_HIDE) return ENOENT;
  switch (d.error) {
    case ERRNO_EPERM:
      return EPERM;
    case ERRNO_EROFS:
      return EROFS;
    case ERRNO_ENOENT:
      return ENOENT;
    case ERRNO_EEXIST:
      return EEXIST;
    default:
      return EACCES;
  }
}

// 0 if the decision lets the operation go ahead on raw bytes. A redacted read is not a raw one:
// the callers that can honour it (LOOKUP's view choice, OPEN) look at the outcome themselves.
int Verdict(const Decision& d) {
  if (d.outcome == OUTCOME_ALLOW) return 0;
  if (d.outcome == OUTCOME_ALLOW_REDACTED) return EACCES;
  return ErrnoOf(d);
}

// Whether the caller is an app or an unknown uid rather than root, a system uid, shell or the
// media service: apps get clamped modes and see directories without what is hidden from them.
bool IsAppCaller(Filesystem* fs, uid_t uid) {
  std::shared_ptr<const policy::Engine> engine = fs->engine();
  if (engine == nullptr) return true;
  policy::UidKind kind = engine->apps().Identify(uid).kind;
  return kind == policy::UidKind::kApp || kind == policy::UidKind::kOther;
}

// Modes from callers other than root never carry set-uid or set-gid: the daemon creates and
// chmods as root, so such a bit would make a root set-uid program (or a set-gid root directory)
// in the lower tree. Apps' files are never executable either, as Android mounts shared storage
// noexec; their directories keep rwx (search is needed) but lose the sticky bit.
mode_t ClampMode(Filesystem* fs, uid_t uid, mode_t mode, bool directory) {
  if (uid == 0) return mode & 07777;
  mode &= 07777 & ~(S_ISUID | S_ISGID);
  if (IsAppCaller(fs, uid)) mode &= directory ? 0777 : 0666;
  return mode;
}

// What an app sees of a directory. Its real link count counts subdirectories the app may not
// see, and its size and timestamps change when anyone adds or removes a hidden entry, so apps
// get fixed values instead: nlink 1 (as filesystems that do not count subdirectories report;
// find and fts then make no leaf assumptions), size 4096, and the daemon's start time. Root and
// system uids see the lower directory as it is. Directories are therefore never attribute-cached
// by the kernel (attr_timeout 0): the kernel's attribute cache is shared by all callers.
void DirectoryAsSeen(Filesystem* fs, uid_t uid, struct stat* st) {
  if (!S_ISDIR(st->st_mode) || !IsAppCaller(fs, uid)) return;
  st->st_nlink = 1;
  st->st_size = 4096;
  st->st_blocks = 8;
  st->st_atim = st->st_mtim = st->st_ctim = fs->started();
}

double AttrTimeoutFor(const struct stat& st) { return S_ISDIR(st.st_mode) ? 0.0 : kAttrTimeout; }

// The view a read decision calls for.
ViewMask ViewOf(const Decision& d) {
  return d.outcome == OUTCOME_ALLOW_REDACTED ? kRedactedView : kRawView;
}

// A caller's read of a file: the decision, and the view (inode) it must read through.
struct ReadJudgement {
  Decision decision;
  ViewMask view = kRawView;
  // How much of the file's bytes the caller gets: a rename or link must never raise it.
  int Rank() const {
    if (!decision.Permits()) return 0;
    return view == kRawView ? 2 : 1;
  }
};

// Beyond ALLOW_REDACTED decisions, a caller that would be redacted if the file carried location
// reads the redacted view of every file that could carry it (an image or video, or content of no
// known format, such as an empty file still being written), even while it holds none: location
// the owner writes later must reach such a caller filled, also through an fd or a mapping it
// already holds. Only files of a known non-carrier format (PDF, MP3, ...) are read raw.
ReadJudgement JudgeRead(Filesystem* fs, const Filesystem::Ctx& ctx, const std::string& path,
                        const Filesystem::FileInfo& info) {
  ReadJudgement j;
  j.decision = fs->Ask(ctx, OP_READ, path, false, &info);
  j.view = ViewOf(j.decision);
  if (j.decision.outcome != OUTCOME_ALLOW) return j;
  policy::MediaFormat format = info.facts.format;
  bool could_carry = !info.content_read || format == policy::MediaFormat::kUnknown ||
                     policy::FormatMayCarryLocation(format);
  if (!could_carry) return j;
  Filesystem::FileInfo located = info;
  located.facts.location = policy::LocationPresence::kPresent;
  if (fs->Ask(ctx, OP_READ, path, false, &located).outcome == OUTCOME_ALLOW_REDACTED) {
    j.view = kRedactedView;
  }
  return j;
}

class OpTimer {
 public:
  OpTimer(Stats& stats, OpKind kind)
      : stats_(stats), kind_(kind), start_(std::chrono::steady_clock::now()) {}
  ~OpTimer() {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - start_)
                  .count();
    stats_.Record(kind_, static_cast<uint64_t>(ns));
  }

 private:
  Stats& stats_;
  OpKind kind_;
  std::chrono::steady_clock::time_point start_;
};

int StatNode(const Node& node, struct stat* st) {
  return fstatat(node.fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

OpenFile* FileOf(fuse_file_info* fi) { return reinterpret_cast<OpenFile*>(fi->fh); }
OpenDir* DirOf(fuse_file_info* fi) { return reinterpret_cast<OpenDir*>(fi->fh); }

void Log(const std::string& message) { fprintf(stderr, "scopedfsd: %s\n", message.c_str()); }

// --- Passthrough bookkeeping ----------------------------------------------------------------

// Returns the backing id to hand the kernel, or -1 to serve this open in userspace. Every open of
// a node must agree (the kernel answers a mix with EIO), so a node with userspace opens never
// starts passthrough and vice versa.
int AttachBacking(Filesystem* fs, Node& node, int fd, bool* cached) {
  absl::MutexLock lock(&node.backing_mu);
  *cached = false;
  if (node.backing_refs > 0) {
    ++node.backing_refs;
    return node.backing_id;
  }
  if (!fs->passthrough_active() || node.cached_opens > 0) {
    ++node.cached_opens;
    *cached = true;
    return -1;
  }
  absl::StatusOr<int> id = fs->session()->BackingOpen(fd);
  if (!id.ok()) {
    static std::once_flag once;
    std::call_once(once, [&] {
      Log(absl::StrCat("passthrough unavailable, serving reads and writes in userspace: ",
                       id.status().message()));
    });
    ++node.cached_opens;
    *cached = true;
    return -1;
  }
  node.backing_id = *id;
  node.backing_refs = 1;
  fs->stats().backing_files.fetch_add(1);
  return *id;
}

void DetachBacking(Filesystem* fs, Node& node, bool passthrough) {
  absl::MutexLock lock(&node.backing_mu);
  if (!passthrough) {
    --node.cached_opens;
    return;
  }
  if (--node.backing_refs == 0) {
    fs->session()->BackingClose(node.backing_id).IgnoreError();
    node.backing_id = -1;
    fs->stats().backing_files.fetch_sub(1);
  }
}

void FillAttr(const struct stat& st, fuse_attr* a) {
  a->ino = st.st_ino;
  a->size = static_cast<uint64_t>(st.st_size);
  a->blocks = static_cast<uint64_t>(st.st_blocks);
  a->atime = static_cast<uint64_t>(st.st_atim.tv_sec);
  a->mtime = static_cast<uint64_t>(st.st_mtim.tv_sec);
  a->ctime = static_cast<uint64_t>(st.st_ctim.tv_sec);
  a->atimensec = static_cast<uint32_t>(st.st_atim.tv_nsec);
  a->mtimensec = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  a->ctimensec = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  a->mode = st.st_mode;
  a->nlink = static_cast<uint32_t>(st.st_nlink);
  a->uid = st.st_uid;
  a->gid = st.st_gid;
  a->rdev = static_cast<uint32_t>(st.st_rdev);
  a->blksize = static_cast<uint32_t>(st.st_blksize);
}

// Replies to OPEN or CREATE. libfuse 3.14 cannot express a backing id, so passthrough replies are
// built by hand: [fuse_entry_out for CREATE] + fuse_open_out with FOPEN_PASSTHROUGH.
void ReplyOpened(fuse_req_t req, fuse_file_info* fi, int backing_id,
                 const fuse_entry_param* entry) {
  if (backing_id < 0) {
    fi->direct_io = 0;
    if (entry != nullptr) {
      fuse_reply_create(req, entry, fi);
    } else {
      fuse_reply_open(req, fi);
    }
    return;
  }
  abi::OpenOut open_out{};
  open_out.fh = fi->fh;
  open_out.open_flags = abi::kFopenPassthrough;
  open_out.backing_id = backing_id;
  if (entry == nullptr) {
    fuse_reply_buf(req, reinterpret_cast<const char*>(&open_out), sizeof(open_out));
    return;
  }
  struct {
    fuse_entry_out entry;
    abi::OpenOut open;
  } out{};
  static_assert(sizeof(out) == sizeof(fuse_entry_out) + sizeof(abi::OpenOut));
  out.entry.nodeid = entry->ino;
  out.entry.generation = entry->generation;
  out.entry.entry_valid = static_cast<uint64_t>(entry->entry_timeout);
  out.entry.attr_valid = static_cast<uint64_t>(entry->attr_timeout);
  FillAttr(entry->attr, &out.entry.attr);
  out.open = open_out;
  fuse_reply_buf(req, reinterpret_cast<const char*>(&out), sizeof(out));
}

// --- Operation bodies -------------------------------------------------------------------------

struct Resolved {
  std::shared_ptr<Node> node;
  std::string path;
};

int Resolve(Filesystem* fs, fuse_ino_t ino, Resolved* out) {
  out->node = fs->nodes().Get(ino);
  if (out->node == nullptr || !fs->nodes().PathOf(ino, &out->path)) return ENOENT;
  return 0;
}

// A child of `parent` as the lower tree has it, without following symlinks.
struct Child {
  int fd = -1;  // O_PATH, owned by the caller until handed to the node table
  struct stat st;
  std::string path;
  Filesystem::FileInfo info;
  ~Child() {
    if (fd >= 0) close(fd);
  }
  int Release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

int OpenChild(Filesystem* fs, const Resolved& parent, const char* name, Child* child) {
  if (int err = NameError(name, ENOENT)) return err;
  child->fd = openat(parent.node->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (child->fd < 0) return errno;
  if (fstatat(child->fd, "", &child->st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
  child->path = ChildPath(parent.path, name);
  child->info = fs->InfoOf(child->fd, child->st, name);
  return 0;
}

// Hands the child's fd to the node table (one more kernel lookup of it) and fills the entry the
// kernel gets back.
void PublishEntry(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t parent,
                  const char* name, Child* child, ViewMask view, fuse_entry_param* e) {
  std::shared_ptr<Node> node =
      fs->nodes().Upsert(parent, name, child->Release(), child->st.st_dev, child->st.st_ino,
                         child->st.st_mode & S_IFMT, view);
  *e = {};
  e->ino = node->id;
  e->attr = child->st;
  DirectoryAsSeen(fs, ctx.uid, &e->attr);
  e->attr_timeout = AttrTimeoutFor(child->st);
  e->entry_timeout = kEntryTimeout;
}

// Content facts and owner of a resolved node, judged under the name its path ends with.
Filesystem::FileInfo InfoOfNode(Filesystem* fs, const Resolved& r, const struct stat& st) {
  absl::string_view name(r.path);
  size_t slash = name.rfind('/');
  if (slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  return fs->InfoOf(r.node->fd, st, name);
}

// A node as the caller may see it: resolved, stat'ed, its content facts known, and not hidden
// from the caller (ENOENT otherwise, before anything type-specific can answer differently).
struct Visible {
  Resolved r;
  struct stat st;
  Filesystem::FileInfo info;
  bool dir = false;
};

int ResolveVisible(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, Visible* v) {
  if (int err = Resolve(fs, ino, &v->r)) return err;
  if (int err = StatNode(*v->r.node, &v->st)) return err;
  v->dir = S_ISDIR(v->st.st_mode);
  v->info = InfoOfNode(fs, v->r, v->st);
  if (fs->Ask(ctx, OP_LOOKUP, v->r.path, v->dir, &v->info).outcome == OUTCOME_HIDE) return ENOENT;
  return 0;
}

// The view of a regular file the caller reads (JudgeRead).
ViewMask CallerView(Filesystem* fs, const Filesystem::Ctx& ctx, const Child& child) {
  if (!S_ISREG(child.st.st_mode)) return kRawView;
  return JudgeRead(fs, ctx, child.path, child.info).view;
}

int DoLookup(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t parent, const char* name,
             fuse_entry_param* e) {
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  Child child;
  if (int err = OpenChild(fs, p, name, &child)) return err;
  Decision d = fs->Ask(ctx, OP_LOOKUP, child.path, S_ISDIR(child.st.st_mode), &child.info);
  if (d.outcome == OUTCOME_HIDE || d.outcome == OUTCOME_DENY) return ErrnoOf(d);
  PublishEntry(fs, ctx, parent, name, &child, CallerView(fs, ctx, child), e);
  return 0;
}

int DoGetattr(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, struct stat* st) {
  std::shared_ptr<Node> node = fs->nodes().Get(ino);
  if (node == nullptr) return ENOENT;
  if (int err = StatNode(*node, st)) return err;
  DirectoryAsSeen(fs, ctx.uid, st);
  return 0;
}

int DoOpen(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, fuse_file_info* fi,
           int* backing_id) {
  Resolved r;
  if (int err = Resolve(fs, ino, &r)) return err;
  struct stat st;
  if (int err = StatNode(*r.node, &st)) return err;
  if (!S_ISREG(st.st_mode)) return EACCES;
  Filesystem::FileInfo info = InfoOfNode(fs, r, st);
  int accmode = fi->flags & O_ACCMODE;
  bool reads = accmode != O_WRONLY;
  bool writes = accmode != O_RDONLY || (fi->flags & O_TRUNC);
  bool redacted = r.node->view != kRawView;
  ReadJudgement judged = JudgeRead(fs, ctx, r.path, info);
  if (reads && !judged.decision.Permits()) return ErrnoOf(judged.decision);
  // The caller must read and write through the inode of its own view. A raw inode is never
  // served to a caller owed a redacted copy (and never opened for writing by one: a held raw fd
  // would be passthrough, out of the daemon's sight); a caller entitled to raw bytes that holds a
  // redacted inode (an fd passed to it) reads the redacted copy, which hides nothing it may not
  // see.
  if (judged.view != kRawView && !redacted) return ESTALE;
  if (writes) {
    // OP_WRITE refuses callers the location guard redacts whenever the file can carry location,
    // so a redacted view is written only while its file is of no carrier format; its writes are
    // mediated and judged again each time (WriteAllowed).
    if (int err = Verdict(fs->Ask(ctx, OP_WRITE, r.path, false, &info))) return err;
    // A read-modify-write of filled ranges would make the fills permanent in the owner's file.
    if (redacted && reads && policy::FormatMayCarryLocation(info.facts.format)) return EACCES;
  }
  int flags = (fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW)) | O_CLOEXEC;
  int fd = open(ProcPath(r.node->fd).c_str(), flags);
  if (fd < 0) return errno;
  auto* file = new OpenFile(fd, r.node);
  file->writable = writes;
  if (redacted) {
    // Served in userspace through the page cache, which holds only redacted bytes; kept while
    // the lower file is unchanged, so repeated opens read from memory.
    FileVersion version = Filesystem::VersionOf(st);
    {
      absl::MutexLock lock(&r.node->backing_mu);
      fi->keep_cache = r.node->cached_version == version && !writes;
      r.node->cached_version = writes ? FileVersion{} : version;
    }
    *backing_id = -1;
    fs->stats().open_mediated.fetch_add(1);
    if (reads && judged.decision.outcome == OUTCOME_ALLOW &&
        (info.facts.media_class == MEDIA_CLASS_IMAGE ||
         info.facts.media_class == MEDIA_CLASS_VIDEO)) {
      // A photo or video without location, mediated all the same for a would-be-redacted reader.
      fs->stats().open_clean_media.fetch_add(1);
    }
  } else {
    bool cached;
    *backing_id = AttachBacking(fs, *r.node, fd, &cached);
    file->passthrough = !cached;
    fi->keep_cache = 0;
  }
  fi->fh = reinterpret_cast<uint64_t>(file);
  fs->Register(file);
  return 0;
}

int SetOwner(int fd, uid_t uid) {
  std::string value = absl::StrCat(uid);
  return fsetxattr(fd, kOwnerXattr, value.data(), value.size(), 0) == 0 ? 0 : errno;
}

// Android's shared storage is case-insensitive and the rules match names case-insensitively, so
// where the policy's names live (the root, the top-level directories, and Android/<dir>/ with
// its per-package areas) the lower tree must never hold two names that differ only in case: a
// new name there that case-folds onto an existing entry fails EEXIST, as on Android (EACCES if
// that entry is hidden from the caller, as for any hidden name). Deeper down, names are as
// case-sensitive as the lower filesystem; lookups are case-sensitive everywhere.
constexpr int kCaseFoldedParentDepth = 2;
constexpr int kMaxCaseCheckEntries = 1 << 20;

int CheckCaseTwin(Filesystem* fs, const Filesystem::Ctx& ctx, const Resolved& parent,
                  const char* name) {
  int depth = parent.path.empty() ? 0 : 1 + static_cast<int>(std::count(
                                                 parent.path.begin(), parent.path.end(), '/'));
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
  Decision d_seen =
      fs->Ask(ctx, OP_LOOKUP, existing.path, S_ISDIR(existing.st.st_mode), &existing.info);
  return d_seen.outcome == OUTCOME_HIDE ? EACCES : EEXIST;
}

// For create/mkdir/symlink/link/rename targets: an existing name the caller cannot see must not
// be revealed by EEXIST, so it is refused as if the create itself were forbidden.
int CheckFreeName(Filesystem* fs, const Filesystem::Ctx& ctx, const Resolved& parent,
                  const char* name, bool* exists_visible) {
  *exists_visible = false;
  Child existing;
  int err = OpenChild(fs, parent, name, &existing);
  if (err == ENOENT) return CheckCaseTwin(fs, ctx, parent, name);
  if (err != 0) return err;
  Decision d = fs->Ask(ctx, OP_LOOKUP, existing.path, S_ISDIR(existing.st.st_mode), &existing.info);
  if (d.outcome == OUTCOME_HIDE) return EACCES;
  *exists_visible = true;
  return 0;
}

// The entry for a name just made by the caller. A new file or directory is the caller's own (raw
// view); a new link to an existing file shows the caller the view it reads there.
int EntryFor(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t parent, const Resolved& p,
             const char* name, bool existing_content, fuse_entry_param* e) {
  Child child;
  child.fd = openat(p.node->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (child.fd < 0) return errno;
  if (fstatat(child.fd, "", &child.st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
  ViewMask view = kRawView;
  if (existing_content) {
    child.path = ChildPath(p.path, name);
    child.info = fs->InfoOf(child.fd, child.st, name);
    view = CallerView(fs, ctx, child);
  }
  PublishEntry(fs, ctx, parent, name, &child, view, e);
  return 0;
}

int DoCreate(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t parent, const char* name,
             mode_t mode, fuse_file_info* fi, fuse_entry_param* e, int* backing_id) {
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  if (int err = NameError(name, EINVAL)) return err;
  bool exists;
  if (int err = CheckFreeName(fs, ctx, p, name, &exists)) return err;
  std::string path = ChildPath(p.path, name);
  Filesystem::FileInfo info{FactsFromName(name), std::nullopt, nullptr};
  if (exists) {
    if (fi->flags & O_EXCL) return EEXIST;
    // O_CREAT on an existing visible file is an open of it.
    if (int err = DoLookup(fs, ctx, parent, name, e)) return err;
    int err = DoOpen(fs, ctx, e->ino, fi, backing_id);
    if (err != 0) fs->nodes().Forget(e->ino, 1);
    return err;
  }
  if (int err = Verdict(fs->Ask(ctx, OP_CREATE, path, false, &info))) return err;
  int flags = (fi->flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC) & ~O_NOCTTY;
  mode_t clamped = ClampMode(fs, ctx.uid, mode, /*directory=*/false);
  int fd = openat(p.node->fd, name, flags, clamped);
  if (fd < 0) return errno;
  // The process umask is 0 in the daemon, but the lower filesystem may still drop bits (or an
  // ACL default may add them): the clamped mode is set exactly.
  int err = fchmod(fd, clamped) == 0 ? 0 : errno;
  if (err == 0) err = SetOwner(fd, ctx.uid);
  if (err == 0) err = fs->Label(fd, path, S_IFREG);
  if (err != 0) {
    // A file without its creator (or its label) would escape the policy; undo rather than keep it.
    close(fd);
    unlinkat(p.node->fd, name, 0);
    return err;
  }
  if (int err = EntryFor(fs, ctx, parent, p, name, false, e)) {
    close(fd);
    return err;
  }
  std::shared_ptr<Node> node = fs->nodes().Get(e->ino);
  auto* file = new OpenFile(fd, node);
  bool cached;
  *backing_id = AttachBacking(fs, *node, fd, &cached);
  file->passthrough = !cached;
  fi->fh = reinterpret_cast<uint64_t>(file);
  fs->Register(file);
  return 0;
}

int DoMkdir(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t parent, const char* name,
            mode_t mode, fuse_entry_param* e) {
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  if (int err = NameError(name, EINVAL)) return err;
  bool exists;
  if (int err = CheckFreeName(fs, ctx, p, name, &exists)) return err;
  if (exists) return EEXIST;
  std::string path = ChildPath(p.path, name);
  if (int err = Verdict(fs->Ask(ctx, OP_MKDIR, path, true, nullptr))) return err;
  mode_t clamped = ClampMode(fs, ctx.uid, mode, /*directory=*/true);
  if (mkdirat(p.node->fd, name, clamped) != 0) return errno;
  int dfd = openat(p.node->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int err = dfd < 0 ? errno : (fchmod(dfd, clamped) == 0 ? 0 : errno);
  if (err == 0) err = SetOwner(dfd, ctx.uid);
  if (err == 0) err = fs->Label(dfd, path, S_IFDIR);
  if (err != 0) {
    if (dfd >= 0) close(dfd);
    unlinkat(p.node->fd, name, AT_REMOVEDIR);
    return err;
  }
  close(dfd);
  return EntryFor(fs, ctx, parent, p, name, false, e);
}

int DoRemove(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t parent, const char* name,
             bool directory) {
  absl::MutexLock ns(&fs->namespace_mu());
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  Child child;
  if (int err = OpenChild(fs, p, name, &child)) return err;
  bool is_dir = S_ISDIR(child.st.st_mode);
  Decision seen = fs->Ask(ctx, OP_LOOKUP, child.path, is_dir, &child.info);
  if (seen.outcome == OUTCOME_HIDE) return ENOENT;
  if (directory != is_dir) return directory ? ENOTDIR : EISDIR;
  if (int err = Verdict(fs->Ask(ctx, directory ? OP_RMDIR : OP_DELETE, child.path, is_dir,
                                &child.info))) {
    return err;
  }
  if (unlinkat(p.node->fd, name, directory ? AT_REMOVEDIR : 0) != 0) return errno;
  fs->nodes().Unlinked(child.st.st_dev, child.st.st_ino, parent, name);
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
std::vector<uid_t> ReadersToCheck(Filesystem* fs, const Filesystem::Ctx& ctx) {
  std::vector<uid_t> readers = {ctx.uid};
  std::shared_ptr<const policy::Engine> engine = fs->engine();
  if (engine == nullptr) return readers;
  uid_t base = fs->options().user_id * policy::kPerUserRange;
  absl::flat_hash_set<uint32_t> registered;
  for (const policy::AppRecord& app : engine->apps().records()) {
    registered.insert(app.app_id);
    readers.push_back(base + app.app_id);
  }
  for (uint32_t app_id = 10000; app_id < 20000; ++app_id) {
    if (!registered.contains(app_id)) {
      readers.push_back(base + app_id);
      break;
    }
  }
  return readers;
}

int CheckFileNoReadGain(Filesystem* fs, const std::vector<uid_t>& readers, pid_t pid,
                        const std::string& from, const Filesystem::FileInfo& info,
                        const std::string& to, absl::string_view to_name) {
  Filesystem::FileInfo after = info;
  after.facts = policy::FactsOfContent(to_name, info.facts.format, info.scan.get());
  if (!info.content_read) after.facts.location = info.facts.location;
  for (uid_t uid : readers) {
    // The first reader is the caller itself; the others are judged in their configured domains.
    Filesystem::Ctx reader{uid, pid, uid != readers.front()};
    if (JudgeRead(fs, reader, to, after).Rank() > JudgeRead(fs, reader, from, info).Rank()) {
      return EXDEV;
    }
  }
  return 0;
}

constexpr int kMaxRenameCheckEntries = 4096;

// The same for every regular file under a directory being renamed. A tree too large to check is
// refused (EXDEV) rather than moved unchecked.
int CheckTreeNoReadGain(Filesystem* fs, const std::vector<uid_t>& readers, pid_t pid,
                        int dir_fd, const std::string& from, const std::string& to, int depth,
                        int* budget) {
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
        err = CheckTreeNoReadGain(fs, readers, pid, child, from_child, to_child, depth + 1,
                                  budget);
      } else if (S_ISREG(st.st_mode)) {
        Filesystem::FileInfo info = fs->InfoOf(child, st, ent->d_name);
        err = CheckFileNoReadGain(fs, readers, pid, from_child, info, to_child, ent->d_name);
      }
    }
    close(child);
    if (err != 0) break;
  }
  closedir(d);
  return err;
}

// `fd` is the moved object's O_PATH fd, `type` its S_IFMT bits.
int CheckNoReadGain(Filesystem* fs, const Filesystem::Ctx& ctx, const std::string& from,
                    const Filesystem::FileInfo& info, const std::string& to,
                    absl::string_view to_name, mode_t type, int fd) {
  std::vector<uid_t> readers = ReadersToCheck(fs, ctx);
  if (S_ISREG(type)) return CheckFileNoReadGain(fs, readers, ctx.pid, from, info, to, to_name);
  if (!S_ISDIR(type)) return 0;  // symlinks and specials hold no bytes to read
  int budget = kMaxRenameCheckEntries;
  return CheckTreeNoReadGain(fs, readers, ctx.pid, fd, from, to, 0, &budget);
}

// Checks whether the caller may put the object described by `info` (from `from_path`) at
// `parent/name`, replacing what is there if `replace`.
int CheckPlace(Filesystem* fs, const Filesystem::Ctx& ctx, const Resolved& parent,
               const char* name, bool directory, const Filesystem::FileInfo& moving,
               bool exchange, unsigned int flags) {
  Child target;
  int err = OpenChild(fs, parent, name, &target);
  bool exists = err == 0;
  if (err != 0 && err != ENOENT) return err;
  if (exists) {
    Decision seen = fs->Ask(ctx, OP_LOOKUP, target.path, S_ISDIR(target.st.st_mode), &target.info);
    if (seen.outcome == OUTCOME_HIDE) return EACCES;  // never reveal a hidden name
    if (flags & RENAME_NOREPLACE) return EEXIST;
    if (!exchange) {
      bool target_dir = S_ISDIR(target.st.st_mode);
      if (int e = Verdict(fs->Ask(ctx, target_dir ? OP_RMDIR : OP_DELETE, target.path, target_dir,
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
  Filesystem::FileInfo placed = moving;
  if (!directory) placed.facts = FactsFromFormat(name, moving.facts.format);
  placed.owner.reset();
  return Verdict(fs->Ask(ctx, directory ? OP_MKDIR : OP_CREATE, path, directory,
                         directory ? nullptr : &placed));
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
        fs->InfoOf(child, st, ent->d_name);
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
    if (S_ISREG(st.st_mode)) fs->InfoOf(fd, st, name);
  }
  close(fd);
}

int DoRename(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t parent, const char* name,
             fuse_ino_t newparent, const char* newname, unsigned int flags) {
  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) return EINVAL;
  WarmRenameFacts(fs, parent, name);
  if (flags & RENAME_EXCHANGE) WarmRenameFacts(fs, newparent, newname);
  absl::MutexLock ns(&fs->namespace_mu());
  Resolved p, np;
  if (int err = Resolve(fs, parent, &p)) return err;
  if (int err = Resolve(fs, newparent, &np)) return err;
  if (int err = NameError(newname, EINVAL)) return err;
  Child src;
  if (int err = OpenChild(fs, p, name, &src)) return err;
  bool src_dir = S_ISDIR(src.st.st_mode);
  if (fs->Ask(ctx, OP_LOOKUP, src.path, src_dir, &src.info).outcome == OUTCOME_HIDE) return ENOENT;
  if (int err = Verdict(fs->Ask(ctx, OP_RENAME, src.path, src_dir, &src.info))) return err;
  bool exchange = (flags & RENAME_EXCHANGE) != 0;
  if (int err = CheckPlace(fs, ctx, np, newname, src_dir, src.info, exchange, flags)) return err;
  std::string dst_path = ChildPath(np.path, newname);
  if (int err = CheckNoReadGain(fs, ctx, src.path, src.info, dst_path, newname,
                                src.st.st_mode & S_IFMT, src.fd)) {
    return err;
  }
  if (exchange) {
    Child dst;
    if (int err = OpenChild(fs, np, newname, &dst)) return err;
    bool dst_dir = S_ISDIR(dst.st.st_mode);
    if (int err = Verdict(fs->Ask(ctx, OP_RENAME, dst.path, dst_dir, &dst.info))) return err;
    if (int err = CheckPlace(fs, ctx, p, name, dst_dir, dst.info, true, flags)) return err;
    if (int err = CheckNoReadGain(fs, ctx, dst.path, dst.info, src.path, name,
                                  dst.st.st_mode & S_IFMT, dst.fd)) {
      return err;
    }
  }
  // What the destination name holds now: replaced (so its nodes lose that name) or, for an
  // exchange, moved to the source name.
  Child replaced;
  bool had_target = OpenChild(fs, np, newname, &replaced) == 0;
  if (renameat2(p.node->fd, name, np.node->fd, newname, flags) != 0) return errno;
  if (had_target && !exchange) {
    fs->nodes().Unlinked(replaced.st.st_dev, replaced.st.st_ino, newparent, newname);
  }
  fs->nodes().Moved(src.st.st_dev, src.st.st_ino, parent, name, newparent, newname);
  if (had_target && exchange) {
    fs->nodes().Moved(replaced.st.st_dev, replaced.st.st_ino, newparent, newname, parent, name);
  }
  return 0;
}

int DoLink(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, fuse_ino_t newparent,
           const char* newname, fuse_entry_param* e) {
  absl::MutexLock ns(&fs->namespace_mu());
  Visible v;
  Resolved np;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
  if (int err = Resolve(fs, newparent, &np)) return err;
  if (int err = NameError(newname, EINVAL)) return err;
  if (v.dir) return EPERM;
  const Resolved& r = v.r;
  const Filesystem::FileInfo& info = v.info;
  bool exists;
  if (int err = CheckFreeName(fs, ctx, np, newname, &exists)) return err;
  if (exists) return EEXIST;
  Filesystem::FileInfo placed{FactsFromFormat(newname, info.facts.format), std::nullopt, nullptr};
  if (int err = Verdict(fs->Ask(ctx, OP_CREATE, ChildPath(np.path, newname), false, &placed))) {
    return err;
  }
  if (int err = CheckNoReadGain(fs, ctx, r.path, info, ChildPath(np.path, newname), newname,
                                S_IFREG, r.node->fd)) {
    return err;
  }
  if (linkat(r.node->fd, "", np.node->fd, newname, AT_EMPTY_PATH) != 0) return errno;
  return EntryFor(fs, ctx, newparent, np, newname, true, e);
}

int DoSymlink(Filesystem* fs, const Filesystem::Ctx& ctx, const char* target, fuse_ino_t parent,
              const char* name, fuse_entry_param* e) {
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  if (int err = NameError(name, EINVAL)) return err;
  bool exists;
  if (int err = CheckFreeName(fs, ctx, p, name, &exists)) return err;
  if (exists) return EEXIST;
  Filesystem::FileInfo info{FactsFromName(name), std::nullopt, nullptr};
  if (int err = Verdict(fs->Ask(ctx, OP_CREATE, ChildPath(p.path, name), false, &info))) {
    return err;
  }
  if (symlinkat(target, p.node->fd, name) != 0) return errno;
  std::string owner = absl::StrCat(ctx.uid);
  std::string at = absl::StrCat(ProcPath(p.node->fd), "/", name);
  lsetxattr(at.c_str(), kOwnerXattr, owner.data(), owner.size(), 0);
  return EntryFor(fs, ctx, parent, p, name, false, e);
}

int DoSetattr(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, struct stat* attr,
              int to_set, fuse_file_info* fi, struct stat* out) {
  Visible v;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
  const Resolved& r = v.r;
  const struct stat& st = v.st;
  const Filesystem::FileInfo& info = v.info;
  bool dir = v.dir;
  if ((to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) && ctx.uid != 0) return EPERM;
  if (to_set & FUSE_SET_ATTR_SIZE) {
    if (int err = Verdict(fs->Ask(ctx, OP_WRITE, r.path, dir, &info))) return err;
  }
  if (to_set & ~FUSE_SET_ATTR_SIZE) {
    if (int err = Verdict(fs->Ask(ctx, OP_SETATTR, r.path, dir, &info))) return err;
  }
  bool symlink = S_ISLNK(st.st_mode);
  std::string proc = ProcPath(r.node->fd);
  if (to_set & FUSE_SET_ATTR_MODE) {
    if (symlink) return EOPNOTSUPP;
    if (chmod(proc.c_str(), ClampMode(fs, ctx.uid, attr->st_mode, dir)) != 0) return errno;
  }
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
    gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
    if (fchownat(r.node->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int rc = fi != nullptr ? ftruncate(FileOf(fi)->fd, attr->st_size)
                           : truncate(proc.c_str(), attr->st_size);
    if (rc != 0) return errno;
    fs->InvalidateFacts(r.node->dev, r.node->ino);
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec ts[2];
    ts[0].tv_nsec = UTIME_OMIT;
    ts[1].tv_nsec = UTIME_OMIT;
    if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
      ts[0].tv_nsec = UTIME_NOW;
    } else if (to_set & FUSE_SET_ATTR_ATIME) {
      ts[0] = attr->st_atim;
    }
    if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
      ts[1].tv_nsec = UTIME_NOW;
    } else if (to_set & FUSE_SET_ATTR_MTIME) {
      ts[1] = attr->st_mtim;
    }
    if (symlink) return EOPNOTSUPP;
    if (utimensat(AT_FDCWD, proc.c_str(), ts, 0) != 0) return errno;
  }
  if (int err = StatNode(*r.node, out)) return err;
  DirectoryAsSeen(fs, ctx.uid, out);
  return 0;
}

int DoOpendir(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, fuse_file_info* fi) {
  Resolved r;
  if (int err = Resolve(fs, ino, &r)) return err;
  if (int err = Verdict(fs->Ask(ctx, OP_READ, r.path, true, nullptr))) return err;
  int fd = openat(r.node->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  auto* dir = new OpenDir;
  dir->fd = fd;
  fi->fh = reinterpret_cast<uint64_t>(dir);
  fs->Register(dir);
  return 0;
}

// Lists the directory once per open, keeping only the names the caller may see.
int LoadDir(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, OpenDir* dir) {
  Resolved r;
  if (int err = Resolve(fs, ino, &r)) return err;
  int fd = dup(dir->fd);
  if (fd < 0) return errno;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return errno;
  }
  rewinddir(d);
  while (dirent* ent = readdir(d)) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) {
      dir->entries.push_back({ent->d_name, ent->d_ino, ent->d_type});
      continue;
    }
    Child child;
    // An entry removed since the listing was read is gone; any other failure (out of fds, an
    // I/O error) fails the listing rather than leave the entry out in silence.
    if (int err = OpenChild(fs, r, ent->d_name, &child)) {
      if (err == ENOENT) continue;
      closedir(d);
      dir->entries.clear();
      return err;
    }
    Decision seen = fs->Ask(ctx, OP_LOOKUP, child.path, S_ISDIR(child.st.st_mode), &child.info);
    if (seen.outcome == OUTCOME_HIDE || seen.outcome == OUTCOME_DENY) continue;
    dir->entries.push_back({ent->d_name, ent->d_ino, ent->d_type});
  }
  closedir(d);
  dir->loaded = true;
  return 0;
}

}  // namespace

// --- Filesystem -------------------------------------------------------------------------------

Filesystem::Filesystem(FilesystemOptions options, int root_fd, const struct stat& root_st,
                       std::shared_ptr<const policy::Engine> engine)
    : options_(std::move(options)),
      nodes_(root_fd, root_st.st_dev, root_st.st_ino),
      engine_(std::move(engine)) {
  clock_gettime(CLOCK_REALTIME, &started_);
  started_.tv_nsec = 0;
}

Filesystem::~Filesystem() {
  // The session, and with it every backing id, is gone by now: only our own fds are left.
  absl::MutexLock lock(&handles_mu_);
  for (OpenFile* file : open_files_) {
    close(file->fd);
    delete file;
  }
  for (OpenDir* dir : open_dirs_) {
    close(dir->fd);
    delete dir;
  }
}

void Filesystem::Register(OpenFile* file) {
  absl::MutexLock lock(&handles_mu_);
  open_files_.insert(file);
}

void Filesystem::Unregister(OpenFile* file) {
  absl::MutexLock lock(&handles_mu_);
  open_files_.erase(file);
}

void Filesystem::Register(OpenDir* dir) {
  absl::MutexLock lock(&handles_mu_);
  open_dirs_.insert(dir);
}

void Filesystem::Unregister(OpenDir* dir) {
  absl::MutexLock lock(&handles_mu_);
  open_dirs_.erase(dir);
}

absl::StatusOr<std::unique_ptr<Filesystem>> Filesystem::Create(
    const FilesystemOptions& options, std::shared_ptr<const policy::Engine> engine) {
  int fd = open(options.source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("source ", options.source, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("source ", options.source, ": ", std::strerror(err)));
  }
  return std::unique_ptr<Filesystem>(new Filesystem(options, fd, st, std::move(engine)));
}

void Filesystem::SetEngine(std::shared_ptr<const policy::Engine> engine) {
  absl::MutexLock lock(&engine_mu_);
  engine_ = std::move(engine);
}

std::shared_ptr<const policy::Engine> Filesystem::engine() const {
  absl::MutexLock lock(&engine_mu_);
  return engine_;
}

bool Filesystem::passthrough_active() const {
  return options_.passthrough && session_ != nullptr && session_->passthrough_enabled();
}

Filesystem::FileVersion Filesystem::VersionOf(const struct stat& st) {
  return {st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
          st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
}

void Filesystem::InvalidateFacts(dev_t dev, ino_t ino) {
  absl::MutexLock lock(&facts_mu_);
  facts_.erase(FactsKey{dev, ino});
}

Filesystem::FileInfo Filesystem::InfoOf(int fd, const struct stat& st, absl::string_view name) {
  FileInfo info;
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    // Never opened (a symlink, fifo or socket); its creator still owns it.
    info.facts = FactsFromFormat(name, policy::MediaFormat::kUnknown);
    info.owner = RecordedOwner(fd);
    return info;
  }
  FactsKey key{st.st_dev, st.st_ino};
  FileVersion version = VersionOf(st);
  CachedFacts facts;
  bool cached = false;
  {
    absl::MutexLock lock(&facts_mu_);
    auto it = facts_.find(key);
    if (it != facts_.end() && it->second.version == version) {
      facts = it->second;
      cached = true;
    }
  }
  if (!cached) {
    facts.version = version;
    // Mirrors the scan budget: a scan that cannot be done is malformed, never clean.
    int flags = (S_ISDIR(st.st_mode) ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK) |
                O_CLOEXEC | O_NOCTTY;
    int rfd = open(ProcPath(fd).c_str(), flags);
    if (rfd >= 0) {
      if (S_ISREG(st.st_mode)) {
        uint8_t head[policy::kSniffBytes];
        ssize_t n = pread(rfd, head, sizeof(head), 0);
        if (n > 0) {
          facts.format = policy::SniffFormat(absl::MakeConstSpan(head, static_cast<size_t>(n)));
        }
        if (policy::FormatMayCarryLocation(facts.format)) {
          policy::FdSource source(rfd, static_cast<uint64_t>(st.st_size));
          auto scan = std::make_shared<policy::LocationScan>(
              policy::ScanLocation(facts.format, source));
          stats_.location_scans.fetch_add(1);
          if (scan->malformed) {
            stats_.location_malformed.fetch_add(1);
          } else if (!scan->ranges.empty()) {
            stats_.location_found.fetch_add(1);
          }
          facts.scan = std::move(scan);
        }
      }
      facts.owner = RecordedOwner(fd);
      close(rfd);
    } else if (S_ISREG(st.st_mode)) {
      // Not cached: the next request tries again. Until then nothing about it can be vouched for.
      info.content_read = false;
      info.owner = RecordedOwner(fd);
      info.facts = FactsFromFormat(name, policy::MediaFormat::kUnknown);
      info.facts.location = policy::LocationPresence::kMalformed;
      return info;
    }
    absl::MutexLock lock(&facts_mu_);
    if (facts_.size() >= kMaxFactsCache) facts_.clear();
    facts_[key] = facts;
  }
  info.owner = facts.owner;
  info.scan = facts.scan;
  if (S_ISDIR(st.st_mode)) return info;
  info.facts = policy::FactsOfContent(name, facts.format, facts.scan.get());
  return info;
}

int Filesystem::Label(int fd, const std::string& path, mode_t type) {
  if (options_.labeler == nullptr) return 0;
  std::string label;
  {
    absl::MutexLock lock(&label_mu_);
    absl::StatusOr<std::string> looked_up =
        options_.labeler->Lookup(ChildPath(options_.label_root, path), type);
    if (!looked_up.ok()) return 0;  // no file_contexts entry: the lower default stays
    label = *std::move(looked_up);
  }
  // The raw context goes into security.selinux, as fsetfilecon_raw would write it.
  int rc = fsetxattr(fd, "security.selinux", label.c_str(), label.size() + 1, 0);
  return rc == 0 ? 0 : errno;
}

Decision Filesystem::Ask(const Ctx& ctx, scopedfs::Op op, const std::string& path, bool directory,
                         const FileInfo* info) const {
  policy::Request request;
  request.uid = ctx.uid;
  request.op = op;
  request.path = path;
  request.node_type = directory ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
  request.content = info != nullptr && !directory ? &info->facts : nullptr;
  if (info != nullptr) request.owner_uid = info->owner;
  request.storage_user_id = options_.user_id;
  std::string domain;
  if (options_.contexts != nullptr && options_.contexts->Enabled() && !ctx.configured_domain) {
    absl::StatusOr<std::string> resolved =
        policy::CallerDomainResolver(options_.contexts).Resolve(ctx.pid, "");
    if (!resolved.ok()) {
      // With SELinux on, the kernel's word is the only one that counts: no context, no access.
      Decision d;
      d.outcome = OUTCOME_DENY;
      d.error = ERRNO_EACCES;
      return d;
    }
    domain = *std::move(resolved);
    request.selinux_domain = domain;
  }
  std::shared_ptr<const policy::Engine> e = engine();
  // A missing engine cannot happen after startup; deny rather than guess.
  if (e == nullptr) {
    Decision d;
    d.outcome = OUTCOME_DENY;
    return d;
  }
  return e->Decide(request);
}

// --- FUSE glue --------------------------------------------------------------------------------

namespace {

void sfs_init(void* userdata, fuse_conn_info* conn) {
  (void)userdata;
  // Writeback caching would put writes in the page cache, which passthrough forbids; splice would
  // bypass the custom io that negotiates passthrough.
  conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
                  FUSE_CAP_SPLICE_MOVE);
  conn->max_write = 1 << 20;
  conn->max_readahead = 1 << 20;
}

void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kLookup);
  fuse_entry_param e;
  if (int err = DoLookup(fs, CtxOf(req), parent, name, &e)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_entry(req, &e);
  }
}

void sfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Fs(req)->nodes().Forget(ino, nlookup);
  fuse_reply_none(req);
}

void sfs_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  Filesystem* fs = Fs(req);
  for (size_t i = 0; i < count; ++i) fs->nodes().Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void sfs_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kGetattr);
  struct stat st;
  if (int err = DoGetattr(fs, CtxOf(req), ino, &st)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_attr(req, &st, AttrTimeoutFor(st));
  }
}

void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
                 fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kSetattr);
  struct stat st;
  if (int err = DoSetattr(fs, CtxOf(req), ino, attr, to_set, fi, &st)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_attr(req, &st, AttrTimeoutFor(st));
  }
}

void sfs_readlink(fuse_req_t req, fuse_ino_t ino) {
  std::shared_ptr<Node> node = Fs(req)->nodes().Get(ino);
  if (node == nullptr) return (void)fuse_reply_err(req, ENOENT);
  char buf[PATH_MAX + 1];
  ssize_t n = readlinkat(node->fd, "", buf, PATH_MAX);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  buf[n] = '\0';
  fuse_reply_readlink(req, buf);
}

void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kMkdir);
  fuse_entry_param e;
  if (int err = DoMkdir(fs, CtxOf(req), parent, name, mode, &e)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_entry(req, &e);
  }
}

void sfs_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kUnlink);
  fuse_reply_err(req, DoRemove(fs, CtxOf(req), parent, name, false));
}

void sfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kRmdir);
  fuse_reply_err(req, DoRemove(fs, CtxOf(req), parent, name, true));
}

void sfs_symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kSymlink);
  fuse_entry_param e;
  if (int err = DoSymlink(fs, CtxOf(req), link, parent, name, &e)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_entry(req, &e);
  }
}

void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
                const char* newname, unsigned int flags) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kRename);
  fuse_reply_err(req, DoRename(fs, CtxOf(req), parent, name, newparent, newname, flags));
}

void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kLink);
  fuse_entry_param e;
  if (int err = DoLink(fs, CtxOf(req), ino, newparent, newname, &e)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_entry(req, &e);
  }
}

void sfs_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kOpen);
  int backing_id = -1;
  if (int err = DoOpen(fs, CtxOf(req), ino, fi, &backing_id)) {
    fs->stats().open_denied.fetch_add(1);
    fuse_reply_err(req, err);
    return;
  }
  if (backing_id >= 0) fs->stats().open_passthrough.fetch_add(1);
  ReplyOpened(req, fi, backing_id, nullptr);
}

void sfs_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kCreate);
  fuse_entry_param e;
  int backing_id = -1;
  if (int err = DoCreate(fs, CtxOf(req), parent, name, mode, fi, &e, &backing_id)) {
    fs->stats().open_denied.fetch_add(1);
    fuse_reply_err(req, err);
    return;
  }
  if (backing_id >= 0) fs->stats().open_passthrough.fetch_add(1);
  ReplyOpened(req, fi, backing_id, &e);
}

// The fills a redacted handle applies to the lower file as it is now (`st`), recomputed when the
// file has changed since the handle last read it. A file whose location cannot be scanned any
// more is filled entirely.
std::shared_ptr<const std::vector<policy::FillRange>> PlanFor(Filesystem* fs, OpenFile* file,
                                                              const struct stat& st) {
  Filesystem::FileVersion version = Filesystem::VersionOf(st);
  {
    absl::MutexLock lock(&file->plan_mu);
    if (file->plan != nullptr && file->plan_version == version) return file->plan;
  }
  Filesystem::FileInfo info = fs->InfoOf(file->node->fd, st, "");
  auto plan = std::make_shared<std::vector<policy::FillRange>>();
  if (info.scan == nullptr) {
    // No carrier format now (no parser can find location in it): served as it is. Unless its
    // bytes could not be read at all, when nothing in it can be vouched for.
    if (!info.content_read && st.st_size > 0) {
      plan->push_back({0, static_cast<uint64_t>(st.st_size), 0});
    }
  } else {
    std::vector<policy::LocationRange> ranges = info.scan->ranges;
    // Fallback ranges apply under REDACT_ALL, and also whenever the file became malformed after
    // the view was chosen: a redacted view never serves what it cannot vouch for.
    if (info.scan->malformed) {
      ranges.insert(ranges.end(), info.scan->fallback.begin(), info.scan->fallback.end());
    }
    // Every kind the parsers found is filled, whichever rule made the view redacted.
    *plan = policy::PlanFills(ranges, kAllLocationKinds);
    if (info.scan->malformed && plan->empty() && st.st_size > 0) {
      plan->push_back({0, static_cast<uint64_t>(st.st_size), 0});
    }
  }
  absl::MutexLock lock(&file->plan_mu);
  file->plan_version = version;
  file->plan = std::move(plan);
  return file->plan;
}

// Reads [off, off + size) of a redacted handle's file with its fills applied. The plan and the
// bytes must come from one version of the file. Writes change the version before they copy data,
// so a version unchanged after the read means the bytes belong to the plan's version; otherwise
// the plan is remade for the new version and the read repeated. If the file keeps changing,
// answer zeros rather than bytes no plan was made for.
int ReadRedacted(Filesystem* fs, OpenFile* file, size_t size, off_t off, char* buf,
                 size_t* got) {
  constexpr int kAttempts = 8;
  struct stat st;
  if (fstat(file->fd, &st) != 0) return errno;
  std::shared_ptr<const std::vector<policy::FillRange>> plan = PlanFor(fs, file, st);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    ssize_t n = pread(file->fd, buf, size, off);
    if (n < 0) return errno;
    struct stat after;
    if (fstat(file->fd, &after) != 0) return errno;
    if (Filesystem::VersionOf(after) != Filesystem::VersionOf(st)) {
      st = after;
      plan = PlanFor(fs, file, st);
      continue;
    }
    policy::ApplyFills(*plan, static_cast<uint64_t>(off),
                       absl::MakeSpan(reinterpret_cast<uint8_t*>(buf), static_cast<size_t>(n)));
    *got = static_cast<size_t>(n);
    return 0;
  }
  *got = off < st.st_size ? std::min(size, static_cast<size_t>(st.st_size - off)) : 0;
  memset(buf, 0, *got);
  return 0;
}

void sfs_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kRead);
  fs->stats().read_requests.fetch_add(1);
  OpenFile* file = FileOf(fi);
  // Not value-initialised: every byte sent is first written by pread or a fill.
  std::unique_ptr<char[]> buf(new char[size]);
  if (file->redacted()) {
    fs->stats().redacted_reads.fetch_add(1);
    size_t got;
    if (int err = ReadRedacted(fs, file, size, off, buf.get(), &got)) {
      return (void)fuse_reply_err(req, err);
    }
    return (void)fuse_reply_buf(req, buf.get(), got);
  }
  ssize_t n = pread(file->fd, buf.get(), size, off);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_buf(req, buf.get(), static_cast<size_t>(n));
}

// Drops the cached facts of a handle's file once it has been written through the mount.
void Written(Filesystem* fs, OpenFile* file) {
  fs->InvalidateFacts(file->node->dev, file->node->ino);
}

// A write through a redacted view (a caller the location guard redacts, writing a file that was
// of no carrier format at open) is judged again against the file as it is now: once the file
// can carry location (its owner wrote a photo into it), OP_WRITE refuses, so the writer can never
// break the metadata and then read the file raw.
int WriteAllowed(Filesystem* fs, fuse_req_t req, OpenFile* file) {
  if (!file->redacted()) return 0;
  std::string path;
  if (!fs->nodes().PathOf(file->node->id, &path)) return EACCES;
  struct stat st;
  if (fstat(file->fd, &st) != 0) return errno;
  absl::string_view name(path);
  if (size_t slash = name.rfind('/'); slash != absl::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  Filesystem::FileInfo info = fs->InfoOf(file->node->fd, st, name);
  return Verdict(fs->Ask(CtxOf(req), OP_WRITE, path, false, &info));
}

// After a write through a redacted view: its page cache, which other redacted readers share,
// may now hold bytes that a fill would cover; drop it. Sent after the reply, since the kernel
// holds the written pages locked until then. Takes the node id, not the handle: once the reply
// is sent, a RELEASE may free the handle.
NodeId RedactedNodeOf(const OpenFile* file) { return file->redacted() ? file->node->id : 0; }

void AfterRedactedWrite(Filesystem* fs, NodeId redacted_node) {
  if (redacted_node == 0 || fs->session() == nullptr) return;
  fuse_lowlevel_notify_inval_inode(fs->session()->session(), redacted_node, 0, 0);
}

void sfs_write(fuse_req_t req, fuse_ino_t, const char* buf, size_t size, off_t off,
               fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kWrite);
  fs->stats().write_requests.fetch_add(1);
  OpenFile* file = FileOf(fi);
  if (int err = WriteAllowed(fs, req, file)) return (void)fuse_reply_err(req, err);
  ssize_t n = pwrite(file->fd, buf, size, off);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  Written(fs, file);
  NodeId redacted = RedactedNodeOf(file);
  fuse_reply_write(req, static_cast<size_t>(n));
  AfterRedactedWrite(fs, redacted);
}

void sfs_flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  // close(dup()) makes the lower filesystem see a close, as the app's close would natively.
  int fd = dup(FileOf(fi)->fd);
  fuse_reply_err(req, fd >= 0 && close(fd) == 0 ? 0 : errno);
}

void sfs_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpenFile* file = FileOf(fi);
  fs->Unregister(file);
  close(file->fd);
  // Passthrough writes never reach the daemon: the handle's end is where they are known to stop.
  if (file->writable) Written(fs, file);
  if (!file->redacted()) DetachBacking(fs, *file->node, file->passthrough);
  delete file;
  fuse_reply_err(req, 0);
}

void sfs_fsync(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  int fd = FileOf(fi)->fd;
  fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : errno);
}

void sfs_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kReaddir);
  if (int err = DoOpendir(fs, CtxOf(req), ino, fi)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_open(req, fi);
  }
}

// READDIR and READDIRPLUS share the filtered listing; PLUS also looks every entry up (through
// the same policy check as LOOKUP), so the kernel learns attributes without a LOOKUP per name.
void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi,
             bool plus) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kReaddir);
  Filesystem::Ctx ctx = CtxOf(req);
  OpenDir* dir = DirOf(fi);
  if (!dir->loaded || off == 0) {
    dir->entries.clear();
    if (int err = LoadDir(fs, ctx, ino, dir)) return (void)fuse_reply_err(req, err);
  }
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off); i < dir->entries.size(); ++i) {
    const DirEntry& entry = dir->entries[i];
    off_t next = static_cast<off_t>(i + 1);
    size_t need;
    if (!plus) {
      struct stat st = {};
      st.st_ino = entry.ino;
      st.st_mode = static_cast<mode_t>(DTTOIF(entry.type));
      need = fuse_add_direntry(req, buf.data() + used, size - used, entry.name.c_str(), &st, next);
      if (need > size - used) break;
      used += need;
      continue;
    }
    fuse_entry_param e = {};
    bool dot = entry.name == "." || entry.name == "..";
    if (dot) {
      // The kernel makes no dentry for these (nodeid 0); only the name and type matter.
      e.attr.st_ino = entry.ino;
      e.attr.st_mode = static_cast<mode_t>(DTTOIF(entry.type));
    } else if (int err = DoLookup(fs, ctx, ino, entry.name.c_str(), &e)) {
      // Gone or hidden since the listing was taken: not an entry any more. Anything else (out of
      // fds, an I/O error) must not drop the entry in silence: what is in the buffer is sent
      // and the kernel asks again from this entry, or the error is the answer.
      if (err == ENOENT || err == EACCES || err == EPERM) continue;
      if (used == 0) return (void)fuse_reply_err(req, err);
      break;
    }
    need = fuse_add_direntry_plus(req, buf.data() + used, size - used, entry.name.c_str(), &e,
                                  next);
    if (need > size - used) {
      // Not sent, so the kernel will never forget it: undo the lookup.
      if (!dot) fs->nodes().Forget(e.ino, 1);
      break;
    }
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Readdir(req, ino, size, off, fi, /*plus=*/false);
}

void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                     fuse_file_info* fi) {
  Readdir(req, ino, size, off, fi, /*plus=*/true);
}

void sfs_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  OpenDir* dir = DirOf(fi);
  Fs(req)->Unregister(dir);
  close(dir->fd);
  delete dir;
  fuse_reply_err(req, 0);
}

void sfs_fsyncdir(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  int fd = DirOf(fi)->fd;
  fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : errno);
}

void sfs_statfs(fuse_req_t req, fuse_ino_t) {
  std::shared_ptr<Node> root = Fs(req)->nodes().Get(kRootNodeId);
  struct statvfs sv;
  if (fstatvfs(root->fd, &sv) != 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_statfs(req, &sv);
}

void sfs_access(fuse_req_t req, fuse_ino_t ino, int mask) {
  Filesystem* fs = Fs(req);
  Filesystem::Ctx ctx = CtxOf(req);
  Visible v;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return (void)fuse_reply_err(req, err);
  int err = 0;
  // A redacted read is still a read: access(R_OK) answers what open(O_RDONLY) would.
  if ((mask & R_OK) && err == 0) {
    Decision d = fs->Ask(ctx, OP_READ, v.r.path, v.dir, &v.info);
    err = d.Permits() ? 0 : ErrnoOf(d);
  }
  if ((mask & W_OK) && err == 0) err = Verdict(fs->Ask(ctx, OP_WRITE, v.r.path, v.dir, &v.info));
  if ((mask & X_OK) && err == 0 && !v.dir && (v.st.st_mode & 0111) == 0) err = EACCES;
  fuse_reply_err(req, err);
}

bool ReservedXattr(const char* name) { return absl::StartsWith(name, "trusted.scopedfs."); }

// Apps may only change user.* attributes: the daemon acts as root, so letting an app set
// security.* or trusted.* through it would grant capabilities or forge daemon state.
bool MayModifyXattr(const Filesystem::Ctx& ctx, const char* name) {
  return ctx.uid == 0 || absl::StartsWith(name, "user.");
}

int XattrTarget(Filesystem* fs, const Filesystem::Ctx& ctx, fuse_ino_t ino, bool modify,
                std::string* proc) {
  Visible v;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
  if (S_ISLNK(v.st.st_mode)) return ENOTSUP;
  if (modify) {
    if (int err = Verdict(fs->Ask(ctx, OP_SETATTR, v.r.path, v.dir, &v.info))) return err;
  }
  *proc = ProcPath(v.r.node->fd);
  return 0;
}

void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value,
                  size_t size, int flags) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kXattr);
  if (ReservedXattr(name) || !MayModifyXattr(CtxOf(req), name)) {
    return (void)fuse_reply_err(req, EPERM);
  }
  std::string proc;
  if (int err = XattrTarget(fs, CtxOf(req), ino, true, &proc)) return (void)fuse_reply_err(req, err);
  fuse_reply_err(req, setxattr(proc.c_str(), name, value, size, flags) == 0 ? 0 : errno);
}

void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kXattr);
  if (ReservedXattr(name)) return (void)fuse_reply_err(req, ENODATA);
  std::string proc;
  if (int err = XattrTarget(fs, CtxOf(req), ino, false, &proc)) {
    return (void)fuse_reply_err(req, err);
  }
  if (size == 0) {
    ssize_t n = getxattr(proc.c_str(), name, nullptr, 0);
    if (n < 0) return (void)fuse_reply_err(req, errno);
    return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
  }
  std::vector<char> buf(size);
  ssize_t n = getxattr(proc.c_str(), name, buf.data(), size);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kXattr);
  std::string proc;
  if (int err = XattrTarget(fs, CtxOf(req), ino, false, &proc)) {
    return (void)fuse_reply_err(req, err);
  }
  ssize_t n = listxattr(proc.c_str(), nullptr, 0);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  std::vector<char> all(static_cast<size_t>(n) + 1);
  n = listxattr(proc.c_str(), all.data(), all.size());
  if (n < 0) return (void)fuse_reply_err(req, errno);
  std::string visible;
  for (size_t i = 0; i < static_cast<size_t>(n);) {
    const char* entry = all.data() + i;
    size_t len = strlen(entry);
    if (!ReservedXattr(entry)) visible.append(entry, len + 1);
    i += len + 1;
  }
  if (size == 0) return (void)fuse_reply_xattr(req, visible.size());
  if (visible.size() > size) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, visible.data(), visible.size());
}

void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kXattr);
  if (ReservedXattr(name) || !MayModifyXattr(CtxOf(req), name)) {
    return (void)fuse_reply_err(req, EPERM);
  }
  std::string proc;
  if (int err = XattrTarget(fs, CtxOf(req), ino, true, &proc)) return (void)fuse_reply_err(req, err);
  fuse_reply_err(req, removexattr(proc.c_str(), name) == 0 ? 0 : errno);
}

void sfs_fallocate(fuse_req_t req, fuse_ino_t, int mode, off_t offset, off_t length,
                   fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpenFile* file = FileOf(fi);
  if (int err = WriteAllowed(fs, req, file)) return (void)fuse_reply_err(req, err);
  int rc = fallocate(file->fd, mode, offset, length);
  if (rc == 0) Written(fs, file);
  NodeId redacted = RedactedNodeOf(file);
  fuse_reply_err(req, rc == 0 ? 0 : errno);
  AfterRedactedWrite(fs, redacted);
}

void sfs_lseek(fuse_req_t req, fuse_ino_t, off_t off, int whence, fuse_file_info* fi) {
  off_t res = lseek(FileOf(fi)->fd, off, whence);
  if (res < 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_lseek(req, res);
}

void sfs_copy_file_range(fuse_req_t req, fuse_ino_t, off_t off_in, fuse_file_info* fi_in,
                         fuse_ino_t, off_t off_out, fuse_file_info* fi_out, size_t len,
                         int flags) {
  Filesystem* fs = Fs(req);
  fs->stats().read_requests.fetch_add(1);
  fs->stats().write_requests.fetch_add(1);
  OpenFile* from = FileOf(fi_in);
  OpenFile* to = FileOf(fi_out);
  if (int err = WriteAllowed(fs, req, to)) return (void)fuse_reply_err(req, err);
  if (from->redacted() || to->redacted()) {
    // The lower copy_file_range would copy raw bytes: copy the redacted ones instead, one bounded
    // chunk per request (a short copy is allowed; the caller loops). A raw source copied into a
    // redacted view goes the same way, so the write lands where AfterRedactedWrite sees it.
    std::vector<char> buf(std::min<size_t>(len, 1 << 20));
    size_t got = 0;
    if (from->redacted()) {
      fs->stats().redacted_reads.fetch_add(1);
      if (int err = ReadRedacted(fs, from, buf.size(), off_in, buf.data(), &got)) {
        return (void)fuse_reply_err(req, err);
      }
    } else {
      ssize_t r = pread(from->fd, buf.data(), buf.size(), off_in);
      if (r < 0) return (void)fuse_reply_err(req, errno);
      got = static_cast<size_t>(r);
    }
    ssize_t n = got == 0 ? 0 : pwrite(to->fd, buf.data(), got, off_out);
    if (n < 0) return (void)fuse_reply_err(req, errno);
    Written(fs, to);
    NodeId redacted = RedactedNodeOf(to);
    fuse_reply_write(req, static_cast<size_t>(n));
    return AfterRedactedWrite(fs, redacted);
  }
  loff_t in = off_in, out = off_out;
  ssize_t n = copy_file_range(from->fd, &in, to->fd, &out, len, static_cast<unsigned>(flags));
  if (n < 0) return (void)fuse_reply_err(req, errno);
  Written(fs, to);
  fuse_reply_write(req, static_cast<size_t>(n));
}

}  // namespace

const fuse_lowlevel_ops& Filesystem::Ops() {
  static const fuse_lowlevel_ops ops = [] {
    fuse_lowlevel_ops o = {};
    o.init = sfs_init;
    o.lookup = sfs_lookup;
    o.forget = sfs_forget;
    o.forget_multi = sfs_forget_multi;
    o.getattr = sfs_getattr;
    o.setattr = sfs_setattr;
    o.readlink = sfs_readlink;
    o.mkdir = sfs_mkdir;
    o.unlink = sfs_unlink;
    o.rmdir = sfs_rmdir;
    o.symlink = sfs_symlink;
    o.rename = sfs_rename;
    o.link = sfs_link;
    o.open = sfs_open;
    o.create = sfs_create;
    o.read = sfs_read;
    o.write = sfs_write;
    o.flush = sfs_flush;
    o.release = sfs_release;
    o.fsync = sfs_fsync;
    o.opendir = sfs_opendir;
    o.readdir = sfs_readdir;
    o.readdirplus = sfs_readdirplus;
    o.releasedir = sfs_releasedir;
    o.fsyncdir = sfs_fsyncdir;
    o.statfs = sfs_statfs;
    o.access = sfs_access;
    o.setxattr = sfs_setxattr;
    o.getxattr = sfs_getxattr;
    o.listxattr = sfs_listxattr;
    o.removexattr = sfs_removexattr;
    o.fallocate = sfs_fallocate;
    o.lseek = sfs_lseek;
    o.copy_file_range = sfs_copy_file_range;
    return o;
  }();
  return ops;
}

}  // namespace scopedfs::daemon
