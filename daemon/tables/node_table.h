// Inode table: one FUSE nodeid per (lower inode, view). Each node keeps the lower object's kernel
// file handle (name_to_handle_at), its parent and name (so the policy can be asked about a path),
// the kernel's lookup count, and the passthrough backing id shared by all its opens.
//
// No fd per node: a handle is a few bytes that name the inode itself (not a path, so no symlink
// or rename can redirect it), and OpenNode turns it into an O_PATH fd for the length of one
// request (open_by_handle_at, which needs CAP_DAC_READ_SEARCH). The daemon's fd count is
// therefore bounded by its open handles plus a constant, whatever the size of the tree. Only the
// root, and objects on a filesystem that cannot export handles (or another filesystem than the
// root's), keep an O_PATH fd.
//
// Paths follow the names the mount gives: the filesystem reports every rename and unlink it makes
// (Moved, Unlinked) under its namespace lock, and a lookup records the name it found. A decision
// made under the namespace lock (creates, links, renames, removals) therefore sees a node's present
// name; one made without it (Resolve: open, getattr, setattr, reads of a listing) may see the name
// a node had just before a concurrent rename, as a native open racing a rename reaches the file
// by either name. Changes made in the lower tree behind the daemon are seen at the next lookup.
//
// A node pins its parent, as MediaProvider's nodes do: the parent stays in the table (with its
// handle) while any node records it as parent, even after the kernel forgot it. A file with hard
// links in two directories is one node, recorded under the name it was last looked up by; the
// kernel may forget that directory while it still reaches the file through the other name, and
// the node's path goes through the forgotten one.
//
// Lock order: NodeTable::mu_ first, then a node's backing_mu (the whole order: filesystem.h).
// Never call into FUSE or the policy engine while holding mu_.
#ifndef SCOPEDFS_DAEMON_TABLES_NODE_TABLE_H_
#define SCOPEDFS_DAEMON_TABLES_NODE_TABLE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "daemon/tables/kept_listing.h"
#include "daemon/tables/object_id.h"

namespace scopedfs::daemon {

// What a node shows. 0 is the raw view: the lower file's bytes. kRedactedView is the lower file
// with every location range the parsers find filled (and the scan's fallback ranges when the file
// cannot be vouched for). Each view of a lower file is its own kernel inode, so the page cache of a
// redacted view only ever holds redacted bytes, and passthrough (raw view only) never shares an
// inode with a mediated open.
enum View : uint32_t {
  kRawView = 0,
  // Every redacted reader gets the same bytes (all location the parsers find is filled, plus the
  // fallback ranges when the file cannot be vouched for), so one redacted view suffices.
  kRedactedView = 1,
};

// A version of a lower file's content: its size, mtime and ctime. A write or truncate changes at
// least one of them, except a same-size rewrite within one timestamp tick, which leaves all three
// as they were (facts_cache.h: such a version must settle before its bytes are vouched for).
struct FileVersion {
  off_t size = -1;  // -1: no version (matches no file)
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileVersion& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns;
  }
  bool operator!=(const FileVersion& o) const { return !(*this == o); }
};

using NodeId = uint64_t;
inline constexpr NodeId kRootNodeId = 1;  // FUSE_ROOT_ID

// A lower object's kernel file handle; empty when the filesystem could not give one.
struct FileHandle {
  int type = 0;
  std::string bytes;
  bool empty() const { return bytes.empty(); }
};

// The handle of the object `fd` (any fd of it, O_PATH included) and the mount id it belongs to;
// an empty handle if the filesystem cannot export one.
FileHandle HandleOf(int fd, int* mount_id);

