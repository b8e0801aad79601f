// Case-insensitive name search in a lower directory (case_names.h). It reads the directory with
// getdents64 into one buffer rather than through a DIR stream, and compares lengths before bytes:
// ASCII folding keeps a name's length, so most entries are passed over after one comparison.
#include "daemon/tables/case_names.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/folded_name.h"
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

bool SameFoldedName(absl::string_view a, absl::string_view b) { return base::FoldsTogether(a, b); }

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

namespace {

DirStamp StampOf(int dir_fd, const uint64_t* generation) {
  DirStamp s;
  struct stat st;
  if (fstatat(dir_fd, "", &st, AT_EMPTY_PATH) != 0) return s;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.generation = generation != nullptr ? *generation : ObjectIdOf(dir_fd, st).generation;
  s.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  s.ctime_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
  return s;
}

}  // namespace

DirStamp StampOf(int dir_fd) { return StampOf(dir_fd, nullptr); }

DirStamp StampOf(int dir_fd, uint64_t generation) { return StampOf(dir_fd, &generation); }

namespace {

bool IsLetter(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)); }

// The case mask of `name`: bit k of word k / 64 set when its k-th ASCII letter is upper case.
// Empty for a name without capitals.
std::vector<uint64_t> CaseMask(absl::string_view name) {
  std::vector<uint64_t> mask;
  size_t k = 0;
  for (char c : name) {
    if (!IsLetter(c)) continue;
    if (absl::ascii_isupper(static_cast<unsigned char>(c))) {
      mask.resize(k / 64 + 1, 0);
      mask[k / 64] |= uint64_t{1} << (k % 64);
    }
    ++k;
  }
  return mask;
}

// `name` spelled with the case of `mask` (words `words` long); false if the mask has capitals
// past the name's letters (the mask is of another folded name).
bool ApplyMask(absl::string_view name, const uint64_t* mask, size_t words, std::string* out) {
  out->assign(name.data(), name.size());
  size_t k = 0;
  for (char& c : *out) {
    if (!IsLetter(c)) continue;
    bool upper = k / 64 < words && (mask[k / 64] >> (k % 64)) & 1;
    c = upper ? absl::ascii_toupper(static_cast<unsigned char>(c))
              : absl::ascii_tolower(static_cast<unsigned char>(c));
    ++k;
  }
  for (size_t bit = k; bit < words * 64; ++bit) {
    if ((mask[bit / 64] >> (bit % 64)) & 1) return false;
  }
  return true;
}

uint64_t RandomSeed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
    seed = static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
  }
  return seed;
}

}  // namespace

CaseIndex::CaseIndex(Stats* stats) : stats_(stats), seed_(RandomSeed()) {}

size_t CaseIndex::Dir::Bytes() const {
  return sizeof(Dir) + by_folded.capacity() * (sizeof(std::pair<const uint64_t, Spelling>) + 1) +
         masks.capacity() * sizeof(uint64_t);
}

uint64_t CaseIndex::FoldedHash(absl::string_view name) const {
  if (base::FoldsBeyondAscii(name)) {
    return absl::Hash<std::pair<uint64_t, std::string>>()({seed_, base::FoldedName(name)});
  }
  char folded[256];
  if (name.size() > sizeof(folded)) {
    return absl::Hash<std::pair<uint64_t, std::string>>()({seed_, Folded(name)});
  }
  for (size_t i = 0; i < name.size(); ++i) {
    folded[i] = absl::ascii_tolower(static_cast<unsigned char>(name[i]));
  }
  return absl::Hash<std::pair<uint64_t, absl::string_view>>()(
      {seed_, absl::string_view(folded, name.size())});
}

bool CaseIndex::Insert(Dir* dir, uint64_t hash, absl::string_view name) {
  auto [it, fresh] = dir->by_folded.try_emplace(hash);
  ++dir->names;
  // A case mask spells only ASCII letters: a name folded beyond them ("Muſic") is found by a read.
  if (!fresh || base::FoldsBeyondAscii(name)) {
    it->second.ambiguous = true;
    return false;
  }
  std::vector<uint64_t> mask = CaseMask(name);
  it->second.mask_at = static_cast<uint32_t>(dir->masks.size());
  it->second.mask_words = static_cast<uint8_t>(mask.size());
  dir->masks.insert(dir->masks.end(), mask.begin(), mask.end());
  return true;
}

CaseIndex::Answer CaseIndex::Lookup(const Dir& dir, absl::string_view name, bool exact_matches,
                                    std::string* match) const {
  if (dir.unindexable) return Answer::kUnsure;
  auto it = dir.by_folded.find(FoldedHash(name));
  if (it == dir.by_folded.end()) return Answer::kNone;
  const Spelling& s = it->second;
  if (s.ambiguous || base::FoldsBeyondAscii(name)) return Answer::kUnsure;
  std::string spelled;
  if (!ApplyMask(name, dir.masks.data() + s.mask_at, s.mask_words, &spelled)) {
    return Answer::kUnsure;  // a hash collision
  }
  if (spelled == name && !exact_matches) return Answer::kNone;
  *match = std::move(spelled);  // confirmed by Find, without the lock
  return Answer::kFound;
}

