// scopedfsctl: the operator's tool for scopedfs policies and daemons.
//   validate  load a policy + app registry and report every problem as file:line:col
//   explain   show the decision for one (uid, op, path[, content]) and the rule behind it
//   scan      find the location metadata of media files, optionally writing redacted copies
//   stats     live counters of a running scopedfsd (--socket)
//   reload    make a running scopedfsd load its policy again, or another one
//   audit2why explain audit lines: the rule, its reason, the permission that would change it
// explain with --socket asks the running daemon (live policy, the file's real content facts).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "base/unique_fd.h"
#include "daemon/control_socket.h"
#include "daemon/explain_text.h"
#include "google/protobuf/util/json_util.h"
#include "media/content_facts.h"
#include "media/location/location.h"
#include "policy/config.h"
#include "policy/engine.h"
#include "tools/audit2why.h"

ABSL_FLAG(std::string, policy, "", "Policy file (text scopedfs.Policy).");
ABSL_FLAG(std::string, apps, "", "App registry file (text scopedfs.AppRegistry).");
ABSL_FLAG(std::string, packages_list, "", "Optional Android packages.list to merge.");
ABSL_FLAG(std::string, uid, "", "explain: the caller's uid.");
ABSL_FLAG(std::string, package, "", "explain: the caller, by package name (instead of --uid).");
ABSL_FLAG(std::string, op, "",
          "explain: lookup|read|write|create|delete|rename|mkdir|rmdir|setattr.");
ABSL_FLAG(std::string, path, "", "explain: path relative to the storage root, e.g. DCIM/a.jpg.");
ABSL_FLAG(std::string, content, "",
          "explain: a file whose bytes stand for the file's content (default: judge by name).");
ABSL_FLAG(std::string, owner_uid, "",
          "explain: uid recorded as the file's creator (default: none).");
ABSL_FLAG(std::string, node, "", "explain: file|dir (default: dir for mkdir/rmdir and the root).");
ABSL_FLAG(uint32_t, user_id, 0, "explain: Android user whose storage is mounted.");
ABSL_FLAG(std::string, domain, "", "explain: the caller's SELinux domain (default: configured).");
ABSL_FLAG(std::string, socket, "", "stats/reload/explain: the daemon's --control_socket.");
ABSL_FLAG(bool, json, false, "stats: print one JSON object.");
ABSL_FLAG(std::string, redacted_out, "",
          "scan: write DIR/<basename of FILE>, the file with its location ranges filled.");
ABSL_FLAG(std::string, kinds, "exif_gps,xmp_gps,isobmff_location",
          "scan: comma-separated kinds of location ranges --redacted_out fills.");

namespace scopedfs::policy {
namespace {

constexpr char kUsage[] =
    "scopedfsctl <command> [flags]\n"
    "  validate --policy=F --apps=F [--packages_list=F]\n"
    "  explain  --policy=F --apps=F (--uid=U | --package=P) --op=OP --path=P\n"
    "           [--content=FILE] [--owner_uid=U] [--node=file|dir] [--user_id=N] [--domain=D]\n"
    "  explain  --socket=PATH (--uid=U | --package=P) --op=OP --path=P [--domain=D]\n"
    "           (asks the running daemon: live policy, the lower file's real facts)\n"
    "  audit2why --policy=F --apps=F [--packages_list=F] [--user_id=N] [LINE...]\n"
    "           (no LINE: every audit line on stdin)\n"
    "  scan     FILE... [--redacted_out=DIR] [--kinds=exif_gps,xmp_gps,isobmff_location]\n"
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

// A regular file opened for reading, with the stat taken at open.
class InputFile {
 public:
  // O_NONBLOCK so that a FIFO named by mistake fails the regular-file check instead of hanging.
  absl::Status Open(const std::string& path) {
    fd_.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd_.valid()) return absl::ErrnoToStatus(errno, path);
    if (fstat(fd_.get(), &st_) != 0) return absl::ErrnoToStatus(errno, path);
    if (!S_ISREG(st_.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
    }
    return absl::OkStatus();
  }
  int fd() const { return fd_.get(); }
  const struct stat& st() const { return st_; }
  // The size stat'ed at open: scan and copy both judge this one version of the file.
  uint64_t size() const { return static_cast<uint64_t>(st_.st_size); }

