// FUSE over io_uring, setting up (see uring_transport.h): the queues' rings, their entries'
// buffers and threads, and the registration of every entry with the kernel. Serving is in
// uring_transport.cc.
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/signals.h"
#include "daemon/kernel/uring_queue.h"
#include "daemon/kernel/uring_transport.h"

namespace scopedfs::daemon {

namespace {

using uring_internal::kMinFree;
using uring_internal::kStopTag;
using uring_internal::MapBuffer;

// Threads per queue when the session does not say: as many as the /dev/fuse loop's default,
// since all but one of them may wait for location scans (filesystem.cc).
constexpr int kDefaultThreadsPerQueue = 8;
constexpr size_t kThreadStack = size_t{1} << 20;

}  // namespace

UringTransport::UringTransport(const Options& options)
    : options_(options), early_interrupts_(kMaxEarlyInterrupts) {}

absl::StatusOr<std::unique_ptr<UringTransport>> UringTransport::Create(const Options& options) {
  if (options.se == nullptr || options.fuse_fd < 0 || options.queues < 1 ||
      options.payload_size == 0) {
    return absl::InvalidArgumentError("io_uring transport: incomplete options");
  }
  std::unique_ptr<UringTransport> transport(new UringTransport(options));
  Options& o = transport->options_;
  if (o.threads_per_queue <= 0) o.threads_per_queue = kDefaultThreadsPerQueue;
  if (o.max_deferred < 0) return absl::InvalidArgumentError("io_uring transport: max_deferred < 0");
  // The kernel hands a request that finds no free entry only to an entry that commits; an entry
  // registered later takes none of those waiting (fs/fuse/dev_uring.c: REGISTER makes an entry
  // available, only COMMIT_AND_FETCH fetches). A deferred reply holds its entry until another
  // thread gives it, so were every entry of a queue to hold one, requests already waiting there
  // (the unlock that would grant them) would wait for ever. Every queue therefore has, from the
  // start, more entries than the daemon ever defers replies (all of them may come from callers
  // on one CPU), and one per thread and kMinFree more, so a burst of waits never takes the last.
  // Stuck leaders add one each (Watch), up to max_entries_per_queue. Memory: a payload buffer
  // each, reserved but touched only as far as requests and replies reach (the kernel hands out
  // the entry freed last first, so a few stay warm).
  o.entries_per_queue = o.max_deferred + o.threads_per_queue + kMinFree;
  o.max_entries_per_queue = o.entries_per_queue + o.threads_per_queue;
  transport->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (transport->stop_fd_ < 0) return absl::ErrnoToStatus(errno, "eventfd");
  return transport;
}

absl::Status UringTransport::Start() {
  absl::Status started;
  bool registering = false;
  {
    absl::MutexLock lock(&entries_mu_);
    // Every queue's ring and entries first, so that a process that cannot map them all (an
    // address-space limit) has registered nothing and gives everything back below.
    for (int q = 0; q < options_.queues && started.ok(); ++q) {
      auto queue = std::make_unique<Queue>();
      queue->qid = q;
      // The completion queue holds a completion for every entry the queue may ever have, and the
      // stop poll's.
      io_uring_params params{};
      params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE;
      params.cq_entries = static_cast<unsigned>(options_.max_entries_per_queue + 1);
      int rc = io_uring_queue_init_params(64, &queue->ring, &params);
      if (rc < 0) {
        started = absl::ErrnoToStatus(-rc, "io_uring_queue_init (SQE128)");
        break;
      }
      queue->ring_open = true;
      Queue* raw = queue.get();
      queues_.push_back(std::move(queue));
      for (int e = 0; e < options_.entries_per_queue && started.ok(); ++e) {
        started = AddEntry(raw, /*submit=*/false);
      }
    }
    // Then the threads, followers first: thread 0 of each queue registers its entries and says
    // how that went, and leads from the start (registration takes the completions first), so
    // the followers wait until the watch promotes one. Every thread but the queues' first exists
    // before anything is registered.
    for (int q = 0; q < options_.queues && started.ok(); ++q) {
      Queue* raw = queues_[q].get();
      {
        absl::MutexLock lead_lock(&raw->lead_mu);
        raw->leader = 0;
      }
      for (int t = 1; t < options_.threads_per_queue && started.ok(); ++t) {
        started = AddThread(raw, t);
      }
    }
    for (int q = 0; q < options_.queues && started.ok(); ++q) {
      Queue* raw = queues_[q].get();
      started = AddThread(raw, 0);
      if (!started.ok()) break;
      registering = true;
      absl::Condition reported(
          +[](Queue* q) ABSL_NO_THREAD_SAFETY_ANALYSIS { return q->registration.has_value(); },
          raw);
      if (!entries_mu_.AwaitWithTimeout(reported, absl::Seconds(10))) {
        started = absl::DeadlineExceededError(
            absl::StrCat("io_uring queue ", q, ": registration took over 10 s"));
        break;
      }
      started = *raw->registration;
    }
  }
  if (started.ok()) {
    base::NoTerminationSignals no_signals;  // the watch thread inherits the mask
    watch_ = std::thread([this] { Watch(); });
  }
  if (!started.ok()) {
    Stop();
    // Nothing was registered, so no reply can look an entry up: the memory goes now, for the
    // /dev/fuse transport that serves instead.
    if (!registering) {
      absl::MutexLock lock(&entries_mu_);
      queues_.clear();
    }
  }
  return started;
}

absl::Status UringTransport::AddEntry(Queue* queue, bool submit) {
  auto entry = std::make_unique<Entry>();
  entry->queue = queue;
  entry->index = static_cast<int>(queue->entries.size());
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t header_size = (sizeof(abi::UringReqHeader) + page - 1) / page * page;
  entry->memory_size = header_size + options_.payload_size;
  entry->memory = static_cast<char*>(MapBuffer(entry->memory_size));
  if (entry->memory == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("io_uring transport: cannot map ", entry->memory_size, " bytes"));
  }
  entry->header = reinterpret_cast<abi::UringReqHeader*>(entry->memory);
  entry->payload = entry->memory + header_size;
  // The kernel keeps the buffers' addresses from this iovec.
  entry->buffers[0] = {entry->header, sizeof(abi::UringReqHeader)};
  entry->buffers[1] = {entry->payload, options_.payload_size};
  Entry* raw = entry.get();
  queue->entries.push_back(std::move(entry));
  queue->live++;
  if (!submit) return absl::OkStatus();
  return Submit(raw, abi::kUringCmdRegister, 0);
}

