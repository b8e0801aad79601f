// Leak matrix for location redaction, on a real mount with real app uids: a reader lacking
// ACCESS_MEDIA_LOCATION (social) must never receive a location byte, whatever syscall it uses and
// whoever else holds the file open; the entitled reader (gallery) and the owner (camera) always get
// the original bytes; nobody gets EIO. Samples are made by exiftool and ffmpeg (tests/media).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "media/content_facts.h"
#include "media/location/location.h"
#include "tests/media/sample_secrets.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr uid_t kEntitled = kGallery;  // READ_MEDIA_* + ACCESS_MEDIA_LOCATION
constexpr uid_t kRedacted = kSocial;   // READ_MEDIA_*, no ACCESS_MEDIA_LOCATION
constexpr uid_t kOwner = kCamera;
constexpr char kSocialDir[] = "Android/data/com.example.social";

// A sample with what a leak would look like in it, found independently of the parsers
// (tests/media/sample_secrets.h): every sample that carries location.
// The photos and videos, which the matrix below reads from DCIM/Camera; loc.m4a, audio, is read
// from Music by the audio app (AudioLocationIsRedacted).
using Sample = SampleSecrets;
constexpr char kAudioSample[] = "loc.m4a";
const std::vector<Sample>& Samples() {
  static const auto* samples = [] {
    auto* out = new std::vector<Sample>;
    for (const Sample& s : AllSampleSecrets()) {
      if (s.name != kAudioSample) out->push_back(s);
    }
    return out;
  }();
  return *samples;
}
const Sample& AudioSample() {
  for (const Sample& s : AllSampleSecrets()) {
    if (s.name == kAudioSample) return s;
  }
  abort();
}

// What the redacted reader must receive: the original with the location the parsers find filled,
// for the kinds the default policy's rule for this media class redacts.
std::string ExpectedRedacted(const std::string& original, absl::string_view name) {
  absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(original.data()),
                                  original.size());
  media::MediaFormat format = media::SniffFormat(bytes.subspan(0, media::kSniffBytes));
  media::MemorySource source(bytes);
  media::LocationScan scan = media::ScanLocation(format, source);
  EXPECT_FALSE(scan.malformed) << name << ": " << scan.error;
  (void)name;
  // Every kind the parsers find, whatever the media class (security issue, finding 4).
  uint32_t kinds = media::kAllLocationKinds;
  std::vector<media::FillRange> plan = media::PlanFills(scan.ranges, kinds);
  std::string out = original;
  media::ApplyFills(plan, 0, absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  return out;
}

// Offsets where a read window starts or ends on, or one byte around, a filled range's edge.
std::vector<uint64_t> BoundaryOffsets(const std::string& original, const std::string& redacted) {
  std::vector<uint64_t> edges;
  for (size_t i = 1; i < original.size(); ++i) {
    bool before = original[i - 1] != redacted[i - 1];
    bool here = original[i] != redacted[i];
    if (before != here) {
      for (int64_t d = -2; d <= 2; ++d) {
        int64_t at = static_cast<int64_t>(i) + d;
        if (at >= 0 && at < static_cast<int64_t>(original.size())) edges.push_back(at);
      }
    }
  }
  return edges;
}

AppResult Errno(int err, absl::string_view what) {
  AppResult r;
  r.err = err;
  r.data = std::string(what);
  return r;
}

// Each method returns the whole file as the app received it (or the failing call's errno).
enum class Method {
  kRead,
  kPreadBoundaries,
  kReadv,
  kMmapShared,
  kMmapPrivate,
  kSendfile,
  kSplice,
  kCopyFileRange,
  kProcReopen,
};

std::string MethodName(Method m) {
  switch (m) {
    case Method::kRead:
      return "read";
    case Method::kPreadBoundaries:
      return "pread at range boundaries";
    case Method::kReadv:
      return "readv";
    case Method::kMmapShared:
      return "mmap MAP_SHARED";
    case Method::kMmapPrivate:
      return "mmap MAP_PRIVATE";
    case Method::kSendfile:
      return "sendfile";
    case Method::kSplice:
      return "splice";
    case Method::kCopyFileRange:
      return "copy_file_range";
    case Method::kProcReopen:
      return "reopen via /proc/self/fd";
  }
  return "?";
}

