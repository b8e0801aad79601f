// Case-insensitive name search in a lower directory (case_names.h). It reads the directory with
// getdents64 into one buffer rather than through a DIR stream, and compares lengths before bytes:
// ASCII folding keeps a name's length, so most entries are passed over after one comparison.
#include "daemon/tables/case_names.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

// Calls `visit` with every name of the directory `dir_fd` (with . and ..). Returns 0, EMFILE past
// `max_entries` names, or an errno.
template <typename Visit>
int ForEachName(int dir_fd, int max_entries, int* entries_read, Visit visit) {
  int read_count = 0;
  base::UniqueFd fd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno;
  std::vector<char> buf(64 * 1024);
  int err = 0;
  for (;;) {
    long n = syscall(SYS_getdents64, fd.get(), buf.data(), buf.size());
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    for (long at = 0; at < n && err == 0;) {
      const auto* ent = reinterpret_cast<const LinuxDirent64*>(buf.data() + at);
      at += ent->d_reclen;
      if (read_count == max_entries) {
        err = EMFILE;  // cannot vouch for the directory: the caller decides
        break;
      }
      ++read_count;
      size_t len = strnlen(ent->d_name, ent->d_reclen - offsetof(LinuxDirent64, d_name));
      visit(absl::string_view(ent->d_name, len));
    }
    if (err != 0) break;
  }
  if (entries_read != nullptr) *entries_read = read_count;
  return err;
}

std::string Folded(absl::string_view name) { return absl::AsciiStrToLower(name); }

// The first name of `names` (sorted) that is not `name`.
bool FirstOther(const std::vector<std::string>& names, absl::string_view name, std::string* out) {
  for (const std::string& n : names) {
    if (n != name) {
      *out = n;
      return true;
    }
  }
  return false;
}

}  // namespace

int FindCaseMatch(int dir_fd, absl::string_view name, std::string* match, int max_entries,
                  int* entries_read) {
  match->clear();
  bool found = false;
  int err = ForEachName(dir_fd, max_entries, entries_read, [&](absl::string_view candidate) {
    if (candidate == name || !SameFoldedName(candidate, name)) return;
    if (!found || candidate < absl::string_view(*match)) {
      match->assign(candidate.data(), candidate.size());
      found = true;
    }
  });
  if (err != 0) {
    match->clear();
    return err;
  }
  return found ? 0 : ENOENT;
}

DirStamp StampOf(int dir_fd) {
  DirStamp s;
  struct stat st;
  if (fstatat(dir_fd, "", &st, AT_EMPTY_PATH) != 0) return s;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.generation = ObjectIdOf(dir_fd, st).generation;
  s.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  s.ctime_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
  return s;
}

int CaseIndex::Find(int dir_fd, absl::string_view name, std::string* match) {
  match->clear();
  // Taken before the directory is read: a change during the read makes the index stale at once.
  DirStamp stamp = StampOf(dir_fd);
  if (stamp.mtime_ns < 0) return FindCaseMatch(dir_fd, name, match);
  Key key{stamp.dev, stamp.ino};
  {
    absl::MutexLock lock(&mu_);
    auto it = dirs_.find(key);
    if (it != dirs_.end() && it->second->stamp == stamp) {
      it->second->last_use = ++clock_;
      auto names = it->second->by_folded.find(Folded(name));
      if (names == it->second->by_folded.end()) return ENOENT;
      return FirstOther(names->second, name, match) ? 0 : ENOENT;
    }
  }
  // One read answers and indexes. A directory with more names than all indexes may hold is
  // searched only: its index would be evicted at once, and would cost memory while being built.
  auto dir = std::make_unique<Dir>();
  dir->stamp = stamp;
  bool indexing = true;
  bool found = false;
  int err = ForEachName(dir_fd, kMaxCaseSearchEntries, nullptr, [&](absl::string_view n) {
    if (n != name && SameFoldedName(n, name) && (!found || n < absl::string_view(*match))) {
      match->assign(n.data(), n.size());
      found = true;
    }
    if (!indexing) return;
    if (dir->names == kMaxIndexedNames) {
      indexing = false;
      dir->by_folded.clear();
      return;
    }
    dir->by_folded[Folded(n)].emplace_back(n);
    ++dir->names;
  });
  if (err != 0) {
    match->clear();
    return err;
  }
  int answer = found ? 0 : ENOENT;
  if (!indexing || dir->names < static_cast<size_t>(kMinIndexedEntries)) return answer;
  for (auto& [folded, names] : dir->by_folded) std::sort(names.begin(), names.end());
  absl::MutexLock lock(&mu_);
  dir->last_use = ++clock_;
  if (auto it = dirs_.find(key); it != dirs_.end()) total_names_ -= it->second->names;
  total_names_ += dir->names;
  dirs_[key] = std::move(dir);
  EvictLocked();
  return answer;
}

void CaseIndex::Added(int dir_fd, const DirStamp& before, absl::string_view name) {
  Changed(dir_fd, before, name, /*added=*/true);
}

void CaseIndex::Removed(int dir_fd, const DirStamp& before, absl::string_view name) {
  Changed(dir_fd, before, name, /*added=*/false);
}

void CaseIndex::Changed(int dir_fd, const DirStamp& before, absl::string_view name, bool added) {
  DirStamp after = StampOf(dir_fd);
  absl::MutexLock lock(&mu_);
  auto it = dirs_.find(Key{before.dev, before.ino});
  if (it == dirs_.end()) return;
  Dir& dir = *it->second;
  auto drop = [&] {
    total_names_ -= dir.names;
    dirs_.erase(it);
  };
  if (!(dir.stamp == before) || after.mtime_ns < 0) return drop();
  std::vector<std::string>& names = dir.by_folded[Folded(name)];
  auto at = std::lower_bound(names.begin(), names.end(), name);
  bool present = at != names.end() && *at == name;
  if (added == present) return drop();  // not the state the index holds: start over
  if (added) {
    names.insert(at, std::string(name));
    ++dir.names;
    ++total_names_;
  } else {
    names.erase(at);
    --dir.names;
    --total_names_;
  }
  dir.stamp = after;
  EvictLocked();
}

void CaseIndex::EvictLocked() {
  while (total_names_ > kMaxIndexedNames && !dirs_.empty()) {
    auto oldest = dirs_.begin();
    for (auto it = dirs_.begin(); it != dirs_.end(); ++it) {
      if (it->second->last_use < oldest->second->last_use) oldest = it;
    }
    total_names_ -= oldest->second->names;
    dirs_.erase(oldest);
  }
}

size_t CaseIndex::indexed_names() const {
  absl::MutexLock lock(&mu_);
  return total_names_;
}

}  // namespace scopedfs::daemon
