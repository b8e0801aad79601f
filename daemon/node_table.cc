// Inode table (see node_table.h).
#include "daemon/node_table.h"

#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace scopedfs::daemon {

NodeTable::NodeTable(base::UniqueFd root_fd, dev_t dev, ino_t ino) {
  auto root = std::make_shared<Node>();
  root->id = kRootNodeId;
  root->dev = dev;
  root->ino = ino;
  root->type = S_IFDIR;
  root->fd = std::move(root_fd);
  absl::MutexLock lock(&mu_);
  Entry& e = entries_[kRootNodeId];
  e.node = std::move(root);
  e.lookups = 1;  // the kernel never forgets the root
  by_key_[Key{dev, ino, kRawView}] = kRootNodeId;
}

std::shared_ptr<Node> NodeTable::Upsert(NodeId parent, const std::string& name, base::UniqueFd fd,
                                        dev_t dev, ino_t ino, mode_t type, ViewMask view) {
  absl::MutexLock lock(&mu_);
  Key key{dev, ino, view};
  auto it = by_key_.find(key);
  if (it != by_key_.end()) {
    Entry& e = entries_[it->second];
    ++e.lookups;
    if (it->second != kRootNodeId) {
      e.parent = parent;
      e.name = name;
      e.unlinked = false;
    }
    return e.node;
  }
  auto node = std::make_shared<Node>();
  node->id = next_id_++;
  node->dev = dev;
  node->ino = ino;
  node->view = view;
  node->type = type;
  node->fd = std::move(fd);
  Entry& e = entries_[node->id];
  e.node = node;
  e.lookups = 1;
  e.parent = parent;
  e.name = name;
  by_key_[key] = node->id;
  return node;
}

std::shared_ptr<Node> NodeTable::Get(NodeId id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.node;
}

void NodeTable::Forget(NodeId id, uint64_t n) {
  std::shared_ptr<Node> doomed;  // released after the lock: closing an fd may block
  absl::MutexLock lock(&mu_);
  if (id == kRootNodeId) return;
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.lookups = n >= e.lookups ? 0 : e.lookups - n;
  if (e.lookups > 0) return;
  doomed = std::move(e.node);
  by_key_.erase(Key{doomed->dev, doomed->ino, doomed->view});
  entries_.erase(it);
}

bool NodeTable::PathOf(NodeId id, std::string* path) const {
  absl::MutexLock lock(&mu_);
  std::vector<const std::string*> names;
  NodeId at = id;
  // A chain longer than the number of nodes would be a cycle; refuse rather than spin.
  for (size_t steps = 0; at != kRootNodeId; ++steps) {
    auto it = entries_.find(at);
    if (it == entries_.end() || it->second.unlinked || steps > entries_.size()) return false;
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

void NodeTable::Moved(dev_t dev, ino_t ino, NodeId old_parent, const std::string& old_name,
                      NodeId new_parent, const std::string& new_name) {
  absl::MutexLock lock(&mu_);
  for (ViewMask view : {kRawView, kRedactedView}) {
    auto key = by_key_.find(Key{dev, ino, view});
    if (key == by_key_.end() || key->second == kRootNodeId) continue;
    Entry& e = entries_[key->second];
    if (e.parent != old_parent || e.name != old_name) continue;
    e.parent = new_parent;
    e.name = new_name;
    e.unlinked = false;
  }
}

void NodeTable::Unlinked(dev_t dev, ino_t ino, NodeId parent, const std::string& name) {
  absl::MutexLock lock(&mu_);
  for (ViewMask view : {kRawView, kRedactedView}) {
    auto key = by_key_.find(Key{dev, ino, view});
    if (key == by_key_.end() || key->second == kRootNodeId) continue;
    Entry& e = entries_[key->second];
    if (e.parent == parent && e.name == name) e.unlinked = true;
  }
}

size_t NodeTable::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace scopedfs::daemon
