// Tests for the packages.list parser. Error tests check exact "file:line:col:" prefixes because
// pointing at the right line and column is the feature being tested. (Debian's abseil has its own
// absl::string_view, which is what absl::StrCat and friends accept.)
#include "policy/packages_list.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace scopedfs::policy {
namespace {

// Splits an error message into its per-problem lines.
std::vector<std::string> ProblemLines(const absl::Status& status) {
  return absl::StrSplit(status.message(), '\n');
}

// Parses `text` expecting exactly one problem, and returns that problem's line.
std::string SingleProblem(absl::string_view text) {
  auto result = ParsePackagesList(text, "pl");
  if (result.ok()) return "<parsed OK>";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> lines = ProblemLines(result.status());
  EXPECT_EQ(lines.size(), 1u) << result.status().message();
  return lines.empty() ? "" : lines[0];
}

// A line that is valid apart from whatever the test substitutes into it.
std::string Line(absl::string_view package, absl::string_view uid = "10061",
                 absl::string_view debuggable = "0", absl::string_view seinfo = "default",
                 absl::string_view gids = "none") {
  return absl::StrCat(package, " ", uid, " ", debuggable, " /data/x ", seinfo, " ", gids, "\n");
}

TEST(IsValidPackageNameTest, AcceptsDottedIdentifiers) {
  EXPECT_TRUE(IsValidPackageName("android.x"));
  EXPECT_TRUE(IsValidPackageName("com.android.providers.media.module"));
  EXPECT_TRUE(IsValidPackageName("com.Example_1.app2"));
}

TEST(IsValidPackageNameTest, RejectsSingleSegment) {
  EXPECT_FALSE(IsValidPackageName("android"));
  EXPECT_FALSE(IsValidPackageName(""));
}

TEST(IsValidPackageNameTest, RejectsEmptySegments) {
  EXPECT_FALSE(IsValidPackageName("com..example"));
  EXPECT_FALSE(IsValidPackageName(".com.example"));
  EXPECT_FALSE(IsValidPackageName("com.example."));
}

TEST(IsValidPackageNameTest, RejectsSegmentNotStartingWithLetter) {
  EXPECT_FALSE(IsValidPackageName("com.1example"));
  EXPECT_FALSE(IsValidPackageName("com._example"));
  EXPECT_FALSE(IsValidPackageName("1com.example"));
}

TEST(IsValidPackageNameTest, RejectsCharactersOutsideIdentifierSet) {
  EXPECT_FALSE(IsValidPackageName("com.exa-mple"));
  EXPECT_FALSE(IsValidPackageName("com.exa mple"));
  EXPECT_FALSE(IsValidPackageName("com.ex\xc3\xa4mple"));
  EXPECT_FALSE(IsValidPackageName("com/example.app"));
}

TEST(ParsePackagesListTest, ParsesAllFields) {
  auto result = ParsePackagesList(
      "com.android.providers.media.module 10210 0 /data/user/0/com.android.providers.media.module"
      " platform:privapp:targetSdkVersion=34 3003,1023 0 341112000\n"
      "com.example.gallery 10061 1 /data/user/0/com.example.gallery"
      " default:targetSdkVersion=33 none 0 1\n",
      "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 2u);

  const PackagesListEntry& media = (*result)[0];
  EXPECT_EQ(media.package, "com.android.providers.media.module");
  EXPECT_EQ(media.uid, 10210u);
  EXPECT_FALSE(media.debuggable);
  EXPECT_EQ(media.data_dir, "/data/user/0/com.android.providers.media.module");
  EXPECT_EQ(media.seinfo, "platform:privapp:targetSdkVersion=34");
  EXPECT_EQ(media.target_sdk, 34u);
  EXPECT_EQ(media.gids, (std::vector<uint32_t>{3003, 1023}));
  EXPECT_EQ(media.line, 1);

  const PackagesListEntry& gallery = (*result)[1];
  EXPECT_EQ(gallery.package, "com.example.gallery");
  EXPECT_EQ(gallery.uid, 10061u);
  EXPECT_TRUE(gallery.debuggable);
  EXPECT_EQ(gallery.data_dir, "/data/user/0/com.example.gallery");
  EXPECT_EQ(gallery.seinfo, "default:targetSdkVersion=33");
  EXPECT_EQ(gallery.target_sdk, 33u);
  EXPECT_TRUE(gallery.gids.empty());
  EXPECT_EQ(gallery.line, 2);
}

TEST(ParsePackagesListTest, EmptyTextHasNoEntries) {
  auto result = ParsePackagesList("", "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->empty());
}

TEST(ParsePackagesListTest, FiveFieldsAreEnough) {
  auto result = ParsePackagesList("com.legacy.app 10099 0 /data/data/com.legacy.app default", "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0].seinfo, "default");
  EXPECT_TRUE((*result)[0].gids.empty());
}

TEST(ParsePackagesListTest, IgnoresExtraTrailingFields) {
  auto result = ParsePackagesList(
      "com.android.shell 2000 0 /data/user_de/0/com.android.shell default 3009 1 34 1 @system x\n",
      "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0].gids, (std::vector<uint32_t>{3009}));
}

TEST(ParsePackagesListTest, TargetSdkIsZeroWithoutKey) {
  auto result = ParsePackagesList(Line("com.example.a", "10061", "0", "platform:privapp"), "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)[0].target_sdk, 0u);
}

TEST(ParsePackagesListTest, TargetSdkStopsAtNextColon) {
  auto result = ParsePackagesList(
      Line("com.example.a", "10061", "0", "default:targetSdkVersion=34:complete"), "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)[0].target_sdk, 34u);
}

TEST(ParsePackagesListTest, AcceptsLargestUid) {
  auto result = ParsePackagesList(Line("com.example.a", "2147483647"), "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)[0].uid, 2147483647u);
}

TEST(ParsePackagesListTest, SkipsBlankLinesButCountsThem) {
  auto result = ParsePackagesList(
      absl::StrCat("\n", Line("com.example.a"), "   \n\n", Line("com.example.b")), "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 2u);
  EXPECT_EQ((*result)[0].line, 2);
  EXPECT_EQ((*result)[1].line, 5);
}

TEST(ParsePackagesListTest, RunsOfSpacesSeparateFields) {
  auto result = ParsePackagesList("com.example.a   10061  1 /data/x  default   7,8  \n", "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0].uid, 10061u);
  EXPECT_TRUE((*result)[0].debuggable);
  EXPECT_EQ((*result)[0].data_dir, "/data/x");
  EXPECT_EQ((*result)[0].seinfo, "default");
  EXPECT_EQ((*result)[0].gids, (std::vector<uint32_t>{7, 8}));
}

TEST(ParsePackagesListTest, StripsCarriageReturnOfCrlf) {
  auto result = ParsePackagesList(
      "com.example.a 10061 0 /data/x default 3003\r\ncom.example.b 10062 0 /data/y seinfo_b\r\n",
      "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 2u);
  EXPECT_EQ((*result)[0].gids, (std::vector<uint32_t>{3003}));
  EXPECT_EQ((*result)[1].seinfo, "seinfo_b");
}

TEST(ParsePackagesListTest, ReportsTooFewFieldsJustPastLineEnd) {
  // "com.example.a 10061 0 /data/x" is 29 characters.
  EXPECT_TRUE(absl::StartsWith(SingleProblem("com.example.a 10061 0 /data/x\n"), "pl:1:30: "))
      << SingleProblem("com.example.a 10061 0 /data/x\n");
}

TEST(ParsePackagesListTest, TooFewFieldsColumnIgnoresCarriageReturn) {
  EXPECT_TRUE(absl::StartsWith(SingleProblem("com.example.a 1\r\n"), "pl:1:16: "))
      << SingleProblem("com.example.a 1\r\n");
}

TEST(ParsePackagesListTest, ReportsInvalidPackageName) {
  std::string problem = SingleProblem(absl::StrCat(Line("com.example.a"), Line("badname")));
  EXPECT_TRUE(absl::StartsWith(problem, "pl:2:1: ")) << problem;
  EXPECT_TRUE(absl::StrContains(problem, "\"badname\"")) << problem;
}

TEST(ParsePackagesListTest, AcceptsFrameworkPackageDespiteSingleSegment) {
  auto result = ParsePackagesList("android 1000 0 /data/system platform:privapp none\n", "pl");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0].package, "android");
  EXPECT_EQ((*result)[0].uid, 1000u);
}

TEST(ParsePackagesListTest, InvalidPackageColumnCountsLeadingSpaces) {
  std::string problem = SingleProblem(absl::StrCat("  ", Line("com..a")));
  EXPECT_TRUE(absl::StartsWith(problem, "pl:1:3: ")) << problem;
}

TEST(ParsePackagesListTest, RejectsMalformedUids) {
  // "com.example.a " is 14 characters, so the uid starts at column 15.
  for (const char* uid :
       {"abc", "-1", "+1", "0x10", "1e3", "99999999999", "2147483648", "18446744073709551617"}) {
    std::string problem = SingleProblem(Line("com.example.a", uid));
    EXPECT_TRUE(absl::StartsWith(problem, "pl:1:15: uid ")) << uid << ": " << problem;
  }
}

TEST(ParsePackagesListTest, RejectsDebuggableOtherThanZeroOrOne) {
  // "com.example.a 10061 " is 20 characters.
  for (const char* flag : {"2", "01", "true", "-"}) {
    std::string problem = SingleProblem(Line("com.example.a", "10061", flag));
    EXPECT_TRUE(absl::StartsWith(problem, "pl:1:21: debuggable ")) << flag << ": " << problem;
  }
}

TEST(ParsePackagesListTest, RejectsMalformedGidLists) {
  // "com.example.a 10061 0 /data/x default " is 38 characters.
  for (const char* gids : {"1,,2", "1,", ",1", "abc", "none,1", "-1", "1;2", "4294967296"}) {
    std::string problem = SingleProblem(Line("com.example.a", "10061", "0", "default", gids));
    EXPECT_TRUE(absl::StartsWith(problem, "pl:1:39: gid list ")) << gids << ": " << problem;
  }
}

TEST(ParsePackagesListTest, RejectsMalformedTargetSdk) {
  // "com.example.a 10061 0 /data/x " is 30 characters; the column is the seinfo field's.
  for (const char* seinfo : {"default:targetSdkVersion=", "default:targetSdkVersion=3x",
                             "default:targetSdkVersion=-1:complete"}) {
    std::string problem = SingleProblem(Line("com.example.a", "10061", "0", seinfo));
    EXPECT_TRUE(absl::StartsWith(problem, "pl:1:31: seinfo ")) << seinfo << ": " << problem;
  }
}

TEST(ParsePackagesListTest, ReportsSecondListingOfPackageWithFirstLine) {
  std::string problem = SingleProblem(
      absl::StrCat(Line("com.example.a"), Line("com.example.b"), Line("com.example.a", "10070")));
  EXPECT_TRUE(absl::StartsWith(problem, "pl:3:1: ")) << problem;
  EXPECT_TRUE(absl::StrContains(problem, "line 1")) << problem;
}

TEST(ParsePackagesListTest, ReportsNulByteAtItsColumn) {
  // Split literal: "\0" followed directly by "61" would be read as the octal escape \006.
  constexpr char kText[] =
      "com.example.a 100\0"
      "61 0 /data/x default none\n";
  std::string problem = SingleProblem(absl::string_view(kText, sizeof(kText) - 1));
  EXPECT_TRUE(absl::StartsWith(problem, "pl:1:18: NUL")) << problem;
}

TEST(ParsePackagesListTest, ReportsControlCharacters) {
  EXPECT_TRUE(absl::StartsWith(SingleProblem("com.example.a\x01 1 0 /d s\n"), "pl:1:14: "));
  EXPECT_TRUE(absl::StartsWith(SingleProblem("com.example.a 1 0 /d\x7f s\n"), "pl:1:21: "));
  EXPECT_TRUE(absl::StartsWith(SingleProblem("com.example.a 1 0 /d\rs s\n"), "pl:1:21: "));
}

TEST(ParsePackagesListTest, RejectsTabsRatherThanSplittingOnThem) {
  std::string problem = SingleProblem("com.example.a\t10061 0 /data/x default none\n");
  EXPECT_TRUE(absl::StartsWith(problem, "pl:1:14: tab")) << problem;
}

TEST(ParsePackagesListTest, ReportsEveryProblemOfOneLine) {
  auto result = ParsePackagesList(Line("com.example.a", "x", "y"), "pl");
  ASSERT_FALSE(result.ok());
  std::vector<std::string> lines = ProblemLines(result.status());
  ASSERT_EQ(lines.size(), 2u) << result.status().message();
  EXPECT_TRUE(absl::StartsWith(lines[0], "pl:1:15: uid ")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "pl:1:17: debuggable ")) << lines[1];
}

TEST(ParsePackagesListTest, ReportsProblemsOfAllLinesInOrder) {
  auto result = ParsePackagesList(
      absl::StrCat(Line("bad"), Line("com.example.ok"), Line("com.example.a", "-1"), "short\n"),
      "pl");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> lines = ProblemLines(result.status());
  ASSERT_EQ(lines.size(), 3u) << result.status().message();
  EXPECT_TRUE(absl::StartsWith(lines[0], "pl:1:1: ")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "pl:3:15: ")) << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[2], "pl:4:6: ")) << lines[2];
}

TEST(ParsePackagesListTest, StopsReportingAfterOneThousandProblems) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "x\n";
  auto result = ParsePackagesList(text, "pl");
  ASSERT_FALSE(result.ok());
  std::vector<std::string> lines = ProblemLines(result.status());
  ASSERT_EQ(lines.size(), 1001u);
  EXPECT_TRUE(absl::StartsWith(lines[999], "pl:1000:2: ")) << lines[999];
  EXPECT_TRUE(absl::StartsWith(lines[1000], "pl: too many problems")) << lines[1000];
}

TEST(ReadPackagesListTest, ReadsGoodTestdataFile) {
  // Bazel runs tests from the runfiles root, where testdata lives under its workspace path.
  auto result = ReadPackagesList("policy/testdata/packages.list.good");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 4u);
  const std::vector<PackagesListEntry>& e = *result;

  EXPECT_EQ(e[0].package, "com.android.providers.media.module");
  EXPECT_EQ(e[0].uid, 10210u);
  EXPECT_FALSE(e[0].debuggable);
  EXPECT_EQ(e[0].data_dir, "/data/user/0/com.android.providers.media.module");
  EXPECT_EQ(e[0].seinfo, "platform:privapp:targetSdkVersion=34");
  EXPECT_EQ(e[0].target_sdk, 34u);
  EXPECT_EQ(e[0].gids, (std::vector<uint32_t>{3003, 1023}));
  EXPECT_EQ(e[0].line, 1);

  EXPECT_EQ(e[1].package, "com.example.gallery");
  EXPECT_EQ(e[1].uid, 10061u);
  EXPECT_TRUE(e[1].debuggable);
  EXPECT_EQ(e[1].data_dir, "/data/user/0/com.example.gallery");
  EXPECT_EQ(e[1].seinfo, "default:targetSdkVersion=33");
  EXPECT_EQ(e[1].target_sdk, 33u);
  EXPECT_TRUE(e[1].gids.empty());
  EXPECT_EQ(e[1].line, 2);

  // Line 3 of the file is blank.
  EXPECT_EQ(e[2].package, "android");
  EXPECT_EQ(e[2].uid, 1000u);
  EXPECT_FALSE(e[2].debuggable);
  EXPECT_EQ(e[2].data_dir, "/data/system");
  EXPECT_EQ(e[2].seinfo, "platform:privapp:targetSdkVersion=34:complete");
  EXPECT_EQ(e[2].target_sdk, 34u);
  EXPECT_EQ(e[2].gids, (std::vector<uint32_t>{2001, 3002, 3003}));
  EXPECT_EQ(e[2].line, 4);

  EXPECT_EQ(e[3].package, "com.legacy.app");
  EXPECT_EQ(e[3].uid, 10099u);
  EXPECT_FALSE(e[3].debuggable);
  EXPECT_EQ(e[3].data_dir, "/data/data/com.legacy.app");
  EXPECT_EQ(e[3].seinfo, "default");
  EXPECT_EQ(e[3].target_sdk, 0u);
  EXPECT_TRUE(e[3].gids.empty());
  EXPECT_EQ(e[3].line, 5);
}

TEST(ReadPackagesListTest, ReportsEveryProblemOfMalformedTestdataFile) {
  const std::string path = "policy/testdata/packages.list.malformed";
  auto result = ReadPackagesList(path);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> lines = ProblemLines(result.status());
  const std::vector<std::string> expected_prefixes = {
      path + ":2:1: invalid package name",
      path + ":3:17: uid",
      path + ":4:24: debuggable",
      path + ":5:42: gid list",
      path + ":6:26: too few fields",
      path + ":7:1: package \"com.example.ok\" listed again",
      path + ":8:33: seinfo",
  };
  ASSERT_EQ(lines.size(), expected_prefixes.size()) << result.status().message();
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(lines[i], expected_prefixes[i]))
        << "got: " << lines[i] << "\nwant prefix: " << expected_prefixes[i];
  }
}

TEST(ReadPackagesListTest, ReadsCrlfTestdataFile) {
  auto result = ReadPackagesList("policy/testdata/packages.list.crlf");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 2u);
  EXPECT_TRUE((*result)[0].gids.empty());
  EXPECT_EQ((*result)[1].seinfo, "default:targetSdkVersion=30");
  EXPECT_EQ((*result)[1].target_sdk, 30u);
}

