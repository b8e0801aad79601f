// Tests for the case-insensitive name search: ASCII letters and the code points whose ext4 fold is
// ASCII (base/folded_name.h), the exact name is never its own
// match, twins resolve to the first name in byte order whatever the listing order, and a search
// past its bound says so (EMFILE) instead of answering.
#include "daemon/tables/case_names.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

TEST(SameFoldedNameTest, FoldsAsciiLettersOnly) {
  EXPECT_TRUE(SameFoldedName("Download", "dOWNLOAD"));
  EXPECT_TRUE(SameFoldedName("a-1_B.JPG", "A-1_b.jpg"));
  EXPECT_FALSE(SameFoldedName("Download", "Downloads"));
  EXPECT_FALSE(SameFoldedName("a", "b"));
  // '@' (0x40) and '`' (0x60) differ from letters by the case bit, but are not letters.
  EXPECT_FALSE(SameFoldedName("@", "`"));
  EXPECT_FALSE(SameFoldedName("[", "{"));
  // Other non-ASCII bytes are compared as they are ("É" vs "é" in UTF-8).
  EXPECT_FALSE(SameFoldedName("\xc3\x89", "\xc3\xa9"));
  EXPECT_TRUE(SameFoldedName("\xc3\xa9X", "\xc3\xa9x"));
  // As ext4's casefold takes it: a long s is an s.
  EXPECT_TRUE(SameFoldedName("Mu\xc5\xbfic", "MUSIC"));
  EXPECT_FALSE(SameFoldedName("Documen\xc5\xbf", "Documents"));
}

class FindCaseMatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = absl::StrCat(::testing::TempDir(), "/case_names_XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fd_.reset(open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
  }
  void Touch(const std::string& name) {
    int fd = openat(fd_.get(), name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << name;
    close(fd);
  }
  std::string dir_;
  base::UniqueFd fd_;
};

TEST_F(FindCaseMatchTest, FindsTheLowerSpelling) {
  Touch("Photo.JPG");
  std::string match;
  EXPECT_EQ(FindCaseMatch(fd_.get(), "photo.jpg", &match), 0);
  EXPECT_EQ(match, "Photo.JPG");
  EXPECT_EQ(FindCaseMatch(fd_.get(), "other.jpg", &match), ENOENT);
  EXPECT_EQ(match, "");
}

// A spelling folded beyond ASCII letters finds the lower's name, and the reverse.
TEST_F(FindCaseMatchTest, FindsWhatACasefoldedLowerWouldFind) {
  Touch("Music");
  Touch("Mu\xc5\xbfic2");
  std::string match;
  EXPECT_EQ(FindCaseMatch(fd_.get(), "Mu\xc5\xbfic", &match), 0);
  EXPECT_EQ(match, "Music");
  EXPECT_EQ(FindCaseMatch(fd_.get(), "music2", &match), 0);
  EXPECT_EQ(match, "Mu\xc5\xbfic2");
  EXPECT_EQ(FindCaseMatch(fd_.get(), "Documen\xc5\xbf", &match), ENOENT);
}

TEST_F(FindCaseMatchTest, TheExactNameIsNotAMatch) {
  Touch("a");
  std::string match;
  EXPECT_EQ(FindCaseMatch(fd_.get(), "a", &match), ENOENT);
  Touch("A");
  EXPECT_EQ(FindCaseMatch(fd_.get(), "a", &match), 0);
  EXPECT_EQ(match, "A");
}

TEST_F(FindCaseMatchTest, TwinsResolveInByteOrder) {
  for (const char* name : {"rEADME", "ReadMe", "README", "readmE"}) Touch(name);
  std::string match;
  EXPECT_EQ(FindCaseMatch(fd_.get(), "readme", &match), 0);
  EXPECT_EQ(match, "README");  // the smallest in strcmp order
  EXPECT_EQ(FindCaseMatch(fd_.get(), "README", &match), 0);
  EXPECT_EQ(match, "ReadMe");  // the exact name is skipped; the next in order
}