 private:
  base::UniqueFd fd_;
  struct stat st_ = {};
};

// What scopedfsd learns about a file's content when it first opens it.
struct ScannedFile {
  MediaFormat format = MediaFormat::kUnknown;
  // Set when the format may carry location (so the daemon would scan it too).
  std::optional<LocationScan> scan;
};

absl::StatusOr<ScannedFile> ScanInput(const InputFile& in, const std::string& path) {
  std::vector<uint8_t> head(kSniffBytes);
  ssize_t n = pread(in.fd(), head.data(), head.size(), 0);
  if (n < 0) return absl::ErrnoToStatus(errno, path);
  head.resize(static_cast<size_t>(n));
  ScannedFile scanned;
  scanned.format = SniffFormat(head);
  // The daemon scans exactly the formats that may carry location (a format without a parser
  // scans malformed), so explain sees what the engine would see.
  if (FormatMayCarryLocation(scanned.format)) {
    FdSource source(in.fd(), in.size());
    scanned.scan = ScanLocation(scanned.format, source);
  }
  return scanned;
}

// "exif_gps" for REDACTION_EXIF_GPS: the spelling --kinds takes.
std::string KindName(Redaction kind) {
  std::string name = Redaction_Name(kind);
  absl::string_view short_name(name);
  if (absl::ConsumePrefix(&short_name, "REDACTION_")) name = std::string(short_name);
  return absl::AsciiStrToLower(name);
}

std::string DescribeRange(uint64_t begin, uint64_t end) {
  return absl::StrCat("[", begin, ", ", end, ")");
}

std::string FillByte(uint8_t fill) { return absl::StrFormat("0x%02x", fill); }

uint64_t FilledBytes(absl::Span<const FillRange> plan) {
  uint64_t total = 0;
  for (const FillRange& f : plan) total += f.end - f.begin;
  return total;
}

absl::StatusOr<ControlResponse> Call(const ControlRequest& request);

// explain --socket: the daemon decides and describes; this only forwards the question.
int LiveExplain() {
  ControlRequest request;
  ExplainRequest* explain = request.mutable_explain();
  std::string uid_flag = absl::GetFlag(FLAGS_uid);
  std::string package = absl::GetFlag(FLAGS_package);
  if (uid_flag.empty() == package.empty()) return Usage("give exactly one of --uid and --package");
  uint32_t uid = 0;
  if (!uid_flag.empty() && !absl::SimpleAtoi(uid_flag, &uid)) {
    return Usage(absl::StrCat("--uid=", uid_flag, " is not a number"));
  }
  explain->set_uid(uid);
  explain->set_package(package);
  explain->set_op(absl::GetFlag(FLAGS_op));
  explain->set_path(absl::GetFlag(FLAGS_path));
  explain->set_domain(absl::GetFlag(FLAGS_domain));
  if (!absl::GetFlag(FLAGS_content).empty() || !absl::GetFlag(FLAGS_owner_uid).empty() ||
      !absl::GetFlag(FLAGS_node).empty()) {
    return Usage("--content, --owner_uid and --node are offline flags: the daemon uses the file");
  }
  absl::StatusOr<ControlResponse> response = Call(request);
  if (!response.ok()) {
    std::cerr << "scopedfsctl: " << response.status().message() << "\n";
    return 1;
  }
  std::cout << response->message();
  return 0;
}

// audit2why [LINE...]: one explanation per audit line (from the arguments, or stdin).
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
  if (!absl::GetFlag(FLAGS_socket).empty()) return LiveExplain();
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
  std::optional<Op> op = daemon::ParseOpName(absl::GetFlag(FLAGS_op));
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
      facts = FactsOfContent(name, scanned->format,
                             scanned->scan.has_value() ? &*scanned->scan : nullptr);
      content_note = absl::StrCat("sniffed from ", content, ": format ", FormatName(facts.format));
    } else {
      facts = FactsFromName(name);
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

// Parses --kinds ("exif_gps,xmp_gps") into a mask of 1 << Redaction.
absl::StatusOr<EnumMask> ParseKinds(absl::string_view text) {
  EnumMask mask = 0;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    word = absl::StripAsciiWhitespace(word);
    bool known = false;
    for (int r = REDACTION_EXIF_GPS; r <= REDACTION_ISOBMFF_LOCATION; ++r) {
      if (word == KindName(static_cast<Redaction>(r))) {
        mask |= Bit(r);
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--kinds: unknown kind \"", word, "\" (expected exif_gps, xmp_gps, isobmff_location)"));
    }
  }
  if (mask == 0) return absl::InvalidArgumentError("--kinds: no kind given");
  return mask;
}