const std::vector<Method>& AllMethods() {
  static const auto* all =
      new std::vector<Method>{Method::kRead,       Method::kPreadBoundaries, Method::kReadv,
                              Method::kMmapShared, Method::kMmapPrivate,     Method::kSendfile,
                              Method::kSplice,     Method::kCopyFileRange,   Method::kProcReopen};
  return *all;
}

// Runs in the app's process. `size` is the file size; `offsets` the pread window starts;
// `scratch` a file in the app's own directory for copy_file_range.
AppResult ReadWith(Method method, const std::string& path, size_t size,
                   const std::vector<uint64_t>& offsets, const std::string& scratch) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "open");
  AppResult r;
  std::string& out = r.data;
  out.assign(size, '\x7f');
  auto fail = [&](absl::string_view what) {
    int err = errno;
    close(fd);
    return Errno(err == 0 ? EIO : err, what);
  };
  switch (method) {
    case Method::kRead: {
      size_t done = 0;
      while (done < size) {
        ssize_t n = read(fd, out.data() + done, std::min<size_t>(size - done, 1000));
        if (n <= 0) return fail("read");
        done += static_cast<size_t>(n);
      }
      break;
    }
    case Method::kPreadBoundaries: {
      // Windows of several lengths starting at every boundary offset; each must agree with the
      // file at that offset, so they are written into `out` at their place. Bytes not covered by
      // any window come from a plain read first.
      if (pread(fd, out.data(), size, 0) != static_cast<ssize_t>(size)) return fail("pread");
      for (uint64_t off : offsets) {
        for (size_t len : {1, 2, 3, 7, 64, 4096}) {
          std::string buf(len, '\0');
          ssize_t n = pread(fd, buf.data(), len, static_cast<off_t>(off));
          if (n < 0) return fail("pread window");
          size_t want = std::min<size_t>(len, size - off);
          if (static_cast<size_t>(n) != want) return fail("pread short");
          // A window that disagrees with the full read is itself a finding: mark it.
          if (memcmp(buf.data(), out.data() + off, want) != 0) {
            close(fd);
            return Errno(EBADMSG, absl::StrCat("pread window at ", off, " len ", len,
                                               " differs from the full read"));
          }
        }
      }
      break;
    }
    case Method::kReadv: {
      size_t a = std::min<size_t>(5, size), b = std::min<size_t>(333, size - a);
      iovec iov[3] = {{out.data(), a}, {out.data() + a, b}, {out.data() + a + b, size - a - b}};
      if (readv(fd, iov, 3) != static_cast<ssize_t>(size)) return fail("readv");
      break;
    }
    case Method::kMmapShared:
    case Method::kMmapPrivate: {
      int flags = method == Method::kMmapShared ? MAP_SHARED : MAP_PRIVATE;
      void* p = mmap(nullptr, size, PROT_READ, flags, fd, 0);
      if (p == MAP_FAILED) return fail("mmap");
      memcpy(out.data(), p, size);
      munmap(p, size);
      break;
    }
    case Method::kSendfile: {
      int mfd = memfd_create("sink", MFD_CLOEXEC);
      off_t off = 0;
      size_t done = 0;
      while (done < size) {
        ssize_t n = sendfile(mfd, fd, &off, size - done);
        if (n <= 0) return fail("sendfile");
        done += static_cast<size_t>(n);
      }
      if (pread(mfd, out.data(), size, 0) != static_cast<ssize_t>(size)) return fail("memfd");
      close(mfd);
      break;
    }
    case Method::kSplice: {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) return fail("pipe");
      loff_t off = 0;
      size_t done = 0;
      while (done < size) {
        ssize_t n = splice(fd, &off, p[1], nullptr, std::min<size_t>(size - done, 16384), 0);
        if (n <= 0) return fail("splice");
        for (ssize_t got = 0; got < n;) {
          ssize_t m = read(p[0], out.data() + done + got, static_cast<size_t>(n - got));
          if (m <= 0) return fail("pipe read");
          got += m;
        }
        done += static_cast<size_t>(n);
      }
      close(p[0]);
      close(p[1]);
      break;
    }
    case Method::kCopyFileRange: {
      int dst = open(scratch.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (dst < 0) return fail("open scratch");
      loff_t in = 0, outoff = 0;
      size_t done = 0;
      while (done < size) {
        ssize_t n = copy_file_range(fd, &in, dst, &outoff, size - done, 0);
        if (n <= 0) return fail("copy_file_range");
        done += static_cast<size_t>(n);
      }
      if (pread(dst, out.data(), size, 0) != static_cast<ssize_t>(size)) return fail("scratch");
      close(dst);
      unlink(scratch.c_str());
      break;
    }
    case Method::kProcReopen: {
      std::string proc = absl::StrCat("/proc/self/fd/", fd);
      int again = open(proc.c_str(), O_RDONLY | O_CLOEXEC);
      if (again < 0) return fail("reopen");
      if (pread(again, out.data(), size, 0) != static_cast<ssize_t>(size)) return fail("pread");
      close(again);
      break;
    }
  }
  if (close(fd) != 0) return Errno(errno, "close");
  return r;
}

class LocationMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.control_socket = true;
    return o;
  }

  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const Sample& s : Samples()) {
      std::string bytes = ReadFileOrDie("tests/media/" + s.name);
      ASSERT_FALSE(bytes.empty()) << s.name;
      SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/" + s.name, bytes, kOwner));
      original_[s.name] = bytes;
      redacted_[s.name] = ExpectedRedacted(bytes, s.name);
    }
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower(kSocialDir, kRedacted));
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.gallery", kEntitled));
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.camera", kOwner));
  }

  static std::string Scratch(uid_t uid) {
    switch (uid) {
      case kRedacted:
        return std::string(kSocialDir) + "/scratch";
      case kEntitled:
        return "Android/data/com.example.gallery/scratch";
      default:
        return "Android/data/com.example.camera/scratch";
    }
  }

  AppResult ReadAs(uid_t uid, const Sample& s, Method m) {
    std::string path = "DCIM/Camera/" + s.name;
    std::vector<uint64_t> offsets = BoundaryOffsets(original_[s.name], redacted_[s.name]);
    size_t size = original_[s.name].size();
    return As(uid).Run(absl::StrCat(MethodName(m), " ", path),
                       [&] { return ReadWith(m, path, size, offsets, Scratch(uid)); });
  }

  // The redacted reader got exactly the expected copy and none of the secrets.
  void ExpectRedacted(const AppResult& r, const Sample& s) {
    ASSERT_TRUE(Succeeds(r));
    EXPECT_TRUE(SameBytes(r.data, redacted_[s.name])) << r.what;
    EXPECT_NE(r.data, original_[s.name]) << r.what << ": received the original bytes";
    for (const std::string& secret : s.secrets) {
      ASSERT_NE(original_[s.name].find(secret), std::string::npos)
          << s.name << " lacks the secret it was made with: " << absl::CEscape(secret);
      EXPECT_EQ(r.data.find(secret), std::string::npos)
          << r.what << ": location bytes " << absl::CEscape(secret) << " leaked";
    }
  }
  void ExpectOriginal(const AppResult& r, const Sample& s) {
    ASSERT_TRUE(Succeeds(r));
    EXPECT_TRUE(SameBytes(r.data, original_[s.name])) << r.what;
  }

  std::map<std::string, std::string> original_;
  std::map<std::string, std::string> redacted_;
};

TEST_F(LocationMountTest, SamplesCarryLocationAndTheParsersFindIt) {
  for (const Sample& s : Samples()) {
    EXPECT_NE(original_[s.name], redacted_[s.name]) << s.name << ": nothing to redact found";
    EXPECT_EQ(original_[s.name].size(), redacted_[s.name].size());
  }
}

