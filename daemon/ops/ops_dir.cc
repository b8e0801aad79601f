// Directory ops: OPENDIR, READDIR and READDIRPLUS (filtered by what the caller may see: one
// listing per open where that depends on the caller, kept by the kernel for one viewer where it
// may be, else read afresh and cached by the kernel for all), RELEASEDIR and FSYNCDIR.
//
// READDIRPLUS under POSIX semantics: an entry with attributes saves the kernel a LOOKUP per name
// of a cold listing, but makes it forget the inode's cached ACLs (fuse_direntplus_link calls
// forget_all_cached_acls), which `ls -l` then asks for again. So a name whose attributes the
// kernel still holds fresh (Node::kernel_fresh_until_ns, resolve.h) goes without them
// (nodeid 0: a plain directory entry to the kernel), and every other name with them. A listing
// leaves a directory fresh although the kernel marks its atime stale: `ls -l` does not ask for
// atime, and a resent directory would cost it two ACL questions (access and default); stat, du
// and find, which ask for atime, pay one GETATTR for it instead.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/kernel_listings.h"
#include "daemon/ops/listed_entry.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/tree_walk.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

// Under a caller-independent policy the listing is the same for every caller, so the kernel
// caches it: FOPEN_CACHE_DIR fills the directory's page cache from the READDIR replies, and
// FOPEN_KEEP_CACHE keeps it across opens. The kernel drops it when the directory changes through
// the mount (any create, unlink or rename in it bumps the directory's version), when its mtime
// changes (checked at every listing from the start, once the cached attributes expire, so changes
// made behind the daemon's back are seen as late as a cached name), and at every reload
// (Filesystem::SetEngine invalidates every inode). Under any other policy, which opens may use the
// kernel's listing is KeptListing's to say (below): no caller is ever shown a listing made for
// another.
//
// Under such a policy OPENDIR itself is answered ENOSYS (FUSE_NO_OPENDIR_SUPPORT): the kernel then
// sends no OPENDIR or RELEASEDIR for the rest of the connection, opens every directory with
// FOPEN_CACHE_DIR | FOPEN_KEEP_CACHE and fh 0, and a warm `find` or `du` costs no request per
// directory. READDIR, READDIRPLUS and FSYNCDIR then come with fh 0 and open the directory from its
// node, per request (only on a miss of the kernel's cache); READDIR judges the caller's right to
// list as OPENDIR did. The price is a pin: that choice cannot be undone for the connection, so from
// the first ENOSYS on a reload to a policy whose listings differ by caller is refused
// (Filesystem::PinListings, SetEngine; `scopedfsctl stats` shows listings_pinned). Nor does an open
// keep the lower directory: one removed through the mount keeps an fd on its node until the
// kernel forgets it (DoRemove, NodeTable::KeepRemoved), so fstat of it held open answers as
// natively; one removed behind the daemon's back can answer ESTALE once the lower filesystem lets
// its inode go. Until a directory was opened under such a policy, any reload is allowed; the check
// and the pin are one step under the engine's lock, so a reload racing the first OPENDIR either
// lands first (that OPENDIR then gets a handle, DoOpendir) or is refused. Directory opens answered
// before the pin keep their handle and get their RELEASEDIR.
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
  if (CallerIndependent(ctx)) {
    dir->kernel_caches = true;
    fi->cache_readdir = 1;
    fi->keep_cache = 1;
  } else {
    ChooseKernelListing(fs, ctx, r, dir, fi);
  }
  fi->fh = reinterpret_cast<uint64_t>(dir);
  fs->Register(dir);
  return 0;
}

// The children a READDIRPLUS's own load of a snapshot opened and judged, for the entries from
// index `from` on that its reply may carry (at most `max`, which the reply's size and
// kMaxListedChildren bound, see Readdir): looked up from these (DoLookupListed) instead of being
// opened and read again. Kept without their fds, so only those the node table keeps by handle
// (NodeTable::KeepsByHandle); a request holds no more fds than it did, and memory in proportion to
// its reply.
struct ListedChildren {
  size_t from = 0;
  size_t max = 0;
  std::vector<ListedChild> children;  // listing index - from; no identity: not kept
};

