// A scan that several apps need is charged to each of their turns, never to the first asker's
// line alone. The attack as found: the music app (no image permission) queues location sweeps of
// large files, then stats the camera's new photo (listing visibility lets it), so that the
// photo's scan is queued behind its sweeps; an app that reads it redacted then opens the photo.
// The daemon's scan_waits_behind_other_app counts every scan another app queued that started while
// a request waited for a scan queued behind it and in no line of its own app: it must stay 0.
// scan_joins shows that the attack took place (the reader's request joined the scan music had
// queued). The sweeps are of another app's audio files, which music reads with location filled:
// an app's lookups of its own files scan nothing (what it may do with them does not depend on
// their content), and the camera's open of its own photo waits for no scan at all.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr int kSweeps = 4;
constexpr size_t kSweepBytes = size_t{100} << 20;  // one repeated byte: swept at every position

// An MP3 of kSweepBytes: an empty ID3v2 tag, then bytes no parser understands (audio is swept).
std::string SweptAudio() {
  std::string out("ID3\x04\x00\x00\x00\x00\x00\x00", 10);
  out.append(kSweepBytes, 'x');
  return out;
}

// A small JPEG with an XMP packet holding GPS: the kind of photo a camera has just written.
std::string Photo() {
  std::string xmp = std::string("http://ns.adobe.com/xap/1.0/\0", 29) +
                    "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
                    "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
                    "xmlns:exif=\"http://ns.adobe.com/exif/1.0/\" exif:GPSLatitude=\"48,51.4N\"/>"
                    "</rdf:RDF></x:xmpmeta>";
  std::string out("\xff\xd8", 2);
  size_t len = xmp.size() + 2;
  out += "\xff\xe1";
  out += static_cast<char>(len >> 8);
  out += static_cast<char>(len & 0xff);
  out += xmp;
  out += std::string("\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", 10);
  out += std::string(4096, '\x5a');
  out += "\xff\xd9";
  return out;
}

class SharedScanMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.control_socket = true;
    o.policy = "policy/configs/android.textproto";  // listing visibility: music may stat the photo
    return o;
  }
  int64_t Counter(const std::string& name) {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (!stats.ok()) return -1;
    auto it = stats->find(name);
    return it == stats->end() ? 0 : it->second;
  }
  // `reader_joins`: whether the reader's open needs the photo's scan (and so joins music's).
  void ReadAfterSweeps(uid_t reader, bool reader_joins);
};

// Music queues its sweeps and then the photo's scan; `reader` opens and reads the photo; the
// daemon's counts show that the reader joined music's queued scan (or, for the owner, joined
// none) and was passed by none of music's sweeps.
void SharedScanMountTest::ReadAfterSweeps(uid_t reader, bool reader_joins) {
  const std::string big = SweptAudio();
  for (int i = 0; i < kSweeps; ++i) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Download/sweep", i, ".mp3"), big, kNotes));
  }
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/new.jpg", Photo(), kCamera));
  int64_t scans = Counter("location_scans");
  int64_t joins = Counter("scan_joins");
  int64_t behind = Counter("scan_waits_behind_other_app");

  // Music's sweeps: one process per file, each stat queues a scan (two of them wait for theirs,
  // the others are answered at once; the scans stay queued).
  std::vector<pid_t> sweepers;
  for (int i = 0; i < kSweeps; ++i) {
    std::string path = absl::StrCat("Download/sweep", i, ".mp3");
    sweepers.push_back(StartAs(
        kMusic,
        [path] {
          struct stat st;
          return stat(path.c_str(), &st) == 0 ? 0 : 1;
        },
        storage_.mountpoint()));
    usleep(50000);  // in order: the queue's order is what is tested, not a time
  }
  // Then music asks for the photo's scan first: it is queued after the sweeps in music's line.
  AppResult looked = As(kMusic).Stat("DCIM/Camera/new.jpg");
  EXPECT_TRUE(Succeeds(looked)) << "listing visibility: music may stat the photo";

  // The reader opens the photo: its request joins the pending scan.
  absl::Time start = absl::Now();
  AppResult read = As(reader).Read("DCIM/Camera/new.jpg");
  // Printed for the record, not bounded: the count below is the test.
  printf("uid %u: the open and read took %.1f ms\n", reader,
         absl::ToDoubleMilliseconds(absl::Now() - start));
  ASSERT_TRUE(Succeeds(read));
  EXPECT_EQ(read.data.size(), Photo().size());

  for (pid_t pid : sweepers) EXPECT_EQ(WaitChild(pid), 0) << "a sweep's stat failed";
  // The sweeps nobody waited for finish in the background.
  for (int i = 0; i < 600 && Counter("location_scans") - scans < kSweeps + 1; ++i) usleep(100000);
  EXPECT_GE(Counter("location_scans") - scans, kSweeps + 1) << "the attack scanned too little";
  if (reader_joins) {
    EXPECT_GE(Counter("scan_joins") - joins, 1) << "the reader never joined music's queued scan";
  } else {
    EXPECT_EQ(Counter("scan_joins") - joins, 0) << "the owner's open waited for the photo's scan";
  }
  EXPECT_EQ(Counter("scan_waits_behind_other_app") - behind, 0)
      << "a request waited while sweeps another app queued ran ahead of its scan";
}

// The owner reads its photo as it is: its open needs no scan, so it joins none.
TEST_F(SharedScanMountTest, TheOwnersOpenDoesNotWaitBehindAnotherAppsSweeps) {
  ReadAfterSweeps(kCamera, /*joins=*/false);
}

// A reader owed the redacted copy (images, no ACCESS_MEDIA_LOCATION): its read needs the scan's
// ranges, and gets them at its own turn.
TEST_F(SharedScanMountTest, ARedactedReadersOpenDoesNotWaitBehindAnotherAppsSweeps) {
  ReadAfterSweeps(kSocial, /*joins=*/true);
}

}  // namespace
}  // namespace scopedfs::tests