// What one name_to_handle_at tells of an object: its handle, the mount it is on, and the ObjectId
// that handle gives (ObjectIdOf's). A request that needs the object's identity for the facts cache
// and then publishes it in the node table asks the kernel once and hands this on.
struct ObjectIdentity {
  ObjectId id;
  FileHandle handle;
  int mount_id = -1;
};
// The identity of the object `fd` (any fd of it) as stat'ed in `st`. One name_to_handle_at.
ObjectIdentity IdentityOf(int fd, const struct stat& st);

struct Node {
  NodeId id = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t generation = 0;  // ObjectId::generation: a node is one object, not a number
  View view = kRawView;
  mode_t type = 0;  // S_IFMT bits
  FileHandle handle;
  base::UniqueFd fd;  // only without a handle: O_PATH | O_NOFOLLOW on the lower object

  ObjectId object() const { return ObjectId{dev, ino, generation}; }

  // Passthrough: one backing id per node, shared by its opens (kernel rule), kept idle after
  // the last (backing_files.h).
  absl::Mutex backing_mu;
  int backing_id ABSL_GUARDED_BY(backing_mu) = -1;
  int backing_refs ABSL_GUARDED_BY(backing_mu) = 0;
  // Opens served in userspace (no backing id): while any is open, no open of the node gets one.
  int userspace_opens ABSL_GUARDED_BY(backing_mu) = 0;
  // False once the file lost a name through the mount: its id is closed with its last open
  // rather than kept idle (backing_files.h), so an unlinked file's space goes as natively.
  bool backing_may_idle ABSL_GUARDED_BY(backing_mu) = true;
  // Redacted views: the lower file version the kernel's page cache of this inode was filled
  // from, so an open of an unchanged file keeps the cache.
  FileVersion cached_version ABSL_GUARDED_BY(backing_mu);
  // Redacted views whose attributes are cached with their name (attrs_cached_with_name): the
  // version of the lower file whose attributes the kernel was last given for this inode, so an
  // open that finds another version (a change through the raw view, which the kernel applies to
  // the raw inode only) drops them first. Empty: not known.
  FileVersion kernel_attrs_version ABSL_GUARDED_BY(backing_mu);

  // Until when (steady clock, ns) the kernel holds this node's name and current attributes, as
  // far as the daemon can tell; 0: not known to. Set through resolve.h's
  // MarkKernelAttrs* helpers; READDIRPLUS reads it. Only ever a hint, never a decision.
  std::atomic<int64_t> kernel_fresh_until_ns{0};
  // Directories: the kernel may hold this directory's listing in its cache (FOPEN_CACHE_DIR, a
  // listing from the start was served to an open that caches it). A hint, as above.
  std::atomic<bool> kernel_lists{false};
  // Directories: whose listing the kernel may keep of it, and which opens may read it
  // (kept_listing.h; ops_dir.cc decides who may keep one).
  KeptListingSlot kept_listing;
  // Directories: the creator recorded for it (ops_dir.cc, CreatorOf), once read; -1: not read,
  // or none recorded (read again: a record is written just after the directory is made).
  std::atomic<int64_t> creator{-1};
  // FilesystemOptions::mount_reached_by_one_user: the last LOOKUP of this node cached its name
  // for every caller of the storage's user, so its attributes may be cached as long
  // (views.h, CachesAttrsWithName). Set by PublishEntry and DoLookup only.
  std::atomic<bool> attrs_cached_with_name{false};
  // Directories removed through the mount while no directory open keeps a lower fd (OPENDIR
  // answered ENOSYS, ops_dir.cc): an O_PATH fd of the removed directory, so a caller holding it
  // open still reaches it (fstat answers as natively) until the kernel forgets the node
  // (NodeTable::KeepRemoved). Closed with the node.
  mutable absl::Mutex kept_mu;
  std::shared_ptr<const base::UniqueFd> kept_fd ABSL_GUARDED_BY(kept_mu);
};

class NodeTable {
 public:
  // `root_fd` is an O_PATH directory fd of the lower root; the table owns it.
  NodeTable(base::UniqueFd root_fd, dev_t dev, ino_t ino);

