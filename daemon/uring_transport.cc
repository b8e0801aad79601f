// FUSE over io_uring (see uring_transport.h).
#include "daemon/uring_transport.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/signals.h"

namespace scopedfs::daemon {

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

namespace {

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

}  // namespace

namespace uring {

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
    if (len > 0) std::memcpy(payload + at, base, len);
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

}  // namespace uring

namespace {

constexpr uint64_t kStopTag = ~uint64_t{0};
constexpr uint64_t kCmdTag = 1;
// Room for the fuse_in_header and the largest first argument before a request's payload.
constexpr size_t kRequestPrefix = sizeof(abi::InHeader) + abi::kUringOpInSize;
// Every queue's entries together stay within this many (memory: one payload buffer and one
// request buffer each, touched only as far as requests and replies reach), and a queue has at
// least kMinEntries.
constexpr int kDefaultTotalEntries = 16;
constexpr int kMinEntries = 2;
constexpr int kMinFree = 2;
// Deferred replies (lock waits) may grow a queue to this many entries.
constexpr int kMaxEntriesPerQueue = 64;
constexpr size_t kThreadStack = size_t{2} << 20;

void* MapBuffer(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

struct UringTransport::Entry {
  int qid = 0;
  int index = 0;
  io_uring ring{};
  bool ring_open = false;
  // [UringReqHeader, pad to a page][payload]: registered with the kernel.
  char* memory = nullptr;
  size_t memory_size = 0;
  abi::UringReqHeader* header = nullptr;
  char* payload = nullptr;
  iovec buffers[2] = {};
  // The request laid out for libfuse, apart from the ring's buffers: a synchronous reply
  // overwrites the payload while the handler may still read its arguments.
  char* request = nullptr;
  size_t request_size = 0;
  pthread_t thread{};
  bool joinable = false;

  absl::Mutex mu;
  absl::CondVar changed;
  uint64_t unique ABSL_GUARDED_BY(mu) = 0;
  bool replied ABSL_GUARDED_BY(mu) = false;
  // Registration's outcome, for Start: set once.
  std::optional<absl::Status> registration ABSL_GUARDED_BY(mu);

  ~Entry() {
    if (memory != nullptr) munmap(memory, memory_size);
    if (request != nullptr) munmap(request, request_size);
  }
};

UringTransport::UringTransport(const Options& options) : options_(options) {}

absl::StatusOr<std::unique_ptr<UringTransport>> UringTransport::Create(const Options& options) {
  if (options.se == nullptr || options.fuse_fd < 0 || options.queues < 1 ||
      options.payload_size == 0) {
    return absl::InvalidArgumentError("io_uring transport: incomplete options");
  }
  std::unique_ptr<UringTransport> transport(new UringTransport(options));
  Options& o = transport->options_;
  if (o.entries_per_queue <= 0) {
    o.entries_per_queue = std::max(kMinEntries, kDefaultTotalEntries / o.queues);
  }
  transport->max_entries_per_queue_ = std::max(o.entries_per_queue, kMaxEntriesPerQueue);
  transport->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (transport->stop_fd_ < 0) return absl::ErrnoToStatus(errno, "eventfd");
  return transport;
}

absl::Status UringTransport::Start() {
  absl::Status started;
  {
    absl::MutexLock lock(&entries_mu_);
    queue_state_.resize(static_cast<size_t>(options_.queues));
    for (int q = 0; q < options_.queues && started.ok(); ++q) {
      for (int e = 0; e < options_.entries_per_queue && started.ok(); ++e) {
        started = AddEntry(q, /*wait=*/true);
      }
    }
  }
  if (!started.ok()) Stop();
  return started;
}

absl::Status UringTransport::AddEntry(int qid, bool wait) {
  auto entry = std::make_unique<Entry>();
  entry->qid = qid;
  entry->index = queue_state_[qid].entries;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t header_size = (sizeof(abi::UringReqHeader) + page - 1) / page * page;
  entry->memory_size = header_size + options_.payload_size;
  entry->request_size = kRequestPrefix + options_.payload_size;
  entry->memory = static_cast<char*>(MapBuffer(entry->memory_size));
  entry->request = static_cast<char*>(MapBuffer(entry->request_size));
  if (entry->memory == nullptr || entry->request == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("io_uring transport: cannot map ", entry->memory_size, " bytes"));
  }
  entry->header = reinterpret_cast<abi::UringReqHeader*>(entry->memory);
  entry->payload = entry->memory + header_size;
  // A ring of its own: two submissions at most are ever in flight (the command and the poll of
  // the stop eventfd). SQE128: the command's arguments live in the big submission entry.
  int rc = io_uring_queue_init(4, &entry->ring, IORING_SETUP_SQE128);
  if (rc < 0) return absl::ErrnoToStatus(-rc, "io_uring_queue_init (SQE128)");
  entry->ring_open = true;
  Entry* raw = entry.get();
  // Small stacks: the handlers keep nothing large on theirs, and every entry has a thread.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kThreadStack);
  struct Start {
    UringTransport* self;
    Entry* entry;
  };
  auto* start = new Start{this, raw};
  // Termination signals are the stop thread's alone (base/signals.h): blocked in the new thread.
  base::NoTerminationSignals no_signals;
  rc = pthread_create(
      &raw->thread, &attr,
      +[](void* arg) -> void* {
        std::unique_ptr<Start> start(static_cast<Start*>(arg));
        start->self->Run(start->entry);
        return nullptr;
      },
      start);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete start;
    io_uring_queue_exit(&raw->ring);
    return absl::ErrnoToStatus(rc, "pthread_create");
  }
  raw->joinable = true;
  queue_state_[qid].entries++;
  entries_.push_back(std::move(entry));
  if (!wait) return absl::OkStatus();
  absl::MutexLock lock(&raw->mu);
  raw->mu.Await(absl::Condition(
      +[](Entry* e) ABSL_NO_THREAD_SAFETY_ANALYSIS { return e->registration.has_value(); }, raw));
  return *raw->registration;
}

absl::Status UringTransport::Submit(Entry* entry, uint32_t cmd, uint64_t commit_id) {
  io_uring_sqe* sqe = io_uring_get_sqe(&entry->ring);
  if (sqe == nullptr) return absl::ResourceExhaustedError("io_uring submission queue full");
  PrepareFuseCommand(sqe, options_.fuse_fd, cmd, static_cast<uint16_t>(entry->qid), commit_id);
  sqe->user_data = kCmdTag;
  if (cmd == abi::kUringCmdRegister) {
    // The kernel keeps the buffers' addresses from this iovec.
    entry->buffers[0] = {entry->header, sizeof(abi::UringReqHeader)};
    entry->buffers[1] = {entry->payload, options_.payload_size};
    sqe->addr = reinterpret_cast<uint64_t>(entry->buffers);
    sqe->len = 2;
  }
  int rc = io_uring_submit(&entry->ring);
  if (rc < 0) return absl::ErrnoToStatus(-rc, "io_uring_submit");
  return absl::OkStatus();
}

void UringTransport::Run(Entry* entry) {
  pthread_setname_np(
      pthread_self(),
      absl::StrCat("sfs-uring-", entry->qid, ".", entry->index).substr(0, 15).c_str());
  // The kernel picks the queue of the CPU the caller runs on: serving it from that CPU turns the
  // wake-up into a switch on the same CPU. Best effort: a CPU that is offline keeps the default.
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (entry->qid < CPU_SETSIZE) {
    CPU_SET(entry->qid, &cpus);
    (void)sched_setaffinity(0, sizeof(cpus), &cpus);
  }
  io_uring* ring = &entry->ring;
  io_uring_sqe* poll = io_uring_get_sqe(ring);
  ClearSqe128(poll);
  io_uring_prep_poll_add(poll, stop_fd_, POLLIN);
  io_uring_sqe_set_data64(poll, kStopTag);
  absl::Status registered = Submit(entry, abi::kUringCmdRegister, 0);
  if (registered.ok()) {
    // A registration the kernel refuses completes at once; one it accepts completes only with a
    // request, which the loop below then serves.
    io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(ring, &cqe) == 0 && cqe != nullptr && cqe->user_data == kCmdTag &&
        cqe->res < 0) {
      int err = -cqe->res;
      io_uring_cqe_seen(ring, cqe);
      registered = absl::ErrnoToStatus(
          err, absl::StrCat("FUSE_IO_URING_CMD_REGISTER (queue ", entry->qid, ")"));
      if (err == EOPNOTSUPP) {
        registered = absl::FailedPreconditionError(
            absl::StrCat(registered.message(), ": the kernel has FUSE over io_uring off ",
                         "(/sys/module/fuse/parameters/enable_uring is N)"));
      }
    }
  }
  {
    absl::MutexLock lock(&entry->mu);
    entry->registration = registered;
  }
  if (!registered.ok()) {
    fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: %s\n", entry->qid, entry->index,
            std::string(registered.message()).c_str());
    return;
  }
  fuse_session* se = options_.se;
  for (;;) {
    io_uring_cqe* cqe = nullptr;
    int rc = io_uring_wait_cqe(ring, &cqe);
    if (rc == -EINTR) continue;
    if (rc < 0) {
      if (!stopping_.load()) {
        fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: wait: %s\n", entry->qid,
                entry->index, strerror(-rc));
      }
      return;
    }
    const uint64_t tag = cqe->user_data;
    const int res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    if (tag == kStopTag) return;
    if (res < 0) {
      // ENOTCONN: the connection ended (unmount, abort), or the ring was cancelled.
      if (res != -ENOTCONN && res != -ECONNABORTED && !stopping_.load()) {
        fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: %s; entry retired\n", entry->qid,
                entry->index, strerror(-res));
      }
      return;
    }
    abi::InHeader in;
    std::memcpy(&in, entry->header->in_out, sizeof(in));
    absl::StatusOr<size_t> assembled = uring::AssembleRequest(
        *entry->header, entry->payload, options_.payload_size, entry->request, entry->request_size);
    {
      absl::MutexLock lock(&entry->mu);
      entry->unique = in.unique;
      entry->replied = false;
    }
    if (!assembled.ok()) {
      // Answered, so the caller is not left waiting; the kernel wrote what we cannot read.
      fprintf(stderr, "scopedfsd: io_uring: %s; answered EIO\n",
              std::string(assembled.status().message()).c_str());
      absl::MutexLock lock(&entry->mu);
      uring::SetErrorReply(in.unique, -EIO, entry->header);
      entry->replied = true;
    } else {
      {
        absl::MutexLock lock(&held_mu_);
        held_[in.unique] = entry;
      }
      if (options_.tmpfile_as_create && in.opcode == abi::kOpcodeTmpfile) {
        const uint32_t create = abi::kOpcodeCreate;
        std::memcpy(entry->request + offsetof(abi::InHeader, opcode), &create, sizeof(create));
      }
      fuse_buf buf = {};
      buf.mem = entry->request;
      buf.size = *assembled;
      fuse_session_process_buf(se, &buf);
    }
    bool deferred = false;
    {
      absl::MutexLock lock(&entry->mu);
      deferred = !entry->replied;
    }
    if (deferred) {
      Deferred(entry->qid, true);
      {
        absl::MutexLock lock(&entry->mu);
        while (!entry->replied && !stopping_.load()) entry->changed.Wait(&entry->mu);
        deferred = !entry->replied;
      }
      Deferred(entry->qid, false);
    }
    if (deferred) {  // stopping with a reply still owed: the kernel's abort answers it
      absl::MutexLock lock(&held_mu_);
      held_.erase(in.unique);
      return;
    }
    requests_.fetch_add(1, std::memory_order_relaxed);
    if (absl::Status committed = Submit(entry, abi::kUringCmdCommitAndFetch, in.unique);
        !committed.ok()) {
      fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: commit: %s; entry retired\n",
              entry->qid, entry->index, std::string(committed.message()).c_str());
      return;
    }
  }
}

