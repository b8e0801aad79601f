// Directory ops: OPENDIR, READDIR and READDIRPLUS (one listing per open, filtered by what the
// caller may see), RELEASEDIR and FSYNCDIR.
//
// READDIRPLUS under POSIX semantics: an entry with attributes saves the kernel a LOOKUP per name
// of a cold listing, but makes it forget the inode's cached ACLs (fuse_direntplus_link calls
// forget_all_cached_acls), which `ls -l` then asks for again. So a name whose attributes the
// kernel still holds fresh (Node::kernel_fresh_until_ns, fs_internal.h) goes without them
// (nodeid 0: a plain directory entry to the kernel), and every other name with them. A listing
// leaves a directory fresh although the kernel marks its atime stale: `ls -l` does not ask for
// atime, and a resent directory would cost it two ACL questions (access and default); stat, du
// and find, which ask for atime, pay one GETATTR for it instead.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "daemon/fs_internal.h"

namespace scopedfs::daemon {

DirStream::~DirStream() {
  if (dir_ != nullptr) closedir(dir_);
}

int DirStream::Open(int dir_fd) {
  base::UniqueFd fd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno;
  dir_ = fdopendir(fd.get());
  if (dir_ == nullptr) return errno;
  (void)fd.release();  // the stream owns it now
  return 0;
}

namespace {

bool IsDot(const char* name) { return strcmp(name, ".") == 0 || strcmp(name, "..") == 0; }

int WalkEntries(int dir_fd, const std::string& rel, int depth, int* budget,
                const std::function<int(int, const struct stat&, const std::string&,
                                        absl::string_view)>& visit) {
  if (depth > 64) return EXDEV;
  DirStream stream;
  if (stream.Open(dir_fd) != 0) return EXDEV;
  while (dirent* ent = stream.Next()) {
    if (IsDot(ent->d_name)) continue;
    if (--*budget < 0) return EXDEV;
    base::UniqueFd child(openat(stream.fd(), ent->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (!child.valid() || fstatat(child.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed meanwhile
      return EXDEV;
    }
    std::string child_rel = ChildPath(rel, ent->d_name);
    int err = visit(child.get(), st, child_rel, ent->d_name);
    if (err == 0 && S_ISDIR(st.st_mode)) {
      err = WalkEntries(child.get(), child_rel, depth + 1, budget, visit);
    }
    if (err != 0) return err;
  }
  return 0;
}

}  // namespace

int ForEachEntryBelow(int dir_fd, int* budget,
                      const std::function<int(int fd, const struct stat& st, const std::string& rel,
                                              absl::string_view name)>& visit) {
  return WalkEntries(dir_fd, "", 0, budget, visit);
}

int DoOpendir(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, fuse_file_info* fi) {
  Resolved r;
  if (int err = Resolve(fs, ino, &r)) return err;
  if (int err = Verdict(ctx.Decide(OP_READ, r.path, true, nullptr))) return err;
  std::optional<uid_t> slot;
  if (int err = fs->TakeHandleSlot(ctx, &slot)) return err;
  base::UniqueFd fd(openat(r.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    fs->ReleaseHandleSlot(slot);
    return err;
  }
  auto* dir = new OpenDir;
  dir->fd = std::move(fd);
  dir->slot = slot;
  fi->fh = reinterpret_cast<uint64_t>(dir);
  fs->Register(dir);
  return 0;
}

// Lists the directory once per open, keeping only the names the caller may see.
int LoadDir(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, OpenDir* dir) {
  Resolved r;
  if (int err = Resolve(fs, ino, &r)) return err;
  DirStream stream;
  if (int err = stream.Open(dir->fd.get())) return err;
  while (dirent* ent = stream.Next()) {
    if (IsDot(ent->d_name)) {
      dir->entries.push_back({ent->d_name, ent->d_ino, ent->d_type});
      continue;
    }
    Child child;
    // An entry removed since the listing was read is gone; any other failure (out of fds, an
    // I/O error) fails the listing rather than leave the entry out in silence.
    if (int err = OpenChild(fs, r, ent->d_name, &child, NeedsOf(ctx.engine()))) {
      if (err == ENOENT) continue;
      dir->entries.clear();
      return err;
    }
    policy::Decision seen =
        ctx.Decide(OP_LOOKUP, child.path, S_ISDIR(child.st.st_mode), &child.info);
    if (seen.outcome == OUTCOME_HIDE || seen.outcome == OUTCOME_DENY) continue;
    dir->entries.push_back({ent->d_name, ent->d_ino, ent->d_type, child.st.st_dev});
  }
  dir->loaded = true;
  return 0;
}

void sfs_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kReaddir);
  if (int err = DoOpendir(fs, fs->Context(req), ino, fi)) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_open(req, fi);
  }
}

// A name's attributes count as held by the kernel when they stay fresh for another second.
constexpr int64_t kFreshMarginNs = 1'000'000'000;

// Under POSIX semantics, whether a listed name's node is one the kernel holds fresh, found without
// a lookup: its READDIRPLUS entry then goes without attributes, and costs no more than a READDIR
// entry (the listing already judged that the caller sees the name). Policies that may redact are
// left to KeepKernelsEntry: the caller's view, and so the node, is the lookup's to choose.
bool KernelHoldsFresh(Filesystem* fs, const RequestContext& ctx, const DirEntry& entry) {
  if (!fs->posix() || entry.dev == 0 || ctx.engine() == nullptr || ctx.engine()->may_redact()) {
    return false;
  }
  std::shared_ptr<Node> node = fs->nodes().Find(entry.dev, entry.ino, kRawView);
  return node != nullptr && node->kernel_fresh_until_ns.load(std::memory_order_relaxed) >=
                                SteadyNowNs() + kFreshMarginNs;
}

// Under POSIX semantics, turns a READDIRPLUS entry whose node the kernel holds fresh (its name
// and attributes, for at least another second) into a plain one: no lookup is handed over (so it
// is undone) and the kernel keeps what it has, cached ACLs included.
void KeepKernelsEntry(Filesystem* fs, int64_t fresh_until_before, fuse_entry_param* e) {
  if (!fs->posix() || fresh_until_before < SteadyNowNs() + kFreshMarginNs) return;
  std::shared_ptr<Node> node = fs->nodes().Get(e->ino);
  if (node == nullptr) return;
  node->kernel_fresh_until_ns.store(fresh_until_before, std::memory_order_relaxed);
  fs->nodes().Forget(e->ino, 1);
  e->ino = 0;  // the dirent keeps attr.st_ino and the type
}

// READDIR and READDIRPLUS share the filtered listing; PLUS also looks every entry up (through
// the same policy check as LOOKUP), so the kernel learns attributes without a LOOKUP per name.
void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi,
             bool plus) {
  Filesystem* fs = Fs(req);
  OpTimer t(fs->stats(), OpKind::kReaddir);
  RequestContext ctx = fs->Context(req);
  OpenDir* dir = DirOf(fi);
  if (!dir->loaded || off == 0) {
    // Not loaded until this load succeeds: a rewound listing that fails to load is loaded again
    // at the next READDIR, whatever its offset, rather than read as empty.
    dir->loaded = false;
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
      st.st_ino = fs->PresentedIno(entry.dev, entry.ino);
      st.st_mode = static_cast<mode_t>(DTTOIF(entry.type));
      need = fuse_add_direntry(req, buf.data() + used, size - used, entry.name.c_str(), &st, next);
      if (need > size - used) break;
      used += need;
      continue;
    }
    fuse_entry_param e = {};
    bool dot = entry.name == "." || entry.name == "..";
    int64_t fresh_until_before = 0;
    if (dot || KernelHoldsFresh(fs, ctx, entry)) {
      // Nodeid 0 (e.ino): the kernel makes or changes no dentry; only the name and type matter.
      e.attr.st_ino = fs->PresentedIno(entry.dev, entry.ino);
      e.attr.st_mode = static_cast<mode_t>(DTTOIF(entry.type));
    } else if (int err = DoLookup(fs, ctx, ino, entry.name.c_str(), &e, &fresh_until_before)) {
      // Gone or hidden since the listing was taken: not an entry any more. Anything else (out of
      // fds, an I/O error) must not drop the entry in silence: what is in the buffer is sent
      // and the kernel asks again from this entry, or the error is the answer.
      if (err == ENOENT || err == EACCES || err == EPERM) continue;
      if (used == 0) return (void)fuse_reply_err(req, err);
      break;
    } else {
      KeepKernelsEntry(fs, fresh_until_before, &e);
    }
    need =
        fuse_add_direntry_plus(req, buf.data() + used, size - used, entry.name.c_str(), &e, next);
    if (need > size - used) {
      // Not sent, so the kernel will never forget it: undo the lookup.
      if (e.ino != 0) {
        if (std::shared_ptr<Node> node = fs->nodes().Get(e.ino)) {
          node->kernel_fresh_until_ns.store(fresh_until_before, std::memory_order_relaxed);
        }
        fs->nodes().Forget(e.ino, 1);
      }
      break;
    }
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Readdir(req, ino, size, off, fi, /*plus=*/false);
}

void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Readdir(req, ino, size, off, fi, /*plus=*/true);
}

void sfs_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  OpenDir* dir = DirOf(fi);
  Fs(req)->Unregister(dir);
  delete dir;
  fuse_reply_err(req, 0);
}

void sfs_fsyncdir(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  int fd = DirOf(fi)->fd.get();
  fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : errno);
}

}  // namespace scopedfs::daemon