  // The node for the object `fd` (an O_PATH fd of it, stat'ed as dev, ino, type) in `view`,
  // created if new, with its lookup count raised by one. If it exists, the node is moved to
  // (parent, name). A new node keeps the object's handle, or the fd itself when there is no usable
  // handle. A node of the same (dev, ino, view) whose handle differs is another object, one that
  // had the number before (object_id.h): it is left to the kernel's holds on it, answering ESTALE
  // as a removed object does, and the new object gets a node of its own that shares nothing with
  // it (backing id, cached version, kept fd).
  std::shared_ptr<Node> Upsert(NodeId parent, const std::string& name, base::UniqueFd fd, dev_t dev,
                               ino_t ino, mode_t type, View view);
  // The same with the object's identity already read from `fd` (IdentityOf): no syscall.
  std::shared_ptr<Node> Upsert(NodeId parent, const std::string& name, base::UniqueFd fd,
                               ObjectIdentity identity, mode_t type, View view);
  // Whether Upsert keeps the object of `identity` by its handle (a handle of the root's
  // filesystem), so that it needs no fd of it: an fd given along is only closed.
  bool KeepsByHandle(const ObjectIdentity& identity) const {
    return !identity.handle.empty() && identity.mount_id == root_mount_id_;
  }
  std::shared_ptr<Node> Get(NodeId id) const;
  // The node of the object `id` in `view`, if the table has one; counts no lookup.
  std::shared_ptr<Node> Find(const ObjectId& id, View view) const;
  // The newest node with the number (dev, ino) in `view`, whichever object it is: for hints only
  // (never for a decision, nor to act on the object).
  std::shared_ptr<Node> FindNumber(dev_t dev, ino_t ino, View view) const;
  // An O_PATH fd of the node's lower object, for one request: from its handle, or a duplicate of
  // the fd it keeps. Returns 0 or an errno (ESTALE: the object is gone). Other `flags` open the
  // object itself with them (the kept fd is reopened through /proc/self/fd).
  int OpenNode(const Node& node, base::UniqueFd* out, int flags = O_PATH) const;
  // An fd of the object whose handle is `handle` (HandleOf), if it is on the root's filesystem
  // (mount `mount_id`): 0, ESTALE when the object is gone, EXDEV for another filesystem's.
  int OpenHandle(const FileHandle& handle, int mount_id, base::UniqueFd* out,
                 int flags = O_PATH) const;
  // Keeps `fd`, an O_PATH fd of the directory `node` that was just removed, for OpenNode once its
  // handle no longer opens, until the node goes. At most kMaxKeptRemoved at once (then nothing is
  // kept and the removed directory answers ESTALE, as one removed behind the daemon's back).
  static constexpr int kMaxKeptRemoved = 1024;
  static constexpr size_t kMaxFormerNames = 4;
  void KeepRemoved(Node* node, base::UniqueFd fd);
  // Bytes one remembered node costs, not counting its name and handle bytes or allocator
  // rounding (docs/performance.md has the measured figure).
  static size_t BytesPerNode();
  // Kernel FORGET: drop `n` lookups; the node goes when none remain (and no one holds it).
  void Forget(NodeId id, uint64_t n);
  // Storage path of a node relative to the root ("" for the root); false if the node or an
  // ancestor is gone (unlinked directory).
  bool PathOf(NodeId id, std::string* path) const;
  // PathOf, but a node whose name (or an ancestor's) was unlinked gets the path it had then:
  // for an object still held open after its last name went. False if the node or an ancestor
  // is no longer known.
  bool LastPathOf(NodeId id, std::string* path) const;
  // The directory the node was last looked up in; 0 if the table does not know the node (or it is
  // the root).
  NodeId ParentOf(NodeId id) const;
  // Whether the node's present name (the last the kernel was given for it, not unlinked since) is
  // `name` in `parent`.
  bool NamedAs(NodeId id, NodeId parent, absl::string_view name) const;
  // After a successful rename through the mount: every view of lower object `object` that the
  // table knows as (old_parent, old_name) is now (new_parent, new_name). A node known under
  // another of its hard links keeps that name.
  void Moved(const ObjectId& object, NodeId old_parent, const std::string& old_name,
             NodeId new_parent, const std::string& new_name);
  // After a successful unlink, rmdir or rename over (parent, name): views of `object` known by
  // that name can no longer be resolved to a path until a lookup names them again.
  void Unlinked(const ObjectId& object, NodeId parent, const std::string& name);
  // How many times a lookup met a number the table knew as another object (object_id.h).
  uint64_t reused_numbers() const;
  // Fds KeepRemoved holds now.
  int kept_removed() const { return kept_removed_->load(); }
  size_t size() const;
  // Every (parent, name) the kernel may hold a dentry for, and every node id: what a policy
  // reload must invalidate.
  std::vector<std::pair<NodeId, std::string>> Names() const;
  // Every node the kernel holds, and whether it is a directory (whose pages are its listing).
  struct IdAndKind {
    NodeId id;
    bool directory;
  };
  std::vector<IdAndKind> Ids() const;

