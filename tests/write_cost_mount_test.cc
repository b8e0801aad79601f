// What an app's own writes cost the daemon under android.textproto, as real app uids: a file its
// owner makes, writes and sets the times and mode of (what `tar x` does for every file) is judged
// at those SETATTRs without its content, since the owner's rights do not depend on it
// (Engine::DependsOnContent): no location scan runs. The content is still read where it decides:
// another app's open of a file it reads redacted scans it, and another app's SETATTR is judged
// by it. The owner's listings, lookups and opens of its files read no content either
// (ReadChildContent, InfoForDecisions). Needs root and /dev/fuse; skips, saying so, without them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class WriteCostMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = "policy/configs/android.textproto";
    o.control_socket = true;
    return o;
  }
  int64_t Counter(const std::string& name) {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? (*stats)[name] : -1;
  }
  // As `tar x` makes a file: create, write, then set its times and mode through the descriptor
  // (SETATTRs of a version the daemon has not seen: the writes went through passthrough), close.
  AppResult Extract(uid_t uid, const std::string& path, const std::string& content) {
    return As(uid).Run(absl::StrCat("extract ", path), [path, content] {
      AppResult out;
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) {
        out.err = errno;
        return out;
      }
      struct timespec times[2] = {{1000000, 0}, {1000000, 0}};
      if (write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size()) ||
          futimens(fd, times) != 0 || fchmod(fd, 0644) != 0) {
        out.err = errno;
      }
      close(fd);
      return out;
    });
  }
};

// The owner's extraction of files of unknown content and of a photo scans none of them; another
// app owed the photo redacted (social: images without location access) has it scanned.
TEST_F(WriteCostMountTest, AnOwnersWritesAndTimesScanNothing) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/src", kNotes));
  int64_t scans = Counter("location_scans");
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Succeeds(Extract(kNotes, absl::StrCat("Download/src/f", i, ".c"),
                                 absl::StrCat("int f", i, "(void) { return ", i, "; }\n"))));
  }
  const std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  ASSERT_TRUE(Succeeds(Extract(kNotes, "Download/src/shot.jpg", photo)));
  struct stat st;
  ASSERT_EQ(stat(storage_.Lower("Download/src/f4.c").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, 1000000) << "the times were not set";
  EXPECT_EQ(Counter("location_scans") - scans, 0) << "the owner's own writes were scanned";
  AppResult read = As(kSocial).Read("Download/src/shot.jpg");
  ASSERT_TRUE(Succeeds(read));
  EXPECT_EQ(read.data.size(), photo.size());
  EXPECT_NE(read.data, photo) << "the location was not filled";
  EXPECT_GE(Counter("location_scans") - scans, 1) << "a redacted reader's file was not scanned";
}

// What `grep -r` does as the owner: lists the directory, stats each name and reads each file.
// Its own files are read and listed without their content being read by the daemon (no head, no
// location scan, no facts record): it reads them raw whatever they hold. Another app owed the
// photo redacted still has it scanned at its lookup and open, and reads it filled.
TEST_F(WriteCostMountTest, AnOwnersReadsAndListingsReadNoContent) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/tree", kNotes));
  for (int i = 0; i < 5; ++i) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Download/tree/f", i, ".c"),
                                           absl::StrCat("void *p", i, " = kmalloc(8);\n"), kNotes));
  }
  const std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/tree/shot.jpg", photo, kNotes));
  int64_t scans = Counter("location_scans");
  int64_t reads = Counter("content_reads");
  int64_t records = Counter("facts_records_written");
  AppResult listed = As(kNotes).List("Download/tree");
  ASSERT_TRUE(Succeeds(listed));
  for (const char* name : {"f0.c", "f1.c", "f2.c", "f3.c", "f4.c", "shot.jpg"}) {
    std::string path = absl::StrCat("Download/tree/", name);
    ASSERT_TRUE(Succeeds(As(kNotes).Stat(path))) << path;
    AppResult read = As(kNotes).Read(path);
    ASSERT_TRUE(Succeeds(read)) << path;
    if (std::string(name) == "shot.jpg") {
      EXPECT_EQ(read.data, photo) << "the owner reads its photo as it is";
    }
  }
  EXPECT_EQ(Counter("location_scans") - scans, 0) << "the owner's own files were scanned";
  EXPECT_EQ(Counter("content_reads") - reads, 0) << "the owner's own files' content was read";
  EXPECT_EQ(Counter("facts_records_written") - records, 0);
  AppResult read = As(kSocial).Read("Download/tree/shot.jpg");
  ASSERT_TRUE(Succeeds(read));
  EXPECT_EQ(read.data.size(), photo.size());
  EXPECT_NE(read.data, photo) << "the location was not filled";
  EXPECT_GE(Counter("location_scans") - scans, 1) << "a redacted reader's file was not scanned";
}

// Nor do its removals: an owner deleting its own files (rm -rf of its tree) has none of them read
// or swept for location, as its LOOKUP and DELETE of them do not depend on their content; another
// app's deletion of the owner's photo is still judged by what the photo is.
TEST_F(WriteCostMountTest, AnOwnersRemovalsReadNoContent) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/tree", kNotes));
  const std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  std::vector<std::string> names = {"shot.jpg", "notes.pdf", "f.c"};
  for (const std::string& name : names) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/tree/" + name,
                                           name == "shot.jpg" ? photo : PdfBytes(), kNotes));
  }
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/theirs.jpg", photo, kNotes));
  int64_t scans = Counter("location_scans");
  int64_t reads = Counter("content_reads");
  for (const std::string& name : names) {
    EXPECT_TRUE(Succeeds(As(kNotes).Unlink("Download/tree/" + name))) << name;
  }
  EXPECT_TRUE(Succeeds(As(kNotes).Rmdir("Download/tree")));
  EXPECT_EQ(Counter("location_scans") - scans, 0) << "the owner's removed files were scanned";
  EXPECT_EQ(Counter("content_reads") - reads, 0) << "the owner's removed files were read";
  struct stat st;
  EXPECT_NE(stat(storage_.Lower("Download/tree").c_str(), &st), 0) << "the tree is still there";
  // The gallery may not delete another app's photo (its rules give it images to read): judged
  // with the photo's content read.
  EXPECT_FALSE(Succeeds(As(kGallery).Unlink("Download/theirs.jpg")));
  EXPECT_GE(Counter("content_reads") - reads, 1)
      << "another app's deletion was not judged by content";
  EXPECT_EQ(stat(storage_.Lower("Download/theirs.jpg").c_str(), &st), 0);
}

// Another app's SETATTR of a file it does not own is judged with the content read: all-files
// access (without location access) may change a document but not an image it reads redacted.
TEST_F(WriteCostMountTest, AnotherAppsSetattrIsJudgedByContent) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/doc.pdf", PdfBytes(), kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/shot.jpg", JpegBytes(), kNotes));
  EXPECT_TRUE(Succeeds(As(kFiles).Truncate("Download/doc.pdf", 10)));
  EXPECT_FALSE(Succeeds(As(kFiles).Truncate("Download/shot.jpg", 10)));
  struct stat st;
  ASSERT_EQ(stat(storage_.Lower("Download/shot.jpg").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(JpegBytes().size()));
}

}  // namespace
}  // namespace scopedfs::tests