// Lists the directory once per open, keeping only the names the caller may see; an entry's
// offset is its index. For an open that may fill the kernel's kept listing, *depends_on_content
// says whether any name's visibility to the caller could depend on its file's content.
// With `listed`, the children of the entries it names are kept there; *resolved gets the directory
// as resolved for the load.
int LoadDir(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, OpenDir* dir,
            bool* depends_on_content, ListedChildren* listed, Resolved* resolved) {
  Resolved& r = *resolved;
  if (int err = Resolve(fs, ino, &r)) return err;
  DirStream stream;
  if (int err = stream.Open(dir->fd.get())) return err;
  while (dirent* ent = stream.Next()) {
    DirEntry entry;
    bool shown;
    size_t index = dir->entries.size();
    bool keep = listed != nullptr && index >= listed->from && index - listed->from < listed->max;
    ListedChild listed_child;
    if (int err = ListedEntry(fs, ctx, r, ent, &entry, &shown, depends_on_content,
                              keep ? &listed_child : nullptr)) {
      dir->entries.clear();
      if (listed != nullptr) listed->children.clear();
      return err;
    }
    if (!shown) continue;
    if (keep) {
      Child& child = listed_child.child;
      if (child.identity && fs->nodes().KeepsByHandle(*child.identity)) {
        child.fd.reset();
      } else {
        listed_child = ListedChild();
      }
      listed->children.push_back(std::move(listed_child));
    }
    entry.next = static_cast<off_t>(dir->entries.size() + 1);
    dir->entries.push_back(std::move(entry));
  }
  dir->loaded = true;
  return 0;
}

void sfs_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  OpRequest op(req, FUSE_OPENDIR);
  Filesystem* fs = op.fs();
  if (CallerIndependent(op.ctx())) {
    // Judged as any open, so a refused caller is refused and the mount is not pinned by it.
    Resolved r;
    if (int err = Resolve(fs, ino, &r)) return op.ReplyErr(err);
    if (int err = Verdict(op.ctx().Decide(OP_READ, r.path, true, nullptr))) {
      return op.ReplyErr(err);
    }
    // Not a refusal: the kernel opens the directory itself (fh 0) and never asks again.
    if (fs->PinListings()) return op.ReplyErr(ENOSYS);
  }
  if (int err = DoOpendir(fs, op.ctx(), ino, fi)) return op.ReplyErr(err);
  op.ReplyOpendir(fi);
}

// A name's attributes count as held by the kernel when they stay fresh for another second.
constexpr int64_t kFreshMarginNs = 1'000'000'000;