// Audio carries location too: the audio app, without ACCESS_MEDIA_LOCATION, reads another app's
// song with none of it; the owner reads it raw.
TEST_F(LocationMountTest, AudioLocationIsRedacted) {
  const Sample& s = AudioSample();
  std::string path = "Music/" + s.name;
  std::string bytes = ReadFileOrDie("tests/media/" + s.name);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, bytes, kOwner));
  AppResult music = As(kMusic).Read(path);
  ASSERT_TRUE(Succeeds(music));
  EXPECT_TRUE(SameBytes(music.data, ExpectedRedacted(bytes, s.name)));
  for (const std::string& secret : s.secrets) {
    ASSERT_NE(bytes.find(secret), std::string::npos)
        << s.name << " lacks a secret it was made with";
    EXPECT_EQ(music.data.find(secret), std::string::npos)
        << "location bytes " << absl::CEscape(secret) << " leaked";
  }
  AppResult owner = As(kOwner).Read(path);
  ASSERT_TRUE(Succeeds(owner));
  EXPECT_TRUE(SameBytes(owner.data, bytes));
}

// Every method, entitled reader first, then the redacted reader, then the owner.
TEST_F(LocationMountTest, EntitledFirstThenRedactedThenOwner) {
  for (const Sample& s : Samples()) {
    SCOPED_TRACE(s.name);
    for (Method m : AllMethods()) {
      SCOPED_TRACE(MethodName(m));
      ExpectOriginal(ReadAs(kEntitled, s, m), s);
      ExpectRedacted(ReadAs(kRedacted, s, m), s);
      ExpectOriginal(ReadAs(kOwner, s, m), s);
    }
  }
}

// The redacted reader first: its page cache must not become anyone else's.
TEST_F(LocationMountTest, RedactedFirstThenEntitled) {
  for (const Sample& s : Samples()) {
    SCOPED_TRACE(s.name);
    for (Method m : AllMethods()) {
      SCOPED_TRACE(MethodName(m));
      ExpectRedacted(ReadAs(kRedacted, s, m), s);
      ExpectOriginal(ReadAs(kOwner, s, m), s);
      ExpectOriginal(ReadAs(kEntitled, s, m), s);
      ExpectRedacted(ReadAs(kRedacted, s, m), s);
    }
  }
}

// Runs `take` as `uid` in a process of its own; once it returns 0 (it now holds the file), runs
// `meanwhile` here, then lets the holder run `recheck`. Returns the holder's exit code: take's or
// recheck's non-zero result, or 0.
int WhileHeld(uid_t uid, const std::string& cwd, const std::function<int()>& take,
              const std::function<void()>& meanwhile, const std::function<int()>& recheck) {
  int go[2], done[2];
  if (pipe(go) != 0) return -1;
  if (pipe(done) != 0) return -1;
  pid_t holder = StartAs(
      uid,
      [&]() -> int {
        if (int rc = take()) return rc;
        char c = 1;
        if (write(go[1], &c, 1) != 1) return 90;
        if (read(done[0], &c, 1) != 1) return 91;
        return recheck();
      },
      cwd);
  close(go[1]);
  close(done[0]);
  char c = 1;
  // EOF instead of the byte: the holder gave up (its exit code says why); writing to it then
  // would raise SIGPIPE here.
  bool held = read(go[0], &c, 1) == 1;
  if (held) meanwhile();
  close(go[0]);
  bool released = held && write(done[1], &c, 1) == 1;
  close(done[1]);
  int rc = WaitChild(holder);
  return rc == 0 && !released ? 92 : rc;
}

