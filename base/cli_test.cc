// Tests for the shared --help/--version handling: exit 0, stdout, every flag of the program's own
// file listed with its default, other files' flags left out, and nothing done without them.
#include "base/cli.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::string, cli_test_flag, "the-default", "A flag this test defines.");
ABSL_FLAG(bool, cli_test_bool, false, "A bool flag.");
ABSL_FLAG(int, cli_test_int, 3, "An int flag.");

namespace scopedfs::base {
namespace {

constexpr Program kProgram = {"prog", "prog --cli_test_flag=X", "What prog does.",
                              "base/cli_test.cc"};

std::optional<int> Handle(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return HandleHelpOrVersion(static_cast<int>(argv.size()), argv.data(), kProgram);
}

TEST(CliTest, HelpListsTheProgramsOwnFlagsWithDefaults) {
  std::string help = HelpText(kProgram);
  EXPECT_NE(help.find("Usage: prog --cli_test_flag=X"), std::string::npos) << help;
  EXPECT_NE(help.find("--cli_test_flag (default: the-default)"), std::string::npos) << help;
  EXPECT_NE(help.find("A flag this test defines."), std::string::npos) << help;
  EXPECT_EQ(help.find("--flagfile"), std::string::npos) << "abseil's own flags are not ours";
}

TEST(CliTest, HelpAndVersionExitZero) {
  EXPECT_EQ(Handle({"prog", "--help"}), 0);
  EXPECT_EQ(Handle({"prog", "-h"}), 0);
  EXPECT_EQ(Handle({"prog", "--x=1", "--version"}), 0);
}

TEST(CliTest, OtherwiseTheCallerParses) {
  EXPECT_EQ(Handle({"prog"}), std::nullopt);
  EXPECT_EQ(Handle({"prog", "--cli_test_flag=--help"}), std::nullopt);
  EXPECT_EQ(Handle({"prog", "--", "--help"}), std::nullopt);
}

std::optional<int> Check(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return CheckFlags(static_cast<int>(argv.size()), argv.data(), kProgram);
}

TEST(CliTest, UnknownFlagsAndBadValuesAreUsageErrors) {
  EXPECT_EQ(Check({"prog", "--cli_test_flag=x", "arg"}), std::nullopt);
  EXPECT_EQ(Check({"prog", "--cli_test_flag", "x"}), std::nullopt);
  EXPECT_EQ(Check({"prog", "--no_such_flag=1"}), kExitUsage);
  EXPECT_EQ(Check({"prog", "--nocli_test_flag"}), kExitUsage) << "not a bool";
  EXPECT_EQ(Check({"prog", "--cli_test_bool=maybe"}), kExitUsage);
  EXPECT_EQ(Check({"prog", "--nocli_test_bool"}), std::nullopt);
  EXPECT_EQ(Check({"prog", "--cli_test_int=12x"}), kExitUsage);
  EXPECT_EQ(Check({"prog", "--cli_test_int"}), kExitUsage) << "no value";
  EXPECT_EQ(Check({"prog", "--", "--no_such_flag"}), std::nullopt);
}

TEST(CliTest, VersionNamesTheProgramAndTheBuild) {
  std::string v = VersionLine("prog");
  EXPECT_EQ(v.rfind("prog 0.", 0), 0u) << v;
  EXPECT_NE(v.find("commit"), std::string::npos) << v;
  EXPECT_NE(v.find("build"), std::string::npos) << v;
}

}  // namespace
}  // namespace scopedfs::base
