// A stand-in for scopedfsd's control socket, for tools/scopedfsctl_test.sh: answers stats
// requests with fixed counters (filled by daemon::Stats::ToProto, as the daemon fills them) and
// the policy name it is given, so `scopedfsctl stats [--json]` is tested without root or a mount.
// Unlike daemon::ControlSocket it does not insist on a root peer. Exits after --connections.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "base/unique_fd.h"
#include "daemon/observe/stats.h"
#include "daemon/service/control_socket.h"
#include "proto/control.pb.h"

ABSL_FLAG(std::string, socket, "", "Path to listen on.");
ABSL_FLAG(std::string, policy_name, "fake", "Policy name to report.");
ABSL_FLAG(int, connections, 1, "Connections to answer before exiting.");

namespace scopedfs::daemon {
namespace {

int Fail(const std::string& what) {
  std::cerr << "fake_control_server: " << what << ": " << std::strerror(errno) << "\n";
  return 1;
}

int Run() {
  Stats stats;
  stats.open_passthrough = 17;
  stats.read_requests = uint64_t{1} << 40;  // past 2^32: must still print as a plain number
  stats.Record(OpKind::kLookup, 1000);
  scopedfs::Stats snapshot;
  stats.ToProto(&snapshot);
  snapshot.set_policy(absl::GetFlag(FLAGS_policy_name));
  snapshot.set_nodes(3);
  snapshot.set_passthrough_enabled(true);

  std::string path = absl::GetFlag(FLAGS_socket);
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    std::cerr << "fake_control_server: bad --socket\n";
    return 2;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  base::UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) return Fail("socket");
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Fail("bind");
  }
  if (listen(listener.get(), 4) != 0) return Fail("listen");
  for (int served = 0; served < absl::GetFlag(FLAGS_connections); ++served) {
    base::UniqueFd client(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) return Fail("accept");
    ControlRequest request;
    ControlResponse response;
    if (!ReadFrame(client.get(), &request).ok() || !request.has_stats()) {
      response.set_error("fake_control_server answers stats requests only");
    } else {
      *response.mutable_stats() = snapshot;
    }
    WriteFrame(client.get(), response).IgnoreError();
  }
  unlink(path.c_str());
  return 0;
}

}  // namespace
}  // namespace scopedfs::daemon

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return scopedfs::daemon::Run();
}