// The entitled app holds a passthrough open and a shared mapping of the raw file for the whole
// time the redacted reader reads it every way, and then reads its mapping and the file again.
TEST_F(LocationMountTest, EntitledHoldsPassthroughOpenWhileRedactedReads) {
  const Sample& s = Samples()[0];
  std::string path = "DCIM/Camera/" + s.name;
  const std::string& want = original_[s.name];
  int fd = -1;
  void* p = nullptr;
  int rc = WhileHeld(
      kEntitled, storage_.mountpoint(),
      [&] {
        fd = open(path.c_str(), O_RDONLY);
        if (fd < 0) return 10;
        p = mmap(nullptr, want.size(), PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) return 11;
        return memcmp(p, want.data(), want.size()) == 0 ? 0 : 12;
      },
      [&] {
        for (Method m : AllMethods()) {
          SCOPED_TRACE(MethodName(m));
          ExpectRedacted(ReadAs(kRedacted, s, m), s);
        }
      },
      [&] {
        if (memcmp(p, want.data(), want.size()) != 0) return 15;
        std::string again(want.size(), '\0');
        if (pread(fd, again.data(), again.size(), 0) != static_cast<ssize_t>(again.size())) {
          return 16;
        }
        return again == want ? 0 : 17;
      });
  EXPECT_EQ(rc, 0) << "the entitled app's open saw other bytes than the original";
}

// And the other way round: the redacted reader holds its mapping while the entitled one and the
// owner read; the redacted mapping must stay redacted and theirs original.
TEST_F(LocationMountTest, RedactedHoldsMappingWhileOthersRead) {
  const Sample& s = Samples()[0];
  std::string path = "DCIM/Camera/" + s.name;
  const std::string& want = redacted_[s.name];
  void* p = nullptr;
  int rc = WhileHeld(
      kRedacted, storage_.mountpoint(),
      [&] {
        int fd = open(path.c_str(), O_RDONLY);
        if (fd < 0) return 10;
        p = mmap(nullptr, want.size(), PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) return 11;
        return memcmp(p, want.data(), want.size()) == 0 ? 0 : 12;
      },
      [&] {
        for (Method m : AllMethods()) {
          SCOPED_TRACE(MethodName(m));
          ExpectOriginal(ReadAs(kEntitled, s, m), s);
          ExpectOriginal(ReadAs(kOwner, s, m), s);
        }
      },
      [&] { return memcmp(p, want.data(), want.size()) == 0 ? 0 : 15; });
  EXPECT_EQ(rc, 0) << "the redacted mapping changed under the other readers";
}

// Both apps read the same file at the same time, over and over.
TEST_F(LocationMountTest, ConcurrentReadersEachGetTheirView) {
  constexpr int kRounds = 200;
  for (const Sample& s : {Samples()[0], Samples()[5]}) {
    SCOPED_TRACE(s.name);
    std::string path = "DCIM/Camera/" + s.name;
    auto loop = [&](const std::string& want) {
      return [&, want]() -> int {
        std::string buf(want.size(), '\0');
        for (int i = 0; i < kRounds; ++i) {
          int fd = open(path.c_str(), O_RDONLY);
          if (fd < 0) return 10;
          ssize_t n = pread(fd, buf.data(), buf.size(), 0);
          close(fd);
          if (n != static_cast<ssize_t>(buf.size())) return 11;
          if (buf != want) return 12;
        }
        return 0;
      };
    };
    pid_t a = StartAs(kEntitled, loop(original_[s.name]), storage_.mountpoint());
    pid_t b = StartAs(kRedacted, loop(redacted_[s.name]), storage_.mountpoint());
    pid_t o = StartAs(kOwner, loop(original_[s.name]), storage_.mountpoint());
    EXPECT_EQ(WaitChild(a), 0) << "entitled reader";
    EXPECT_EQ(WaitChild(b), 0) << "redacted reader";
    EXPECT_EQ(WaitChild(o), 0) << "owner";
  }
}

