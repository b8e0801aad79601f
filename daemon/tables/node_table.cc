// Inode table (see node_table.h).
#include "daemon/tables/node_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace scopedfs::daemon {
namespace {

struct HandleBuffer {
  struct file_handle header;
  unsigned char bytes[MAX_HANDLE_SZ];
};

}  // namespace

FileHandle HandleOf(int fd, int* mount_id) {
  HandleBuffer buf;
  buf.header.handle_bytes = MAX_HANDLE_SZ;
  FileHandle handle;
  if (name_to_handle_at(fd, "", &buf.header, mount_id, AT_EMPTY_PATH) != 0) return handle;
  handle.type = buf.header.handle_type;
  handle.bytes.assign(reinterpret_cast<const char*>(buf.header.f_handle), buf.header.handle_bytes);
  return handle;
}

ObjectIdentity IdentityOf(int fd, const struct stat& st) {
  ObjectIdentity identity;
  identity.handle = HandleOf(fd, &identity.mount_id);
  identity.id =
      ObjectId{st.st_dev, st.st_ino, HandleDigest(identity.handle.type, identity.handle.bytes)};
  return identity;
}

size_t NodeTable::BytesPerNode() {
  // The node, its table entry and the two hash-map slots that index it.
  return sizeof(Node) + sizeof(Entry) + sizeof(std::pair<NodeId, Entry>) +
         sizeof(std::pair<Key, NodeId>);
}

namespace {
// A duplicate (O_PATH) or a reopen with `flags` of the kept fd `fd`.
int ReopenKept(int fd, base::UniqueFd* out, int flags) {
  if (flags == O_PATH) {
    out->reset(fcntl(fd, F_DUPFD_CLOEXEC, 0));
  } else {
    out->reset(open(absl::StrCat("/proc/self/fd/", fd).c_str(), flags | O_CLOEXEC));
  }
  return out->valid() ? 0 : errno;
}
}  // namespace

void NodeTable::KeepRemoved(Node* node, base::UniqueFd fd) {
  if (kept_removed_->fetch_add(1) >= kMaxKeptRemoved) {
    kept_removed_->fetch_sub(1);
    return;
  }
  std::shared_ptr<std::atomic<int>> count = kept_removed_;
  auto kept = std::shared_ptr<const base::UniqueFd>(new base::UniqueFd(std::move(fd)),
                                                    [count](const base::UniqueFd* f) {
                                                      delete f;
                                                      count->fetch_sub(1);
                                                    });
  absl::MutexLock lock(&node->kept_mu);
  node->kept_fd = std::move(kept);
}

int NodeTable::OpenNode(const Node& node, base::UniqueFd* out, int flags) const {
  int err = OpenNodeItself(node, out, flags);
  if (err == 0) return 0;
  std::shared_ptr<const base::UniqueFd> kept;
  {
    absl::MutexLock lock(&node.kept_mu);
    kept = node.kept_fd;
  }
  return kept == nullptr ? err : ReopenKept(kept->get(), out, flags);
}

int NodeTable::OpenNodeItself(const Node& node, base::UniqueFd* out, int flags) const {
  if (node.handle.empty()) {
    if (flags == O_PATH) {
      out->reset(fcntl(node.fd.get(), F_DUPFD_CLOEXEC, 0));
    } else {
      out->reset(open(absl::StrCat("/proc/self/fd/", node.fd.get()).c_str(), flags | O_CLOEXEC));
    }
    return out->valid() ? 0 : errno;
  }
  return OpenByHandle(node.handle, out, flags);
}

int NodeTable::OpenHandle(const FileHandle& handle, int mount_id, base::UniqueFd* out,
                          int flags) const {
  if (handle.empty() || mount_id != root_mount_id_) return EXDEV;
  return OpenByHandle(handle, out, flags);
}

int NodeTable::OpenByHandle(const FileHandle& handle, base::UniqueFd* out, int flags) const {
  HandleBuffer buf;
  if (handle.bytes.size() > MAX_HANDLE_SZ) return EINVAL;
  buf.header.handle_bytes = static_cast<unsigned>(handle.bytes.size());
  buf.header.handle_type = handle.type;
  memcpy(buf.header.f_handle, handle.bytes.data(), handle.bytes.size());
  out->reset(open_by_handle_at(mount_fd_.get(), &buf.header, flags | O_CLOEXEC));
  return out->valid() ? 0 : errno;
}