int CaseIndex::Search(int dir_fd, absl::string_view name, std::string* match) {
  directory_reads_.fetch_add(1);
  if (stats_ != nullptr) stats_->case_directory_reads.fetch_add(1, std::memory_order_relaxed);
  return FindCaseMatch(dir_fd, name, match);
}

int CaseIndex::Find(int dir_fd, absl::string_view name, std::string* match) {
  return Find(dir_fd, StampOf(dir_fd), name, match);
}

int CaseIndex::Find(int dir_fd, uint64_t generation, absl::string_view name, std::string* match) {
  return Find(dir_fd, StampOf(dir_fd, generation), name, match);
}

int CaseIndex::Find(int dir_fd, const DirStamp& stamp, absl::string_view name, std::string* match) {
  match->clear();
  if (stamp.mtime_ns < 0) return Search(dir_fd, name, match);
  Key key{stamp.dev, stamp.ino};
  bool ambiguous = false;
  bool found = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = dirs_.find(key);
    if (it != dirs_.end() && it->second->stamp == stamp) {
      it->second->last_use = ++clock_;
      switch (Lookup(*it->second, name, /*exact_matches=*/false, match)) {
        case Answer::kNone:
          return ENOENT;
        case Answer::kFound:
          found = true;
          break;
        case Answer::kUnsure:
          ambiguous = true;
          break;
      }
    }
  }
  if (found) {
    struct stat st;
    if (fstatat(dir_fd, match->c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return 0;
    ambiguous = true;  // a hash collision (or a change racing this lookup)
    match->clear();
  }
  // Twins or a collision: a read answers, and the index stays for every other name.
  if (ambiguous) return Search(dir_fd, name, match);
  bool indexed = false;
  return ReadAndIndex(dir_fd, stamp, name, match, &indexed);
}

int CaseIndex::LowerSpelling(int dir_fd, uint64_t generation, absl::string_view name,
                             std::string* lower) {
  lower->clear();
  DirStamp stamp = StampOf(dir_fd, generation);
  if (stamp.mtime_ns < 0) return EAGAIN;
  Key key{stamp.dev, stamp.ino};
  for (int pass = 0; pass < 2; ++pass) {
    {
      absl::MutexLock lock(&mu_);
      auto it = dirs_.find(key);
      if (it != dirs_.end() && it->second->stamp == stamp) {
        it->second->last_use = ++clock_;
        switch (Lookup(*it->second, name, /*exact_matches=*/true, lower)) {
          case Answer::kNone:
            return ENOENT;
          case Answer::kFound:
            return 0;
          case Answer::kUnsure:
            lower->clear();
            return EAGAIN;
        }
      }
    }
    if (pass == 1) break;
    // No index of this state yet: the read that makes one (its own answer is for other
    // spellings only, so the index is asked again).
    std::string match;
    bool indexed = false;
    if (ReadAndIndex(dir_fd, stamp, name, &match, &indexed) == EMFILE || !indexed) break;
  }
  return EAGAIN;
}

int CaseIndex::ReadAndIndex(int dir_fd, const DirStamp& stamp, absl::string_view name,
                            std::string* match, bool* indexed) {
  *indexed = false;
  Key key{stamp.dev, stamp.ino};
  // One read answers and indexes. A directory whose index would not fit in all the indexes may
  // hold is searched only.
  directory_reads_.fetch_add(1);
  if (stats_ != nullptr) stats_->case_directory_reads.fetch_add(1, std::memory_order_relaxed);
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
    Insert(dir.get(), FoldedHash(n), n);
    if ((dir->names & 4095) == 0 && dir->Bytes() > kMaxIndexBytes) {
      indexing = false;
      dir = std::make_unique<Dir>();
    }
  });
  if (err == EMFILE || !indexing) {
    dir = std::make_unique<Dir>();
    dir->stamp = stamp;
    dir->unindexable = true;
    absl::MutexLock lock(&mu_);
    File(key, std::move(dir));
  }
  if (err != 0) {
    match->clear();
    return err;
  }
  int answer = found ? 0 : ENOENT;
  if (!indexing) return answer;
  *indexed = true;
  absl::MutexLock lock(&mu_);
  File(key, std::move(dir));
  return answer;
}

