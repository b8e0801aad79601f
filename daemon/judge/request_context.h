// One FUSE request's view of who asks and under which policy: the caller's uid and pid, its SELinux
// domain (asked of the kernel once) and one snapshot of the engine. Every decision a request makes
// goes through its context, so a policy reload in the middle of a request never mixes two policies
// within it, and getpidcon runs once per request, not once per decision. A context also reports
// its request's refusals and redacted opens to the audit log (Audited, AuditRedacted), so a
// refusal is logged once per request, by the request that answered with it.
//
// Paths a context is asked about are node paths: relative to the mount's lower tree. Under the
// device layout (FilesystemOptions::device_layout, --device_layout) the lower tree is Android's
// /data/media and the mount root holds one directory per Android user, "<user>/...", as vold's
// /mnt/user/<u>/emulated does: a context translates each node path to the storage and policy path
// the engine judges (Place), here and nowhere else. Without it the whole tree is the storage of
// --user_id and node paths are policy paths.
#ifndef SCOPEDFS_DAEMON_JUDGE_REQUEST_CONTEXT_H_
#define SCOPEDFS_DAEMON_JUDGE_REQUEST_CONTEXT_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "daemon/judge/file_info.h"
#include "daemon/observe/audit_log.h"
#include "policy/engine.h"
#include "policy/selinux_context.h"

namespace scopedfs::daemon {

// Where a node path lies in the mount (RequestContext::Place).
struct Placement {
  enum class Kind {
    kStorage,    // in a user's storage ("<user>" itself is that storage's root)
    kMountRoot,  // the device layout's mount root: the directory of the users' storages
    kOutside,    // the device layout's names beside the users' storages (obb/, ...) and below
  };
  Kind kind = Kind::kStorage;
  uint32_t user = 0;  // kStorage: whose storage
  // kStorage: relative to that storage's root (the policy path); else the node path.
  absl::string_view path;
  // kStorage: the path names a user's storage root in the mount root ("<user>").
  bool storage_root_in_mount_root = false;
};

// The largest Android user whose every uid (user * 100000 + app id) fits in a uid_t.
inline constexpr uint32_t kMaxStorageUser = 42948;

// A node path placed in the mount: without the device layout, all of it is `user_id`'s storage;
// with it, "<user>" (a canonical decimal Android user id: no sign, no leading zero, at most
// kMaxStorageUser) and below is that user's storage, "" the mount root, and any other name in
// the mount root and below is outside every storage. Pure; views point into `node_path`.
Placement PlaceNodePath(bool device_layout, uint32_t user_id, absl::string_view node_path);

class RequestContext {
 public:
  // `contexts` null or disabled: callers are judged in their configured domains. Enabled: the
  // kernel's domain of `pid`; a caller whose context cannot be read is refused everything.
  // `engine` null: everything is refused (cannot happen after startup; fails closed regardless).
  // `audit` null: nothing is audited.
  RequestContext(uid_t uid, pid_t pid, std::shared_ptr<const policy::Engine> engine,
                 uint32_t storage_user_id, const policy::ProcessContextSource* contexts,
                 AuditLog* audit = nullptr, bool device_layout = false);

  // Another app judged within this request (the readers a rename or link is checked for): the
  // same engine snapshot, in that app's configured domain, since it has no process to ask about.
  RequestContext ForReader(uid_t uid) const;

  // The decision for `op` on the node path `path`. `info` null: content unknown. Under the device
  // layout the path is placed (Place) and judged as its storage's policy path, for its storage's
  // user (so a caller of another user is cross-user); besides, the mount root may be looked up
  // and listed by every caller, and apps may change nothing there: they may not create, remove or
  // rename a name in it (EACCES), and names outside every storage are hidden from them (HIDE).
  // Callers other than apps are judged on the mount root as on their own user's storage root,
  // and on names outside every storage by the node path, as their own user's.
  // With an audit log, the context remembers whether its latest decision refused (HIDE or DENY).
  policy::Decision Decide(scopedfs::Op op, absl::string_view path, bool directory,
                          const FileInfo* info) const;

  // Called with the errno a request answers with, and returns it. When the request fails and its
  // latest decision refused, the failure is that refusal: one "denied" line. A name that does
  // not exist fails before any decision is made, so it is never logged; neither is a refusal that
  // a later permitting decision superseded (a readdir skipping hidden names, then succeeding).
  int Audited(int err) const;
  // A refusal that no single decision of this caller's makes (a rename or link the layout's move
  // rules refuse, or one that would let some app do more to the object): remembered as the
  // latest refusal, as a refusing decision is, with `check` in place of a rule name, so that
  // Audited(err) logs it. Returns `err`.
  int RefusedByCheck(int err, absl::string_view check, scopedfs::Op op, absl::string_view path,
                     bool directory, const FileInfo* info) const;
  // The latest refusal is not the request's answer: it only filtered what the request shows (a
  // listing skipping a name hidden from the caller), or listing visibility finds the name anyway
  // (FindsName). A later failure of the request is then not logged as that refusal.
  void RefusalSuperseded() const { refused_ = false; }
  // A LOOKUP's decisions from one engine call (Engine::DecideLookup), remembered for the audit
  // log as the lookup decision. `located`: the file's facts as if it carried location.
  policy::LookupDecisions DecideLookup(absl::string_view path, bool directory, const FileInfo* info,
                                       const media::ContentFacts* located) const;
  // Whether a LOOKUP of `path` is refused whatever is there, or whether anything is
  // (Engine::HiddenWhateverIsThere): then remembered as the latest refusal, as DecideLookup's.
  bool HiddenWhateverIsThere(absl::string_view path) const;
  // Whether the caller's decision of `op` on the file at `path` (its creator as `info` says) can
  // depend on the file's content (Engine::DependsOnContent); false when no engine decides it.
  bool DependsOnContent(scopedfs::Op op, absl::string_view path, const FileInfo& info) const;
  // One "redacted" line: the caller opened `path` and reads it with location filled.
  void AuditRedacted(scopedfs::Op op, absl::string_view path, const FileInfo& info,
                     const policy::Decision& decision) const;