absl::Status UringTransport::AddThread(Queue* queue, int index) {
  // Small stacks: the handlers keep nothing large on theirs.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kThreadStack);
  struct Start {
    UringTransport* self;
    Queue* queue;
    int index;
  };
  auto* start = new Start{this, queue, index};
  pthread_t thread;
  int rc;
  {
    // Termination signals are the stop thread's alone (base/signals.h): blocked in the new one.
    base::NoTerminationSignals no_signals;
    rc = pthread_create(
        &thread, &attr,
        +[](void* arg) -> void* {
          std::unique_ptr<Start> start(static_cast<Start*>(arg));
          start->self->Run(start->queue, start->index);
          return nullptr;
        },
        start);
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete start;
    return absl::ErrnoToStatus(rc, "pthread_create");
  }
  queue->threads.push_back(thread);
  return absl::OkStatus();
}

absl::Status UringTransport::Submit(Entry* entry, uint32_t cmd, uint64_t commit_id) {
  Queue* queue = entry->queue;
  absl::MutexLock lock(&queue->submit_mu);
  io_uring_sqe* sqe = io_uring_get_sqe(&queue->ring);
  if (sqe == nullptr) return absl::ResourceExhaustedError("io_uring submission queue full");
  uring::PrepareFuseCommand(sqe, options_.fuse_fd, cmd, static_cast<uint16_t>(queue->qid),
                            commit_id);
  io_uring_sqe_set_data(sqe, entry);
  if (cmd == abi::kUringCmdRegister) {
    sqe->addr = reinterpret_cast<uint64_t>(entry->buffers);
    sqe->len = 2;
  }
  int rc = io_uring_submit(&queue->ring);
  if (rc < 0) return absl::ErrnoToStatus(-rc, "io_uring_submit");
  return absl::OkStatus();
}

// Thread 0 of a queue: arms the stop poll and registers the queue's entries. A registration the
// kernel refuses completes at once, within the submission; one it accepts completes only with a
// request, which is kept for serving.
absl::Status UringTransport::Register(Queue* queue, std::vector<std::pair<Entry*, int>>* backlog) {
  {
    absl::MutexLock lock(&queue->submit_mu);
    io_uring_sqe* poll = io_uring_get_sqe(&queue->ring);
    uring::ClearSqe128(poll);
    io_uring_prep_poll_add(poll, stop_fd_, POLLIN);
    io_uring_sqe_set_data64(poll, kStopTag);
    int rc = io_uring_submit(&queue->ring);
    if (rc < 0) return absl::ErrnoToStatus(-rc, "io_uring_submit (poll)");
  }
  std::vector<Entry*> entries;
  {
    absl::MutexLock lock(&entries_mu_);
    for (auto& e : queue->entries) entries.push_back(e.get());
  }
  // Thread 0 leads and the queue's other threads do not exist yet: the completions are its own.
  absl::Status registered;
  for (Entry* entry : entries) {
    registered = Submit(entry, abi::kUringCmdRegister, 0);
    if (!registered.ok()) break;
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&queue->ring, &cqe) == 0 && cqe != nullptr) {
      auto* done = static_cast<Entry*>(io_uring_cqe_get_data(cqe));
      int res = cqe->res;
      io_uring_cqe_seen(&queue->ring, cqe);
      if (res >= 0) {
        backlog->emplace_back(done, res);
        continue;
      }
      registered = absl::ErrnoToStatus(
          -res, absl::StrCat("FUSE_IO_URING_CMD_REGISTER (queue ", queue->qid, ")"));
      if (res == -EOPNOTSUPP) {
        registered = absl::FailedPreconditionError(
            absl::StrCat(registered.message(), ": the kernel has FUSE over io_uring off ",
                         "(/sys/module/fuse/parameters/enable_uring is N)"));
      }
    }
    if (!registered.ok()) break;
  }
  return registered;
}

}  // namespace scopedfs::daemon
