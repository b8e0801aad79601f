#include "base/folded_name.h"

#include "gtest/gtest.h"

namespace scopedfs::base {
namespace {

TEST(FoldedNameTest, AsciiLettersFoldWithoutCase) {
  EXPECT_TRUE(FoldsTogether("Music", "mUSIC"));
  EXPECT_TRUE(FoldsTogether("", ""));
  EXPECT_FALSE(FoldsTogether("Music", "Musics"));
  EXPECT_FALSE(FoldsTogether("Music", "Mus1c"));
}

// What the guest's ext4 answers for each (tools/emulator/guest/casefold_checks.sh asserts it).
TEST(FoldedNameTest, CodePointsWhoseExt4FoldIsAsciiMeetTheirAsciiName) {
  EXPECT_TRUE(FoldsTogether("Mu\u017Fic", "Music"));  // long s
  EXPECT_TRUE(FoldsTogether("MU\u017FIC", "music"));
  EXPECT_TRUE(FoldsTogether("Noti\uFB01cations", "Notifications"));  // fi ligature
  EXPECT_TRUE(FoldsTogether("Podca\uFB06s", "Podcasts"));            // st ligature
  EXPECT_TRUE(FoldsTogether("Audioboo\u212As", "Audiobooks"));       // Kelvin sign
  EXPECT_TRUE(FoldsTogether("Gro\u00DF", "GROSS"));                  // sharp s
  EXPECT_TRUE(FoldsTogether("\u1E9E", "ss"));
  EXPECT_TRUE(FoldsTogether("a\u037E", "a;"));
}

// The guest's 6.12 kernel drops them (tools/emulator/guest/casefold_check.sh asks it).
TEST(FoldedNameTest, DefaultIgnorableCodePointsFoldToNothing) {
  EXPECT_TRUE(FoldsTogether("Mu\u200Bsic", "Music"));  // zero-width space
  EXPECT_TRUE(FoldsTogether("Mu\u00ADsic", "Music"));  // soft hyphen
  EXPECT_TRUE(FoldsTogether("\uFEFFMusic\u2060", "music"));
  EXPECT_TRUE(FoldsTogether("Musi\u017F\u200D", "MUSIS"));
  EXPECT_TRUE(FoldsTogether("Music\U000E0041", "Music"));  // a tag character
  EXPECT_TRUE(FoldsTogether("\u200B", ""));
  EXPECT_EQ(FoldedName("D\u200BCIM"), "dcim");
  EXPECT_TRUE(FoldsBeyondAscii("D\u200BCIM"));
  EXPECT_FALSE(FoldsTogether("Mu\u200Asic", "Music"));  // a hair space is no ignorable
}

TEST(FoldedNameTest, NamesThatDoNotFoldTogetherStayApart) {
  EXPECT_FALSE(FoldsTogether("Documen\u017F", "Documents"));  // "Documens"
  EXPECT_TRUE(FoldsTogether("Documen\u017F", "documens"));
  EXPECT_FALSE(FoldsTogether("Mu\u017Fic", "Mu\u017Fi"));
  EXPECT_FALSE(FoldsTogether("Music", "Mu\u017Ficx"));
  // Folds outside ASCII are not made: told apart (no layout name is one).
  EXPECT_FALSE(FoldsTogether("\u00C9", "\u00E9"));
  EXPECT_TRUE(FoldsTogether("\u00E9", "\u00E9"));
  // A code point that folds to nothing ASCII is itself, not its base letter.
  EXPECT_FALSE(FoldsTogether("M\u00FAsic", "Music"));
}

TEST(FoldedNameTest, InvalidUtf8ComparesAsBytes) {
  EXPECT_TRUE(FoldsTogether("a\xC5", "A\xC5"));  // a truncated sequence
  EXPECT_FALSE(FoldsTogether("Mu\xC5\xBF", "Mu\xC5"));
  EXPECT_FALSE(FoldsTogether("\xC0\xB3", "s"));      // an overlong '3' is no '3'
  EXPECT_FALSE(FoldsTogether("\xED\xA0\x80", "x"));  // a surrogate
  EXPECT_TRUE(FoldsTogether("\xFF\xFE", "\xFF\xFE"));
}

TEST(FoldedNameTest, FoldedNameIsWhatIsCompared) {
  EXPECT_EQ(FoldedName("Mu\u017Fic"), "music");
  EXPECT_EQ(FoldedName("Noti\uFB01cations"), "notifications");
  EXPECT_EQ(FoldedName("Caf\u00C9"), "caf\u00C9");
  EXPECT_TRUE(FoldsBeyondAscii("Mu\u017Fic"));
  EXPECT_FALSE(FoldsBeyondAscii("Caf\u00C9"));
  EXPECT_FALSE(FoldsBeyondAscii("MUSIC"));
  EXPECT_FALSE(FoldsBeyondAscii("\xC5"));
}

TEST(FoldedNameTest, IsAsciiName) {
  EXPECT_TRUE(IsAsciiName("Music"));
  EXPECT_FALSE(IsAsciiName("Mu\u017Fic"));
}

}  // namespace
}  // namespace scopedfs::base
