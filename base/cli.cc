// --help, --version and exit codes shared by the scopedfs binaries (see cli.h).
#include "base/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

// Linked in by base:build_stamp (base/build_stamp.cc): "0" and "redacted" without --stamp.
extern const char kBuildScmRevision[];
extern const char kBuildScmStatus[];

namespace scopedfs::base {
namespace {

constexpr char kVersion[] = "0.19.0";

std::string WrapIndented(absl::string_view text, size_t indent, size_t width) {
  std::string out;
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view word = text.substr(start, end - start);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, std::string(indent, ' '), line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
    start = end + 1;
  }
  if (!line.empty()) absl::StrAppend(&out, std::string(indent, ' '), line, "\n");
  return out;
}

}  // namespace

std::string VersionLine(absl::string_view program) {
  std::string commit = strcmp(kBuildScmRevision, "0") == 0
                           ? "commit unknown: an unstamped build"
                           : absl::StrCat("commit ", kBuildScmRevision,
                                          strcmp(kBuildScmStatus, "clean") == 0
                                              ? ""
                                              : absl::StrCat(" (", kBuildScmStatus, ")"));
#ifdef NDEBUG
  constexpr char kMode[] = "optimised build";
#else
  constexpr char kMode[] = "test build: assertions and lock-order checks on";
#endif
  return absl::StrCat(program, " ", kVersion, " (", commit, ", ", kMode, ")");
}

std::string HelpText(const Program& program) {
  std::string out = absl::StrCat("Usage: ", program.synopsis, "\n\n");
  absl::StrAppend(&out, WrapIndented(program.about, 0, 80), "\nFlags:\n");
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::EndsWith(flag->Filename(), program.flag_file)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const absl::CommandLineFlag* a, const absl::CommandLineFlag* b) {
              return a->Name() < b->Name();
            });
  for (const absl::CommandLineFlag* flag : flags) {
    std::string def = flag->DefaultValue();
    absl::StrAppend(&out, "  --", flag->Name(),
                    def.empty() ? "" : absl::StrCat(" (default: ", def, ")"), "\n",
                    WrapIndented(flag->Help(), 6, 80));
  }
  absl::StrAppend(&out, "  --help\n      Print this text and exit.\n",
                  "  --version\n      Print the version, commit and build mode, and exit.\n");
  return out;
}

std::optional<int> HandleHelpOrVersion(int argc, char** argv, const Program& program) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h" || arg == "--helpfull" || arg == "-help") {
      std::string text = HelpText(program);
      fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    if (arg == "--version" || arg == "-version") {
      printf("%s\n", VersionLine(program.name).c_str());
      return 0;
    }
  }
  return std::nullopt;
}

std::optional<int> CheckFlags(int argc, char** argv, const Program& program) {
  auto usage = [&](const std::string& problem) {
    fprintf(stderr, "%s: %s (see %s --help)\n", std::string(program.name).c_str(), problem.c_str(),
            std::string(program.name).c_str());
    return kExitUsage;
  };
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::StartsWith(arg, "-") || arg == "-") continue;  // an argument, not a flag
    arg.remove_prefix(absl::StartsWith(arg, "--") ? 2 : 1);
    size_t eq = arg.find('=');
    absl::string_view name = arg.substr(0, eq);
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      flag = absl::FindCommandLineFlag(name.substr(2));
      negated = flag != nullptr;
    }
    if (flag == nullptr) return usage(absl::StrCat("unknown flag --", name));
    bool is_bool = flag->IsOfType<bool>();
    if (negated && (!is_bool || eq != absl::string_view::npos)) {
      return usage(absl::StrCat("unknown flag --", name));
    }
    if (negated || (is_bool && eq == absl::string_view::npos)) continue;
    std::string value;
    if (eq != absl::string_view::npos) {
      value = std::string(arg.substr(eq + 1));
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return usage(absl::StrCat("flag --", name, " needs a value"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return usage(absl::StrCat("--", name, "=", value, ": ", error));
    }
  }
  return std::nullopt;
}

}  // namespace scopedfs::base
