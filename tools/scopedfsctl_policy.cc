// scopedfsctl validate, explain and audit2why: each loads the configuration the flags name and
// asks the policy library (and audit2why) about it, offline; explain --content stands a file's
// bytes in for the content, read as the daemon reads it (scopedfsctl_content.h).
#include "tools/scopedfsctl_policy.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "daemon/service/explain_text.h"
#include "media/content_facts.h"
#include "media/location/location.h"
#include "policy/config.h"
#include "policy/engine.h"
#include "tools/audit2why.h"
#include "tools/scopedfsctl_content.h"
#include "tools/scopedfsctl_daemon.h"
#include "tools/scopedfsctl_flags.h"

namespace scopedfs::policy::ctl {
namespace {

absl::StatusOr<LoadedConfig> LoadFromFlags() {
  ConfigPaths paths{absl::GetFlag(FLAGS_policy), absl::GetFlag(FLAGS_apps),
                    absl::GetFlag(FLAGS_packages_list)};
  if (paths.policy.empty() || paths.apps.empty()) {
    return absl::InvalidArgumentError("--policy and --apps are required");
  }
  return LoadConfig(paths);
}

bool ConfigFlagsGiven() {
  return !absl::GetFlag(FLAGS_policy).empty() && !absl::GetFlag(FLAGS_apps).empty();
}

}  // namespace

int Validate() {
  if (!ConfigFlagsGiven()) return Usage("--policy and --apps are required");
  absl::StatusOr<LoadedConfig> config = LoadFromFlags();
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 1;
  }
  std::cout << "OK: policy \"" << config->policy.name() << "\", " << config->policy.rule_size()
            << " rules, " << config->apps.app_size() << " apps, visibility "
            << (config->policy.visibility() == VISIBILITY_LISTING ? "LISTING" : "STRICT");
  if (!config->packages_list.empty()) {
    std::cout << ", " << config->packages_list.size() << " packages.list entries";
  }
  std::cout << "\n";
  return 0;
}

int Audit2WhyCommand(absl::Span<char* const> lines) {
  if (!ConfigFlagsGiven()) return Usage("--policy and --apps are required");
  absl::StatusOr<LoadedConfig> config = LoadFromFlags();
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 1;
  }
  std::vector<std::string> input(lines.begin(), lines.end());
  bool from_stdin = input.empty();
  if (from_stdin) {
    for (std::string line; std::getline(std::cin, line);) input.push_back(line);
  }
  int explained = 0, failed = 0;
  for (const std::string& line : input) {
    // On stdin, anything but audit lines (the dropped-lines count, other log lines) is skipped.
    if (from_stdin && line.find("scopedfs: denied {") == std::string::npos &&
        line.find("scopedfs: redacted {") == std::string::npos) {
      continue;
    }
    absl::StatusOr<tools::AuditRecord> record = tools::ParseAuditLine(line);
    absl::StatusOr<std::string> why =
        record.ok() ? tools::Audit2Why(*config, *record, absl::GetFlag(FLAGS_user_id))
                    : absl::StatusOr<std::string>(record.status());
    if (!why.ok()) {
      std::cerr << "scopedfsctl: audit2why: " << why.status().message() << "\n";
      ++failed;
      continue;
    }
    if (explained++ > 0) std::cout << "\n";
    std::cout << *why;
  }
  if (explained == 0 && failed == 0) {
    std::cerr << "scopedfsctl: audit2why: no audit line found\n";
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

int Explain() {
  if (!absl::GetFlag(FLAGS_socket).empty() || !absl::GetFlag(FLAGS_mount).empty()) {
    return LiveExplain();
  }
  if (!ConfigFlagsGiven()) return Usage("--policy and --apps are required");
  absl::StatusOr<LoadedConfig> config = LoadFromFlags();
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<const Engine>> engine_or = Engine::Create(*config);
  if (!engine_or.ok()) {
    std::cerr << engine_or.status().message() << "\n";
    return 1;
  }
  const Engine& engine = **engine_or;

  Request request;
  request.storage_user_id = absl::GetFlag(FLAGS_user_id);
  std::string uid_flag = absl::GetFlag(FLAGS_uid);
  std::string package = absl::GetFlag(FLAGS_package);
  if (uid_flag.empty() == package.empty()) return Usage("give exactly one of --uid and --package");
  if (!package.empty()) {
    const AppRecord* app = engine.apps().FindPackage(package);
    if (app == nullptr) return Usage(absl::StrCat("package \"", package, "\" is not installed"));
    request.uid = request.storage_user_id * kPerUserRange + app->app_id;
  } else if (!absl::SimpleAtoi(uid_flag, &request.uid)) {
    return Usage(absl::StrCat("--uid=", uid_flag, " is not a number"));
  }
  absl::StatusOr<Op> op = OpFlag();
  if (!op.ok()) return Usage(op.status().message());
  request.op = *op;
  absl::StatusOr<std::string> storage_path = StoragePathFlag();
  if (!storage_path.ok()) return Usage(storage_path.status().message());
  std::string path = *storage_path;
  request.path = path;
  std::string domain = absl::GetFlag(FLAGS_domain);
  request.selinux_domain = domain;
  if (std::string owner = absl::GetFlag(FLAGS_owner_uid); !owner.empty()) {
    uint32_t owner_uid;
    if (!absl::SimpleAtoi(owner, &owner_uid)) {
      return Usage(absl::StrCat("--owner_uid=", owner, " is not a number"));
    }
    request.owner_uid = owner_uid;
  }
  std::string node = absl::GetFlag(FLAGS_node);
  if (node.empty()) {
    node = (request.op == OP_MKDIR || request.op == OP_RMDIR || path.empty()) ? "dir" : "file";
  }
  if (node != "file" && node != "dir") return Usage("--node must be file or dir");
  request.node_type = node == "dir" ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;

  media::ContentFacts facts;
  std::string content_note;
  std::optional<ScannedFile> scanned;
  uint64_t content_size = 0;
  absl::string_view name = request.path;
  name.remove_prefix(name.rfind('/') == absl::string_view::npos ? 0 : name.rfind('/') + 1);
  if (request.node_type == NODE_TYPE_FILE) {
    if (std::string content = absl::GetFlag(FLAGS_content); !content.empty()) {
      InputFile in;
      absl::Status opened = in.Open(content);
      absl::StatusOr<ScannedFile> result =
          opened.ok() ? ScanInput(in, content) : absl::StatusOr<ScannedFile>(opened);
      if (!result.ok()) {
        std::cerr << "scopedfsctl: --content: " << result.status().message() << "\n";
        return 1;
      }
      scanned = *std::move(result);
      content_size = in.size();
      facts = media::FactsOfContent(name, scanned->format,
                                    scanned->scan.has_value() ? &*scanned->scan : nullptr);
      content_note =
          absl::StrCat("sniffed from ", content, ": format ", media::FormatName(facts.format));
    } else {
      facts = media::FactsFromName(name);
      content_note = "no --content given: judged from the name alone";
    }
    request.content = &facts;
  }

  daemon::ExplainInput input;
  input.engine = &engine;
  input.request = request;
  if (scanned.has_value()) {
    input.sniffed_format = scanned->format;
    if (scanned->scan.has_value()) input.scan = &*scanned->scan;
  }
  input.content_size = content_size;
  input.content_note = content_note;
  std::cout << daemon::ExplainText(input);
  return 0;
}

}  // namespace scopedfs::policy::ctl
