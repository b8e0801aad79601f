// Passthrough backing files (see backing_files.h).
#include "daemon/tables/backing_files.h"

#include <cstdio>
#include <vector>

namespace scopedfs::daemon {

bool BackingFiles::active() const {
  BackingIdSource* source = source_.load();
  return wanted_ && source != nullptr && source->passthrough_enabled();
}

int BackingFiles::Attach(const std::shared_ptr<Node>& node, int fd, bool* userspace) {
  absl::MutexLock lock(&node->backing_mu);
  *userspace = false;
  if (node->backing_refs > 0) {
    ++node->backing_refs;
    return node->backing_id;
  }
  if (node->backing_id >= 0 && node->userspace_opens == 0 && active()) {
    // Idle: taken again before any reply names it (backing_files.h). `node` is the caller's
    // too, so the list's reference is not its last.
    node->backing_refs = 1;
    absl::MutexLock idle_lock(&idle_mu_);
    Unlist(node.get());
    return node->backing_id;
  }
  if (!active() || node->userspace_opens > 0) {
    ++node->userspace_opens;
    *userspace = true;
    return -1;
  }
  absl::StatusOr<int> id = source_.load()->BackingOpen(fd);
  if (!id.ok()) {
    if (!warned_.exchange(true)) {
      fprintf(stderr,
              "scopedfsd: passthrough unavailable, serving reads and writes in userspace: %s\n",
              std::string(id.status().message()).c_str());
    }
    ++node->userspace_opens;
    *userspace = true;
    return -1;
  }
  node->backing_id = *id;
  node->backing_refs = 1;
  if (stats_ != nullptr) {
    stats_->backing_files.fetch_add(1);
    stats_->backing_registrations.fetch_add(1);
  }
  return *id;
}

void BackingFiles::Detach(const std::shared_ptr<Node>& node, bool passthrough) {
  std::vector<std::shared_ptr<Node>> evicted;  // closed after the locks, least recent first
  {
    absl::MutexLock lock(&node->backing_mu);
    if (!passthrough) {
      --node->userspace_opens;
      return;
    }
    if (--node->backing_refs > 0) return;
    if (!node->backing_may_idle) {
      BackingIdSource* source = source_.load();
      if (source != nullptr) source->BackingClose(node->backing_id).IgnoreError();
      node->backing_id = -1;
      if (stats_ != nullptr) stats_->backing_files.fetch_sub(1);
      return;
    }
    absl::MutexLock idle_lock(&idle_mu_);
    if (!idle_index_.contains(node.get())) {
      idle_index_[node.get()] = idle_.insert(idle_.end(), node);
    }
    while (idle_.size() > max_idle_) evicted.push_back(Unlist(idle_.front().get()));
    if (stats_ != nullptr) stats_->backing_files_idle.store(idle_.size());
  }
  for (const std::shared_ptr<Node>& n : evicted) CloseIfIdle(*n);
}

void BackingFiles::DropIdle(const std::shared_ptr<Node>& node) {
  {
    absl::MutexLock lock(&node->backing_mu);
    node->backing_may_idle = false;
  }
  CloseIfIdle(*node);
}

void BackingFiles::CloseIfIdle(Node& node) {
  std::shared_ptr<Node> unlisted;  // freed after the locks (it may be the node's last reference)
  absl::MutexLock lock(&node.backing_mu);
  if (node.backing_refs > 0 || node.backing_id < 0) return;
  BackingIdSource* source = source_.load();
  if (source != nullptr) source->BackingClose(node.backing_id).IgnoreError();
  node.backing_id = -1;
  if (stats_ != nullptr) stats_->backing_files.fetch_sub(1);
  absl::MutexLock idle_lock(&idle_mu_);
  unlisted = Unlist(&node);
}

std::shared_ptr<Node> BackingFiles::Unlist(const Node* node) {
  auto it = idle_index_.find(node);
  if (it == idle_index_.end()) return nullptr;
  auto pos = it->second;
  idle_index_.erase(it);
  std::shared_ptr<Node> unlisted = std::move(*pos);
  idle_.erase(pos);
  if (stats_ != nullptr) stats_->backing_files_idle.store(idle_.size());
  return unlisted;
}

size_t BackingFiles::idle() const {
  absl::MutexLock lock(&idle_mu_);
  return idle_.size();
}

}  // namespace scopedfs::daemon