NodeTable::NodeTable(base::UniqueFd root_fd, dev_t dev, ino_t ino) {
  mount_fd_.reset(openat(root_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  FileHandle root_handle = HandleOf(root_fd.get(), &root_mount_id_);
  // Without a mount fd no handle could be opened: every node keeps its fd instead.
  if (!mount_fd_.valid()) root_mount_id_ = -2;
  auto root = std::make_shared<Node>();
  root->id = kRootNodeId;
  root->dev = dev;
  root->ino = ino;
  root->generation = HandleDigest(root_handle.type, root_handle.bytes);
  root->type = S_IFDIR;
  root->fd = std::move(root_fd);
  absl::MutexLock lock(&mu_);
  Entry& e = entries_[kRootNodeId];
  e.node = std::move(root);
  e.lookups = 1;  // the kernel never forgets the root
  by_key_[Key{dev, ino, kRawView}] = kRootNodeId;
}

std::shared_ptr<Node> NodeTable::Upsert(NodeId parent, const std::string& name, base::UniqueFd fd,
                                        dev_t dev, ino_t ino, mode_t type, View view) {
  // Outside the lock: a syscall.
  ObjectIdentity identity;
  identity.handle = HandleOf(fd.get(), &identity.mount_id);
  identity.id = ObjectId{dev, ino, HandleDigest(identity.handle.type, identity.handle.bytes)};
  return Upsert(parent, name, std::move(fd), std::move(identity), type, view);
}

std::shared_ptr<Node> NodeTable::Upsert(NodeId parent, const std::string& name, base::UniqueFd fd,
                                        ObjectIdentity identity, mode_t type, View view) {
  dev_t dev = identity.id.dev;
  ino_t ino = identity.id.ino;
  // The identity is the handle the filesystem gives, kept or not (ObjectIdOf computes the same).
  uint64_t generation = identity.id.generation;
  // A handle opens only through a mount fd of its own filesystem, so an object elsewhere keeps
  // its fd instead.
  FileHandle handle = std::move(identity.handle);
  if (identity.mount_id != root_mount_id_) handle = {};
  std::vector<std::shared_ptr<Node>> doomed;  // released after the lock: closing an fd may block
  absl::MutexLock lock(&mu_);
  Key key{dev, ino, view};
  auto it = by_key_.find(key);
  if (it != by_key_.end() && (entries_[it->second].node->generation != generation ||
                              entries_[it->second].node->type != type)) {
    // Another object had this number (the root never gives its number away while mounted).
    ++reused_numbers_;
    if (it->second != kRootNodeId) {
      by_key_.erase(it);
      it = by_key_.end();
    }
  }
  if (it != by_key_.end()) {
    Entry& e = entries_[it->second];
    ++e.lookups;
    if (it->second != kRootNodeId) {
      if (!e.unlinked && (e.parent != parent || e.name != name)) {
        if (e.former_names.size() >= kMaxFormerNames) e.former_names.erase(e.former_names.begin());
        e.former_names.emplace_back(e.parent, e.name);
      }
      Reparent(e, parent, &doomed);
      e.name = name;
      e.unlinked = false;
    }
    return e.node;
  }
  auto node = std::make_shared<Node>();
  node->id = next_id_++;
  node->dev = dev;
  node->ino = ino;
  node->generation = generation;
  node->view = view;
  node->type = type;
  node->handle = std::move(handle);
  if (node->handle.empty()) node->fd = std::move(fd);
  Entry& e = entries_[node->id];
  e.node = node;
  e.lookups = 1;
  Reparent(e, parent, &doomed);
  e.name = name;
  by_key_[key] = node->id;
  return node;
}

std::shared_ptr<Node> NodeTable::Get(NodeId id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.node;
}

std::shared_ptr<Node> NodeTable::FindNumber(dev_t dev, ino_t ino, View view) const {
  absl::MutexLock lock(&mu_);
  auto key = by_key_.find(Key{dev, ino, view});
  if (key == by_key_.end()) return nullptr;
  auto it = entries_.find(key->second);
  return it == entries_.end() ? nullptr : it->second.node;
}

std::shared_ptr<Node> NodeTable::Find(const ObjectId& id, View view) const {
  std::shared_ptr<Node> node = FindNumber(id.dev, id.ino, view);
  return node != nullptr && node->generation == id.generation ? node : nullptr;
}

uint64_t NodeTable::reused_numbers() const {
  absl::MutexLock lock(&mu_);
  return reused_numbers_;
}

void NodeTable::Forget(NodeId id, uint64_t n) {
  std::vector<std::shared_ptr<Node>> doomed;  // released after the lock: closing an fd may block
  absl::MutexLock lock(&mu_);
  if (id == kRootNodeId) return;
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.lookups = n >= e.lookups ? 0 : e.lookups - n;
  DropIfUnused(id, &doomed);
}

void NodeTable::Reparent(Entry& e, NodeId parent, std::vector<std::shared_ptr<Node>>* doomed) {
  if (e.parent == parent && e.pins_parent) return;
  NodeId old = e.pins_parent ? e.parent : 0;
  e.parent = parent;
  e.pins_parent = false;
  // A parent recorded below the node itself (the lower tree was rearranged behind the daemon's
  // back, so an ancestor's record is stale) would make a cycle of pins that nothing releases: it
  // is recorded but not pinned.
  bool cycle = false;
  NodeId at = parent;
  for (size_t steps = 0; at != kRootNodeId && !cycle; ++steps) {
    auto it = entries_.find(at);
    if (it == entries_.end()) break;
    // A chain longer than the table holds is a cycle among other (stale) records.
    cycle = it->second.node.get() == e.node.get() || steps > entries_.size();
    at = it->second.parent;
  }
  if (auto p = entries_.find(parent); p != entries_.end() && !cycle) {
    ++p->second.children;
    e.pins_parent = true;
  }
  if (auto p = entries_.find(old); p != entries_.end()) {
    --p->second.children;
    DropIfUnused(old, doomed);
  }
}

void NodeTable::DropIfUnused(NodeId id, std::vector<std::shared_ptr<Node>>* doomed) {
  // Each node dropped unpins its parent, which may then go too: up the chain, at most its depth.
  while (id != kRootNodeId) {
    auto it = entries_.find(id);
    if (it == entries_.end() || it->second.lookups > 0 || it->second.children > 0) return;
    Entry& e = it->second;
    NodeId parent = e.pins_parent ? e.parent : 0;
    // Only the newest node of a number is indexed (an older object's was unindexed when its
    // number went to the new one).
    Key key{e.node->dev, e.node->ino, e.node->view};
    if (auto k = by_key_.find(key); k != by_key_.end() && k->second == id) by_key_.erase(k);
    doomed->push_back(std::move(e.node));
    entries_.erase(it);
    auto p = entries_.find(parent);
    if (p == entries_.end()) return;
    --p->second.children;
    id = parent;
  }
}

bool NodeTable::PathOf(NodeId id, std::string* path) const { return Path(id, false, path); }

bool NodeTable::LastPathOf(NodeId id, std::string* path) const { return Path(id, true, path); }

NodeId NodeTable::ParentOf(NodeId id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.parent;
}

bool NodeTable::NamedAs(NodeId id, NodeId parent, absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  return it != entries_.end() && !it->second.unlinked && it->second.parent == parent &&
         it->second.name == name;
}

bool NodeTable::Path(NodeId id, bool last_known, std::string* path) const {
  absl::MutexLock lock(&mu_);
  std::vector<const std::string*> names;
  NodeId at = id;
  // A chain longer than the number of nodes would be a cycle; refuse rather than spin.
  for (size_t steps = 0; at != kRootNodeId; ++steps) {
    auto it = entries_.find(at);
    if (it == entries_.end() || (it->second.unlinked && !last_known) || steps > entries_.size()) {
      return false;
    }
    names.push_back(&it->second.name);
    at = it->second.parent;
  }
  path->clear();
  for (auto n = names.rbegin(); n != names.rend(); ++n) {
    if (!path->empty()) path->push_back('/');
    path->append(**n);
  }
  return true;
}

void NodeTable::Moved(const ObjectId& object, NodeId old_parent, const std::string& old_name,
                      NodeId new_parent, const std::string& new_name) {
  std::vector<std::shared_ptr<Node>> doomed;  // released after the lock
  absl::MutexLock lock(&mu_);
  for (View view : {kRawView, kRedactedView}) {
    auto key = by_key_.find(Key{object.dev, object.ino, view});
    if (key == by_key_.end() || key->second == kRootNodeId) continue;
    Entry& e = entries_[key->second];
    if (e.node->generation != object.generation) continue;
    if (e.parent != old_parent || e.name != old_name) continue;
    Reparent(e, new_parent, &doomed);
    e.name = new_name;
    e.unlinked = false;
  }
}

void NodeTable::Unlinked(const ObjectId& object, NodeId parent, const std::string& name) {
  absl::MutexLock lock(&mu_);
  for (View view : {kRawView, kRedactedView}) {
    auto key = by_key_.find(Key{object.dev, object.ino, view});
    if (key == by_key_.end() || key->second == kRootNodeId) continue;
    Entry& e = entries_[key->second];
    if (e.node->generation != object.generation) continue;
    if (e.parent == parent && e.name == name) e.unlinked = true;
  }
}

std::vector<std::pair<NodeId, std::string>> NodeTable::Names() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<NodeId, std::string>> names;
  names.reserve(entries_.size());
  for (const auto& [id, e] : entries_) {
    if (id != kRootNodeId && !e.unlinked) names.emplace_back(e.parent, e.name);
    names.insert(names.end(), e.former_names.begin(), e.former_names.end());
  }
  return names;
}

std::vector<NodeTable::IdAndKind> NodeTable::Ids() const {
  absl::MutexLock lock(&mu_);
  std::vector<IdAndKind> ids;
  ids.reserve(entries_.size());
  for (const auto& [id, e] : entries_) ids.push_back({id, S_ISDIR(e.node->type)});
  return ids;
}

size_t NodeTable::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace scopedfs::daemon
