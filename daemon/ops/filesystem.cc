// The filesystem's shared state and the ops table (see filesystem.h); the ops are in ops_*.cc.
#include "daemon/ops/filesystem.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/namespace_checks.h"

namespace scopedfs::daemon {

Filesystem::Filesystem(FilesystemOptions options, base::UniqueFd root_fd,
                       const struct stat& root_st, std::shared_ptr<const policy::Engine> engine)
    : options_(std::move(options)),
      nodes_(std::move(root_fd), root_st.st_dev, root_st.st_ino),
      // All workers but one may wait for scans (two per app at most, ScanQueue): the one left
      // keeps every other app served, and a request refused a wait is answered "uncertain",
      // which for a writer owed redaction is an EACCES, so fewer waits mean more such refusals
      // under load.
      facts_(&stats_, ScanQueue::DefaultThreads(), std::max(1, options_.fuse_threads - 1)),
      case_index_(&stats_),
      backing_(options_.passthrough, &stats_),
      budget_(AppBudget::ForFdLimit(FdLimit())),
      locks_(&budget_),
      plans_(&facts_, &budget_),
      engine_(std::move(engine)) {
  posix_ = engine_ != nullptr && engine_->semantics() == SEMANTICS_POSIX;
  facts_.set_records(options_.facts_records);
  facts_.set_reopen([this](const FileHandle& handle, int mount_id, base::UniqueFd* out) {
    return nodes_.OpenHandle(handle, mount_id, out);
  });
  if (engine_ != nullptr) plans_.set_kinds(engine_->redaction_kinds());
  root_dev_ = root_st.st_dev;
  clock_gettime(CLOCK_REALTIME, &started_);
  started_.tv_nsec = 0;
}

bool ParseXattrMode(absl::string_view text, XattrMode* mode) {
  if (text == "passthrough") {
    *mode = XattrMode::kPassthrough;
  } else if (text == "noattr") {
    *mode = XattrMode::kNoattr;
  } else if (text == "nosys") {
    *mode = XattrMode::kNosys;
  } else {
    return false;
  }
  return true;
}

uint64_t FdLimit() {
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur == RLIM_INFINITY) return 1024;
  return nofile.rlim_cur;
}

int Filesystem::TakeHandleSlot(const RequestContext& ctx, std::optional<uid_t>* slot) {
  slot->reset();
  if (!ctx.IsApp()) return 0;
  if (!budget_.Take(AppBudget::kFds, ctx.uid())) return EMFILE;
  *slot = ctx.uid();
  return 0;
}

void Filesystem::ReleaseHandleSlot(const std::optional<uid_t>& slot) {
  if (slot.has_value()) budget_.Release(AppBudget::kFds, *slot);
}

Filesystem::~Filesystem() {
  // The session, and with it every backing id, is gone by now: only our own fds are left. Freed
  // outside handles_mu_, as a file's plan takes the plan table's lock when it goes.
  absl::flat_hash_set<OpenFile*> files;
  absl::flat_hash_set<OpenDir*> dirs;
  {
    absl::MutexLock lock(&handles_mu_);
    files.swap(open_files_);
    dirs.swap(open_dirs_);
  }
  for (OpenFile* file : files) delete file;
  for (OpenDir* dir : dirs) delete dir;
}

absl::StatusOr<std::unique_ptr<Filesystem>> Filesystem::Create(
    const FilesystemOptions& options, std::shared_ptr<const policy::Engine> engine) {
  base::UniqueFd fd(open(options.source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("source ", options.source));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("source ", options.source));
  }
  return std::unique_ptr<Filesystem>(new Filesystem(options, std::move(fd), st, std::move(engine)));
}

void Filesystem::Attach(FuseSession* session) {
  backing_.set_source(session);
  session_.store(session, std::memory_order_release);
}