TEST_F(FindCaseMatchTest, BoundedSearchRefusesToAnswer) {
  for (int i = 0; i < 50; ++i) Touch(absl::StrCat("f", i));
  std::string match;
  int read = 0;
  EXPECT_EQ(FindCaseMatch(fd_.get(), "F7", &match, /*max_entries=*/20, &read), EMFILE);
  EXPECT_EQ(match, "");
  EXPECT_EQ(read, 20);
  EXPECT_EQ(FindCaseMatch(fd_.get(), "F7", &match, /*max_entries=*/100, &read), 0);
  EXPECT_EQ(match, "f7");
  EXPECT_EQ(read, 52);  // with . and ..
}

class CaseIndexTest : public FindCaseMatchTest {
 protected:
  static constexpr size_t kFiles = 16;
  void SetUp() override {
    FindCaseMatchTest::SetUp();
    for (size_t i = 0; i < kFiles; ++i) Touch(absl::StrCat("file", i));
  }
  // The directory's generation as its node would have it.
  uint64_t Generation() const { return StampOf(fd_.get()).generation; }
  CaseIndex index_;
};

TEST_F(CaseIndexTest, AnswersAsTheSearchAndIndexesLargeDirectories) {
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "FILE7", &match), 0);
  EXPECT_EQ(match, "file7");
  EXPECT_EQ(index_.indexed_names(), kFiles + 2u);
  EXPECT_EQ(index_.Find(fd_.get(), "file7", &match), ENOENT);  // the exact name is no match
  EXPECT_EQ(index_.Find(fd_.get(), "nosuch", &match), ENOENT);
}

// The index spells only ASCII letters' case: a name folded beyond them is answered by a read,
// and right, both ways.
TEST_F(CaseIndexTest, NamesFoldedBeyondAsciiAreFoundByARead) {
  Touch("Music");
  Touch("Po\xef\xac\x86s");  // "Poﬆs", st ligature: "posts"
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "nosuch", &match), ENOENT);  // builds the index
  EXPECT_EQ(index_.indexed_names(), kFiles + 4u);
  EXPECT_EQ(index_.Find(fd_.get(), "Mu\xc5\xbfic", &match), 0);
  EXPECT_EQ(match, "Music");
  EXPECT_EQ(index_.Find(fd_.get(), "POSTS", &match), 0);
  EXPECT_EQ(match, "Po\xef\xac\x86s");
  EXPECT_EQ(index_.Find(fd_.get(), "Mu\xc5\xbfi", &match), ENOENT);
  EXPECT_EQ(index_.indexed_names(), kFiles + 4u);  // still indexed
}

TEST_F(CaseIndexTest, SeesChangesMadeBehindItsBack) {
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "Twin", &match), ENOENT);
  Touch("TWIN");
  EXPECT_EQ(index_.Find(fd_.get(), "Twin", &match), 0);
  EXPECT_EQ(match, "TWIN");
  ASSERT_EQ(unlinkat(fd_.get(), "TWIN", 0), 0);
  EXPECT_EQ(index_.Find(fd_.get(), "Twin", &match), ENOENT);
}

TEST_F(CaseIndexTest, LearnsTheDaemonsOwnChanges) {
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "NEW", &match), ENOENT);
  DirStamp before = StampOf(fd_.get());
  Touch("new");
  index_.Added(fd_.get(), before, "new");
  EXPECT_EQ(index_.indexed_names(), kFiles + 3u);  // kept, one more
  EXPECT_EQ(index_.Find(fd_.get(), "NEW", &match), 0);
  EXPECT_EQ(match, "new");
  before = StampOf(fd_.get());
  ASSERT_EQ(unlinkat(fd_.get(), "new", 0), 0);
  index_.Removed(fd_.get(), before, "new");
  EXPECT_EQ(index_.indexed_names(), kFiles + 2u);
  EXPECT_EQ(index_.Find(fd_.get(), "NEW", &match), ENOENT);
  // A change it was not told of, made before the daemon's own, drops the index.
  Touch("other");
  before = StampOf(fd_.get());
  Touch("mine");
  index_.Added(fd_.get(), before, "mine");
  EXPECT_EQ(index_.indexed_names(), 0u);
  EXPECT_EQ(index_.Find(fd_.get(), "OTHER", &match), 0);
}

