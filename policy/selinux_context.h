// SELinux adapter: the caller's domain (for AppMatch.selinux_domain) and the label a new file gets
// from file_contexts. Kernel access sits behind ProcessContextSource so tests can inject contexts.
#ifndef SCOPEDFS_POLICY_SELINUX_CONTEXT_H_
#define SCOPEDFS_POLICY_SELINUX_CONTEXT_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct selabel_handle;

namespace scopedfs::policy {

// Where process contexts come from.
class ProcessContextSource {
 public:
  virtual ~ProcessContextSource() = default;
  // True if the kernel enforces or at least runs SELinux (libselinux is_selinux_enabled()).
  virtual bool Enabled() const = 0;
  // Full context of a process, e.g. "u:r:untrusted_app:s0:c61,c256,c512,c768".
  virtual absl::StatusOr<std::string> PidContext(pid_t pid) const = 0;
};

// libselinux: is_selinux_enabled() and getpidcon(). PidContext(pid <= 0) is InvalidArgument, since
// getpidcon(0) would answer with the daemon's own context; other failures carry getpidcon's errno
// (a pid that does not exist is NotFound).
std::unique_ptr<ProcessContextSource> NewKernelContextSource();

// The type (domain) field of a context "user:role:type:level...", e.g. "untrusted_app"; empty if
// the context has fewer than three fields or an empty type.
absl::string_view DomainOfContext(absl::string_view context);

// Resolves a caller's domain. With SELinux enabled the kernel's answer is authoritative: if
// getpidcon fails (the process died, no permission) or its context has no type field, the result
// is an error and the caller must fail closed. With SELinux disabled the app's configured domain is
// returned as given, even when empty: defaults belong to the registry, and an empty domain matches
// no AppMatch.selinux_domain constraint, so it cannot widen access.
class CallerDomainResolver {
 public:
  // `source` must outlive the resolver.
  explicit CallerDomainResolver(const ProcessContextSource* source) : source_(source) {}
  absl::StatusOr<std::string> Resolve(pid_t pid, absl::string_view configured_domain) const;

 private:
  const ProcessContextSource* source_;
};

// Labels for new files, looked up in a file_contexts file (regex -> context) via
// selabel_lookup_raw: the raw form is what the kernel stores in security.selinux, and mcstrans
// translation would make the answer depend on the host. Works without a kernel policy
// (contexts are not validated). Thread-compatible per libselinux; callers serialise Lookup.
class FileLabeler {
 public:
  // Like any SELABEL_OPT_PATH user, libselinux also reads <path>.subs_dist, <path>.subs,
  // <path>.homedirs and <path>.local if present, and prefers <path>.bin if it is at least as new.
  // A missing file is NotFound, a malformed line InvalidArgument, a directory InvalidArgument.
  // Regexes are compiled lazily, so an invalid regex only shows up in Lookup.
  static absl::StatusOr<std::unique_ptr<FileLabeler>> Open(const std::string& file_contexts_path);
  ~FileLabeler();
  FileLabeler(const FileLabeler&) = delete;
  FileLabeler& operator=(const FileLabeler&) = delete;

  // Context for `path` (absolute, as the lower tree names it, e.g. "/data/media/0/DCIM/a.jpg") with
  // file type bits from `mode` (S_IFREG, S_IFDIR). NotFound if no entry matches or the matching
  // entry is <<none>>; InvalidArgument for a relative path or one with a NUL; Internal if
  // libselinux cannot evaluate an entry (e.g. an invalid regex), which must not read as "no label".
  // Precedence (libselinux): entries without regex metacharacters beat all regex entries; among
  // the rest the last matching line in the file wins, not the most specific. Typed entries ("--",
  // "-d") only match that type; mode 0 matches entries of every type, so pass the real type.
  absl::StatusOr<std::string> Lookup(const std::string& path, mode_t mode) const;

 private:
  explicit FileLabeler(selabel_handle* handle) : handle_(handle) {}
  selabel_handle* handle_;
};

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_SELINUX_CONTEXT_H_
