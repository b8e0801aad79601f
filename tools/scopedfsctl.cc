// scopedfsctl: the operator's tool for scopedfs policies and daemons.
//   validate  load a policy + app registry and report every problem as file:line:col
//   explain   show the decision for one (uid, op, path[, content]) and the rule behind it
//   stats     live counters of a running scopedfsd (--socket)
//   reload    make a running scopedfsd load its policy again, or another one
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "daemon/control_socket.h"
#include "policy/config.h"
#include "policy/content_facts.h"
#include "policy/engine.h"

ABSL_FLAG(std::string, policy, "", "Policy file (text scopedfs.Policy).");
ABSL_FLAG(std::string, apps, "", "App registry file (text scopedfs.AppRegistry).");
ABSL_FLAG(std::string, packages_list, "", "Optional Android packages.list to merge.");
ABSL_FLAG(std::string, uid, "", "explain: the caller's uid.");
ABSL_FLAG(std::string, package, "", "explain: the caller, by package name (instead of --uid).");
ABSL_FLAG(std::string, op, "", "explain: lookup|read|write|create|delete|rename|mkdir|rmdir|setattr.");
ABSL_FLAG(std::string, path, "", "explain: path relative to the storage root, e.g. DCIM/a.jpg.");
ABSL_FLAG(std::string, content, "",
          "explain: a file whose bytes stand for the file's content (default: judge by name).");
ABSL_FLAG(std::string, owner_uid, "", "explain: uid recorded as the file's creator (default: none).");
ABSL_FLAG(std::string, node, "", "explain: file|dir (default: dir for mkdir/rmdir and the root).");
ABSL_FLAG(uint32_t, user_id, 0, "explain: Android user whose storage is mounted.");
ABSL_FLAG(std::string, domain, "", "explain: the caller's SELinux domain (default: configured).");
ABSL_FLAG(std::string, socket, "", "stats/reload: the daemon's --control_socket.");
ABSL_FLAG(bool, json, false, "stats: print one JSON object.");

