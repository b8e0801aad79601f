// Tests for policy path globs: compile-time validation, matching semantics (including the "**"
// edge cases), resistance to pathological patterns, and that matching never allocates.
#include "policy/glob.h"

#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace {

// Counts heap allocations while armed, so a test can show Matches performs none. Replacing the
// global operators is the only way to observe allocations made inside the library itself.
bool g_count_allocations = false;
long g_allocations = 0;

void* CountedAlloc(std::size_t size) {
  if (g_count_allocations) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t size) { return CountedAlloc(size); }
void* operator new[](std::size_t size) { return CountedAlloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace scopedfs::policy {
namespace {

// Compiles `pattern` (failing the test if it does not compile) and matches `path`.
bool Match(absl::string_view pattern, absl::string_view path) {
  absl::StatusOr<Glob> glob = Glob::Compile(pattern);
  if (!glob.ok()) {
    ADD_FAILURE() << "pattern \"" << pattern << "\" failed to compile: " << glob.status();
    return false;
  }
  return glob->Matches(path);
}

void ExpectRejected(absl::string_view pattern) {
  absl::StatusOr<Glob> glob = Glob::Compile(pattern);
  ASSERT_FALSE(glob.ok()) << "pattern \"" << pattern << "\" unexpectedly compiled";
  EXPECT_EQ(glob.status().code(), absl::StatusCode::kInvalidArgument) << glob.status();
  EXPECT_NE(glob.status().message().find("offset"), absl::string_view::npos) << glob.status();
}

// ---- Compile errors ----

TEST(GlobCompileTest, RejectsEmptyPattern) { ExpectRejected(""); }

TEST(GlobCompileTest, RejectsLeadingSlash) {
  ExpectRejected("/DCIM");
  ExpectRejected("/");
  ExpectRejected("/**");
}

TEST(GlobCompileTest, RejectsTrailingSlash) {
  ExpectRejected("DCIM/");
  ExpectRejected("DCIM/*/");
}

TEST(GlobCompileTest, RejectsTrailingSlashAfterGlobStar) {
  ExpectRejected("**/");
  ExpectRejected("DCIM/**/");
}

TEST(GlobCompileTest, RejectsEmptySegment) {
  ExpectRejected("a//b");
  ExpectRejected("a/b//");
}

TEST(GlobCompileTest, RejectsEmptySegmentAfterGlobStar) { ExpectRejected("**//a"); }

TEST(GlobCompileTest, RejectsDotSegment) {
  ExpectRejected(".");
  ExpectRejected("./a");
  ExpectRejected("a/./b");
  ExpectRejected("a/.");
}

TEST(GlobCompileTest, RejectsDotDotSegment) {
  ExpectRejected("..");
  ExpectRejected("../a");
  ExpectRejected("a/../b");
  ExpectRejected("a/..");
}

TEST(GlobCompileTest, RejectsEscapedDotSegments) {
  ExpectRejected("a/\\./b");
  ExpectRejected("a/\\.\\.");
  ExpectRejected(".\\.");
}

TEST(GlobCompileTest, AcceptsDotsInsideLongerSegments) {
  EXPECT_TRUE(Match("...", "..."));
  EXPECT_TRUE(Match(".nomedia", ".nomedia"));
  EXPECT_TRUE(Match("..x/a.b", "..x/a.b"));
}

TEST(GlobCompileTest, RejectsGlobStarGluedToText) {
  ExpectRejected("a**");
  ExpectRejected("**b");
  ExpectRejected("DCIM/x**/y");
  ExpectRejected("DCIM/**y");
}

TEST(GlobCompileTest, RejectsTripleStar) {
  ExpectRejected("***");
  ExpectRejected("a/***/b");
}

TEST(GlobCompileTest, RejectsUnterminatedClass) {
  ExpectRejected("[abc");
  ExpectRejected("DCIM/[");
  ExpectRejected("[!");
  ExpectRejected("[a-");
  ExpectRejected("[]abc");
}

TEST(GlobCompileTest, RejectsEmptyClass) {
  ExpectRejected("[]");
  ExpectRejected("[!]");
  ExpectRejected("a/[]");
}

TEST(GlobCompileTest, RejectsReversedRange) {
  ExpectRejected("[z-a]");
  ExpectRejected("[9-0]");
  // Compared before case folding: 'a' (0x61) sorts after 'Z' (0x5a).
  ExpectRejected("[a-Z]");
}

TEST(GlobCompileTest, RejectsTrailingBackslash) {
  ExpectRejected("\\");
  ExpectRejected("DCIM\\");
  ExpectRejected("[a\\");
}

TEST(GlobCompileTest, RejectsNulByte) {
  ExpectRejected(absl::string_view("a\0b", 3));
  ExpectRejected(absl::string_view("\0", 1));
  ExpectRejected(absl::string_view("[a\0]", 4));
  ExpectRejected(absl::string_view("\\\0", 2));
  ExpectRejected(absl::string_view("[\\\0]", 4));
}

TEST(GlobCompileTest, KeepsSourcePattern) {
  absl::StatusOr<Glob> glob = Glob::Compile("DCIM/**/*.JPG");
  ASSERT_TRUE(glob.ok()) << glob.status();
  EXPECT_EQ(glob->pattern(), "DCIM/**/*.JPG");
}

// ---- Literals and case ----

TEST(GlobMatchTest, LiteralMatchesIdenticalPath) {
  EXPECT_TRUE(Match("DCIM/Camera/IMG_1.jpg", "DCIM/Camera/IMG_1.jpg"));
}

TEST(GlobMatchTest, LiteralRejectsPrefixesAndExtensions) {
  EXPECT_FALSE(Match("DCIM/a.jpg", "DCIM/a.jp"));
  EXPECT_FALSE(Match("DCIM/a.jpg", "DCIM/a.jpg.bak"));
  EXPECT_FALSE(Match("DCIM/a.jpg", "DCIM"));
  EXPECT_FALSE(Match("DCIM/a.jpg", "DCIM/a.jpg/b"));
  EXPECT_FALSE(Match("DCIM", "DCIM/a.jpg"));
}

TEST(GlobMatchTest, IgnoresAsciiCase) {
  EXPECT_TRUE(Match("DCIM/Camera/*.JPG", "dcim/CAMERA/img.jpg"));
  EXPECT_TRUE(Match("dcim", "DcIm"));
}

TEST(GlobMatchTest, CaseFoldingIsAsciiOnly) {
  // U+00C9 and U+00E9 in UTF-8 differ only in a non-ASCII byte, which must compare exactly.
  EXPECT_FALSE(Match("\xc3\x89t\xc3\xa9", "\xc3\xa9t\xc3\xa9"));
  EXPECT_TRUE(Match("\xc3\x89t\xc3\xa9", "\xc3\x89T\xc3\xa9"));
}

// ---- '*' and '?' ----

TEST(GlobMatchTest, StarMatchesRunWithinSegment) {
  EXPECT_TRUE(Match("*.jpg", "holiday.jpg"));
  EXPECT_TRUE(Match("IMG_*_x", "IMG_2024_01_x"));
}

TEST(GlobMatchTest, StarMatchesEmptyRun) {
  EXPECT_TRUE(Match("*.jpg", ".jpg"));
  EXPECT_TRUE(Match("a*b", "ab"));
  EXPECT_TRUE(Match("a*", "a"));
}

TEST(GlobMatchTest, StarDoesNotCrossSlash) {
  EXPECT_FALSE(Match("*.jpg", "DCIM/a.jpg"));
  EXPECT_FALSE(Match("DCIM/*", "DCIM/a/b"));
  EXPECT_FALSE(Match("a*b", "a/b"));
}

TEST(GlobMatchTest, StarSegmentDoesNotMatchMissingSegment) {
  EXPECT_FALSE(Match("DCIM/*", "DCIM"));
}

TEST(GlobMatchTest, SeveralStarsInOneSegmentBacktrack) {
  EXPECT_TRUE(Match("*a*b*", "xxaxxbxx"));
  EXPECT_TRUE(Match("*ab", "aab"));
  EXPECT_TRUE(Match("*a*b", "abab"));
  EXPECT_FALSE(Match("*a*b*", "xbxa"));
  EXPECT_FALSE(Match("*ab", "aba"));
}

TEST(GlobMatchTest, QuestionMatchesExactlyOneCharacter) {
  EXPECT_TRUE(Match("a?c", "abc"));
  EXPECT_FALSE(Match("a?c", "ac"));
  EXPECT_FALSE(Match("a?c", "abbc"));
}

TEST(GlobMatchTest, QuestionMatchesAnyByteOtherThanSlash) {
  for (int byte = 1; byte < 256; ++byte) {
    // A lone "." is a dot segment, which never matches; see GlobPathTest.
    if (byte == '/' || byte == '.') continue;
    EXPECT_TRUE(Match("x?", std::string{'x', static_cast<char>(byte)})) << "byte " << byte;
  }
}

TEST(GlobMatchTest, QuestionDoesNotMatchSlash) { EXPECT_FALSE(Match("a?b", "a/b")); }

// ---- Classes ----

TEST(GlobMatchTest, ClassMatchesListedCharacters) {
  EXPECT_TRUE(Match("[abc].txt", "b.txt"));
  EXPECT_FALSE(Match("[abc].txt", "d.txt"));
  EXPECT_FALSE(Match("[abc].txt", "ab.txt"));
}

TEST(GlobMatchTest, ClassMatchesRanges) {
  EXPECT_TRUE(Match("IMG_[0-9][0-9].jpg", "IMG_42.jpg"));
  EXPECT_FALSE(Match("IMG_[0-9][0-9].jpg", "IMG_4x.jpg"));
  EXPECT_TRUE(Match("[a-cx-z]", "y"));
  EXPECT_FALSE(Match("[a-cx-z]", "m"));
}

TEST(GlobMatchTest, ClassIgnoresAsciiCase) {
  EXPECT_TRUE(Match("[A-C]", "b"));
  EXPECT_TRUE(Match("[a-c]", "B"));
  EXPECT_TRUE(Match("[x]", "X"));
  EXPECT_FALSE(Match("[A-C]", "D"));
}

TEST(GlobMatchTest, NegatedClassMatchesUnlistedCharacters) {
  EXPECT_TRUE(Match("[!0-9]", "a"));
  EXPECT_FALSE(Match("[!0-9]", "5"));
}

TEST(GlobMatchTest, NegatedClassIgnoresAsciiCase) {
  EXPECT_FALSE(Match("[!a]", "A"));
  EXPECT_FALSE(Match("[!A]", "a"));
  EXPECT_TRUE(Match("[!a]", "B"));
}

TEST(GlobMatchTest, NegatedClassDoesNotMatchSlash) { EXPECT_FALSE(Match("a[!x]b", "a/b")); }

TEST(GlobMatchTest, CloseBracketFirstInClassIsLiteral) {
  EXPECT_TRUE(Match("[]]", "]"));
  EXPECT_TRUE(Match("[]a]", "a"));
  EXPECT_TRUE(Match("[]a]", "]"));
  EXPECT_FALSE(Match("[]a]", "b"));
}

TEST(GlobMatchTest, CloseBracketFirstInNegatedClassIsLiteral) {
  EXPECT_TRUE(Match("[!]]", "x"));
  EXPECT_FALSE(Match("[!]]", "]"));
}

TEST(GlobMatchTest, DashAtEdgeOfClassIsLiteral) {
  EXPECT_TRUE(Match("[-a]", "-"));
  EXPECT_TRUE(Match("[a-]", "-"));
  EXPECT_TRUE(Match("[a-]", "a"));
  EXPECT_FALSE(Match("[a-]", "b"));
}

TEST(GlobMatchTest, OpenBracketInsideClassIsLiteral) {
  EXPECT_TRUE(Match("[[]", "["));
  EXPECT_FALSE(Match("[[]", "a"));
}

TEST(GlobMatchTest, BackslashEscapesInsideClass) {
  EXPECT_TRUE(Match("[\\]]", "]"));
  EXPECT_TRUE(Match("[a\\-z]", "-"));
  EXPECT_FALSE(Match("[a\\-z]", "b"));
  EXPECT_TRUE(Match("[\\!a]", "!"));
}

TEST(GlobMatchTest, SlashInClassNeverMatchesSeparator) {
  // Path segments never contain '/', so a '/' class member is inert and "[!/]" acts like '?'.
  EXPECT_FALSE(Match("a[/]b", "a/b"));
  EXPECT_FALSE(Match("a[!/]b", "a/b"));
  EXPECT_TRUE(Match("a[!/]b", "axb"));
}

// ---- Escapes ----

TEST(GlobMatchTest, BackslashMakesMetacharactersLiteral) {
  EXPECT_TRUE(Match("\\*", "*"));
  EXPECT_FALSE(Match("\\*", "a"));
  EXPECT_TRUE(Match("\\?", "?"));
  EXPECT_FALSE(Match("\\?", "a"));
  EXPECT_TRUE(Match("\\[a]", "[a]"));
  EXPECT_FALSE(Match("\\[a]", "a"));
  EXPECT_TRUE(Match("a\\\\b", "a\\b"));
}

TEST(GlobMatchTest, BackslashEscapesOrdinaryCharacters) { EXPECT_TRUE(Match("\\a\\B", "Ab")); }

TEST(GlobMatchTest, EscapedStarsDoNotFormGlobStar) {
  EXPECT_TRUE(Match("\\*\\*", "**"));
  EXPECT_FALSE(Match("\\*\\*", "a"));
  EXPECT_TRUE(Match("*\\*", "a*"));
  EXPECT_FALSE(Match("*\\*", "a"));
}

TEST(GlobMatchTest, EscapedSlashIsNotASeparator) { EXPECT_FALSE(Match("a\\/b", "a/b")); }

// ---- "**" ----

TEST(GlobStarTest, MiddleGlobStarMatchesZeroSegments) {
  EXPECT_TRUE(Match("DCIM/**/x.jpg", "DCIM/x.jpg"));
}

TEST(GlobStarTest, MiddleGlobStarMatchesSeveralSegments) {
  EXPECT_TRUE(Match("DCIM/**/x.jpg", "DCIM/a/x.jpg"));
  EXPECT_TRUE(Match("DCIM/**/x.jpg", "DCIM/a/b/c/x.jpg"));
}

TEST(GlobStarTest, MiddleGlobStarStillRequiresPrefixAndSuffix) {
  EXPECT_FALSE(Match("DCIM/**/x.jpg", "DCIM/a/y.jpg"));
  EXPECT_FALSE(Match("DCIM/**/x.jpg", "DCIM/a/x.jpg/b"));
  EXPECT_FALSE(Match("DCIM/**/x.jpg", "Pictures/x.jpg"));
  EXPECT_FALSE(Match("DCIM/**/x.jpg", "x.jpg"));
}

TEST(GlobStarTest, LeadingGlobStarMatchesAnyDepth) {
  EXPECT_TRUE(Match("**/x.jpg", "x.jpg"));
  EXPECT_TRUE(Match("**/x.jpg", "a/b/x.jpg"));
  EXPECT_FALSE(Match("**/x.jpg", "ax.jpg"));
  EXPECT_FALSE(Match("**/x.jpg", "x.jpg/a"));
}

TEST(GlobStarTest, LoneGlobStarMatchesEveryPath) {
  EXPECT_TRUE(Match("**", "a"));
  EXPECT_TRUE(Match("**", ".nomedia"));
  EXPECT_TRUE(Match("**", "a/b/c"));
}

TEST(GlobStarTest, TrailingGlobStarMatchesDescendants) {
  EXPECT_TRUE(Match("DCIM/**", "DCIM/a"));
  EXPECT_TRUE(Match("DCIM/**", "DCIM/a/b"));
  EXPECT_TRUE(Match("dcim/**", "DCIM/A/B"));
}

TEST(GlobStarTest, TrailingGlobStarDoesNotMatchItsParent) {
  EXPECT_FALSE(Match("DCIM/**", "DCIM"));
  EXPECT_FALSE(Match("a/b/**", "a/b"));
}

TEST(GlobStarTest, TrailingGlobStarRequiresExactParentSegment) {
  EXPECT_FALSE(Match("DCIM/**", "DCIMx/a"));
  EXPECT_FALSE(Match("DCIM/**", "Pictures/a"));
}

TEST(GlobStarTest, AdjacentGlobStarsActLikeOne) {
  EXPECT_TRUE(Match("a/**/**/b", "a/b"));
  EXPECT_TRUE(Match("a/**/**/b", "a/x/y/b"));
  EXPECT_TRUE(Match("a/**/**", "a/b"));
  EXPECT_FALSE(Match("a/**/**", "a"));
  EXPECT_TRUE(Match("**/**", "a"));
}

TEST(GlobStarTest, GlobStarBacktracksOverRepeatedSegments) {
  EXPECT_TRUE(Match("**/a/b", "a/a/b"));
  EXPECT_TRUE(Match("**/a/b", "a/a/a/b"));
  EXPECT_FALSE(Match("**/a/b", "a/b/a"));
}

TEST(GlobStarTest, SeveralGlobStarsMatchInOrder) {
  EXPECT_TRUE(Match("a/**/b/**/c", "a/b/c"));
  EXPECT_TRUE(Match("a/**/b/**/c", "a/x/b/y/z/c"));
  EXPECT_TRUE(Match("a/**/b/**/c", "a/b/b/c/c"));
  EXPECT_FALSE(Match("a/**/b/**/c", "a/c/b"));
  EXPECT_FALSE(Match("a/**/b/**/c", "a/x/c"));
}

TEST(GlobStarTest, GlobStarComposesWithWildcardSegments) {
  EXPECT_TRUE(Match("**/*.jpg", "DCIM/Camera/IMG_1.JPG"));
  EXPECT_FALSE(Match("**/*.jpg", "DCIM/Camera/IMG_1.png"));
  EXPECT_TRUE(Match("DCIM/**/IMG_[0-9]*.jpg", "DCIM/Camera/2024/IMG_7_b.jpg"));
  EXPECT_FALSE(Match("DCIM/**/IMG_[0-9]*.jpg", "DCIM/Camera/IMG_x.jpg"));
}

// ---- Paths that are not canonical ----

TEST(GlobPathTest, LeadingSlashPathNeverMatches) {
  EXPECT_FALSE(Match("DCIM/*.jpg", "/DCIM/a.jpg"));
  EXPECT_FALSE(Match("**", "/DCIM"));
  EXPECT_FALSE(Match("**/DCIM", "/DCIM"));
}

TEST(GlobPathTest, EmptyPathNeverMatches) {
  EXPECT_FALSE(Match("**", ""));
  EXPECT_FALSE(Match("*", ""));
}

TEST(GlobPathTest, PathWithEmptySegmentNeverMatches) {
  EXPECT_FALSE(Match("**", "a//b"));
  EXPECT_FALSE(Match("**", "a/"));
  EXPECT_FALSE(Match("a/*", "a/"));
}

TEST(GlobPathTest, PathWithDotSegmentNeverMatches) {
  EXPECT_FALSE(Match("*", "."));
  EXPECT_FALSE(Match("*", ".."));
  EXPECT_FALSE(Match("DCIM/**", "DCIM/../Android/data"));
  EXPECT_FALSE(Match("**/x", "./x"));
}

// ---- Complexity ----

TEST(GlobComplexityTest, ManyStarsOverLongSegmentFinish) {
  const std::string path(200, 'a');
  EXPECT_FALSE(Match("*a*a*a*a*a*a*a*a*b", path));
  EXPECT_TRUE(Match("*a*a*a*a*a*a*a*a*b", path + "b"));
}

TEST(GlobComplexityTest, ManyGlobStarsOverDeepPathFinish) {
  std::string path = "a";
  for (int i = 1; i < 50; ++i) path += "/a";
  EXPECT_FALSE(Match("**/**/**/**/**/x", path));
  EXPECT_TRUE(Match("**/**/**/**/**/x", path + "/x"));
}

TEST(GlobComplexityTest, StarsInsideGlobStarsOverDeepPathFinish) {
  std::string path = std::string(40, 'a');
  for (int i = 1; i < 50; ++i) path += "/" + std::string(40, 'a');
  EXPECT_FALSE(Match("**/*a*a*a*a*b/**/*a*a*a*b/**", path));
  EXPECT_TRUE(Match("**/*a*a*a*a*/**/*a*a*a*/**", path));
}

// ---- Allocation ----

TEST(GlobAllocationTest, MatchesDoesNotAllocate) {
  absl::StatusOr<Glob> glob = Glob::Compile("**/DCIM/**/IMG_[0-9]*[!x].JPG");
  ASSERT_TRUE(glob.ok()) << glob.status();
  const std::string hit = "storage/" + std::string(100, 'x') + "/DCIM/Camera/2024/IMG_1234.jpg";
  const std::string miss = "storage/" + std::string(100, 'x') + "/DCIM/Camera/2024/IMG_1234.png";

  g_allocations = 0;
  g_count_allocations = true;
  const bool hit_matched = glob->Matches(hit);
  const bool miss_matched = glob->Matches(miss);
  const bool bad_matched = glob->Matches("/DCIM/../x");
  g_count_allocations = false;

  EXPECT_TRUE(hit_matched);
  EXPECT_FALSE(miss_matched);
  EXPECT_FALSE(bad_matched);
  EXPECT_EQ(g_allocations, 0);
}

TEST(GlobAllocationTest, AllocationCounterSeesAllocations) {
  // Guards the test above against a counter that silently stopped observing anything.
  g_allocations = 0;
  g_count_allocations = true;
  auto* heap = new std::string(100, 'x');
  g_count_allocations = false;
  delete heap;
  EXPECT_GT(g_allocations, 0);
}

// ---- Cross-check ----

// Straightforward exponential matcher over a tiny pattern language {a, b, ?, *, **, /}, used as
// an independent statement of the semantics to check the greedy matcher against.
std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t slash = s.find('/', start);
    const size_t end = slash == std::string::npos ? s.size() : slash;
    parts.push_back(s.substr(start, end - start));
    if (slash == std::string::npos) return parts;
    start = slash + 1;
  }
}

bool ReferenceSegment(const std::string& p, size_t i, const std::string& s, size_t j) {
  if (i == p.size()) return j == s.size();
  if (p[i] == '*') {
    for (size_t k = j; k <= s.size(); ++k) {
      if (ReferenceSegment(p, i + 1, s, k)) return true;
    }
    return false;
  }
  return j < s.size() && (p[i] == '?' || p[i] == s[j]) && ReferenceSegment(p, i + 1, s, j + 1);
}

bool ReferencePath(const std::vector<std::string>& p, size_t i, const std::vector<std::string>& s,
                   size_t j) {
  if (i == p.size()) return j == s.size();
  if (p[i] == "**") {
    // A trailing "**" needs at least one segment: "X/**" covers X's descendants, not X.
    const size_t min = i + 1 == p.size() ? j + 1 : j;
    for (size_t k = min; k <= s.size(); ++k) {
      if (ReferencePath(p, i + 1, s, k)) return true;
    }
    return false;
  }
  return j < s.size() && ReferenceSegment(p[i], 0, s[j], 0) && ReferencePath(p, i + 1, s, j + 1);
}

TEST(GlobCrossCheckTest, AgreesWithReferenceOnRandomInputs) {
  std::mt19937 rng(20240601);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  int matched = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string pattern;
    const int pattern_segments = 1 + pick(4);
    for (int k = 0; k < pattern_segments; ++k) {
      if (k > 0) pattern += '/';
      if (pick(4) == 0) {
        pattern += "**";
        continue;
      }
      const int length = 1 + pick(4);
      for (int c = 0; c < length; ++c) {
        char ch = "ab?*"[pick(4)];
        if (ch == '*' && !pattern.empty() && pattern.back() == '*') ch = 'a';
        pattern += ch;
      }
    }
    std::string path;
    const int path_segments = 1 + pick(5);
    for (int k = 0; k < path_segments; ++k) {
      if (k > 0) path += '/';
      const int length = 1 + pick(3);
      for (int c = 0; c < length; ++c) path += "ab"[pick(2)];
    }

    const bool expected = ReferencePath(Split(pattern), 0, Split(path), 0);
    ASSERT_EQ(Match(pattern, path), expected) << "pattern " << pattern << " path " << path;
    matched += expected;
  }
  // Make sure the generator exercises both outcomes rather than trivially agreeing on "false".
  EXPECT_GT(matched, 1000);
  EXPECT_LT(matched, 19000);
}

}  // namespace
}  // namespace scopedfs::policy