// Linking or moving another app's photo into the app's own directory, where it would have full
// access, must not turn the redacted copy into the original. Under the location guard the
// caller's own area grants no raw read of another app's photo, so such a link or rename gains
// nothing: it may happen, but through the new name the caller still reads the redacted copy and
// may not write. Moving it where some other app would read more is refused (EXDEV).
TEST_F(LocationMountTest, LinkAndRenameCannotUnredact) {
  const Sample& s = Samples()[0];
  std::string path = "DCIM/Camera/" + s.name;
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.files", kFiles));
  ExpectRedacted(ReadAs(kFiles, s, Method::kRead), s);
  for (uid_t uid : {kRedacted, kFiles}) {
    std::string own = uid == kFiles ? "Android/data/com.example.files" : kSocialDir;
    std::string mine = own + "/mine.jpg";
    AppResult link = As(uid).Link(path, mine);
    if (link.ok()) {
      ExpectRedacted(
          As(uid).Run(
              "read link",
              [&] { return ReadWith(Method::kRead, mine, original_[s.name].size(), {}, ""); }),
          s);
      EXPECT_TRUE(FailsWith(As(uid).Open(mine, O_RDWR), EACCES));
      EXPECT_TRUE(FailsWith(As(uid).Open(mine, O_WRONLY), EACCES));
      ASSERT_TRUE(Succeeds(As(uid).Unlink(mine)));
    }
    EXPECT_TRUE(storage_.LowerExists(path));
  }
  // Into DCIM/Camera of another name the photo stays redacted for the mover: allowed.
  ASSERT_TRUE(Succeeds(As(kFiles).Rename(path, "DCIM/moved.jpg")));
  ASSERT_TRUE(Succeeds(As(kFiles).Rename("DCIM/moved.jpg", path)));
  absl::StatusOr<std::string> lower = storage_.ReadLower(path);
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(*lower, original_[s.name]) << "the photo changed";
  ExpectRedacted(ReadAs(kRedacted, s, Method::kRead), s);
  ExpectRedacted(ReadAs(kFiles, s, Method::kRead), s);
}

// Opening the redacted view read-write would let a read-modify-write make the fills permanent.
TEST_F(LocationMountTest, RedactedViewCannotBeOpenedReadWrite) {
  const Sample& s = Samples()[0];
  std::string path = "DCIM/Camera/" + s.name;
  EXPECT_FALSE(As(kRedacted).Open(path, O_RDWR).ok());
  absl::StatusOr<std::string> lower = storage_.ReadLower(path);
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(*lower, original_[s.name]);
}

// Media without location need no fills, but a reader who would be redacted still reads them
// mediated (never passthrough): location its owner writes later must reach it filled, also
// through an fd it holds (security issue, finding 7). Stats count these opens as clean media.
TEST_F(LocationMountTest, CleanMediaAreMediatedForWouldBeRedactedReaders) {
  for (const char* name : {"clean.jpg", "clean.mp4"}) {
    SCOPED_TRACE(name);
    std::string bytes = ReadFileOrDie(std::string("tests/media/") + name);
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(std::string("DCIM/Camera/") + name, bytes, kOwner));
    absl::StatusOr<DaemonStats> before = storage_.Stats();
    ASSERT_TRUE(before.ok()) << before.status();
    AppResult r = As(kRedacted).Read(std::string("DCIM/Camera/") + name);
    ASSERT_TRUE(Succeeds(r));
    EXPECT_TRUE(SameBytes(r.data, bytes));
    absl::StatusOr<DaemonStats> after = storage_.Stats();
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ((*after)["open_clean_media"] - (*before)["open_clean_media"], 1);
    EXPECT_EQ((*after)["open_passthrough"] - (*before)["open_passthrough"], 0);
    EXPECT_EQ((*after)["open_mediated"] - (*before)["open_mediated"], 1);
    // The entitled reader still gets passthrough.
    absl::StatusOr<DaemonStats> mid = storage_.Stats();
    ASSERT_TRUE(mid.ok());
    ASSERT_TRUE(Succeeds(As(kEntitled).Read(std::string("DCIM/Camera/") + name)));
    absl::StatusOr<DaemonStats> end = storage_.Stats();
    ASSERT_TRUE(end.ok());
    EXPECT_EQ((*end)["open_passthrough"] - (*mid)["open_passthrough"], 1);
  }
  // A photo with location read by the same app is mediated instead.
  absl::StatusOr<DaemonStats> before = storage_.Stats();
  ASSERT_TRUE(before.ok());
  ExpectRedacted(ReadAs(kRedacted, Samples()[0], Method::kRead), Samples()[0]);
  absl::StatusOr<DaemonStats> after = storage_.Stats();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)["open_mediated"] - (*before)["open_mediated"], 1);
  EXPECT_GT((*after)["redacted_reads"], (*before)["redacted_reads"]);
  EXPECT_EQ((*after)["open_clean_media"], (*before)["open_clean_media"]);
}

