// Passthrough backing files: which opens of a node get kernel passthrough, and the one backing id
// per node that all of them share (the kernel allows one backing file per inode). Every open of a
// node must agree: the kernel answers a mix of passthrough and userspace opens with EIO, so a node
// with userspace opens never starts passthrough, and the reverse.
//
// A node's backing id outlives its last open, idle, so that the next open of the file costs no
// FUSE_DEV_IOC_BACKING_OPEN and no BACKING_CLOSE (an open+close of a file is then the lower
// open and close alone). Why that is safe, from fs/fuse (passthrough.c, backing.c, iomode.c):
// - the kernel looks a backing id up once, while it finishes the open that the OPEN reply
//   names it in (fuse_passthrough_open); that open then holds a backing file of its own,
//   reopened from the registered file's path with the opener's flags and the daemon's
//   credentials of registration time, so an id registered from a read-only fd serves a writer
//   too, and the inode holds the registered file while it has passthrough opens;
// - so an id may be closed once no OPEN reply that names it can still be unfinished: every
//   open handed the id holds a reference until its RELEASE, which the kernel sends only after
//   it finished (or failed: fuse_sync_release) the open; an idle id (no references) is named
//   by no reply in flight, and Attach takes a reference before any reply names it again;
// - an inode has one backing file while it has passthrough opens (another id: EBUSY), so a
//   node never swaps ids while it is referenced; once idle, its inode has let go of it.
// Bounded: at most kMaxIdle idle ids (the least recently used goes first); each is a file the
// kernel keeps open (no fd of the daemon's). A file unlinked or renamed over through the mount
// loses its idle id at once (DropIdle), so its space is freed as natively, and so does one whose
// inode the kernel forgets (FORGET: no later open can use that node); one removed behind the
// daemon's back keeps its space until then, or until its id is evicted.
#ifndef SCOPEDFS_DAEMON_TABLES_BACKING_FILES_H_
#define SCOPEDFS_DAEMON_TABLES_BACKING_FILES_H_

#include <atomic>
#include <list>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "daemon/kernel/backing_ids.h"
#include "daemon/observe/stats.h"
#include "daemon/tables/node_table.h"

namespace scopedfs::daemon {

class BackingFiles {
 public:
  static constexpr size_t kMaxIdle = 4096;

  // `wanted`: passthrough was asked for (--passthrough). `stats` (may be null) counts the
  // registered backing ids, and the idle ones among them. `max_idle`: kMaxIdle but in tests.
  BackingFiles(bool wanted, Stats* stats, size_t max_idle = kMaxIdle)
      : wanted_(wanted), stats_(stats), max_idle_(max_idle) {}
  void set_source(BackingIdSource* source) { source_.store(source); }

  // Whether new opens may get passthrough at all.
  bool active() const;
  // For an open of `node` through the lower fd `fd`: the backing id to hand the kernel, or -1 to
  // serve this open in userspace (*userspace is set accordingly). Each call is undone by one
  // Detach with the same answer.
  int Attach(const std::shared_ptr<Node>& node, int fd, bool* userspace)
      ABSL_LOCKS_EXCLUDED(idle_mu_);
  // The end of an open: the node's backing id stays registered, idle, after its last open.
  void Detach(const std::shared_ptr<Node>& node, bool passthrough) ABSL_LOCKS_EXCLUDED(idle_mu_);
  // The node's lower file lost a name through the mount, or the kernel forgot the node: its
  // backing id is closed now if idle, else with its last open.
  void DropIdle(const std::shared_ptr<Node>& node) ABSL_LOCKS_EXCLUDED(idle_mu_);
  size_t idle() const ABSL_LOCKS_EXCLUDED(idle_mu_);

 private:
  // Closes the node's backing id if it is (still) idle.
  void CloseIfIdle(Node& node);
  // Takes the node off the idle list; returns the list's reference (null if it was not listed),
  // to be dropped once the locks are let go.
  std::shared_ptr<Node> Unlist(const Node* node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(idle_mu_);

  const bool wanted_;
  Stats* const stats_;
  const size_t max_idle_;
  std::atomic<BackingIdSource*> source_{nullptr};
  std::atomic<bool> warned_{false};
  // Lock order: a node's backing_mu, then idle_mu_ (never the reverse: eviction closes a node's
  // id after letting go of idle_mu_). The idle nodes, least recently idle first; a node is
  // listed exactly while its id is idle (changed under both locks), but for one evicted and not
  // closed yet, which CloseIfIdle judges again under its backing_mu.
  mutable absl::Mutex idle_mu_;
  std::list<std::shared_ptr<Node>> idle_ ABSL_GUARDED_BY(idle_mu_);
  absl::flat_hash_map<const Node*, std::list<std::shared_ptr<Node>>::iterator> idle_index_
      ABSL_GUARDED_BY(idle_mu_);
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_TABLES_BACKING_FILES_H_
