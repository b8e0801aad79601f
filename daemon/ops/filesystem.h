// The scopedfs filesystem: the state every FUSE op shares (the node table, the content-facts cache,
// the passthrough backing files, the live policy, the open handles) and the ops table. The ops
// themselves live one family per file (ops_lookup.cc, ops_namespace.cc, ops_file.cc, ops_dir.cc,
// ops_xattr.cc, ops_lock.cc); each goes through one OpRequest (op_request.h) that holds its
// request's context (Context), resolves its node, asks the policy through that context, does the
// work on the lower tree through directory fds (never following a symlink), and replies once.
#ifndef SCOPEDFS_DAEMON_OPS_FILESYSTEM_H_
#define SCOPEDFS_DAEMON_OPS_FILESYSTEM_H_

#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "daemon/judge/facts_cache.h"
#include "daemon/judge/file_info.h"
#include "daemon/judge/request_context.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/observe/stats.h"
#include "daemon/ops/redacted_read.h"
#include "daemon/tables/app_budget.h"
#include "daemon/tables/backing_files.h"
#include "daemon/tables/case_names.h"
#include "daemon/tables/file_locks.h"
#include "daemon/tables/inode_numbers.h"
#include "daemon/tables/node_table.h"
#include "policy/engine.h"
#include "policy/selinux_context.h"

namespace scopedfs::daemon {

// The daemon's fd limit now: RLIMIT_NOFILE's soft limit (main raises it to the hard one first).
uint64_t FdLimit();

struct OpenFile;  // an open file handle (fuse_file_info::fh); see handles.h
struct OpenDir;   // an open directory handle (fuse_file_info::fh); see handles.h

// What the mount answers extended-attribute requests with (docs/requests.md). The kernel asks
// for attributes on its own (ls -l: security.selinux, POSIX ACLs), so each choice costs
// requests: passthrough up to two per file and listing, noattr one per file (the kernel caches
// no "no such attribute" answer but an ACL's), nosys one for the whole mount (an ENOSYS answer
// makes the kernel stop sending that request and answer EOPNOTSUPP itself, for every caller).
enum class XattrMode {
  kPassthrough,  // every attribute as the lower tree has it (POSIX semantics' default)
  kNoattr,       // none exist: get ENODATA, list empty, set EOPNOTSUPP, remove ENODATA
  kNosys,        // not supported: ENOSYS to all four (ANDROID semantics, as MediaProvider)
};
// "passthrough", "noattr", "nosys" (the --xattr flag and the mount option xattr=).
bool ParseXattrMode(absl::string_view text, XattrMode* mode);

struct FilesystemOptions {
  std::string source;    // lower directory
  uint32_t user_id = 0;  // Android user whose storage this is (without device_layout)
  // The device's layout (--device_layout): the lower tree is Android's /data/media and the mount
  // root holds one directory per Android user, "<user>/...", each that user's storage, as vold's
  // /mnt/user/<u>/emulated over /data/media (RequestContext::Place). user_id then judges nothing;
  // with mount_reached_by_one_user it names the user whose apps alone reach the mount.
  bool device_layout = false;
  bool passthrough = true;
  // How long the kernel may keep a name the policy proves visible to every caller
  // (views.h): changes made to the lower tree behind the daemon are seen this late.
  double entry_cache_seconds = 10.0;
  // The operator's word that only apps of this storage's Android user can reach the mount (as
  // on a device, where each user's apps see only their own user's mount): the kernel may then
  // cache, for entry_cache_seconds, the attributes of files whose names it caches for every
  // caller of the user (views.h, AttrTimeoutFor). Apps of another user would be served
  // those attributes without being judged (docs/visibility.md).
  bool mount_reached_by_one_user = false;
  // Where the callers' SELinux contexts come from; null: SELinux is not consulted. When it reports
  // SELinux enabled, every decision uses the caller's kernel domain (getpidcon), and a caller
  // whose context cannot be read is refused.
  const policy::ProcessContextSource* contexts = nullptr;
  // Labels new files and directories from file_contexts, looked up as label_root + "/" + path
  // (label_root is the lower tree's Android name, e.g. /data/media/0). Null: no labelling.
  const policy::FileLabeler* labeler = nullptr;
  std::string label_root;
  AuditLog* audit = nullptr;  // refusals and redacted opens are logged here; null: not logged
  // The session's worker threads (--threads): all but one of them may wait for location scans.
  int fuse_threads = 8;
  // Under POSIX semantics only; ANDROID semantics always answer kNosys.
  XattrMode xattr = XattrMode::kPassthrough;
  // --posix_locks=kernel: the kernel keeps POSIX record and OFD locks per kernel inode (the
  // session leaves FUSE_POSIX_LOCKS out of INIT). Exact only while every object has one kernel
  // inode, so no policy that may give a caller a redacted view (an inode of its own, whose locks
  // the kernel would keep apart from the raw view's) is accepted, at start or by a reload.
  bool kernel_posix_locks = false;
  // Keep each file's content facts on the lower tree (--facts_records, facts_record.h), so a
  // restarted daemon does not read the file again while its version matches.
  bool facts_records = true;
};

// Whether `engine` may give some caller a redacted view of a file: a second kernel inode of the
// same object (a location guard, or a rule that can decide ALLOW_REDACTED).
inline bool MayShowTwoViews(const policy::Engine& engine) {
  return engine.may_redact() || engine.location_guard();
}

// Lock order, outermost first (a lock may be taken while holding only locks listed before it):
//  1. ConfigReloader::reload_mu_ (a reload installs its engine under it: SetEngine below);
//  2. namespace_mu_;
//  3. NodeTable's lock;
//  4. a node's backing_mu;
//  5. BackingFiles' idle list lock (idle_mu_).
// Beside that chain: a handle's RedactionPlan lock and the plan table's, never one under the
// other (a plan is made, and an old one let go, with neither held); FileLocks' mu_ or its
// wait_mu_ (never both).
// Leaves, under any of the above and taking nothing themselves: engine_mu_, label_mu_,
// handles_mu_, a node's kept_mu (NodeTable::KeepRemoved), the facts cache's, the scan queue's, the
// kernel notifier's and the audit log's locks, and the app budget's (AppBudget::mu_, the per-app
// handle quota): it is taken under namespace_mu_ (a create's handle) and under FileLocks' locks;
// a plan's bytes are charged with neither a RedactionPlan lock nor the plan table's held. No reply
// or notification goes to the kernel under any of them; the only FUSE calls made under one are
// the BACKING_OPEN/CLOSE ioctls, under a node's backing_mu (and namespace_mu_), which the kernel
// answers at once without a request to the daemon. No location scan runs or is waited for under any
// of them (namespace_mu_ holders use NoScanWait, scan_queue.h).
class Filesystem {
 public:
  // Opens the lower root (must be a directory). The engine may be replaced later (SetEngine).
  static absl::StatusOr<std::unique_ptr<Filesystem>> Create(
      const FilesystemOptions& options, std::shared_ptr<const policy::Engine> engine);
  ~Filesystem();

