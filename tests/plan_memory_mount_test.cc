// Memory amplification through redaction plans, with the daemon under an address-space limit: a
// crafted JPEG with a hundred thousand XMP GPS attributes, opened many times by an app whose reads
// are redacted, costs one small shared plan, not one large copy per handle; a file with more
// location fields than can be merged is uncertain. Prints the daemon's VmRSS before and after.
// And the facts cache's bound: many photos' scans together are held to 64 MiB, as the daemon
// counts them, and what went past it was forgotten.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer reserves terabytes of shadow memory, which no address-space limit admits: the
// ASan run goes without one and still checks the daemon's RSS.
constexpr uint64_t kAddressSpace = 0;
#else
constexpr uint64_t kAddressSpace = uint64_t{256} << 20;
#endif
constexpr int kHandles = 64;
constexpr int kPerSegment = 2200;  // GPS attributes per XMP packet: one APP1 segment holds ~2,300
constexpr char kCrafted[] = "DCIM/Camera/crafted.jpg";

// A JPEG of `segments` APP1 XMP packets, each with `per_segment` GPS attributes separated by
// `filler` (non-GPS attributes), then an empty scan and EOI.
std::string XmpJpeg(int segments, int per_segment, const std::string& filler) {
  std::string out = "\xff\xd8";
  for (int s = 0; s < segments; ++s) {
    std::string packet =
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
        "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
        "xmlns:exif=\"http://ns.adobe.com/exif/1.0/\" xmlns:o=\"urn:o\"";
    for (int i = 0; i < per_segment; ++i) {
      absl::StrAppend(&packet, " exif:GPS", s, "x", i, "=\"1\"", filler);
    }
    packet += "/></rdf:RDF></x:xmpmeta>";
    std::string body = std::string("http://ns.adobe.com/xap/1.0/\0", 29) + packet;
    size_t len = body.size() + 2;
    EXPECT_LE(len, 65535u);
    out += "\xff\xe1";
    out.push_back(static_cast<char>(len >> 8));
    out.push_back(static_cast<char>(len & 0xff));
    out += body;
  }
  out += std::string("\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", 10) + std::string(16, '\0');
  out += "\xff\xd9";
  return out;
}

// A field of /proc/<pid>/status in KiB (VmRSS: resident now, VmHWM: the most ever), or -1.
int64_t StatusKb(pid_t pid, absl::string_view field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, field)) {
      int64_t kb = -1;
      std::string digits;
      for (char c : line) {
        if (c >= '0' && c <= '9') digits.push_back(c);
      }
      return absl::SimpleAtoi(digits, &kb) ? kb : -1;
    }
  }
  return -1;
}
int64_t RssKb(pid_t pid) { return StatusKb(pid, "VmRSS:"); }
int64_t HwmKb(pid_t pid) { return StatusKb(pid, "VmHWM:"); }

// What the redacted app got: how many handles it opened and read, the first errno, and whether
// any read showed a GPS attribute.
struct Opened {
  int opened = 0;
  int read = 0;
  int err = 0;
  bool gps_seen = false;
};

class PlanMemoryMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.address_space_limit = kAddressSpace;
    o.fd_limit = 1024;
    return o;
  }

  // The social app (redacted reads) opens `path` kHandles times, each with O_DIRECT so every
  // handle's read reaches the daemon, reads its first 64 KiB, and keeps every handle open until
  // the test has measured the daemon (a byte on `hold`).
  pid_t StartReader(const std::string& path, const int report[2], const int hold[2]) {
    int report_w = report[1], hold_r = hold[0], report_r = report[0], hold_w = hold[1];
    return StartAs(
        kSocial,
        [=] {
          close(report_r);
          close(hold_w);  // so that the test's close is the end of the hold
          Opened o;
          std::vector<int> fds;
          void* buf = nullptr;
          if (posix_memalign(&buf, 4096, 65536) != 0) return 1;
          for (int i = 0; i < kHandles; ++i) {
            int fd = open(path.c_str(), O_RDONLY | O_DIRECT);
            if (fd < 0) {
              if (o.err == 0) o.err = errno;
              continue;
            }
            ++o.opened;
            fds.push_back(fd);
            ssize_t n = pread(fd, buf, 65536, 0);
            if (n < 0) {
              if (o.err == 0) o.err = errno;
              continue;
            }
            ++o.read;
            o.gps_seen |= absl::StrContains(
                absl::string_view(static_cast<char*>(buf), static_cast<size_t>(n)), "exif:GPS");
          }
          (void)!write(report_w, &o, sizeof(o));
          char c;
          (void)!read(hold_r, &c, 1);
          for (int fd : fds) close(fd);
          return 0;
        },
        storage_.mountpoint());
  }

  struct Outcome {
    Opened opened;
    int64_t rss_before = -1, rss_after = -1;
    bool other_apps_served = false;
  };

  Outcome Attack(const std::string& path) {
    Outcome out;
    // One lookup first, so the scan (shared by every handle, cached per version) is not counted
    // as the handles' memory.
    EXPECT_TRUE(Succeeds(As(kGallery).Stat(path)));
    out.rss_before = RssKb(storage_.daemon_pid());
    int report[2], hold[2];
    if (pipe2(report, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0) return out;
    pid_t pid = StartReader(path, report, hold);
    close(report[1]);
    close(hold[0]);
    ssize_t n = read(report[0], &out.opened, sizeof(out.opened));
    EXPECT_EQ(n, static_cast<ssize_t>(sizeof(out.opened)));
    out.rss_after = RssKb(storage_.daemon_pid());
    // While every handle is held: other apps are served.
    AppResult raw = As(kGallery).Read(path);
    AppResult listed = As(kNotes).List("Download");
    out.other_apps_served = raw.ok() && listed.ok();
    EXPECT_TRUE(Succeeds(raw));
    EXPECT_TRUE(Succeeds(listed));
    close(hold[1]);
    close(report[0]);
    EXPECT_EQ(WaitChild(pid), 0);
    EXPECT_TRUE(storage_.daemon_running());
    return out;
  }
};

// The attack as reported, scaled down: 64 redacted handles of a 4 MB JPEG with 140,800 GPS
// attributes. Each handle used to hold its own 3.4 MB fill list; now one plan of merged ranges
// is shared, and the daemon's RSS barely moves.
TEST_F(PlanMemoryMountTest, RedactedHandlesShareOneSmallPlan) {
  std::string jpeg = XmpJpeg(64, kPerSegment, " o:a=\"1\"");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kCrafted, jpeg, kCamera));
  Outcome o = Attack(kCrafted);
  printf(
      "[ figures ] %d redacted handles of a %zu-byte JPEG with %d GPS attributes: daemon "
      "VmRSS %lld KiB before, %lld KiB after (address space limit %llu MiB)\n",
      o.opened.opened, jpeg.size(), 64 * kPerSegment, static_cast<long long>(o.rss_before),
      static_cast<long long>(o.rss_after), static_cast<unsigned long long>(kAddressSpace >> 20));
  EXPECT_EQ(o.opened.opened, kHandles) << ErrnoName(o.opened.err);
  EXPECT_EQ(o.opened.read, kHandles) << ErrnoName(o.opened.err);
  EXPECT_FALSE(o.opened.gps_seen) << "a GPS attribute reached the redacted reader";
  EXPECT_TRUE(o.other_apps_served);
  EXPECT_LT(o.rss_after - o.rss_before, 32 * 1024) << "KiB the handles cost the daemon";
}

// Not in the report: the GPS attributes are spread too far apart to merge (each followed by a
// long non-GPS attribute), so no bounded plan can list them. The file is uncertain: under the
// default policy the redacted app is refused (EACCES), as for any file whose location cannot be
// vouched for, and the daemon holds nothing per handle.
TEST_F(PlanMemoryMountTest, RangesTooFarApartToMergeMakeTheFileUncertain) {
  std::string filler = absl::StrCat(" o:pad=\"", std::string(80, 'p'), "\"");
  std::string jpeg = XmpJpeg(64, 600, filler);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kCrafted, jpeg, kCamera));
  Outcome o = Attack(kCrafted);
  printf(
      "[ figures ] far-apart variant (%d GPS attributes): %d opened, first errno %s; daemon "
      "VmRSS %lld KiB before, %lld KiB after\n",
      64 * 600, o.opened.opened, ErrnoName(o.opened.err).c_str(),
      static_cast<long long>(o.rss_before), static_cast<long long>(o.rss_after));
  EXPECT_EQ(o.opened.opened, 0);
  EXPECT_EQ(o.opened.err, EACCES) << ErrnoName(o.opened.err);
  EXPECT_FALSE(o.opened.gps_seen);
  EXPECT_TRUE(o.other_apps_served);
  EXPECT_LT(o.rss_after - o.rss_before, 32 * 1024) << "KiB the handles cost the daemon";
}

