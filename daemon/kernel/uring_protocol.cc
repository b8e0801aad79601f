// FUSE over io_uring: the protocol's pure pieces (request layout, reply copies, commands), apart
// from the rings and threads of uring_transport.cc.
#include <errno.h>
#include <liburing.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "daemon/kernel/uring_transport.h"

namespace scopedfs::daemon {

namespace uring {

// An IORING_SETUP_SQE128 submission is two io_uring_sqe long, its command area (sqe->cmd, a
// zero-length array in liburing's header) the 80 bytes after the first 48: GCC's bounds check
// only sees the declared size.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
void PrepareFuseCommand(io_uring_sqe* sqe, int fuse_fd, uint32_t cmd, uint16_t qid,
                        uint64_t commit_id) {
  std::memset(sqe, 0, 2 * sizeof(io_uring_sqe));
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fuse_fd;
  sqe->cmd_op = cmd;
  abi::UringCmdReq req{};
  req.qid = qid;
  req.commit_id = commit_id;
  static_assert(sizeof(req) <= 80);
  std::memcpy(sqe->cmd, &req, sizeof(req));
}
void ClearSqe128(io_uring_sqe* sqe) { std::memset(sqe, 0, 2 * sizeof(io_uring_sqe)); }
#pragma GCC diagnostic pop

absl::StatusOr<size_t> AssembleRequest(const abi::UringReqHeader& header, const char* payload,
                                       size_t payload_capacity, char* out, size_t out_capacity) {
  abi::InHeader in;
  std::memcpy(&in, header.in_out, sizeof(in));
  const size_t payload_size = header.ring_ent_in_out.payload_sz;
  // The kernel's len counts the header and every argument; what is in neither the header nor
  // the payload is the first argument, which it put in op_in.
  if (in.len < sizeof(in) + payload_size || payload_size > payload_capacity) {
    return absl::InvalidArgumentError(absl::StrCat("ring request ", in.unique, " of length ",
                                                   in.len, " with a payload of ", payload_size,
                                                   " bytes"));
  }
  const size_t op_size = in.len - sizeof(in) - payload_size;
  if (op_size > sizeof(header.op_in) || in.len > out_capacity) {
    return absl::InvalidArgumentError(absl::StrCat("ring request ", in.unique, " of length ",
                                                   in.len, ": its first argument would be ",
                                                   op_size, " bytes"));
  }
  std::memcpy(out, &in, sizeof(in));
  std::memcpy(out + sizeof(in), header.op_in, op_size);
  std::memcpy(out + sizeof(in) + op_size, payload, payload_size);
  return in.len;
}

absl::StatusOr<size_t> CopyReply(const struct iovec* iov, int count, abi::UringReqHeader* header,
                                 char* payload, size_t payload_capacity) {
  if (count < 1 || iov[0].iov_len < sizeof(abi::OutHeader)) {
    return absl::InvalidArgumentError("reply shorter than fuse_out_header");
  }
  abi::OutHeader out;
  std::memcpy(&out, iov[0].iov_base, sizeof(out));
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  if (out.len != total) {
    return absl::InvalidArgumentError(
        absl::StrCat("reply to ", out.unique, " says ", out.len, " bytes but has ", total));
  }
  const size_t body = total - sizeof(out);
  if (body > payload_capacity) {
    return absl::ResourceExhaustedError(absl::StrCat("reply to ", out.unique, " has ", body,
                                                     " bytes, more than the ring entry's ",
                                                     payload_capacity));
  }
  std::memcpy(header->in_out, &out, sizeof(out));
  size_t at = 0;
  for (int i = 0; i < count; ++i) {
    const char* base = static_cast<const char*>(iov[i].iov_base);
    size_t len = iov[i].iov_len;
    if (i == 0) {
      base += sizeof(out);
      len -= sizeof(out);
    }
    // Data the handler wrote into the payload itself (UringTransport::ServingPayload) is there.
    if (len > 0 && base != payload + at) std::memmove(payload + at, base, len);
    at += len;
  }
  header->ring_ent_in_out.payload_sz = static_cast<uint32_t>(body);
  return total;
}

void SetErrorReply(uint64_t unique, int error, abi::UringReqHeader* header) {
  abi::OutHeader out{};
  out.len = sizeof(out);
  out.error = error;
  out.unique = unique;
  std::memcpy(header->in_out, &out, sizeof(out));
  header->ring_ent_in_out.payload_sz = 0;
}

absl::StatusOr<int> PossibleCpus() {
  std::ifstream in("/sys/devices/system/cpu/possible");
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::NotFoundError("cannot read /sys/devices/system/cpu/possible");
  }
  int count = 0;
  for (absl::string_view range : absl::StrSplit(absl::StripAsciiWhitespace(line), ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
    int first = 0;
    int last = 0;
    if (ends.empty() || ends.size() > 2 || !absl::SimpleAtoi(ends[0], &first) ||
        !absl::SimpleAtoi(ends.back(), &last) || first < 0 || last < first) {
      return absl::InvalidArgumentError(
          absl::StrCat("/sys/devices/system/cpu/possible: cannot parse \"", line, "\""));
    }
    count += last - first + 1;
  }
  if (count < 1 || count > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("/sys/devices/system/cpu/possible: ", count, " CPUs"));
  }
  return count;
}

absl::Status Probe() {
  io_uring ring;
  int rc = io_uring_queue_init(2, &ring, IORING_SETUP_SQE128);
  if (rc < 0) return absl::ErrnoToStatus(-rc, "io_uring_setup (SQE128)");
  io_uring_queue_exit(&ring);
  return absl::OkStatus();
}

absl::Status FallBackToDevice(int fuse_fd) {
  io_uring ring;
  int rc = io_uring_queue_init(2, &ring, IORING_SETUP_SQE128);
  if (rc < 0) return absl::ErrnoToStatus(-rc, "io_uring_setup (SQE128)");
  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  PrepareFuseCommand(sqe, fuse_fd, abi::kUringCmdRegister, UINT16_MAX /* no such queue */, 0);
  io_uring_cqe* cqe = nullptr;
  rc = io_uring_submit_and_wait(&ring, 1);
  if (rc >= 0) rc = io_uring_peek_cqe(&ring, &cqe);
  int res = (rc == 0 && cqe != nullptr) ? cqe->res : rc;
  io_uring_queue_exit(&ring);
  if (res >= 0) return absl::InternalError("the kernel accepted a registration for no queue");
  return absl::OkStatus();
}

void EarlyInterrupts::Serving(uint64_t unique) { checked_[unique] = false; }

bool EarlyInterrupts::Checked(uint64_t unique) {
  bool early = early_.erase(unique) > 0;
  auto it = checked_.find(unique);
  if (it == checked_.end()) return false;  // replied already: the interrupt is moot
  it->second = true;
  return early;
}

void EarlyInterrupts::Replied(uint64_t unique) { checked_.erase(unique); }

EarlyInterrupts::Action EarlyInterrupts::Eagain(uint64_t unique) {
  auto it = checked_.find(unique);
  if (it != checked_.end() && it->second) return Action::kDeliverNow;
  if (early_.size() >= bound_) {
    // The oldest interrupt of a request not being served: a request it overtook by this many
    // others, or one answered already (a stale one).
    auto old = early_.begin();
    while (old != early_.end() && checked_.contains(*old)) ++old;
    if (old == early_.end()) return Action::kDropped;
    early_.erase(old);
  }
  early_.insert(unique);
  return Action::kRemembered;
}

}  // namespace uring
}  // namespace scopedfs::daemon