// Copies `in` to `out_path` with `plan` applied, through a temporary file renamed into place, so
// that a reader never sees a half-written copy and a read-only earlier copy is replaced.
absl::Status WriteRedacted(const InputFile& in, const std::string& in_path,
                           absl::Span<const FillRange> plan, const std::string& dir,
                           const std::string& out_path) {
  std::string tmp_path = absl::StrCat(dir, "/.scopedfsctl-scan.XXXXXX");
  base::UniqueFd out(mkstemp(tmp_path.data()));
  if (!out.valid()) return absl::ErrnoToStatus(errno, dir);
  absl::Status status;
  std::vector<uint8_t> buf(1 << 20);
  for (uint64_t offset = 0; status.ok() && offset < in.size();) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), in.size() - offset));
    ssize_t got = pread(in.fd(), buf.data(), want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      status = absl::ErrnoToStatus(errno, in_path);
      break;
    }
    if (got == 0) {
      status = absl::DataLossError(absl::StrCat(in_path, ": file shrank while being copied"));
      break;
    }
    absl::Span<uint8_t> chunk(buf.data(), static_cast<size_t>(got));
    ApplyFills(plan, offset, chunk);
    for (size_t done = 0; done < chunk.size();) {
      ssize_t put = write(out.get(), chunk.data() + done, chunk.size() - done);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) {
        status = absl::ErrnoToStatus(errno, out_path);
        break;
      }
      done += static_cast<size_t>(put);
    }
    offset += chunk.size();
  }
  if (status.ok() && fchmod(out.get(), 0644) != 0) status = absl::ErrnoToStatus(errno, out_path);
  // close(2) is where a full disk or a failed NFS flush shows up, so its result counts.
  if (out.Close() != 0 && status.ok()) status = absl::ErrnoToStatus(errno, out_path);
  if (status.ok() && rename(tmp_path.c_str(), out_path.c_str()) != 0) {
    status = absl::ErrnoToStatus(errno, out_path);
  }
  if (!status.ok()) unlink(tmp_path.c_str());
  return status;
}

void PrintRanges(absl::string_view label, absl::Span<const LocationRange> ranges, EnumMask kinds) {
  for (const LocationRange& r : ranges) {
    std::cout << "  " << label << DescribeRange(r.begin, r.end) << " " << KindName(r.kind)
              << " fill " << FillByte(FillFor(r.kind));
    if (!(kinds & Bit(r.kind))) std::cout << " (not in --kinds)";
    std::cout << "\n";
  }
}

// scan FILE...: one block per file; exit 1 if any file could not be scanned or copied.
int ScanCommand(absl::Span<char* const> files) {
  if (files.empty()) return Usage("scan needs at least one FILE");
  absl::StatusOr<EnumMask> kinds = ParseKinds(absl::GetFlag(FLAGS_kinds));
  if (!kinds.ok()) {
    std::cerr << "scopedfsctl: " << kinds.status().message() << "\n";
    return 1;
  }
  std::string out_dir = absl::GetFlag(FLAGS_redacted_out);
  if (!out_dir.empty()) {
    struct stat st;
    absl::Status problem;
    if (stat(out_dir.c_str(), &st) != 0) {
      problem = absl::ErrnoToStatus(errno, absl::StrCat("--redacted_out=", out_dir));
    } else if (!S_ISDIR(st.st_mode)) {
      problem =
          absl::InvalidArgumentError(absl::StrCat("--redacted_out=", out_dir, ": not a directory"));
    }
    if (!problem.ok()) {
      std::cerr << "scopedfsctl: " << problem.message() << "\n";
      return 1;
    }
  }
  int failed = 0;
  std::set<std::string> written;
  for (const char* file : files) {
    std::string path = file;
    InputFile in;
    absl::Status opened = in.Open(path);
    absl::StatusOr<ScannedFile> scanned =
        opened.ok() ? ScanInput(in, path) : absl::StatusOr<ScannedFile>(opened);
    if (!scanned.ok()) {
      std::cerr << "scopedfsctl: " << scanned.status().message() << "\n";
      ++failed;
      continue;
    }
    std::cout << path << ": format " << FormatName(scanned->format) << ", " << in.size()
              << " bytes\n";
    LocationScan none;
    const LocationScan& scan = scanned->scan.has_value() ? *scanned->scan : none;
    if (!scanned->scan.has_value()) {
      std::cout << "  location:  absent (format carries none; not scanned)\n";
    } else {
      std::cout << "  location:  "
                << (scan.ranges.empty() ? std::string("absent")
                                        : absl::StrCat("present, ", scan.ranges.size(), " ranges"))
                << "\n";
    }
    std::cout << "  malformed: " << (scan.malformed ? absl::StrCat("yes: ", scan.error) : "no")
              << "\n";
    PrintRanges("range     ", scan.ranges, *kinds);
    // Only a malformed scan's fallback is ever filled; otherwise it just lists the containers.
    if (scan.malformed) PrintRanges("fallback  ", scan.fallback, *kinds);
    std::cout << "  cost:      " << scan.bytes_read << " bytes read, " << scan.structures_visited
              << " structures visited\n";
    if (out_dir.empty()) continue;

    std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    std::string out_path = absl::StrCat(out_dir, "/", base);
    struct stat existing;
    if (base.empty() || base == "." || base == "..") {
      std::cerr << "scopedfsctl: " << path << ": no file name to write under --redacted_out\n";
      ++failed;
      continue;
    }
    if (!written.insert(base).second) {
      std::cerr << "scopedfsctl: " << path << ": another FILE was already written as " << out_path
                << "\n";
      ++failed;
      continue;
    }
    if (stat(out_path.c_str(), &existing) == 0 && existing.st_dev == in.st().st_dev &&
        existing.st_ino == in.st().st_ino) {
      std::cerr << "scopedfsctl: " << path << ": --redacted_out would overwrite the file itself\n";
      ++failed;
      continue;
    }
    // The daemon's fills (RedactedFills) narrowed to --kinds: malformed files get their fallback
    // filled too, as a redacted reader would under uncertain_location REDACT_ALL (under DENY it
    // gets nothing at all).
    std::vector<FillRange> plan = RedactedFills(&scan, /*content_read=*/true, in.size(), *kinds);
    absl::Status status = WriteRedacted(in, path, plan, out_dir, out_path);
    if (!status.ok()) {
      std::cerr << "scopedfsctl: " << status.message() << "\n";
      ++failed;
      continue;
    }
    std::cout << "  redacted:  " << out_path << " (" << FilledBytes(plan) << " bytes filled in "
              << plan.size() << " runs)\n";
  }
  return failed == 0 ? 0 : 1;
}