  static const fuse_lowlevel_ops& Ops();
  // Called once the session is mounted, which is after the control socket's and the
  // configuration watch's threads have started: they may read session() (SetEngine) meanwhile.
  void Attach(FuseSession* session);

  // Replaces the policy. When the old or the new one let the kernel cache names and attributes
  // for every caller, all of them are invalidated before this returns, so the next request is
  // judged by the new policy. Must not be called from a FUSE worker thread (the kernel may wait
  // on one while it invalidates).
  // A policy of other semantics than the mount's (posix()) is refused: the kernel was told at
  // mount time whether it checks permissions.
  absl::Status SetEngine(std::shared_ptr<const policy::Engine> engine)
      ABSL_LOCKS_EXCLUDED(engine_mu_);
  std::shared_ptr<const policy::Engine> engine() const ABSL_LOCKS_EXCLUDED(engine_mu_);
  // Decides whether a directory open may be answered ENOSYS (FUSE_NO_OPENDIR_SUPPORT), which the
  // kernel keeps for the rest of the connection, caching every listing for all callers: true when
  // the policy in force now is caller-independent, and then, atomically with that check, the
  // mount is pinned to such policies (SetEngine refuses any other from then on).
  bool PinListings() ABSL_LOCKS_EXCLUDED(engine_mu_);
  bool listings_pinned() const ABSL_LOCKS_EXCLUDED(engine_mu_);
  // The context of one request: its caller, and one snapshot of the engine for all its decisions.
  RequestContext Context(fuse_req_t req) const;

  // POSIX semantics (policy.proto Semantics), fixed by the policy the daemon started with.
  bool posix() const { return posix_; }
  // How xattr requests are answered (kNosys under ANDROID semantics, whatever the options say).
  XattrMode xattr_mode() const { return posix_ ? options_.xattr : XattrMode::kNosys; }

  // The st_ino / d_ino every caller sees for the lower object (dev, ino): the lower number under
  // POSIX semantics, a keyed hash of it under ANDROID semantics (inode_numbers.h). dev 0: the
  // lower root's device (what listings record for . and ..).
  ino_t PresentedIno(dev_t dev, ino_t ino) const {
    if (posix_) return ino;
    return inode_numbers_.Of(dev != 0 ? dev : root_dev_, ino);
  }

