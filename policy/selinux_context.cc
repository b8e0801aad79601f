// SELinux adapter over libselinux: process contexts (is_selinux_enabled, getpidcon) and new-file
// labels from a file_contexts file (selabel_open/selabel_lookup_raw). Every libselinux failure
// becomes an absl::Status so callers can fail closed.
#include "policy/selinux_context.h"

#include <errno.h>
#include <selinux/label.h>
#include <selinux/selinux.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace scopedfs::policy {
namespace {

// libselinux sometimes fails without setting errno (a lazily compiled regex that does not compile
// leaves it at 0); absl::ErrnoToStatus(0, ...) would be OK, turning the failure into a success.
absl::Status LibselinuxError(int err, const std::string& what) {
  if (err == 0) {
    return absl::InternalError(absl::StrCat(what, ": libselinux failed without an errno"));
  }
  return absl::ErrnoToStatus(err, what);
}

class KernelContextSource : public ProcessContextSource {
 public:
  bool Enabled() const override { return is_selinux_enabled() > 0; }

  absl::StatusOr<std::string> PidContext(pid_t pid) const override {
    if (pid <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("getpidcon(", pid, "): not a process id"));
    }
    char* con = nullptr;
    errno = 0;
    if (getpidcon(pid, &con) < 0) {
      return LibselinuxError(errno, absl::StrCat("getpidcon(", pid, ")"));
    }
    std::unique_ptr<char, decltype(&freecon)> owned(con, &freecon);
    if (con == nullptr) {
      return absl::InternalError(absl::StrCat("getpidcon(", pid, "): no context"));
    }
    return std::string(con);
  }
};

}  // namespace

std::unique_ptr<ProcessContextSource> NewKernelContextSource() {
  return std::make_unique<KernelContextSource>();
}

absl::string_view DomainOfContext(absl::string_view context) {
  size_t user_end = context.find(':');
  if (user_end == absl::string_view::npos) return {};
  size_t role_end = context.find(':', user_end + 1);
  if (role_end == absl::string_view::npos) return {};
  // The level that may follow can itself contain ':' ("s0:c61,c256"); only the third field counts.
  size_t type_end = context.find(':', role_end + 1);
  if (type_end == absl::string_view::npos) type_end = context.size();
  return context.substr(role_end + 1, type_end - role_end - 1);
}

absl::StatusOr<std::string> CallerDomainResolver::Resolve(
    pid_t pid, absl::string_view configured_domain) const {
  if (!source_->Enabled()) return std::string(configured_domain);
  absl::StatusOr<std::string> context = source_->PidContext(pid);
  if (!context.ok()) return context.status();
  absl::string_view domain = DomainOfContext(*context);
  if (domain.empty()) {
    // Falling back to the configured domain here would let a process claim a domain the kernel
    // did not give it.
    return absl::InternalError(
        absl::StrCat("pid ", pid, " has context \"", *context, "\" with no type field"));
  }
  return std::string(domain);
}

absl::StatusOr<std::unique_ptr<FileLabeler>> FileLabeler::Open(
    const std::string& file_contexts_path) {
  // libselinux reads a directory as an empty file_contexts, which would label nothing and make
  // every Lookup NotFound instead of failing at startup.
  struct stat st;
  if (stat(file_contexts_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("file_contexts ", file_contexts_path, " is a directory"));
  }
  // Validation asks the kernel whether each context exists in the loaded policy; the daemon must
  // work where no policy is loaded (or the policy is not Android's), so contexts stay unchecked.
  const selinux_opt options[] = {
      {SELABEL_OPT_PATH, file_contexts_path.c_str()},
      {SELABEL_OPT_VALIDATE, nullptr},
  };
  errno = 0;
  selabel_handle* handle = selabel_open(SELABEL_CTX_FILE, options, 2);
  if (handle == nullptr) {
    return LibselinuxError(errno, absl::StrCat("selabel_open(", file_contexts_path, ")"));
  }
  return std::unique_ptr<FileLabeler>(new FileLabeler(handle));
}

FileLabeler::~FileLabeler() { selabel_close(handle_); }

absl::StatusOr<std::string> FileLabeler::Lookup(const std::string& path, mode_t mode) const {
  // libselinux would see only the part before a NUL and label that shorter path instead.
  if (path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("path contains a NUL byte");
  }
  // Every file_contexts entry is anchored at "/"; a relative path would only ever be NotFound,
  // hiding the caller's bug.
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("path \"", path, "\" is not absolute"));
  }
  char* con = nullptr;
  errno = 0;
  if (selabel_lookup_raw(handle_, &con, path.c_str(), static_cast<int>(mode)) < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("no file_contexts entry for ", path));
    }
    return LibselinuxError(err, absl::StrCat("selabel_lookup(", path, ")"));
  }
  std::unique_ptr<char, decltype(&freecon)> owned(con, &freecon);
  if (con == nullptr) {
    return absl::InternalError(absl::StrCat("selabel_lookup(", path, "): no context"));
  }
  return std::string(con);
}

}  // namespace scopedfs::policy