 private:
  struct Entry {
    std::shared_ptr<Node> node;
    uint64_t lookups = 0;
    NodeId parent = 0;
    std::string name;
    bool unlinked = false;
    // Names it had before a lookup found it under another (a rename behind the daemon's back, a
    // hard link, another spelling): the kernel may still hold a dentry of each, which nothing it
    // asks the daemon reaches, so what must drop every cached name drops these too (Names). At
    // most kMaxFormerNames, the latest.
    std::vector<std::pair<NodeId, std::string>> former_names;
    uint64_t children = 0;     // entries that pin this one as their parent
    bool pins_parent = false;  // counted in its parent's children (Reparent)
  };
  struct Key {
    dev_t dev;
    ino_t ino;
    View view;
    bool operator==(const Key& o) const { return dev == o.dev && ino == o.ino && view == o.view; }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.dev, k.ino, k.view);
    }
  };

  // OpenNode from the node's handle or fd alone.
  int OpenNodeItself(const Node& node, base::UniqueFd* out, int flags) const;
  int OpenByHandle(const FileHandle& handle, base::UniqueFd* out, int flags) const;
  // PathOf, and with `last_known` LastPathOf.
  bool Path(NodeId id, bool last_known, std::string* path) const;
  // Makes `parent` the parent of `e`, pinning it and unpinning the old one (which goes to
  // `doomed` if nothing else keeps it).
  void Reparent(Entry& e, NodeId parent, std::vector<std::shared_ptr<Node>>* doomed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `id` if the kernel holds no lookup of it and no entry names it as parent, then its
  // parent on the same terms, and so on up. Nodes go to `doomed`, to be freed after the lock.
  void DropIfUnused(NodeId id, std::vector<std::shared_ptr<Node>>* doomed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // open_by_handle_at's mount fd for every handle of the root's filesystem: a real open of the
  // root directory (the kernel does not take an O_PATH fd there).
  base::UniqueFd mount_fd_;
  int root_mount_id_ = -1;
  mutable absl::Mutex mu_;
  NodeId next_id_ ABSL_GUARDED_BY(mu_) = kRootNodeId + 1;
  absl::flat_hash_map<NodeId, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // The newest node of each number and view. An older object's node (its number was reused while
  // the kernel held it) stays in entries_, but not here.
  absl::flat_hash_map<Key, NodeId> by_key_ ABSL_GUARDED_BY(mu_);
  uint64_t reused_numbers_ ABSL_GUARDED_BY(mu_) = 0;
  // Fds kept by KeepRemoved now (each one's deleter counts it down).
  std::shared_ptr<std::atomic<int>> kept_removed_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_NODE_TABLE_H_
