// The scopedfs filesystem: every FUSE operation resolves its node, asks the policy engine on behalf
// of the calling uid, does the work on the lower tree through directory fds (never following a
// symlink), and replies once. Cleared opens of raw views get kernel passthrough.
#ifndef SCOPEDFS_DAEMON_FILESYSTEM_H_
#define SCOPEDFS_DAEMON_FILESYSTEM_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "daemon/fuse_session.h"
#include "daemon/node_table.h"
#include "daemon/stats.h"
#include "policy/content_facts.h"
#include "policy/engine.h"
#include "policy/location.h"
#include "policy/selinux_context.h"

namespace scopedfs::daemon {

struct OpenFile;  // an open file handle (fuse_file_info::fh); defined in filesystem.cc
struct OpenDir;   // an open directory handle (fuse_file_info::fh); defined in filesystem.cc

// xattr holding the creator's uid (decimal) on every file and directory created through the mount.
inline constexpr char kOwnerXattr[] = "trusted.scopedfs.owner";

struct FilesystemOptions {
  std::string source;      // lower directory
  uint32_t user_id = 0;    // Android user whose storage this is
  bool passthrough = true;
  // Where the callers' SELinux contexts come from; null: SELinux is not consulted. When it reports
  // SELinux enabled, every decision uses the caller's kernel domain (getpidcon), and a caller
  // whose context cannot be read is refused.
  const policy::ProcessContextSource* contexts = nullptr;
  // Labels new files and directories from file_contexts, looked up as label_root + "/" + path
  // (label_root is the lower tree's Android name, e.g. /data/media/0). Null: no labelling.
  const policy::FileLabeler* labeler = nullptr;
  std::string label_root;
};

class Filesystem {
 public:
  // Opens the lower root (must be a directory). The engine may be replaced later (Reload).
  static absl::StatusOr<std::unique_ptr<Filesystem>> Create(
      const FilesystemOptions& options, std::shared_ptr<const policy::Engine> engine);
  ~Filesystem();

  static const fuse_lowlevel_ops& Ops();
  void Attach(FuseSession* session) { session_ = session; }

  void SetEngine(std::shared_ptr<const policy::Engine> engine) ABSL_LOCKS_EXCLUDED(engine_mu_);
  std::shared_ptr<const policy::Engine> engine() const ABSL_LOCKS_EXCLUDED(engine_mu_);
  Stats& stats() { return stats_; }
  size_t node_count() const { return nodes_.size(); }
  bool passthrough_active() const;

  // What the content-facts cache knows about a lower file: type facts, recorded owner and where
  // its location metadata sits (null: not a location carrier, or it could not be read).
  struct FileInfo {
    policy::ContentFacts facts;
    std::optional<uint32_t> owner;
    std::shared_ptr<const policy::LocationScan> scan;
    // False when a regular file's bytes could not be read (no format, no scan): nothing about its
    // location can be vouched for.
    bool content_read = true;
  };

  using FileVersion = daemon::FileVersion;
  static FileVersion VersionOf(const struct stat& st);

  // Operation bodies: each returns 0 or a positive errno and never replies (the sfs_* wrappers
  // in filesystem.cc reply exactly once). Public for the wrappers only.
  struct Ctx {
    uid_t uid;
    pid_t pid;
    // A caller that is not making this request (the other readers a rename is checked for):
    // judged in its configured SELinux domain, since it has no process to ask the kernel about.
    bool configured_domain = false;
  };
  // Facts of the lower object `fd` (O_PATH) as stat'ed in `st`, judged under `name`. Cached per
  // (dev, ino) and file version; media that can carry location are scanned once per version.
  FileInfo InfoOf(int fd, const struct stat& st, absl::string_view name)
      ABSL_LOCKS_EXCLUDED(facts_mu_);
  // Forgets what is cached about a lower file (after a write or truncate through the mount, so a
  // timestamp that did not move cannot hide the change).
  void InvalidateFacts(dev_t dev, ino_t ino) ABSL_LOCKS_EXCLUDED(facts_mu_);
  policy::Decision Ask(const Ctx& ctx, scopedfs::Op op, const std::string& path, bool directory,
                       const FileInfo* info) const;
  // Gives a newly created lower object (an open fd of it) its file_contexts label, if labelling
  // is configured. Returns 0 or an errno.
  int Label(int fd, const std::string& path, mode_t type) ABSL_LOCKS_EXCLUDED(label_mu_);

  // Every handle given to the kernel stays registered until its RELEASE. An unmount with files
  // still open sends no RELEASE, so the destructor closes and frees whatever is left.
  void Register(OpenFile* file) ABSL_LOCKS_EXCLUDED(handles_mu_);
  void Unregister(OpenFile* file) ABSL_LOCKS_EXCLUDED(handles_mu_);
  void Register(OpenDir* dir) ABSL_LOCKS_EXCLUDED(handles_mu_);
  void Unregister(OpenDir* dir) ABSL_LOCKS_EXCLUDED(handles_mu_);

  NodeTable& nodes() { return nodes_; }
  // The namespace lock. A decision about a name and the lower operation it allows must see the
  // same tree: renames, links and removals (which change what a path names, and which the node
  // table records) hold it exclusively; creates hold it shared, so a directory cannot move
  // between a create's check and the create. Taken before any other lock of the daemon.
  absl::Mutex& namespace_mu() { return namespace_mu_; }
  // When the daemon started: the timestamps apps see on directories (see DirectoryAsSeen).
  const struct timespec& started() const { return started_; }
  FuseSession* session() { return session_; }
  const FilesystemOptions& options() const { return options_; }

 private:
  Filesystem(FilesystemOptions options, int root_fd, const struct stat& root_st,
             std::shared_ptr<const policy::Engine> engine);

  FilesystemOptions options_;
  NodeTable nodes_;
  FuseSession* session_ = nullptr;
  Stats stats_;

  absl::Mutex namespace_mu_;
  struct timespec started_ = {};

  // libselinux label handles are not safe for concurrent lookups.
  absl::Mutex label_mu_;

  mutable absl::Mutex engine_mu_;
  std::shared_ptr<const policy::Engine> engine_ ABSL_GUARDED_BY(engine_mu_);

  // Content facts per lower file, valid for one version of it.
  struct FactsKey {
    dev_t dev;
    ino_t ino;
    bool operator==(const FactsKey& o) const { return dev == o.dev && ino == o.ino; }
    template <typename H>
    friend H AbslHashValue(H h, const FactsKey& k) {
      return H::combine(std::move(h), k.dev, k.ino);
    }
  };
  struct CachedFacts {
    FileVersion version;
    policy::MediaFormat format = policy::MediaFormat::kUnknown;
    std::optional<uint32_t> owner;
    std::shared_ptr<const policy::LocationScan> scan;
  };
  // A leaf lock: nothing else is taken while it is held.
  absl::Mutex handles_mu_;
  absl::flat_hash_set<OpenFile*> open_files_ ABSL_GUARDED_BY(handles_mu_);
  absl::flat_hash_set<OpenDir*> open_dirs_ ABSL_GUARDED_BY(handles_mu_);

  absl::Mutex facts_mu_;
  absl::flat_hash_map<FactsKey, CachedFacts> facts_ ABSL_GUARDED_BY(facts_mu_);
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_FILESYSTEM_H_