// The daemon stamps a directory before its own change only while the index holds it: an
// unindexed one (every directory under POSIX semantics) is not asked, and an index built between
// that unasked stamp and the change is dropped, never updated from a state nobody saw.
TEST_F(CaseIndexTest, StampsBeforeAChangeOnlyTheDirectoriesItHolds) {
  struct stat st;
  ASSERT_EQ(fstat(fd_.get(), &st), 0);
  const ObjectId dir{st.st_dev, st.st_ino, Generation()};
  // Not indexed: the fd is not asked (a bad one would do), the stamp says the state is unknown.
  DirStamp unasked = index_.Before(-1, dir);
  EXPECT_EQ(unasked.mtime_ns, -1);
  EXPECT_EQ(unasked.ino, st.st_ino);
  EXPECT_EQ(index_.directory_reads(), 0u);

  // Built meanwhile (a lookup of another name), then told of the change: dropped, so the next
  // lookup reads the directory again and finds the new name.
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "NEW", &match), ENOENT);
  EXPECT_EQ(index_.directory_reads(), 1u);
  Touch("new");
  index_.Added(fd_.get(), unasked, "new");
  EXPECT_EQ(index_.indexed_names(), 0u);
  EXPECT_EQ(index_.Find(fd_.get(), "NEW", &match), 0);
  EXPECT_EQ(match, "new");
  EXPECT_EQ(index_.directory_reads(), 2u);

  // Indexed: stamped, and the change is learnt without another read.
  DirStamp before = index_.Before(fd_.get(), dir);
  EXPECT_NE(before.mtime_ns, -1);
  Touch("newer");
  index_.Added(fd_.get(), before, "newer");
  EXPECT_EQ(index_.indexed_names(), kFiles + 4u);
  EXPECT_EQ(index_.Find(fd_.get(), "NEWER", &match), 0);
  EXPECT_EQ(match, "newer");
  before = index_.Before(fd_.get(), dir);
  ASSERT_EQ(unlinkat(fd_.get(), "newer", 0), 0);
  index_.Removed(fd_.get(), before, "newer");
  EXPECT_EQ(index_.Find(fd_.get(), "NEWER", &match), ENOENT);
  EXPECT_EQ(index_.directory_reads(), 2u);
}

// A directory of more names than the old per-index bound (131,072), made as an app makes one: a
// lookup of a name that exists in no case reads it at most once, however many such lookups
// follow; so do lookups of names that exist in another case; and the daemon's own creates there
// keep the index.
// LowerSpelling names the one spelling to open, the asked one included, from the index alone:
// one read builds it, and every later name, there or not, is answered by a probe.
TEST_F(CaseIndexTest, LowerSpellingAnswersEveryNameFromTheIndex) {
  Touch("Notes.TXT");
  std::string lower;
  EXPECT_EQ(index_.LowerSpelling(fd_.get(), Generation(), "file3", &lower), 0);
  EXPECT_EQ(lower, "file3");  // the name as spelled is its own spelling here
  EXPECT_EQ(index_.LowerSpelling(fd_.get(), Generation(), "NOTES.txt", &lower), 0);
  EXPECT_EQ(lower, "Notes.TXT");
  EXPECT_EQ(index_.LowerSpelling(fd_.get(), Generation(), "Notes.TXT", &lower), 0);
  EXPECT_EQ(lower, "Notes.TXT");
  EXPECT_EQ(index_.LowerSpelling(fd_.get(), Generation(), "nosuch", &lower), ENOENT);
  EXPECT_EQ(lower, "");
  EXPECT_EQ(index_.directory_reads(), 1u);
  // A change behind its back makes another state: read once more.
  Touch("late");
  EXPECT_EQ(index_.LowerSpelling(fd_.get(), Generation(), "LATE", &lower), 0);
  EXPECT_EQ(lower, "late");
  EXPECT_EQ(index_.directory_reads(), 2u);
  // Find shares the index (the stamps agree), and still never names the exact name.
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "late", &match), ENOENT);
  EXPECT_EQ(index_.Find(fd_.get(), "Late", &match), 0);
  EXPECT_EQ(match, "late");
  EXPECT_EQ(index_.directory_reads(), 2u);
}