// Whether a listed name's node is one the kernel holds fresh, found without a lookup: its
// READDIRPLUS entry then goes without attributes (nodeid 0: the kernel makes or changes no dentry
// and keeps the attributes it has), and costs no more than a READDIR entry (the listing already
// judged that the caller sees the name). What the kernel holds fresh it serves to every caller
// without asking anyway (views.h caches names and attributes only where that is right), so the
// entry changes nothing a lookup would have changed, but for one thing: under a policy that may
// redact, a lookup picks the node of the caller's view, and the kernel's dentry may lead to the
// other one. So there the entry goes plain only when the caller reads the raw view and the table
// has no redacted node of that number (the kernel holds only nodes of the table), and the raw
// node found is the listed object (its generation). A wrong guess about freshness costs a
// GETATTR or a LOOKUP later, never a wrong answer. Under ANDROID semantics only regular files go
// plain: there are no ACLs for a resent entry to drop, and a directory listed since its entry was
// sent has a stale atime in the kernel (the file header), which a resent entry refreshes where a
// plain one would cost `find` or `du` a GETATTR.
bool KernelHoldsFresh(Filesystem* fs, const RequestContext& ctx, const DirEntry& entry) {
  if (entry.dev == 0 || ctx.engine() == nullptr) return false;
  if (!fs->posix() && entry.type != DT_REG) return false;
  std::shared_ptr<Node> node;
  if (ctx.engine()->may_redact()) {
    if (!entry.raw_view || !entry.identified ||
        fs->nodes().FindNumber(entry.dev, entry.ino, kRedactedView) != nullptr) {
      return false;
    }
    node = fs->nodes().Find(ObjectId{entry.dev, entry.ino, entry.generation}, kRawView);
  } else {
    node = fs->nodes().FindNumber(entry.dev, entry.ino, kRawView);
  }
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

// Where a READDIR's entries come from: the open's snapshot (offsets are indexes), or, for an
// open whose listing the kernel caches (caller-independent policies), the lower directory read
// afresh from the offset the kernel names (offsets are the lower filesystem's own d_off cookies,
// which ext4, f2fs and tmpfs keep stable while entries come and go, so no entry is listed twice or
// skipped across chunks, as natively). Next() gives 0 and an entry, 0 and none at the end, or an
// errno.
class ListingSource {
 public:
  // `children`: as many entries' children as READDIRPLUS may look up from a load made now
  // (ListedChildren); 0 for READDIR.
  static int ForSnapshot(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, off_t off,
                         OpenDir* dir, size_t children, ListingSource* out) {
    if (!dir->loaded || off == 0) {
      // Not loaded until this load succeeds: a rewound listing that fails to load is loaded again
      // at the next READDIR, whatever its offset, rather than read as empty.
      dir->loaded = false;
      dir->entries.clear();
      bool depends_on_content = false;
      out->listed_.from = static_cast<size_t>(off);
      out->listed_.max = children;
      if (int err = LoadDir(fs, ctx, ino, dir, dir->kept != nullptr ? &depends_on_content : nullptr,
                            children > 0 ? &out->listed_ : nullptr, &out->r_)) {
        return err;
      }
      // Listed from its start: what the kernel keeps of this open is this listing.
      if (dir->kept != nullptr && off == 0) {
        dir->kept->kernel_lists.store(true, std::memory_order_relaxed);
        dir->kept->kept_listing.Get().Listed(dir->kept_fill, !depends_on_content, SteadyNowNs());
      }
    }
    out->dir_ = dir;
    out->index_ = static_cast<size_t>(off);
    return 0;
  }
  static int ForLowerDirectory(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, off_t off,
                               const OpenDir* dir, ListingSource* out) {
    // `dir` is null once OPENDIR was answered ENOSYS: the directory is opened from its node.
    // Opened under a caller-independent policy that a reload has since replaced: a listing made
    // for this caller would enter the kernel's shared cache. Reopening the directory serves it.
    if (!CallerIndependent(ctx)) return ESTALE;
    if (int err = Resolve(fs, ino, &out->r_)) return err;
    if (int err = Verdict(ctx.Decide(OP_READ, out->r_.path, true, nullptr))) return err;
    if (int err = out->stream_.Open(dir != nullptr ? dir->fd.get() : out->r_.fd.get())) return err;
    if (off != 0) out->stream_.Seek(off);
    if (off == 0) out->r_.node->kernel_lists.store(true, std::memory_order_relaxed);
    out->fs_ = fs;
    out->ctx_ = &ctx;
    return 0;
  }

  // An open whose listing every caller shares (OpenDir::shared_listing): the lower directory
  // read afresh as above, serving only the entries every caller lists, so that whatever the
  // kernel caches from it is every caller's. A name added since the OPENDIR that not every
  // caller lists is left out of this open's listing (POSIX leaves it open whether entries added
  // after opendir show); the next OPENDIR finds the directory no longer listed alike.
  static int ForSharedListing(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, off_t off,
                              const OpenDir* dir, ListingSource* out) {
    if (int err = Resolve(fs, ino, &out->r_)) return err;
    if (int err = Verdict(ctx.Decide(OP_READ, out->r_.path, true, nullptr))) return err;
    if (int err = out->stream_.Open(dir->fd.get())) return err;
    if (off != 0) out->stream_.Seek(off);
    // Only directories are served, whose visibility no content changes.
    if (dir->kept != nullptr && off == 0) {
      dir->kept->kept_listing.Get().Listed(dir->kept_fill, /*content_free=*/true, SteadyNowNs());
    }
    out->fs_ = fs;
    out->ctx_ = &ctx;
    out->shared_only_ = true;
    return 0;
  }

  // The directory as resolved for this request, if the source resolved it (else null).
  const Resolved* resolved() const { return r_.fd.valid() ? &r_ : nullptr; }

  // With `child`, *child gets the child ListedEntry opened for the entry in this request, or null.
  int Next(DirEntry* entry, bool* end, ListedChild** child = nullptr) {
    *end = false;
    if (child != nullptr) *child = nullptr;
    if (dir_ != nullptr) {
      if (index_ >= dir_->entries.size()) {
        *end = true;
        return 0;
      }
      size_t i = index_ - listed_.from;
      if (child != nullptr && index_ >= listed_.from && i < listed_.children.size() &&
          listed_.children[i].child.identity) {
        *child = &listed_.children[i];
      }
      *entry = dir_->entries[index_++];
      return 0;
    }
    while (true) {
      errno = 0;
      dirent* ent = stream_.Next();
      if (ent == nullptr) {
        *end = true;
        return errno;
      }
      if (shared_only_ && !IsDot(ent->d_name) &&
          !ListedByEveryCaller(*ctx_, r_, stream_.fd(), ent)) {
        continue;
      }
      bool shown;
      if (int err = ListedEntry(fs_, *ctx_, r_, ent, entry, &shown, nullptr,
                                child != nullptr ? &current_ : nullptr)) {
        return err;
      }
      if (!shown) continue;
      entry->next = static_cast<off_t>(ent->d_off);
      if (child != nullptr && current_.child.fd.valid()) *child = &current_;
      return 0;
    }
  }

 private:
  OpenDir* dir_ = nullptr;  // the snapshot, or null
  size_t index_ = 0;
  Filesystem* fs_ = nullptr;
  const RequestContext* ctx_ = nullptr;
  Resolved r_;
  DirStream stream_;
  bool shared_only_ = false;  // serve only what every caller lists
  ListedChildren listed_;     // the snapshot's, when loaded by this request
  ListedChild current_;       // the lower directory's: the last entry's, with its fd
};

// READDIR and READDIRPLUS share the filtered listing; PLUS also looks every entry up (with the
// same decision as LOOKUP), so the kernel learns attributes without a LOOKUP per name. An entry
// this request's listing opened and judged is looked up from that child and those decisions
// (DoLookupListed), not opened, read and judged a second time.
void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi,
             bool plus) {
  OpRequest op(req, plus ? FUSE_READDIRPLUS : FUSE_READDIR);
  Filesystem* fs = op.fs();
  const RequestContext& ctx = op.ctx();
  ListingSource source;
  OpenDir* dir = DirOf(fi);
  // No reply carries more entries than this many of the smallest (a one-byte name); and at most
  // kMaxListedChildren are kept (a few hundred bytes each), those past it looked up afresh.
  constexpr size_t kMaxListedChildren = 256;
  size_t most_entries =
      plus ? std::min(size / (FUSE_NAME_OFFSET_DIRENTPLUS + 8), kMaxListedChildren) : 0;
  int opened = dir == nullptr || dir->kernel_caches
                   ? ListingSource::ForLowerDirectory(fs, ctx, ino, off, dir, &source)
               : dir->shared_listing
                   ? ListingSource::ForSharedListing(fs, ctx, ino, off, dir, &source)
                   : ListingSource::ForSnapshot(fs, ctx, ino, off, dir, most_entries, &source);
  if (opened != 0) return op.ReplyErr(opened);
  std::vector<char> buf(size);
  size_t used = 0;
  // READDIRPLUS: the directory its entries are looked up in: the one the source resolved for this
  // request, else resolved at the first lookup.
  Resolved parent;
  const Resolved* resolved = source.resolved();
  auto lookup = [&](const DirEntry& entry, ListedChild* listed, fuse_entry_param* e,
                    int64_t* fresh_until_before) {
    if (resolved == nullptr) {
      if (int err = Resolve(fs, ino, &parent)) return err;
      resolved = &parent;
    }
    // A name this request's listing opened and judged is not opened and read again.
    return listed != nullptr
               ? DoLookupListed(fs, ctx, *resolved, entry.name.c_str(), &listed->child,
                                listed->decided, e, fresh_until_before)
               : DoLookupIn(fs, ctx, *resolved, entry.name.c_str(), e, fresh_until_before);
  };
  while (true) {
    DirEntry entry;
    bool end;
    ListedChild* listed = nullptr;
    if (int err = source.Next(&entry, &end, plus ? &listed : nullptr)) {
      // What is in the buffer is sent and the kernel asks again from its last entry on.
      if (used == 0) return op.ReplyErr(err);
      break;
    }
    if (end) break;
    off_t next = entry.next;
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
    bool held_fresh = !dot && KernelHoldsFresh(fs, ctx, entry);
    if (dot || held_fresh) {
      // Nodeid 0 (e.ino): the kernel makes or changes no dentry; only the name and type matter.
      e.attr.st_ino = fs->PresentedIno(entry.dev, entry.ino);
      e.attr.st_mode = static_cast<mode_t>(DTTOIF(entry.type));
    } else if (int err = lookup(entry, listed, &e, &fresh_until_before)) {
      // Gone or hidden since the listing was taken: not an entry any more. Anything else (out of
      // fds, an I/O error) must not drop the entry in silence: what is in the buffer is sent
      // and the kernel asks again from this entry, or the error is the answer.
      if (err == ENOENT || err == EACCES || err == EPERM) {
        ctx.RefusalSuperseded();
        continue;
      }
      if (used == 0) return op.ReplyErr(err);
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
    if (held_fresh) {
      fs->stats().listing_entries_without_lookup.fetch_add(1, std::memory_order_relaxed);
    } else if (listed != nullptr && !dot) {
      fs->stats().listing_entries_from_listing.fetch_add(1, std::memory_order_relaxed);
    }
  }
  op.ReplyBuf(buf.data(), used);
}

void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Readdir(req, ino, size, off, fi, /*plus=*/false);
}

void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Readdir(req, ino, size, off, fi, /*plus=*/true);
}

void sfs_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  OpRequest op(req, FUSE_RELEASEDIR);
  if (OpenDir* dir = DirOf(fi)) {  // never null: no RELEASEDIR follows an OPENDIR answered ENOSYS
    if (dir->kept != nullptr) dir->kept->kept_listing.Get().End();
    op.fs()->Unregister(dir);
    delete dir;
  }
  op.ReplyErr(0);
}

void sfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  OpRequest op(req, FUSE_FSYNCDIR);
  base::UniqueFd opened;
  int fd;
  if (OpenDir* dir = DirOf(fi)) {
    fd = dir->fd.get();
  } else {
    // Opened without OPENDIR (fh 0): the directory is opened from its node for this request.
    Resolved r;
    if (int err = Resolve(op.fs(), ino, &r)) return op.ReplyErr(err);
    opened.reset(openat(r.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!opened.valid()) return op.ReplyErr(errno);
    fd = opened.get();
  }
  op.ReplyErr((datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : errno);
}

}  // namespace scopedfs::daemon