void UringTransport::Deferred(int qid, bool deferred) {
  absl::MutexLock lock(&entries_mu_);
  if (stopping_.load()) return;
  Queue& q = queue_state_[static_cast<size_t>(qid)];
  if (!deferred) {
    q.deferred--;
    return;
  }
  q.deferred++;
  // The kernel gives a request to an entry that is free when the request comes, or to the next
  // entry that commits; an entry registered later does not take requests already waiting. So a
  // queue keeps kMinFree entries free while it may grow, and a request never waits behind
  // entries that all hold deferred replies.
  while (q.entries - q.deferred < kMinFree && q.entries < max_entries_per_queue_) {
    if (absl::Status added = AddEntry(qid, /*wait=*/false); !added.ok()) {
      fprintf(stderr, "scopedfsd: io_uring queue %d: cannot add an entry: %s\n", qid,
              std::string(added.message()).c_str());
      break;
    }
  }
}

bool UringTransport::Reply(const struct iovec* iov, int count, ssize_t* result) {
  if (count < 1 || iov[0].iov_len < sizeof(abi::OutHeader)) return false;
  abi::OutHeader out;
  std::memcpy(&out, iov[0].iov_base, sizeof(out));
  if (out.unique == 0) return false;  // a notification: /dev/fuse only
  if (stopping_.load()) return false;
  Entry* entry = nullptr;
  {
    absl::MutexLock lock(&held_mu_);
    auto it = held_.find(out.unique);
    if (it == held_.end()) return false;
    entry = it->second;
    held_.erase(it);
  }
  {
    absl::MutexLock lock(&entry->mu);
    absl::StatusOr<size_t> copied =
        uring::CopyReply(iov, count, entry->header, entry->payload, options_.payload_size);
    if (copied.ok()) {
      *result = static_cast<ssize_t>(*copied);
    } else {
      // Never truncated: the caller gets an error and the kernel an EIO.
      fprintf(stderr, "scopedfsd: io_uring: %s; answered EIO\n",
              std::string(copied.status().message()).c_str());
      uring::SetErrorReply(out.unique, -EIO, entry->header);
      errno = absl::IsResourceExhausted(copied.status()) ? EMSGSIZE : EINVAL;
      *result = -1;
    }
    entry->replied = true;
    entry->changed.Signal();
  }
  return true;
}