namespace scopedfs::policy {
namespace {

constexpr char kUsage[] =
    "scopedfsctl <command> [flags]\n"
    "  validate --policy=F --apps=F [--packages_list=F]\n"
    "  explain  --policy=F --apps=F (--uid=U | --package=P) --op=OP --path=P\n"
    "           [--content=FILE] [--owner_uid=U] [--node=file|dir] [--user_id=N] [--domain=D]\n"
    "  stats    --socket=PATH [--json]\n"
    "  reload   --socket=PATH [--policy=F] [--apps=F] [--packages_list=F]";

int Usage(absl::string_view problem) {
  std::cerr << "scopedfsctl: " << problem << "\n\n" << kUsage << "\n";
  return 2;
}

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

int Validate() {
  if (!ConfigFlagsGiven()) return Usage("--policy and --apps are required");
  absl::StatusOr<LoadedConfig> config = LoadFromFlags();
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 1;
  }
  std::cout << "OK: policy \"" << config->policy.name() << "\", " << config->policy.rule_size()
            << " rules, " << config->apps.app_size() << " apps";
  if (!config->packages_list.empty()) {
    std::cout << ", " << config->packages_list.size() << " packages.list entries";
  }
  std::cout << "\n";
  return 0;
}

std::optional<Op> ParseOp(absl::string_view name) {
  static constexpr std::pair<const char*, Op> kOps[] = {
      {"lookup", OP_LOOKUP}, {"read", OP_READ},     {"write", OP_WRITE},
      {"create", OP_CREATE}, {"delete", OP_DELETE}, {"rename", OP_RENAME},
      {"mkdir", OP_MKDIR},   {"rmdir", OP_RMDIR},   {"setattr", OP_SETATTR}};
  for (const auto& [n, op] : kOps) {
    if (name == n) return op;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<uint8_t>> ReadHead(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  std::vector<uint8_t> head(kSniffBytes);
  ssize_t n = pread(fd, head.data(), head.size(), 0);
  int err = errno;
  close(fd);
  if (n < 0) return absl::DataLossError(absl::StrCat(path, ": ", std::strerror(err)));
  head.resize(static_cast<size_t>(n));
  return head;
}

std::string DescribeCaller(const Engine& engine, uint32_t uid, absl::string_view domain) {
  Caller caller = engine.apps().Identify(uid);
  std::string text = absl::StrCat("uid ", uid, " (", UidKindName(caller.kind), ", user ",
                                  caller.user_id, ", app id ", caller.app_id, ")");
  if (caller.app == nullptr) return absl::StrCat(text, ": not in the app registry");
  std::vector<std::string> perms;
  for (size_t i = 0; i < engine.permissions().size(); ++i) {
    if (caller.app->permissions.test(i)) perms.push_back(engine.permissions().Name(i));
  }
  return absl::StrCat(text, ": ", absl::StrJoin(caller.app->packages, ", "), "\n          domain ",
                      domain.empty() ? caller.app->selinux_domain : std::string(domain),
                      "; permissions: ", perms.empty() ? "none" : absl::StrJoin(perms, ", "));
}

std::string DescribeRedactions(EnumMask mask) {
  std::vector<std::string> names;
  for (int r = REDACTION_EXIF_GPS; r <= REDACTION_ISOBMFF_LOCATION; ++r) {
    if (mask & Bit(r)) names.push_back(Redaction_Name(static_cast<Redaction>(r)));
  }
  return absl::StrJoin(names, ", ");
}

int Explain() {
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
  std::optional<Op> op = ParseOp(absl::GetFlag(FLAGS_op));
  if (!op.has_value()) return Usage(absl::StrCat("unknown --op=\"", absl::GetFlag(FLAGS_op), "\""));
  request.op = *op;
  std::string path = absl::GetFlag(FLAGS_path);
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

  ContentFacts facts;
  std::string content_note;
  absl::string_view name = request.path;
  name.remove_prefix(name.rfind('/') == absl::string_view::npos ? 0 : name.rfind('/') + 1);
  if (request.node_type == NODE_TYPE_FILE) {
    if (std::string content = absl::GetFlag(FLAGS_content); !content.empty()) {
      absl::StatusOr<std::vector<uint8_t>> head = ReadHead(content);
      if (!head.ok()) {
        std::cerr << "scopedfsctl: --content: " << head.status().message() << "\n";
        return 1;
      }
      facts = FactsFromContent(name, *head);
      content_note = absl::StrCat("sniffed from ", content, ": format ", FormatName(facts.format));
    } else {
      facts = FactsFromName(name);
      content_note = "no --content given: judged from the name alone";
    }
    request.content = &facts;
  }

  Decision d = engine.Decide(request);
  std::cout << "decision: " << OutcomeName(d.outcome);
  if (d.outcome == OUTCOME_DENY) {
    std::cout << " (" << (d.error == ERRNO_UNSPECIFIED ? "EACCES" : Errno_Name(d.error).substr(6))
              << ")";
  }
  std::cout << "\n";
  if (d.outcome == OUTCOME_ALLOW_REDACTED) std::cout << "redact:   " << DescribeRedactions(d.redact) << "\n";
  std::cout << "rule:     " << d.rule_name;
  if (d.rule_index >= 0) std::cout << " (" << engine.rule_location(static_cast<size_t>(d.rule_index)) << ")";
  std::cout << "\nreason:   " << d.reason << "\n";
  std::cout << "caller:   " << DescribeCaller(engine, request.uid, domain) << "\n";
  absl::StatusOr<PathInfo> info = engine.layout().Classify(path);
  if (info.ok()) {
    std::cout << "path:     \"" << path << "\"";
    if (info->depth == DEPTH_ROOT) {
      std::cout << " (the storage root)";
    } else {
      std::cout << " (top-level \"" << info->top_dir << "\", "
                << (info->standard_top_dir ? "a default directory" : "not a default directory");
      if (info->area >= 0) {
        std::cout << "; area " << engine.layout().area_name(static_cast<size_t>(info->area))
                  << " of \"" << info->area_package << "\"";
      }
      std::cout << ")";
    }
    std::cout << ", " << node << "\n";
  } else {
    std::cout << "path:     invalid: " << info.status().message() << "\n";
  }
  if (request.node_type == NODE_TYPE_FILE) {
    std::cout << "content:  " << MediaClass_Name(facts.media_class).substr(12) << "; location "
              << (facts.location == LocationPresence::kAbsent    ? "absent"
                  : facts.location == LocationPresence::kPresent ? "present"
                                                                 : "not parsed (treated as present)")
              << "; " << content_note << "\n";
  }
  if (request.owner_uid.has_value()) std::cout << "owner:    uid " << *request.owner_uid << "\n";
  return 0;
}

absl::StatusOr<ControlResponse> Call(const ControlRequest& request) {
  std::string path = absl::GetFlag(FLAGS_socket);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return absl::InvalidArgumentError("--socket too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot reach scopedfsd at ", path, ": ",
                                               std::strerror(err), " (is it running?)"));
  }
  absl::Status sent = daemon::WriteFrame(fd, request);
  ControlResponse response;
  absl::Status got = sent.ok() ? daemon::ReadFrame(fd, &response) : sent;
  close(fd);
  if (!got.ok()) return got;
  if (!response.error().empty()) return absl::FailedPreconditionError(response.error());
  return response;
}

int StatsCommand() {
  if (absl::GetFlag(FLAGS_socket).empty()) return Usage("--socket is required");
  ControlRequest request;
  request.mutable_stats();
  absl::StatusOr<ControlResponse> response = Call(request);
  if (!response.ok()) {
    std::cerr << "scopedfsctl: " << response.status().message() << "\n";
    return 1;
  }
  const scopedfs::Stats& s = response->stats();
  if (absl::GetFlag(FLAGS_json)) {
    // Hand-written: proto3's JSON mapping would print 64-bit counters as strings.
    std::string ops;
    for (const OpStats& op : s.ops()) {
      absl::StrAppend(&ops, ops.empty() ? "" : ",", "\"", op.op(), "\":{\"count\":", op.count(),
                      ",\"p50_ns\":", op.p50_ns(), ",\"p90_ns\":", op.p90_ns(),
                      ",\"p99_ns\":", op.p99_ns(), "}");
    }
    std::cout << "{\"open_passthrough\":" << s.open_passthrough()
              << ",\"open_mediated\":" << s.open_mediated()
              << ",\"open_denied\":" << s.open_denied()
              << ",\"read_requests\":" << s.read_requests()
              << ",\"write_requests\":" << s.write_requests()
              << ",\"backing_files\":" << s.backing_files() << ",\"nodes\":" << s.nodes()
              << ",\"open_clean_media\":" << s.open_clean_media()
              << ",\"redacted_reads\":" << s.redacted_reads()
              << ",\"location_scans\":" << s.location_scans()
              << ",\"location_found\":" << s.location_found()
              << ",\"location_malformed\":" << s.location_malformed()
              << ",\"reloads\":" << s.reloads()
              << ",\"passthrough_enabled\":" << (s.passthrough_enabled() ? "true" : "false")
              << ",\"policy\":\"" << absl::CEscape(s.policy_name()) << "\",\"ops\":{" << ops
              << "}}\n";
    return 0;
  }
  std::cout << "policy:            " << s.policy_name() << " (" << s.reloads() << " reloads)\n"
            << "passthrough:       " << (s.passthrough_enabled() ? "enabled" : "off") << "\n"
            << "open_passthrough:  " << s.open_passthrough() << "\n"
            << "open_mediated:     " << s.open_mediated() << "\n"
            << "open_clean_media:  " << s.open_clean_media()
            << "  (passthrough: media without location, reader would be redacted)\n"
            << "open_denied:       " << s.open_denied() << "\n"
            << "read_requests:     " << s.read_requests() << "\n"
            << "write_requests:    " << s.write_requests() << "\n"
            << "redacted_reads:    " << s.redacted_reads() << "\n"
            << "location scans:    " << s.location_scans() << " (" << s.location_found()
            << " with location, " << s.location_malformed() << " uncertain)\n"
            << "backing_files:     " << s.backing_files() << "\n"
            << "nodes:             " << s.nodes() << "\n\n"
            << "op              count      p50        p90        p99\n";
  auto micros = [](uint64_t ns) { return absl::StrFormat("%.1fus", static_cast<double>(ns) / 1e3); };
  for (const OpStats& op : s.ops()) {
    if (op.count() == 0) continue;
    std::cout << absl::StrFormat("%-14s %7d %10s %10s %10s\n", op.op(), op.count(),
                                 micros(op.p50_ns()), micros(op.p90_ns()), micros(op.p99_ns()));
  }
  return 0;
}

int ReloadCommand() {
  if (absl::GetFlag(FLAGS_socket).empty()) return Usage("--socket is required");
  ControlRequest request;
  ReloadRequest* reload = request.mutable_reload();
  reload->set_policy(absl::GetFlag(FLAGS_policy));
  reload->set_apps(absl::GetFlag(FLAGS_apps));
  reload->set_packages_list(absl::GetFlag(FLAGS_packages_list));
  absl::StatusOr<ControlResponse> response = Call(request);
  if (!response.ok()) {
    std::cerr << "scopedfsctl: " << response.status().message() << "\n";
    return 1;
  }
  std::cout << response->message() << "\n";
  return 0;
}

}  // namespace
}  // namespace scopedfs::policy

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(scopedfs::policy::kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) return scopedfs::policy::Usage("expected exactly one command");
  absl::string_view command = args[1];
  if (command == "validate") return scopedfs::policy::Validate();
  if (command == "explain") return scopedfs::policy::Explain();
  if (command == "stats") return scopedfs::policy::StatsCommand();
  if (command == "reload") return scopedfs::policy::ReloadCommand();
  return scopedfs::policy::Usage(absl::StrCat("unknown command \"", command, "\""));
}