void CaseIndex::File(const Key& key, std::unique_ptr<Dir> dir) {
  dir->last_use = ++clock_;
  dir->bytes = dir->Bytes();
  if (auto it = dirs_.find(key); it != dirs_.end()) {
    total_names_ -= it->second->names;
    total_bytes_ -= it->second->bytes;
  }
  total_names_ += dir->names;
  total_bytes_ += dir->bytes;
  dirs_[key] = std::move(dir);
  EvictLocked();
}

void CaseIndex::Added(int dir_fd, const DirStamp& before, absl::string_view name) {
  Changed(dir_fd, before, name, /*added=*/true);
}

void CaseIndex::Removed(int dir_fd, const DirStamp& before, absl::string_view name) {
  Changed(dir_fd, before, name, /*added=*/false);
}

DirStamp CaseIndex::Before(int dir_fd, const ObjectId& dir) {
  {
    absl::MutexLock lock(&mu_);
    if (!dirs_.contains(Key{dir.dev, dir.ino})) {
      DirStamp unasked;  // mtime_ns -1: the state before the change is not known
      unasked.dev = dir.dev;
      unasked.ino = dir.ino;
      unasked.generation = dir.generation;
      return unasked;
    }
  }
  return StampOf(dir_fd, dir.generation);
}

void CaseIndex::Changed(int dir_fd, const DirStamp& before, absl::string_view name, bool added) {
  // Without the state before the change (Before), an index of the directory cannot be updated:
  // one built meanwhile is dropped below, and nothing else is asked or computed (every create and
  // unlink under POSIX semantics comes this way).
  const bool known = before.mtime_ns >= 0;
  // The same directory as `before` (its callers stamp one fd twice): its generation is known.
  DirStamp after = known ? StampOf(dir_fd, before.generation) : DirStamp{};
  uint64_t hash = known ? FoldedHash(name) : 0;
  absl::MutexLock lock(&mu_);
  auto it = dirs_.find(Key{before.dev, before.ino});
  if (it == dirs_.end()) return;
  Dir& dir = *it->second;
  auto drop = [&] {
    total_names_ -= dir.names;
    total_bytes_ -= dir.bytes;
    dirs_.erase(it);
  };
  if (!(dir.stamp == before) || after.mtime_ns < 0) return drop();
  if (dir.unindexable) {
    // Still too large after a name more; one less may make it fit, so it is read again.
    if (!added) return drop();
    dir.stamp = after;
    return;
  }
  auto entry = dir.by_folded.find(hash);
  if (added) {
    // The daemon never makes a second spelling of a name: one there means another state.
    if (entry != dir.by_folded.end()) return drop();
    Insert(&dir, hash, name);
    ++total_names_;
  } else {
    if (entry == dir.by_folded.end() || entry->second.ambiguous) return drop();
    std::string spelled;
    if (!ApplyMask(name, dir.masks.data() + entry->second.mask_at, entry->second.mask_words,
                   &spelled) ||
        spelled != name) {
      return drop();  // not the state the index holds: start over
    }
    dir.dead_words += entry->second.mask_words;
    dir.by_folded.erase(entry);
    --dir.names;
    --total_names_;
    if (dir.dead_words > 1024 && 2 * dir.dead_words > dir.masks.size()) {
      std::vector<uint64_t> live;
      for (auto& [h, s] : dir.by_folded) {
        uint32_t at = static_cast<uint32_t>(live.size());
        live.insert(live.end(), dir.masks.begin() + s.mask_at,
                    dir.masks.begin() + s.mask_at + s.mask_words);
        s.mask_at = at;
      }
      dir.masks = std::move(live);
      dir.dead_words = 0;
    }
  }
  dir.stamp = after;
  Recount(&dir);
  EvictLocked();
}

void CaseIndex::Recount(Dir* dir) {
  size_t bytes = dir->Bytes();
  total_bytes_ = total_bytes_ - dir->bytes + bytes;
  dir->bytes = bytes;
}

void CaseIndex::EvictLocked() {
  if (total_bytes_ <= kMaxIndexBytes) return;
  // Down to seven eighths of the bound in one pass: a tree of many small directories, each with
  // an index, then pays one sort of them per many builds rather than one scan per build.
  std::vector<std::pair<uint64_t, Key>> by_use;
  by_use.reserve(dirs_.size());
  for (const auto& [key, dir] : dirs_) by_use.emplace_back(dir->last_use, key);
  std::sort(by_use.begin(), by_use.end());
  for (const auto& [last_use, key] : by_use) {
    if (total_bytes_ <= kMaxIndexBytes / 8 * 7) break;
    auto it = dirs_.find(key);
    total_names_ -= it->second->names;
    total_bytes_ -= it->second->bytes;
    dirs_.erase(it);
  }
}

size_t CaseIndex::indexed_names() const {
  absl::MutexLock lock(&mu_);
  return total_names_;
}

size_t CaseIndex::indexed_bytes() const {
  absl::MutexLock lock(&mu_);
  return total_bytes_;
}

}  // namespace scopedfs::daemon