int UringTransport::entries() const {
  absl::MutexLock lock(&entries_mu_);
  return static_cast<int>(entries_.size());
}

std::string UringTransport::Describe() const {
  return absl::StrCat("io_uring, ", options_.queues, " queues of ", options_.entries_per_queue,
                      " entries");
}

void UringTransport::Stop() {
  stopping_.store(true);
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof(one));
  }
  std::vector<Entry*> all;
  {
    absl::MutexLock lock(&entries_mu_);
    for (auto& e : entries_) all.push_back(e.get());
  }
  for (Entry* e : all) {
    absl::MutexLock lock(&e->mu);
    e->changed.SignalAll();
  }
  // Joined outside entries_mu_: a thread may be adding an entry (it checks stopping_ first, and
  // what it added is in entries_ when the lock is free again).
  for (;;) {
    Entry* next = nullptr;
    {
      absl::MutexLock lock(&entries_mu_);
      for (auto& e : entries_) {
        if (e->joinable) {
          next = e.get();
          next->joinable = false;
          break;
        }
      }
    }
    if (next == nullptr) break;
    pthread_join(next->thread, nullptr);
  }
  // The entries' memory stays until the destructor: a late reply may still look one up.
  absl::MutexLock lock(&entries_mu_);
  for (auto& e : entries_) {
    if (e->ring_open) io_uring_queue_exit(&e->ring);
    e->ring_open = false;
  }
  if (stop_fd_ >= 0) close(stop_fd_);
  stop_fd_ = -1;
}

UringTransport::~UringTransport() {
  Stop();
  absl::MutexLock lock(&entries_mu_);
  entries_.clear();
}

}  // namespace scopedfs::daemon
