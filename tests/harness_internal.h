// Helpers the mount harness's files share (tests/mount_harness.h is the harness's API): process
// and pipe plumbing, and what the kernel says about mounts.
#ifndef SCOPEDFS_TESTS_HARNESS_INTERNAL_H_
#define SCOPEDFS_TESTS_HARNESS_INTERNAL_H_

#include <stddef.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests::internal {

absl::Status ErrnoStatus(absl::string_view what, int err);
// Moves this process into its own mount namespace with private propagation: the tmpfs and FUSE
// mounts of the tests then exist only here, and vanish with the process whatever happens to it.
void EnterPrivateMountNamespace();
// Mount point and file-system type of every entry of /proc/self/mountinfo.
std::vector<std::pair<std::string, std::string>> MountTable();
bool MountedAt(const std::string& path, absl::string_view fstype_prefix);
// A waitpid status as a DaemonExit.
DaemonExit DecodeStatus(int status);
bool WriteAll(int fd, const void* data, size_t size);
std::string ReadAllFrom(int fd);
// Runs `argv` (argv[0] a runfiles path) to completion; its stdout is returned, or an error with
// its output if it did not exit 0.
absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv);

}  // namespace scopedfs::tests::internal

#endif  // SCOPEDFS_TESTS_HARNESS_INTERNAL_H_
