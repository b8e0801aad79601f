// scopedfsctl stats, reload and explain --socket/--mount: one request to the daemon's control
// socket and its answer printed; the daemon does the work.
#include "tools/scopedfsctl_daemon.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/unique_fd.h"
#include "daemon/service/control_paths.h"
#include "daemon/service/control_socket.h"
#include "google/protobuf/util/json_util.h"
#include "tools/scopedfsctl_flags.h"
#include "tools/scopedfsctl_repair.h"

namespace scopedfs::policy::ctl {
namespace {

// The daemon's socket: --socket; the default socket of the daemon serving --mount; else the one
// socket in /run/scopedfs a daemon answers on. InvalidArgument (a usage error) for both flags or
// for several daemons, NotFound for none.
absl::StatusOr<std::string> SocketPath() {
  std::string socket = absl::GetFlag(FLAGS_socket);
  std::string mount = absl::GetFlag(FLAGS_mount);
  if (!socket.empty() && !mount.empty()) {
    return absl::InvalidArgumentError("give --socket or --mount, not both");
  }
  if (!socket.empty()) return socket;
  if (!mount.empty()) return daemon::DefaultControlSocket(ResolvedMountFlag(mount));
  std::vector<std::string> live = daemon::LiveControlSockets(daemon::kRunDir);
  if (live.size() == 1) return live[0];
  if (live.empty()) {
    return absl::NotFoundError(absl::StrCat("no scopedfsd answers in ", daemon::kRunDir,
                                            " (give --mount=DIR or --socket=PATH)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(live.size(), " daemons answer in ",
                                                 daemon::kRunDir, " (", absl::StrJoin(live, ", "),
                                                 "): say which with --mount=DIR or --socket=PATH"));
}

absl::StatusOr<ControlResponse> Call(const std::string& path, const ControlRequest& request) {
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
    if (field->is_repeated()) continue;  // the per-op and per-opcode tables below
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
  std::cout << "\nopcode            requests    replies     audits\n";
  for (const OpcodeStats& row : s.opcodes()) {
    std::cout << absl::StrFormat("%-15s %10.0f %10.0f %10.0f\n", row.name(), row.requests(),
                                 row.replies(), row.audits());
  }
}

// A usage error for a choice the operator must make, else the failure (exit 1).
int Unreachable(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kInvalidArgument) return Usage(status.message());
  std::cerr << "scopedfsctl: " << status.message() << "\n";
  return 1;
}

}  // namespace

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
  absl::StatusOr<Op> op = OpFlag();
  if (!op.ok()) return Usage(op.status().message());
  absl::StatusOr<std::string> path = StoragePathFlag();
  if (!path.ok()) return Usage(path.status().message());
  explain->set_op(absl::GetFlag(FLAGS_op));
  explain->set_path(*path);
  explain->set_domain(absl::GetFlag(FLAGS_domain));
  if (!absl::GetFlag(FLAGS_content).empty() || !absl::GetFlag(FLAGS_owner_uid).empty() ||
      !absl::GetFlag(FLAGS_node).empty()) {
    return Usage("--content, --owner_uid and --node are offline flags: the daemon uses the file");
  }
  absl::StatusOr<std::string> socket_path = SocketPath();
  if (!socket_path.ok()) return Unreachable(socket_path.status());
  absl::StatusOr<ControlResponse> response = Call(*socket_path, request);
  if (!response.ok()) {
    std::cerr << "scopedfsctl: " << response.status().message() << "\n";
    return 1;
  }
  std::cout << response->message();
  return 0;
}

int StatsCommand() {
  ControlRequest request;
  request.mutable_stats();
  absl::StatusOr<std::string> socket_path = SocketPath();
  if (!socket_path.ok()) return Unreachable(socket_path.status());
  absl::StatusOr<ControlResponse> response = Call(*socket_path, request);
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
  ControlRequest request;
  ReloadRequest* reload = request.mutable_reload();
  reload->set_policy(absl::GetFlag(FLAGS_policy));
  reload->set_apps(absl::GetFlag(FLAGS_apps));
  reload->set_packages_list(absl::GetFlag(FLAGS_packages_list));
  absl::StatusOr<std::string> socket_path = SocketPath();
  if (!socket_path.ok()) return Unreachable(socket_path.status());
  absl::StatusOr<ControlResponse> response = Call(*socket_path, request);
  if (!response.ok()) {
    std::cerr << "scopedfsctl: " << response.status().message() << "\n";
    return 1;
  }
  std::cout << response->message() << "\n";
  return 0;
}

}  // namespace scopedfs::policy::ctl