TEST(ReadPackagesListTest, MissingFileIsNotFoundAndNamesPath) {
  auto result = ReadPackagesList("policy/testdata/no_such_packages.list");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(result.status().message(), "policy/testdata/no_such_packages.list"))
      << result.status();
}

// absl::ErrnoToStatus appends strerror itself; a second copy ("No such file or directory: No such
// file or directory") was the bug this guards against.
TEST(ReadPackagesListTest, MissingFileNamesItsErrnoOnce) {
  auto result = ReadPackagesList("policy/testdata/no_such_packages.list");
  ASSERT_FALSE(result.ok());
  const std::string text = std::strerror(ENOENT);
  const std::string message(result.status().message());
  size_t first = message.find(text);
  ASSERT_NE(first, std::string::npos) << result.status();
  EXPECT_EQ(message.find(text, first + text.size()), std::string::npos) << result.status();
}

// Returns a fresh path in the test's private temporary directory.
std::string TempPath(const char* name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

// The code ReadPackagesList gives `path`, read as `uid` (root reads as itself; any other uid in a
// child that gives up root, since root bypasses file permissions); -1 if the child failed.
int CodeReadingAs(uid_t uid, const std::string& path) {
  if (uid == geteuid()) return static_cast<int>(ReadPackagesList(path).status().code());
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 ||
        setresuid(uid, uid, uid) != 0) {
      _exit(255);
    }
    _exit(static_cast<int>(ReadPackagesList(path).status().code()));
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 255 ? -1 : WEXITSTATUS(status);
}

