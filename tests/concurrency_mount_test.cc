// Eight app processes, each under its own uid, hammer one scopedfsd mount at once: shared readers
// of one photo and one song, two writers of disjoint regions of one file, and owners cycling their
// own files. Every syscall must succeed (no EIO) and every byte must come back as written. The
// apps go through 1,000 rounds in step (a process-shared barrier), so that all eight are at work
// at once in every round by construction, not by the luck of the scheduler.
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr int kIterations = 1000;
constexpr size_t kRegion = 64 * 1024;
constexpr char kSharedPhoto[] = "DCIM/Camera/shared.jpg";  // camera's; gallery reads it raw
constexpr char kSharedSong[] = "Music/shared.mp3";         // music's; legacy reads it too
constexpr char kSharedDoc[] = "Download/shared.bin";       // notes'; files (all-files) writes too

// Exit codes of the app processes: 0 ok, kSyscallFailed / kIoError on a failing call (details on
// stderr), kCorrupt when bytes differ from what was written or stored, kStopped when another app
// failed and all stopped.
constexpr int kSyscallFailed = 1;
constexpr int kIoError = 2;
constexpr int kCorrupt = 3;
constexpr int kStopped = 4;

int Failed(const char* what, const std::string& path) {
  int err = errno;
  fprintf(stderr, "uid %u: %s %s: %s\n", getuid(), what, path.c_str(), strerrorname_np(err));
  return err == EIO ? kIoError : kSyscallFailed;
}

int Corrupt(const std::string& path, int iteration) {
  fprintf(stderr, "uid %u: %s differs from what was written (iteration %d)\n", getuid(),
          path.c_str(), iteration);
  return kCorrupt;
}

