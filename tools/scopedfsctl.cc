// scopedfsctl: the operator's tool for scopedfs policies and daemons.
//   validate  load a policy + app registry and report every problem as file:line:col
//   explain   show the decision for one (uid, op, path[, content]) and the rule behind it
//   scan      find the location metadata of media files, optionally writing redacted copies
//   stats     live counters of a running scopedfsd (--socket)
//   reload    make a running scopedfsd load its policy again, or another one
//   repair    detach the dead mounts of killed daemons and mount them again from fstab
//   audit2why explain audit lines: the rule, its reason, the permission that would change it
// explain with --socket asks the running daemon (live policy, the file's real content facts).
// This file holds the flags, the usage text and the dispatch; each family of commands has its own
// file: scopedfsctl_policy (validate, explain, audit2why), scopedfsctl_daemon (stats, reload,
// explain --socket), scopedfsctl_repair (repair) and scopedfsctl_scan (scan).
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/cli.h"
#include "daemon/service/explain_text.h"
#include "policy/storage_path.h"
#include "tools/scopedfsctl_daemon.h"
#include "tools/scopedfsctl_flags.h"
#include "tools/scopedfsctl_policy.h"
#include "tools/scopedfsctl_repair.h"
#include "tools/scopedfsctl_scan.h"

ABSL_FLAG(std::string, policy, "", "Policy file (text scopedfs.Policy).");
ABSL_FLAG(std::string, apps, "", "App registry file (text scopedfs.AppRegistry).");
ABSL_FLAG(std::string, packages_list, "", "Optional Android packages.list to merge.");
ABSL_FLAG(std::string, uid, "", "explain: the caller's uid.");
ABSL_FLAG(std::string, package, "", "explain: the caller, by package name (instead of --uid).");
ABSL_FLAG(std::string, op, "",
          "explain: lookup|read|write|create|delete|rename|mkdir|rmdir|setattr.");
ABSL_FLAG(std::string, path, "",
          "explain: path relative to the storage root, e.g. DCIM/a.jpg, or below "
          "/storage/emulated/<user>/ or /sdcard/.");
ABSL_FLAG(std::string, content, "",
          "explain: a file whose bytes stand for the file's content (default: judge by name).");
ABSL_FLAG(std::string, owner_uid, "",
          "explain: uid recorded as the file's creator (default: none).");
ABSL_FLAG(std::string, node, "", "explain: file|dir (default: dir for mkdir/rmdir and the root).");
ABSL_FLAG(uint32_t, user_id, 0, "explain: Android user whose storage is mounted.");
ABSL_FLAG(std::string, domain, "", "explain: the caller's SELinux domain (default: configured).");
ABSL_FLAG(std::string, socket, "",
          "stats/reload/explain: the daemon's --control_socket (default: the socket of the "
          "daemon serving --mount, or the one daemon that answers in /run/scopedfs).");
ABSL_FLAG(std::string, mount, "",
          "stats/reload/explain: the daemon serving this mount point (its default control socket "
          "in /run/scopedfs); repair: only this mount point.");
ABSL_FLAG(std::string, fstab, "", "repair: mount again from this fstab file (mount -T FILE).");
ABSL_FLAG(bool, detach_only, false, "repair: detach dead mounts, do not mount them again.");
ABSL_FLAG(bool, json, false, "stats: print one JSON object.");
ABSL_FLAG(std::string, redacted_out, "",
          "scan: write DIR/<basename of FILE>, the file with its location ranges filled.");
ABSL_FLAG(std::string, kinds, "exif_gps,xmp_gps,isobmff_location,iptc_place,xmp_place",
          "scan: comma-separated kinds of location ranges --redacted_out fills (without "
          "iptc_place,xmp_place: what a policy with redact_place_names FALSE fills).");

