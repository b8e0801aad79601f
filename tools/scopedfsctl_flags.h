// scopedfsctl's flags and its usage error, shared by the commands (scopedfsctl_*.cc). The flags
// are defined in scopedfsctl.cc, beside main, because absl's --help lists only the flags of the
// binary's main file.
#ifndef SCOPEDFS_TOOLS_SCOPEDFSCTL_FLAGS_H_
#define SCOPEDFS_TOOLS_SCOPEDFSCTL_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/policy.pb.h"

ABSL_DECLARE_FLAG(std::string, policy);
ABSL_DECLARE_FLAG(std::string, apps);
ABSL_DECLARE_FLAG(std::string, packages_list);
ABSL_DECLARE_FLAG(std::string, uid);
ABSL_DECLARE_FLAG(std::string, package);
ABSL_DECLARE_FLAG(std::string, op);
ABSL_DECLARE_FLAG(std::string, path);
ABSL_DECLARE_FLAG(std::string, content);
ABSL_DECLARE_FLAG(std::string, owner_uid);
ABSL_DECLARE_FLAG(std::string, node);
ABSL_DECLARE_FLAG(uint32_t, user_id);
ABSL_DECLARE_FLAG(std::string, domain);
ABSL_DECLARE_FLAG(std::string, socket);
ABSL_DECLARE_FLAG(std::string, mount);
ABSL_DECLARE_FLAG(std::string, fstab);
ABSL_DECLARE_FLAG(bool, detach_only);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(std::string, redacted_out);
ABSL_DECLARE_FLAG(std::string, kinds);

namespace scopedfs::policy::ctl {

// Prints `problem` and the usage text to stderr; returns 2, the exit status of a usage error.
int Usage(absl::string_view problem);

// --op as an operation; a usage error (its message lists the operations) otherwise.
absl::StatusOr<Op> OpFlag();
// --path as a path relative to the storage root. A device path of the mounted user's storage
// (/storage/emulated/<user>/..., /sdcard/...) is accepted and made relative; anything else that
// is not a valid storage path is a usage error that says what is expected.
absl::StatusOr<std::string> StoragePathFlag();

}  // namespace scopedfs::policy::ctl

#endif  // SCOPEDFS_TOOLS_SCOPEDFSCTL_FLAGS_H_