// Reads `size` bytes at `offset` (or the whole file when size is 0) into `out`.
int ReadBack(const std::string& path, off_t offset, size_t size, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Failed("open", path);
  out->clear();
  char buf[1 << 16];
  for (;;) {
    size_t want = size == 0 ? sizeof(buf) : std::min(sizeof(buf), size - out->size());
    if (want == 0) break;
    ssize_t n = pread(fd, buf, want, offset + static_cast<off_t>(out->size()));
    if (n < 0) {
      int rc = Failed("pread", path);
      close(fd);
      return rc;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  if (close(fd) != 0) return Failed("close", path);
  return 0;
}

int WriteAt(const std::string& path, int flags, off_t offset, const std::string& data) {
  int fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return Failed("open", path);
  ssize_t n = pwrite(fd, data.data(), data.size(), offset);
  if (n != static_cast<ssize_t>(data.size())) {
    int rc = n < 0 ? Failed("pwrite", path) : Corrupt(path, -1);
    close(fd);
    return rc;
  }
  if (close(fd) != 0) return Failed("close", path);
  return 0;
}

// One app's part of a round: its iteration `i` (0 or an exit code above).
using Step = std::function<int(int i)>;

// Reads `path` whole, expecting `expected`.
Step Reader(const std::string& path, const std::string& expected) {
  return [path, expected](int i) {
    std::string got;
    if (int rc = ReadBack(path, 0, 0, &got)) return rc;
    return got == expected ? 0 : Corrupt(path, i);
  };
}

// Writes a fresh pattern into region `region` of `path` and reads it back.
Step RegionWriter(const std::string& path, int region) {
  return [path, region](int i) {
    const off_t offset = static_cast<off_t>(region * kRegion);
    std::string got;
    std::string data = Pattern(kRegion, static_cast<uint32_t>(region * 100000 + i));
    if (int rc = WriteAt(path, O_WRONLY, offset, data)) return rc;
    if (int rc = ReadBack(path, offset, kRegion, &got)) return rc;
    return got == data ? 0 : Corrupt(path, i);
  };
}

// Rewrites (O_TRUNC) the app's own file with fresh content and reads it back; lists its
// directory every 20th round so readdir runs under load too.
Step OwnFileCycler(const std::string& path, uint32_t seed) {
  return [path, seed](int i) {
    std::string got;
    const std::string dir = path.substr(0, path.rfind('/'));
    std::string data = Pattern(4096 + static_cast<size_t>(i) * 37, seed + static_cast<uint32_t>(i));
    if (int rc = WriteAt(path, O_WRONLY | O_CREAT | O_TRUNC, 0, data)) return rc;
    if (int rc = ReadBack(path, 0, 0, &got)) return rc;
    if (got != data) return Corrupt(path, i);
    if (i % 20 == 0) {
      DIR* d = opendir(dir.c_str());
      if (d == nullptr) return Failed("opendir", dir);
      while (readdir(d) != nullptr) {
      }
      closedir(d);
    }
    return 0;
  };
}

// The camera reads its photo and creates, writes, reads back and deletes a photo of its own.
Step CameraOwner(const std::string& photo, const std::string& expected) {
  return [photo, expected](int i) {
    std::string got;
    if (int rc = ReadBack(photo, 0, 0, &got)) return rc;
    if (got != expected) return Corrupt(photo, i);
    std::string shot = absl::StrCat("DCIM/Camera/burst_", i, ".jpg");
    std::string data = JpegBytes(2048 + static_cast<size_t>(i));
    if (int rc = WriteAt(shot, O_WRONLY | O_CREAT | O_EXCL, 0, data)) return rc;
    if (int rc = ReadBack(shot, 0, 0, &got)) return rc;
    if (got != data) return Corrupt(shot, i);
    if (unlink(shot.c_str()) != 0) return Failed("unlink", shot);
    return 0;
  };
}

// The apps move from round to round together: none starts round i+1 before all have ended
// round i, so every round has all eight apps' requests in flight at once, however fast or slow
// the machine. A failing app ends its round like the others, then all stop.
struct Rounds {
  pthread_barrier_t barrier;
  std::atomic<int> failed{0};
};

int RunRounds(Rounds* rounds, const Step& step) {
  int rc = 0;
  for (int i = 0; i < kIterations; ++i) {
    rc = step(i);
    if (rc != 0) rounds->failed.store(1);
    pthread_barrier_wait(&rounds->barrier);
    if (rounds->failed.load() != 0) return rc != 0 ? rc : kStopped;
  }
  return 0;
}

class ConcurrencyMountTest : public MountTest {};

TEST_F(ConcurrencyMountTest, EightAppsReadAndWriteAtOnceWithoutErrorsOrCorruption) {
  const std::string photo = JpegBytes(256 * 1024);
  const std::string song = Mp3Bytes(256 * 1024);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kSharedPhoto, photo, kCamera));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kSharedSong, song, kMusic));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kSharedDoc, std::string(2 * kRegion, '\0'), kNotes));

  struct Worker {
    const char* role;
    uid_t uid;
    Step step;
    pid_t pid = -1;
  };
  std::vector<Worker> workers = {
      {"gallery reads camera's photo", kGallery, Reader(kSharedPhoto, photo)},
      {"camera reads its photo and cycles its own", kCamera, CameraOwner(kSharedPhoto, photo)},
      {"music reads its song", kMusic, Reader(kSharedSong, song)},
      {"legacy reads music's song", kLegacy, Reader(kSharedSong, song)},
      {"notes writes region 0 of its file", kNotes, RegionWriter(kSharedDoc, 0)},
      {"files writes region 1 of notes' file", kFiles, RegionWriter(kSharedDoc, 1)},
      {"social cycles its own file", kSocial, OwnFileCycler("Download/social.bin", 7)},
      {"suite cycles its own file", kSuite, OwnFileCycler("Documents/suite.bin", 9)},
  };
  auto* rounds = static_cast<Rounds*>(
      mmap(nullptr, sizeof(Rounds), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(rounds, MAP_FAILED);
  new (rounds) Rounds;
  pthread_barrierattr_t shared;
  pthread_barrierattr_init(&shared);
  pthread_barrierattr_setpshared(&shared, PTHREAD_PROCESS_SHARED);
  ASSERT_EQ(pthread_barrier_init(&rounds->barrier, &shared, workers.size()), 0);
  pthread_barrierattr_destroy(&shared);
  for (Worker& w : workers) {
    w.pid = StartAs(
        w.uid, [rounds, &w] { return RunRounds(rounds, w.step); }, storage_.mountpoint());
  }
  for (Worker& w : workers) {
    int code = WaitChild(w.pid);
    EXPECT_EQ(code, 0) << w.role << " (uid " << w.uid << "): "
                       << (code == kIoError   ? "EIO"
                           : code == kCorrupt ? "data corruption"
                           : code == kStopped ? "stopped: another app failed"
                                              : "failed; see its message above");
  }
  pthread_barrier_destroy(&rounds->barrier);
  munmap(rounds, sizeof(Rounds));

  // What the last round of each writer left is in the lower tree.
  absl::StatusOr<std::string> doc = storage_.ReadLower(kSharedDoc);
  ASSERT_TRUE(doc.ok()) << doc.status();
  ASSERT_EQ(doc->size(), 2 * kRegion);
  EXPECT_TRUE(SameBytes(doc->substr(0, kRegion), Pattern(kRegion, kIterations - 1)));
  EXPECT_TRUE(SameBytes(doc->substr(kRegion), Pattern(kRegion, 100000 + kIterations - 1)));
  absl::StatusOr<std::string> social = storage_.ReadLower("Download/social.bin");
  ASSERT_TRUE(social.ok()) << social.status();
  EXPECT_TRUE(SameBytes(*social, Pattern(4096 + (kIterations - 1) * 37, 7 + kIterations - 1)));
  EXPECT_EQ(storage_.LowerOwner("Documents/suite.bin"), std::optional<std::string>("10070"));
  EXPECT_TRUE(SameBytes(*storage_.ReadLower(kSharedPhoto), photo));
}

}  // namespace
}  // namespace scopedfs::tests
