// A lookup's cost does not grow with its directory: an app's own directory of 140,000 names (past
// the 131,072 names where the case index used to stop) is read once to index it, and then stats of
// names that exist in no case, and of names in another case, are answered without reading it
// again. The daemon's case_directory_reads counts the reads; requests_lookup shows that every stat
// reached the daemon (each asks a name of its own, so no negative entry the kernel cached answers).
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr int kNames = 140000;
constexpr int kStats = 50;

class HugeDirectoryMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.control_socket = true;
    return o;
  }
  int64_t Counter(const std::string& name) {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (!stats.ok()) return -1;
    auto it = stats->find(name);
    return it == stats->end() ? 0 : it->second;
  }
};

TEST_F(HugeDirectoryMountTest, MissingNamesDoNotReadTheDirectoryEachTime) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/many", kNotes));
  // Made in the lower tree directly: 140,000 creates through the mount would take minutes.
  // Each is notes' own (its creator recorded), so notes sees every one.
  std::string dir = storage_.Lower("Download/many");
  const std::string owner = absl::StrCat(kNotes);
  for (int i = 0; i < kNames; ++i) {
    std::string path = absl::StrCat(dir, "/Note", i, ".txt");
    int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(fsetxattr(fd, "trusted.scopedfs.owner", owner.data(), owner.size(), 0), 0) << path;
    close(fd);
  }
  // The walk to it indexes every directory above it (each is indexed at its first lookup).
  ASSERT_TRUE(Succeeds(As(kNotes).Stat("Download/many")));
  int64_t reads = Counter("case_directory_reads");
  int64_t lookups = Counter("requests_lookup");
  AppResult r = As(kNotes).Run("stats", [] {
    AppResult out;
    struct stat st;
    absl::Time start = absl::Now();
    for (int i = 0; i < kStats; ++i) {
      std::string missing = absl::StrCat("Download/many/missing", i);
      if (stat(missing.c_str(), &st) == 0 || errno != ENOENT) {
        out.err = errno == 0 ? EEXIST : errno;
        return out;
      }
    }
    // Another spelling of a name that exists: found, as on a device.
    for (int i = 0; i < kStats; ++i) {
      std::string other = absl::StrCat("Download/many/NOTE", i * 97, ".TXT");
      if (stat(other.c_str(), &st) != 0) {
        out.err = errno;
        return out;
      }
    }
    out.data = absl::StrCat(absl::ToDoubleMilliseconds(absl::Now() - start));
    return out;
  });
  EXPECT_TRUE(Succeeds(r));
  // For the record, not bounded: the count below is the test.
  printf("%d stats (the first builds the index) took %s ms\n", 2 * kStats, r.data.c_str());
  EXPECT_GE(Counter("requests_lookup") - lookups, 2 * kStats) << "stats answered by the kernel";
  EXPECT_LE(Counter("case_directory_reads") - reads, 1)
      << "the directory was read again for a lookup";
}

}  // namespace
}  // namespace scopedfs::tests