// Twins cannot be told apart by the index: the caller opens the name and searches.
TEST_F(CaseIndexTest, LowerSpellingOfTwinsIsLeftToTheSearch) {
  Touch("twin");
  Touch("TWIN");
  std::string lower;
  EXPECT_EQ(index_.LowerSpelling(fd_.get(), Generation(), "Twin", &lower), EAGAIN);
  EXPECT_EQ(lower, "");
  EXPECT_EQ(index_.LowerSpelling(fd_.get(), Generation(), "file1", &lower), 0);
  EXPECT_EQ(lower, "file1");
}

TEST_F(CaseIndexTest, TwinsAreAnsweredByAReadInByteOrder) {
  Touch("twin");
  Touch("TWIN");
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "Twin", &match), 0);
  EXPECT_EQ(match, "TWIN");
  EXPECT_EQ(index_.Find(fd_.get(), "TWIN", &match), 0);
  EXPECT_EQ(match, "twin");
  EXPECT_EQ(index_.Find(fd_.get(), "FILE3", &match), 0);  // other names: from the index
  EXPECT_EQ(match, "file3");
  EXPECT_EQ(index_.directory_reads(), 2u);  // the build (which answered "Twin"), and "TWIN"
}

class HugeDirectoryTest : public FindCaseMatchTest {
 protected:
  static constexpr int kNames = 140000;
  void SetUp() override {
    // tmpfs when there is one: 140,000 creates take about a second there.
    std::string tmpl = access("/dev/shm", W_OK) == 0
                           ? std::string("/dev/shm/case_names_XXXXXX")
                           : absl::StrCat(::testing::TempDir(), "/case_names_XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fd_.reset(open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
    for (int i = 0; i < kNames; ++i) Touch(absl::StrCat(i % 2 ? "File" : "file", i, ".jpg"));
  }
  void TearDown() override {
    std::string cmd = absl::StrCat("rm -rf '", dir_, "'");
    EXPECT_EQ(system(cmd.c_str()), 0);
  }
  CaseIndex index_;
};

TEST_F(HugeDirectoryTest, MissesReadTheDirectoryOnce) {
  std::string match;
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(index_.Find(fd_.get(), absl::StrCat("missing", i), &match), ENOENT);
  }
  EXPECT_LE(index_.directory_reads(), 1u);
  // Other spellings of names that exist: found, without another read.
  EXPECT_EQ(index_.Find(fd_.get(), "FILE1.JPG", &match), 0);
  EXPECT_EQ(match, "File1.jpg");
  EXPECT_EQ(index_.Find(fd_.get(), "FILE2.jpg", &match), 0);
  EXPECT_EQ(match, "file2.jpg");
  EXPECT_EQ(index_.Find(fd_.get(), "file1.jpg", &match), 0);
  EXPECT_EQ(match, "File1.jpg");
  EXPECT_LE(index_.directory_reads(), 1u);
  // No names kept: well under the 100 bytes a name the old index took.
  EXPECT_LE(index_.indexed_bytes(), kNames * 40u);
}

TEST_F(HugeDirectoryTest, TheDaemonsOwnCreatesKeepTheIndex) {
  std::string match;
  EXPECT_EQ(index_.Find(fd_.get(), "nosuch", &match), ENOENT);
  uint64_t reads = index_.directory_reads();
  for (int i = 0; i < 50; ++i) {
    std::string name = absl::StrCat("New", i);
    EXPECT_EQ(index_.Find(fd_.get(), name, &match), ENOENT);
    DirStamp before = StampOf(fd_.get());
    Touch(name);
    index_.Added(fd_.get(), before, name);
  }
  EXPECT_EQ(index_.Find(fd_.get(), "NEW7", &match), 0);
  EXPECT_EQ(match, "New7");
  EXPECT_EQ(index_.directory_reads(), reads);
}

}  // namespace
}  // namespace scopedfs::daemon