namespace scopedfs::policy::ctl {
namespace {

constexpr char kUsage[] =
    "scopedfsctl <command> [flags]\n"
    "  validate --policy=F --apps=F [--packages_list=F]\n"
    "  explain  --policy=F --apps=F (--uid=U | --package=P) --op=OP --path=P\n"
    "           [--content=FILE] [--owner_uid=U] [--node=file|dir] [--user_id=N] [--domain=D]\n"
    "  explain  (--socket=PATH | --mount=DIR) (--uid=U | --package=P) --op=OP --path=P\n"
    "           [--domain=D]\n"
    "           (asks the running daemon: live policy, the lower file's real facts)\n"
    "  audit2why --policy=F --apps=F [--packages_list=F] [--user_id=N] [LINE...]\n"
    "           (no LINE: every audit line on stdin)\n"
    "  scan     FILE... [--redacted_out=DIR] [--kinds=exif_gps,xmp_gps,isobmff_location]\n"
    "  stats    [--socket=PATH | --mount=DIR] [--json]\n"
    "  reload   [--socket=PATH | --mount=DIR] [--policy=F] [--apps=F] [--packages_list=F]\n"
    "           (neither: the one daemon that answers in /run/scopedfs)\n"
    "  repair   [--mount=DIR] [--fstab=FILE] [--detach_only]\n"
    "           (dead mounts of killed daemons detached and mounted again from fstab)";

}  // namespace

int Usage(absl::string_view problem) {
  std::cerr << "scopedfsctl: " << problem << "\n\n" << kUsage << "\n";
  return 2;
}

absl::StatusOr<Op> OpFlag() {
  std::string name = absl::GetFlag(FLAGS_op);
  std::optional<Op> op = daemon::ParseOpName(name);
  if (op.has_value()) return *op;
  return absl::InvalidArgumentError(
      absl::StrCat(name.empty() ? "--op is required" : absl::StrCat("unknown --op=\"", name, "\""),
                   "; one of ", daemon::OpNames()));
}

absl::StatusOr<std::string> StoragePathFlag() {
  std::string path = absl::GetFlag(FLAGS_path);
  uint32_t user = absl::GetFlag(FLAGS_user_id);
  if (absl::StartsWith(path, "/")) {
    std::string rel;
    std::vector<std::string> prefixes = {absl::StrCat("/storage/emulated/", user), "/sdcard",
                                         "/storage/self/primary"};
    for (const std::string& prefix : prefixes) {
      if (path == prefix) return std::string();
      if (absl::StartsWith(path, prefix + "/")) {
        rel = path.substr(prefix.size() + 1);
        break;
      }
    }
    if (rel.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--path=", path, " is not in user ", user,
          "'s storage: give a path relative to the storage root (e.g. DCIM/a.jpg) or one below ",
          prefixes[0], "/ (--user_id selects the user)"));
    }
    path = rel;
  }
  if (absl::Status valid = ValidateStoragePath(path, kAnyPathBytes); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--path=", absl::GetFlag(FLAGS_path), ": ", valid.message(),
        " (a path relative to the storage root, e.g. DCIM/a.jpg; empty for the root)"));
  }
  return path;
}

}  // namespace scopedfs::policy::ctl

int main(int argc, char** argv) {
  namespace ctl = scopedfs::policy::ctl;
  namespace cli = scopedfs::base;
  const cli::Program program = {
      "scopedfsctl", ctl::kUsage,
      "The operator's tool for scopedfs: validate a policy and app registry (every problem at "
      "once, as file:line:col), explain the decision for one request and the rule behind it, "
      "find location metadata in media files, read the counters of, reload, or ask a running "
      "scopedfsd, and repair the dead mounts of killed daemons. Exit codes: 0 success, 1 the "
      "command failed (an invalid policy, a daemon that "
      "cannot be reached), 2 a usage error. See scopedfsctl(1).",
      "tools/scopedfsctl.cc"};
  if (std::optional<int> done = cli::HandleHelpOrVersion(argc, argv, program)) return *done;
  if (argc >= 2 && std::string(argv[1]) == "help") {
    std::cout << cli::HelpText(program);
    return 0;
  }
  if (cli::CheckFlags(argc, argv, program).has_value()) return 2;
  absl::SetProgramUsageMessage(ctl::kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) return ctl::Usage("expected a command");
  absl::string_view command = args[1];
  if (command == "scan") {
    return ctl::ScanCommand(absl::MakeConstSpan(args).subspan(2));
  }
  if (command == "audit2why") {
    return ctl::Audit2WhyCommand(absl::MakeConstSpan(args).subspan(2));
  }
  if (args.size() != 2) return ctl::Usage("expected exactly one command");
  if (command == "validate") return ctl::Validate();
  if (command == "explain") return ctl::Explain();
  if (command == "stats") return ctl::StatsCommand();
  if (command == "reload") return ctl::ReloadCommand();
  if (command == "repair") return ctl::RepairCommand();
  return ctl::Usage(absl::StrCat("unknown command \"", command, "\""));
}
