// FuseSession::ServeInit: INIT on the calling thread and the choice of transport (--transport,
// fuse_session.h), apart from the /dev/fuse plumbing in fuse_session.cc.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "daemon/kernel/fuse_session.h"

namespace scopedfs::daemon {
namespace {

constexpr char kEnableUring[] = "/sys/module/fuse/parameters/enable_uring";
// The kernel's floor for a ring entry's payload (FUSE_MIN_READ_BUFFER).
constexpr size_t kMinPayload = 8192;

}  // namespace

std::optional<Transport> ParseTransport(absl::string_view name) {
  if (name == "auto") return Transport::kAuto;
  if (name == "uring") return Transport::kUring;
  if (name == "dev") return Transport::kDev;
  return std::nullopt;
}

absl::string_view TransportName(Transport transport) {
  switch (transport) {
    case Transport::kAuto:
      return "auto";
    case Transport::kUring:
      return "uring";
    case Transport::kDev:
      return "dev";
  }
  return "?";
}

absl::Status FuseSession::ServeInit() {
  const Transport wanted = options_.transport;
  std::string why_not;
  if (wanted != Transport::kDev) {
    absl::Status probe = uring::Probe();
    uring_wanted_ = probe.ok();
    if (!probe.ok()) why_not = absl::StrCat("io_uring cannot be set up: ", probe.message());
  }
  if (wanted == Transport::kUring && !uring_wanted_) {
    return absl::FailedPreconditionError(absl::StrCat("--transport=uring: ", why_not));
  }
  fuse_buf buf = {};
  int n = fuse_session_receive_buf(se_, &buf);
  if (n <= 0) {
    free(buf.mem);
    return absl::UnavailableError(absl::StrCat("the mount went away before its FUSE_INIT was read",
                                               n < 0 ? ": " : "", n < 0 ? strerror(-n) : ""));
  }
  fuse_session_process_buf(se_, &buf);
  free(buf.mem);
  if (init_unique_.load() != ~uint64_t{0}) {
    return absl::InternalError("the connection's first request was not a FUSE_INIT we answered");
  }
  if (wanted == Transport::kDev) {
    transport_description_ = "/dev/fuse (--transport=dev)";
    return absl::OkStatus();
  }
  if (!uring_negotiated_.load()) {
    if (why_not.empty()) {
      why_not = absl::StrCat("the kernel does not offer FUSE over io_uring (", kEnableUring,
                             " must be Y when mounting; kernel 6.14+ with CONFIG_FUSE_IO_URING)");
    }
    if (wanted == Transport::kUring) {
      return absl::FailedPreconditionError(absl::StrCat("--transport=uring: ", why_not));
    }
    transport_description_ = absl::StrCat("/dev/fuse (", why_not, ")");
    return absl::OkStatus();
  }
  absl::StatusOr<int> cpus = uring::PossibleCpus();
  absl::Status started = cpus.status();
  if (cpus.ok()) {
    UringTransport::Options uring_options;
    uring_options.se = se_;
    uring_options.fuse_fd = fd_;
    uring_options.queues = *cpus;
    uring_options.tmpfile_as_create = options_.posix;
    if (options_.stats != nullptr) {
      uring_options.on_request = [](void* stats, uint32_t opcode) {
        static_cast<Stats*>(stats)->CountRequest(opcode);
      };
      uring_options.on_request_arg = options_.stats;
    }
    uring_options.threads_per_queue = options_.threads_per_queue;
    uring_options.max_deferred = options_.max_deferred_replies;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    uring_options.payload_size =
        std::max({kMinPayload, static_cast<size_t>(max_write_.load()), max_pages_.load() * page});
    absl::StatusOr<std::unique_ptr<UringTransport>> created = UringTransport::Create(uring_options);
    started = created.status();
    if (created.ok()) {
      // Replies are routed to the ring before its first entry can take a request.
      uring_owner_ = std::move(*created);
      uring_.store(uring_owner_.get(), std::memory_order_release);
      started = uring_owner_->Start();
      if (!started.ok()) uring_.store(nullptr);
    }
  }
  if (!started.ok()) {
    // The kernel holds every request until the ring is complete: tell it there will be none.
    absl::Status fell_back = uring::FallBackToDevice(fd_);
    if (wanted == Transport::kUring || !fell_back.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("FUSE over io_uring could not be set up: ", started.message(),
                       fell_back.ok() ? "" : absl::StrCat("; ", fell_back.message())));
    }
    transport_description_ =
        absl::StrCat("/dev/fuse (io_uring could not be set up: ", started.message(), ")");
    return absl::OkStatus();
  }
  transport_description_ = uring_owner_->Describe();
  return absl::OkStatus();
}

uint64_t FuseSession::uring_requests() const {
  UringTransport* uring = uring_.load();
  return uring == nullptr ? 0 : uring->requests();
}

}  // namespace scopedfs::daemon