absl::StatusOr<ControlResponse> Call(const ControlRequest& request) {
  std::string path = absl::GetFlag(FLAGS_socket);
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return absl::InvalidArgumentError("--socket too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  base::UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, "socket");
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("cannot reach scopedfsd at ", path, " (is it running?)"));
  }
  absl::Status sent = daemon::WriteFrame(fd.get(), request);
  if (!sent.ok()) return sent;
  ControlResponse response;
  absl::Status got = daemon::ReadFrame(fd.get(), &response);
  if (!got.ok()) return got;
  if (!response.error().empty()) return absl::FailedPreconditionError(response.error());
  return response;
}

// One line per field of the Stats message, in its declaration order and named as there, so a
// counter added to the protocol shows up here without being listed again.
void PrintStatsText(const scopedfs::Stats& s) {
  const google::protobuf::Descriptor* descriptor = s.GetDescriptor();
  const google::protobuf::Reflection* reflection = s.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->is_repeated()) continue;  // the per-op table below
    std::string value;
    switch (field->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE:
        value = absl::StrFormat("%.0f", reflection->GetDouble(s, field));
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_BOOL:
        value = reflection->GetBool(s, field) ? "yes" : "no";
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
        value = reflection->GetString(s, field);
        break;
      default:
        value = "?";
        break;
    }
    std::cout << absl::StrFormat("%-20s %s\n", absl::StrCat(field->name(), ":"), value);
  }
  std::cout << "\nop              count      p50        p90        p99\n";
  auto micros = [](double ns) { return absl::StrFormat("%.1fus", ns / 1e3); };
  for (const OpStats& op : s.ops()) {
    if (op.count() == 0) continue;
    std::cout << absl::StrFormat("%-14s %7.0f %10s %10s %10s\n", op.op(), op.count(),
                                 micros(op.p50_ns()), micros(op.p90_ns()), micros(op.p99_ns()));
  }
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
  if (!absl::GetFlag(FLAGS_json)) {
    PrintStatsText(response->stats());
    return 0;
  }
  // The message's numbers are doubles, so the printer writes them as JSON numbers; field names
  // stay as in control.proto, and zero counters are printed rather than left out.
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (auto printed = google::protobuf::util::MessageToJsonString(response->stats(), &json, options);
      !printed.ok()) {
    std::cerr << "scopedfsctl: cannot print stats as JSON: " << printed.message() << "\n";
    return 1;
  }
  std::cout << json << "\n";
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
  if (args.size() < 2) return scopedfs::policy::Usage("expected a command");
  absl::string_view command = args[1];
  if (command == "scan") {
    return scopedfs::policy::ScanCommand(absl::MakeConstSpan(args).subspan(2));
  }
  if (command == "audit2why") {
    return scopedfs::policy::Audit2WhyCommand(absl::MakeConstSpan(args).subspan(2));
  }
  if (args.size() != 2) return scopedfs::policy::Usage("expected exactly one command");
  if (command == "validate") return scopedfs::policy::Validate();
  if (command == "explain") return scopedfs::policy::Explain();
  if (command == "stats") return scopedfs::policy::StatsCommand();
  if (command == "reload") return scopedfs::policy::ReloadCommand();
  return scopedfs::policy::Usage(absl::StrCat("unknown command \"", command, "\""));
}