// The cached scans' bound, through the daemon's own count of what it keeps. Without an
// address-space limit: the daemon's threads and allocator arenas reserve about 400 MiB of it
// before any file is scanned, so under the limit above it runs out of address space (and aborts)
// at about half the cache's bound, long before the bound is reached.
class ScanCacheMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.control_socket = true;  // scan_cache_bytes and the other counts
    return o;
  }
  // The daemon's stats once no scan is queued or running.
  DaemonStats Idle() {
    absl::StatusOr<DaemonStats> stats = storage_.StatsOnceZero("scans_pending");
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : DaemonStats();
  }
};

// The facts cache's bound (docs/security.md, "Plans shared and bounded"): the location scans it
// keeps are held to 64 MiB in all. Gallery looks up 1,000 photos, each with 4,000 GPS attributes,
// few enough to stay 4,000 exact ranges (about 96 KiB kept per scan), half as much again as the
// bound together. Eight at a time, each batch's scans done before the next (so none is dropped
// for a full queue): the daemon's count of the bytes it keeps never passes 64 MiB, the cache was
// emptied at the bound, and the first photo, scanned before that, is scanned again at its next
// lookup, so the cache really forgot it.
TEST_F(ScanCacheMountTest, CachedScansAreHeldTo64MiB) {
  constexpr int kFiles = 1000;
  constexpr int kBatch = 8;  // the scans one app may have queued
  constexpr int64_t kBound = int64_t{64} << 20;
  std::string jpeg = XmpJpeg(2, 2000, "");
  for (int i = 0; i < kFiles; ++i) {
    SCOPEDFS_ASSERT_OK(
        storage_.WriteLower(absl::StrCat("DCIM/Camera/many", i, ".jpg"), jpeg, kCamera));
  }
  DaemonStats start = Idle();
  int64_t most = 0, per_scan = 0;
  DaemonStats last;
  for (int first = 0; first < kFiles; first += kBatch) {
    AppResult looked = As(kGallery).Run("stat a batch", [first] {
      AppResult out;
      for (int i = first; i < first + kBatch && i < kFiles; ++i) {
        struct stat st;
        if (stat(absl::StrCat("DCIM/Camera/many", i, ".jpg").c_str(), &st) != 0) out.err = errno;
      }
      return out;
    });
    ASSERT_TRUE(Succeeds(looked));
    last = Idle();
    ASSERT_FALSE(last.empty());
    most = std::max(most, last["scan_cache_bytes"]);
    if (first == 0) per_scan = (last["scan_cache_bytes"] - start["scan_cache_bytes"]) / kBatch;
  }
  printf(
      "[ figures ] %d scans of about %lld bytes each: the cache kept at most %lld bytes, "
      "emptied %lld times; daemon VmHWM %lld KiB\n",
      kFiles, static_cast<long long>(per_scan), static_cast<long long>(most),
      static_cast<long long>(last["scan_cache_clears"] - start["scan_cache_clears"]),
      static_cast<long long>(HwmKb(storage_.daemon_pid())));
  ASSERT_GE(per_scan * kFiles, kBound + kBound / 4)
      << "the photos' scans together are not well past the bound";
  EXPECT_GE(last["location_scans"] - start["location_scans"], kFiles) << "photos left unscanned";
  EXPECT_LE(most, kBound) << "bytes the cached scans kept";
  EXPECT_GE(last["scan_cache_clears"] - start["scan_cache_clears"], 1);
  // Forgotten, not only no longer counted: the first photo is scanned again.
  EXPECT_TRUE(Succeeds(As(kGallery).Stat("DCIM/Camera/many0.jpg")));
  EXPECT_EQ(Idle()["location_scans"], last["location_scans"] + 1);
  EXPECT_TRUE(storage_.daemon_running());
}

}  // namespace
}  // namespace scopedfs::tests