// A rewrite of the photo by its owner (another location encoding, another size) is what the next
// redacted read sees redacted: cached facts and cached pages of the old version are not reused.
TEST_F(LocationMountTest, OwnerRewriteIsRedactedAfresh) {
  const Sample& first = Samples()[0];
  const Sample& second = Samples()[1];
  std::string path = "DCIM/Camera/" + first.name;
  ExpectRedacted(ReadAs(kRedacted, first, Method::kMmapShared), first);
  ASSERT_TRUE(Succeeds(As(kOwner).Write(path, original_[second.name])));
  for (Method m : {Method::kRead, Method::kMmapShared}) {
    SCOPED_TRACE(MethodName(m));
    AppResult r = As(kRedacted).Run(
        "read rewritten", [&] { return ReadWith(m, path, original_[second.name].size(), {}, ""); });
    ASSERT_TRUE(Succeeds(r));
    EXPECT_TRUE(SameBytes(r.data, redacted_[second.name]));
    for (const std::string& secret : second.secrets) {
      EXPECT_EQ(r.data.find(secret), std::string::npos) << "rewritten location leaked";
    }
  }
}

// A photo whose metadata cannot be parsed: denied to the redacted reader by default, raw for the
// entitled reader and the owner.
TEST_F(LocationMountTest, MalformedPhotoIsDeniedToRedactedReaderByDefault) {
  std::string bytes = original_["gps.jpg"];
  // Truncate inside the Exif segment: its length now runs past the end of the file.
  std::string cut = bytes.substr(0, 200);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/cut.jpg", cut, kOwner));
  EXPECT_TRUE(FailsWith(As(kRedacted).Read("DCIM/Camera/cut.jpg"), EACCES));
  AppResult a = As(kEntitled).Read("DCIM/Camera/cut.jpg");
  ASSERT_TRUE(Succeeds(a));
  EXPECT_EQ(a.data, cut);
  AppResult o = As(kOwner).Read("DCIM/Camera/cut.jpg");
  ASSERT_TRUE(Succeeds(o));
  EXPECT_EQ(o.data, cut);
}

// The same file under uncertain_location: REDACT_ALL: readable, with everything from the point
// parsing failed filled.
class LocationRedactAllMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    std::string policy = ReadFileOrDie("policy/configs/android.textproto");
    policy += "\nuncertain_location: UNCERTAIN_LOCATION_REDACT_ALL\n";
    std::string path = ::testing::TempDir() + "/redact_all.textproto";
    std::ofstream(path) << policy;
    DaemonOptions o;
    o.policy = path;
    return o;
  }
};

TEST_F(LocationRedactAllMountTest, MalformedPhotoIsFilledFromTheBreakOn) {
  std::string bytes = ReadFileOrDie("tests/media/gps.jpg");
  std::string cut = bytes.substr(0, 200);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/cut.jpg", cut, kOwner));
  AppResult r = As(kRedacted).Read("DCIM/Camera/cut.jpg");
  ASSERT_TRUE(Succeeds(r));
  ASSERT_EQ(r.data.size(), cut.size());
  // The SOI marker and the APP1 header before the Exif data stay; no byte of the Exif payload
  // survives.
  EXPECT_EQ(r.data.substr(0, 2), cut.substr(0, 2));
  size_t exif = cut.find("Exif");
  ASSERT_NE(exif, std::string::npos);
  EXPECT_EQ(r.data.substr(exif + 6), std::string(cut.size() - exif - 6, '\0'));
  AppResult a = As(kEntitled).Read("DCIM/Camera/cut.jpg");
  ASSERT_TRUE(Succeeds(a));
  EXPECT_EQ(a.data, cut);
}

}  // namespace
}  // namespace scopedfs::tests