absl::Status Filesystem::SetEngine(std::shared_ptr<const policy::Engine> engine) {
  if (engine != nullptr && (engine->semantics() == SEMANTICS_POSIX) != posix_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "policy \"", engine->policy_name(), "\" has ", posix_ ? "ANDROID" : "POSIX",
        " semantics but this mount was made with ", posix_ ? "POSIX" : "ANDROID",
        " semantics (the kernel's permission checking is fixed at mount time); remount to "
        "change them"));
  }
  if (engine != nullptr && options_.kernel_posix_locks && MayShowTwoViews(*engine)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "policy \"", engine->policy_name(),
        "\" may give a caller a redacted view of a file (a kernel inode of its own) but this "
        "mount leaves POSIX locks to the kernel (--posix_locks=kernel), which would keep the "
        "two views' locks apart; remount with --posix_locks=lower to change it"));
  }
  {
    absl::MutexLock lock(&engine_mu_);
    // Names answered under LISTING may sit in the kernel's cache for every caller, and a LOOKUP
    // still running under the old policy could cache one after the invalidations below: a
    // change of visibility needs a new mount.
    if (engine != nullptr && engine_ != nullptr && engine->visibility() != engine_->visibility()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "policy \"", engine->policy_name(), "\" has ",
          Visibility_Name(engine->visibility()).substr(11), " visibility but this mount serves ",
          Visibility_Name(engine_->visibility()).substr(11),
          " visibility (names the kernel cached for every caller could outlive the reload); "
          "remount to change it"));
    }
    // What a redacted view fills is in plans shared by version and in the kernel's pages of
    // redacted inodes, kept across opens of an unchanged version: a reload cannot change it.
    if (engine != nullptr && engine_ != nullptr &&
        engine->redaction_kinds() != engine_->redaction_kinds()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "policy \"", engine->policy_name(), "\" ",
          (engine->redaction_kinds() & media::kPlaceNameKinds) ? "redacts" : "keeps",
          " place names but this mount ",
          (engine_->redaction_kinds() & media::kPlaceNameKinds) ? "redacts" : "keeps",
          " them (redacted bytes the kernel caches could outlive the reload); remount to "
          "change it"));
    }
    // Once a directory open was answered ENOSYS the kernel caches every listing for all callers
    // and asks no more OPENDIR for the rest of the connection (ops_dir.cc): no reload can undo it.
    if (engine != nullptr && listings_pinned_ && !engine->caller_independent()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "policy \"", engine->policy_name(),
          "\" shows different callers different listings but this mount is pinned to "
          "caller-independent listings (its first directory open was answered under a "
          "caller-independent policy with ENOSYS, after which the kernel caches every listing "
          "for all callers and sends no OPENDIR for the rest of the connection); remount to "
          "change it"));
    }
    if (engine != nullptr) plans_.set_kinds(engine->redaction_kinds());
    engine_ = std::move(engine);
  }
  // Any policy may have let the kernel cache names (directories it showed to everyone).
  FuseSession* session = session_.load(std::memory_order_acquire);
  if (session == nullptr || session->session() == nullptr) return absl::OkStatus();
  fuse_session* se = session->session();
  for (const auto& [parent, name] : nodes_.Names()) {
    fuse_lowlevel_notify_inval_entry(se, parent, name.c_str(), name.size());
  }
  // A directory's pages are the listing the kernel keeps (FOPEN_CACHE_DIR), which after a pin it
  // serves without asking (no OPENDIR): offset 0 drops them, also where no name in the directory
  // is known any more (the entry invalidations above then reach nothing that would reset it).
  // Other nodes keep their pages: what a redacted view fills cannot change at a reload.
  for (const NodeTable::IdAndKind& n : nodes_.Ids()) {
    fuse_lowlevel_notify_inval_inode(se, n.id, n.directory ? 0 : -1, 0);
  }
  return absl::OkStatus();
}

std::shared_ptr<const policy::Engine> Filesystem::engine() const {
  absl::MutexLock lock(&engine_mu_);
  return engine_;
}

bool Filesystem::PinListings() {
  absl::MutexLock lock(&engine_mu_);
  // Under the device layout listings differ by caller whatever the policy (RequestContext::
  // CallerIndependent).
  if (engine_ == nullptr || !engine_->caller_independent() || options_.device_layout) return false;
  listings_pinned_ = true;
  return true;
}

bool Filesystem::listings_pinned() const {
  absl::MutexLock lock(&engine_mu_);
  return listings_pinned_;
}

RequestContext Filesystem::Context(fuse_req_t req) const {
  const fuse_ctx* c = fuse_req_ctx(req);
  return RequestContext(c->uid, c->pid, engine(), options_.user_id, options_.contexts,
                        options_.audit, options_.device_layout);
}

int Filesystem::Label(int fd, const std::string& path, mode_t type) {
  if (options_.labeler == nullptr) return 0;
  std::string label;
  {
    absl::MutexLock lock(&label_mu_);
    absl::StatusOr<std::string> looked_up =
        options_.labeler->Lookup(ChildPath(options_.label_root, path), type);
    if (absl::IsNotFound(looked_up.status())) return 0;  // no entry: the lower default stays
    if (!looked_up.ok()) return EIO;  // cannot be evaluated: refuse rather than mislabel
    label = *std::move(looked_up);
  }
  // The raw context goes into security.selinux, as fsetfilecon_raw would write it.
  int rc = fsetxattr(fd, "security.selinux", label.c_str(), label.size() + 1, 0);
  return rc == 0 ? 0 : errno;
}