  Stats& stats() { return stats_; }
  size_t node_count() const { return nodes_.size(); }
  bool passthrough_active() const { return backing_.active(); }

  NodeTable& nodes() { return nodes_; }
  FactsCache& facts() { return facts_; }
  // ANDROID semantics: where names are found in any case (case_names.h).
  CaseIndex& case_index() { return case_index_; }
  BackingFiles& backing() { return backing_; }
  FileLocks& locks() { return locks_; }
  PlanTable& plans() { return plans_; }
  AppBudget& budget() { return budget_; }
  FuseSession* session() { return session_.load(std::memory_order_acquire); }
  const FilesystemOptions& options() const { return options_; }
  // The namespace lock. A decision about a name and the lower operation it allows must see the
  // same tree: renames, links and removals (which change what a path names, and which the node
  // table records) hold it exclusively; creates hold it shared, so a directory cannot move
  // between a create's check and the create.
  absl::Mutex& namespace_mu() { return namespace_mu_; }
  // Counts changes to names, kinds and creators made through the mount (every create, mkdir,
  // link, symlink, mknod, unlink, rmdir, rename and chown), so a check made outside the namespace
  // lock can tell, under it, that nothing it looked at has changed.
  uint64_t namespace_generation() const {
    return namespace_generation_.load(std::memory_order_acquire);
  }
  void NamespaceChanged() { namespace_generation_.fetch_add(1, std::memory_order_acq_rel); }
  // When the daemon started: the timestamps apps see on directories (DirectoryAsSeen).
  const struct timespec& started() const { return started_; }

  // Gives a newly created lower object (an open fd of it) its file_contexts label, if labelling
  // is configured. Returns 0 or an errno; a label that cannot be evaluated is an error (EIO), not
  // "no label".
  int Label(int fd, const std::string& path, mode_t type) ABSL_LOCKS_EXCLUDED(label_mu_);

  // Each open file or directory of an app takes one fd unit of its budget (app_budget.h), which
  // its lock descriptions, lock waits and fill plans share, so that no app, nor all of them
  // together, can take the fds the daemon, root and the system uids need (root and the system
  // uids are not counted): past it, EMFILE. On success *slot is the app to give the unit back
  // to when the handle is unregistered (nullopt: nothing was taken).
  int TakeHandleSlot(const RequestContext& ctx, std::optional<uid_t>* slot);
  void ReleaseHandleSlot(const std::optional<uid_t>& slot);

  // Every handle given to the kernel stays registered until its RELEASE. An unmount with files
  // still open sends no RELEASE, so the destructor closes and frees whatever is left.
  void Register(OpenFile* file) ABSL_LOCKS_EXCLUDED(handles_mu_);
  void Unregister(OpenFile* file) ABSL_LOCKS_EXCLUDED(handles_mu_);
  void Register(OpenDir* dir) ABSL_LOCKS_EXCLUDED(handles_mu_);
  void Unregister(OpenDir* dir) ABSL_LOCKS_EXCLUDED(handles_mu_);

 private:
  Filesystem(FilesystemOptions options, base::UniqueFd root_fd, const struct stat& root_st,
             std::shared_ptr<const policy::Engine> engine);

  FilesystemOptions options_;
  Stats stats_;
  NodeTable nodes_;
  FactsCache facts_;
  CaseIndex case_index_;
  BackingFiles backing_;
  // Sized from RLIMIT_NOFILE when the filesystem is made (main raises it first); before locks_
  // and plans_, which charge it.
  AppBudget budget_;
  FileLocks locks_;
  PlanTable plans_;
  std::atomic<FuseSession*> session_{nullptr};  // see Attach
  struct timespec started_ = {};
  bool posix_ = false;
  dev_t root_dev_ = 0;
  InodeNumbers inode_numbers_ = InodeNumbers::WithRandomKey();

  absl::Mutex namespace_mu_;
  std::atomic<uint64_t> namespace_generation_{0};

  mutable absl::Mutex engine_mu_;
  std::shared_ptr<const policy::Engine> engine_ ABSL_GUARDED_BY(engine_mu_);
  bool listings_pinned_ ABSL_GUARDED_BY(engine_mu_) = false;  // PinListings

  // libselinux label handles are not safe for concurrent lookups.
  absl::Mutex label_mu_;

  absl::Mutex handles_mu_;
  absl::flat_hash_set<OpenFile*> open_files_ ABSL_GUARDED_BY(handles_mu_);
  absl::flat_hash_set<OpenDir*> open_dirs_ ABSL_GUARDED_BY(handles_mu_);
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_FILESYSTEM_H_