// Also as root: the read is then made by a child as nobody, from a directory nobody may search,
// beside a readable file that proves it is the file's mode that refuses.
TEST(ReadPackagesListTest, UnreadableFileIsPermissionDenied) {
  const uid_t reader = geteuid() == 0 ? 65534 : geteuid();
  char dir[] = "/tmp/packages-list-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr) << strerror(errno);
  ASSERT_EQ(chmod(dir, 0755), 0);
  const std::string readable = absl::StrCat(dir, "/readable.list");
  const std::string unreadable = absl::StrCat(dir, "/unreadable.list");
  ASSERT_TRUE(base::UniqueFd(open(readable.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)).valid());
  ASSERT_TRUE(base::UniqueFd(open(unreadable.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0000)).valid());
  EXPECT_EQ(CodeReadingAs(reader, readable), static_cast<int>(absl::StatusCode::kOk));
  EXPECT_EQ(CodeReadingAs(reader, unreadable),
            static_cast<int>(absl::StatusCode::kPermissionDenied));
  unlink(readable.c_str());
  unlink(unreadable.c_str());
  rmdir(dir);
}

TEST(ReadPackagesListTest, RefusesFileOverSizeLimit) {
  const std::string path = TempPath("huge.list");
  base::UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600));
  ASSERT_TRUE(fd.valid());
  // Sparse, so the test costs no disk space.
  ASSERT_EQ(ftruncate(fd.get(), (off_t{64} << 20) + 1), 0);
  fd.reset();
  auto result = ReadPackagesList(path);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), path)) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "64 MiB")) << result.status();
  unlink(path.c_str());
}

TEST(ReadPackagesListTest, BoundsReadingWhenSizeIsUnknown) {
  // Character devices report st_size 0, so only the bound in the read loop can stop this one.
  auto result = ReadPackagesList("/dev/zero");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
}

}  // namespace
}  // namespace scopedfs::policy
