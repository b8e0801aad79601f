// Command-line conventions every scopedfs binary shares: --help and --version print to stdout and
// exit 0 (abseil's own --help lists flags of some files only and exits 1), and the exit codes a
// service manager can tell apart (sysexits.h values).
#ifndef SCOPEDFS_BASE_CLI_H_
#define SCOPEDFS_BASE_CLI_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace scopedfs::base {

// A bad flag or argument: fixing the command line is the only cure.
inline constexpr int kExitUsage = 64;  // EX_USAGE
// An invalid configuration file: a restart without an edit fails the same way.
inline constexpr int kExitConfig = 78;  // EX_CONFIG
// The mount (or the lower tree, or another resource of the system) was not there: a restart may
// succeed once it is.
inline constexpr int kExitMount = 71;  // EX_OSERR

// What a binary says about itself.
struct Program {
  absl::string_view name;      // "scopedfsd"
  absl::string_view synopsis;  // one or more usage lines
  absl::string_view about;     // one paragraph
  // The flags defined in the file whose path ends with this (e.g. "daemon/main.cc") are listed.
  absl::string_view flag_file;
};

// "scopedfsd 0.19.0 (commit 1a2b3c4d5e6f, optimised build)".
std::string VersionLine(absl::string_view program);
// The synopsis, the paragraph and every flag of the program's files, with its default and help.
std::string HelpText(const Program& program);

// Looks for --help, -h, --helpfull or --version before the first "--" (where abseil would see
// them). When one is there, prints the help or the version on stdout and returns 0 for the
// caller to exit with; otherwise nullopt, and the caller parses its flags as usual.
std::optional<int> HandleHelpOrVersion(int argc, char** argv, const Program& program);

// Checks every flag on the command line before abseil parses it (abseil exits 1 on an unknown
// flag or a bad value): prints "<program>: <problem>" and a pointer to --help on stderr and
// returns kExitUsage on the first problem, nullopt when abseil's parse will succeed. Bool flags
// take --name, --noname and --name=true|false.
std::optional<int> CheckFlags(int argc, char** argv, const Program& program);

}  // namespace scopedfs::base

#endif  // SCOPEDFS_BASE_CLI_H_
