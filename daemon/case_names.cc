// Case-insensitive name search in a lower directory (case_names.h). It reads the directory with
// getdents64 into one buffer rather than through a DIR stream, and compares lengths before bytes:
// ASCII folding keeps a name's length, so most entries are passed over after one comparison.
#include "daemon/case_names.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "base/unique_fd.h"

namespace scopedfs::daemon {
namespace {

// The kernel's struct linux_dirent64 (getdents64(2)); glibc 2.36 declares no wrapper.
struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

}  // namespace

bool SameFoldedName(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(a[i])) !=
        absl::ascii_tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

int FindCaseMatch(int dir_fd, absl::string_view name, std::string* match, int max_entries,
                  int* entries_read) {
  match->clear();
  int read_count = 0;
  base::UniqueFd fd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno;
  std::vector<char> buf(64 * 1024);
  int err = ENOENT;
  for (;;) {
    long n = syscall(SYS_getdents64, fd.get(), buf.data(), buf.size());
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    for (long at = 0; at < n;) {
      const auto* ent = reinterpret_cast<const LinuxDirent64*>(buf.data() + at);
      at += ent->d_reclen;
      if (++read_count > max_entries) {
        if (entries_read != nullptr) *entries_read = read_count - 1;
        match->clear();
        return EMFILE;  // cannot vouch for the directory: the caller decides
      }
      size_t len = strnlen(ent->d_name, ent->d_reclen - offsetof(LinuxDirent64, d_name));
      absl::string_view candidate(ent->d_name, len);
      if (candidate == name || !SameFoldedName(candidate, name)) continue;
      if (match->empty() || candidate < absl::string_view(*match)) {
        match->assign(candidate.data(), candidate.size());
        err = 0;
      }
    }
  }
  if (entries_read != nullptr) *entries_read = read_count;
  if (err != 0) match->clear();
  return err;
}

}  // namespace scopedfs::daemon