void Filesystem::Register(OpenFile* file) {
  absl::MutexLock lock(&handles_mu_);
  open_files_.insert(file);
}

void Filesystem::Unregister(OpenFile* file) {
  ReleaseHandleSlot(file->slot);
  absl::MutexLock lock(&handles_mu_);
  open_files_.erase(file);
}

void Filesystem::Register(OpenDir* dir) {
  absl::MutexLock lock(&handles_mu_);
  open_dirs_.insert(dir);
}

void Filesystem::Unregister(OpenDir* dir) {
  ReleaseHandleSlot(dir->slot);
  absl::MutexLock lock(&handles_mu_);
  open_dirs_.erase(dir);
}

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

}  // namespace

// Every request runs in a ScanWait scope charged to its caller (scan_queue.h): the ops the kernel
// sends while it holds a directory's lock wait kDirLockedScanWait for a scan at most, the others
// kRequestScanWait.
template <bool kDirLocked, typename F, F kOp>
struct WithScanWait;
template <bool kDirLocked, typename... Args, void (*kOp)(fuse_req_t, Args...)>
struct WithScanWait<kDirLocked, void (*)(fuse_req_t, Args...), kOp> {
  static void Call(fuse_req_t req, Args... args) {
    ScanWait wait(fuse_req_ctx(req)->uid, kDirLocked ? kDirLockedScanWait : kRequestScanWait);
    kOp(req, args...);
  }
};
#define SCOPEDFS_DIR_LOCKED(op) &WithScanWait<true, decltype(&op), &op>::Call
#define SCOPEDFS_WAITS(op) &WithScanWait<false, decltype(&op), &op>::Call

const fuse_lowlevel_ops& Filesystem::Ops() {
  static const fuse_lowlevel_ops ops = [] {
    fuse_lowlevel_ops o = {};
    o.init = sfs_init;
    o.lookup = SCOPEDFS_DIR_LOCKED(sfs_lookup);
    o.forget = sfs_forget;
    o.forget_multi = sfs_forget_multi;
    o.getattr = SCOPEDFS_WAITS(sfs_getattr);
    o.setattr = SCOPEDFS_WAITS(sfs_setattr);
    o.readlink = sfs_readlink;
    o.mkdir = SCOPEDFS_DIR_LOCKED(sfs_mkdir);
    o.mknod = SCOPEDFS_DIR_LOCKED(sfs_mknod);
    o.unlink = SCOPEDFS_DIR_LOCKED(sfs_unlink);
    o.rmdir = SCOPEDFS_DIR_LOCKED(sfs_rmdir);
    o.symlink = SCOPEDFS_DIR_LOCKED(sfs_symlink);
    o.rename = SCOPEDFS_DIR_LOCKED(sfs_rename);
    o.link = SCOPEDFS_DIR_LOCKED(sfs_link);
    o.open = SCOPEDFS_WAITS(sfs_open);
    o.create = SCOPEDFS_DIR_LOCKED(sfs_create);
    o.read = SCOPEDFS_WAITS(sfs_read);
    o.write = SCOPEDFS_WAITS(sfs_write);
    o.flush = sfs_flush;
    o.release = sfs_release;
    o.fsync = sfs_fsync;
    o.opendir = SCOPEDFS_WAITS(sfs_opendir);
    o.readdir = SCOPEDFS_DIR_LOCKED(sfs_readdir);
    o.readdirplus = SCOPEDFS_DIR_LOCKED(sfs_readdirplus);
    o.releasedir = sfs_releasedir;
    o.fsyncdir = sfs_fsyncdir;
    o.statfs = sfs_statfs;
    o.access = SCOPEDFS_WAITS(sfs_access);
    o.setxattr = SCOPEDFS_WAITS(sfs_setxattr);
    o.getxattr = SCOPEDFS_WAITS(sfs_getxattr);
    o.listxattr = SCOPEDFS_WAITS(sfs_listxattr);
    o.removexattr = SCOPEDFS_WAITS(sfs_removexattr);
    o.fallocate = SCOPEDFS_WAITS(sfs_fallocate);
    o.lseek = sfs_lseek;
    o.copy_file_range = SCOPEDFS_WAITS(sfs_copy_file_range);
    o.getlk = sfs_getlk;
    o.setlk = sfs_setlk;
    o.flock = sfs_flock;
    return o;
  }();
  return ops;
}
#undef SCOPEDFS_DIR_LOCKED
#undef SCOPEDFS_WAITS

}  // namespace scopedfs::daemon