  // The operation the app asked for, when the request judges others on the way (a create asks
  // whether an existing name is hidden): audit lines name it, and the judged one beside it.
  void set_request_op(scopedfs::Op op) { request_op_ = op; }

  // Whom a listing made for this caller is for, as an opaque key: requests with equal keys are
  // shown the same entries of a directory at one version, being judged by one engine snapshot as
  // one uid in one SELinux domain. Empty when nothing decides (no engine, an unreadable context).
  std::string ListingViewer() const;
  // The key of a listing every caller of the storage's user is shown alike, under this request's
  // engine snapshot; empty as above.
  std::string EveryCallerViewer() const;
  // Whether `viewer`, a key made by either of the two above, was made under this request's engine
  // snapshot (whatever caller it names): the keys' format stays this class's.
  bool OfThisSnapshot(absl::string_view viewer) const;

  uid_t uid() const { return uid_; }
  pid_t pid() const { return pid_; }
  // --user_id: the storage's user without the device layout; under it, only the default of
  // explanations (the user of each path decides: StorageUserOf).
  uint32_t storage_user_id() const { return storage_user_id_; }
  bool device_layout() const { return device_layout_; }
  Placement Place(absl::string_view path) const {
    return PlaceNodePath(device_layout_, storage_user_id_, path);
  }
  // The user whose storage `path` lies in; outside every storage, the caller's own.
  uint32_t StorageUserOf(absl::string_view path) const;
  // The path the engine judges `path` as (Place): the policy path in its storage, the node path
  // elsewhere. For classifying (StorageLayout::Classify), as the engine classifies.
  absl::string_view PolicyPath(absl::string_view path) const;
  // Whether a rename or link from `from` to `to` stays in one storage: never under the device
  // layout when the two lie in different users' storages, or either is a user's storage root,
  // the mount root, or only one of them lies outside every storage. Always true without it.
  bool SameStorage(absl::string_view from, absl::string_view to) const;
  // Whether the caller is of another Android user than the storage `path` lies in; a name
  // outside every storage counts as another user's, the mount root as no one's.
  bool OfAnotherUser(absl::string_view path) const;
  // The engine's proofs about every caller of a storage's user (Engine::VisibleToEveryCaller,
  // FoundByEveryCaller, SubdirectoriesVisibleToEveryCaller), asked of a node path; false outside
  // every storage and for the mount root, whose names are users' storages.
  bool VisibleToEveryCaller(absl::string_view path) const;
  bool FoundByEveryCaller(absl::string_view path) const;
  bool SubdirectoriesVisibleToEveryCaller(absl::string_view path) const;
  // Engine::caller_independent, and no device layout: the layout's own rules (names outside every
  // storage hidden from apps, a mount root apps may not change) depend on the caller.
  bool CallerIndependent() const;
  const policy::Engine* engine() const { return engine_.get(); }
  // An app or an unknown uid, rather than root, a system uid, shell or the media service: apps
  // get clamped modes and see directories without what is hidden from them.
  bool IsApp() const;

 private:
  RequestContext() = default;

  uid_t uid_ = 0;
  pid_t pid_ = 0;
  std::shared_ptr<const policy::Engine> engine_;
  uint32_t storage_user_id_ = 0;
  bool device_layout_ = false;
  std::string domain_;          // empty: the app's configured domain
  bool domain_failed_ = false;  // SELinux on and the caller's context unreadable
  AuditLog* audit_ = nullptr;
  scopedfs::Op request_op_ = OP_UNSPECIFIED;

  // The latest decision, if it refused (kept only with an audit log). A request runs on one
  // thread, so Decide (const) may update it.
  struct Refusal {
    scopedfs::Op op = OP_UNSPECIFIED;
    std::string path;
    bool directory = false;
    bool has_content = false;
    media::ContentFacts content;
    std::optional<uint32_t> owner;
    std::string rule;
  };
  // False when the engine is not asked: no engine, or an unreadable SELinux context (*decided is
  // then the fail-closed decision), or the device layout decides itself (the mount root, names
  // outside every storage for apps: *decided is its decision). `path` is a node path; the request
  // gets the policy path and its storage's user (Place).
  bool BuildRequest(scopedfs::Op op, absl::string_view path, bool directory, const FileInfo* info,
                    policy::Request* request, policy::Decision* decided) const;
  void NoteDecision(const policy::Decision& d, scopedfs::Op op, absl::string_view path,
                    bool directory, const FileInfo* info) const;
  policy::Decision DecideUnaudited(scopedfs::Op op, absl::string_view path, bool directory,
                                   const FileInfo* info) const;
  void Audit(bool redacted, Refusal what, int err, uint32_t redact) const;
  mutable bool refused_ = false;
  mutable Refusal refusal_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_REQUEST_CONTEXT_H_
