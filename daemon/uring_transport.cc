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
#include <thread>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/signals.h"

namespace scopedfs::daemon {

namespace {

constexpr uint64_t kStopTag = ~uint64_t{0};
// Room for the fuse_in_header and the largest first argument before a request's payload.
constexpr size_t kRequestPrefix = sizeof(abi::InHeader) + abi::kUringOpInSize;
// Threads per queue when the session does not say: as many as the /dev/fuse loop's default,
// since all but one of them may wait for location scans (filesystem.cc).
constexpr int kDefaultThreadsPerQueue = 8;
// Entries a queue has free beyond its deferred replies and its threads' requests.
constexpr int kMinFree = 2;
constexpr size_t kThreadStack = size_t{1} << 20;
// A leader serving one request this long hands the ring to a follower; the watch sleeps after
// kQuietTicks checks that found every leader waiting.
constexpr absl::Duration kTakeover = absl::Milliseconds(5);
constexpr int kQuietTicks = 40;
// Interrupts remembered for requests not served yet; past this many (a kernel that interrupts
// requests we never see), the oldest are forgotten.
constexpr size_t kMaxEarlyInterrupts = 1024;

void* MapBuffer(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

// A ring entry: the buffers the kernel writes a request into and takes the reply from. It is
// the kernel's while a COMMIT_AND_FETCH or REGISTER of it is pending, then ours from the
// request's completion until its reply is committed.
struct UringTransport::Entry {
  Queue* queue = nullptr;
  int index = 0;
  // [UringReqHeader, pad to a page][payload]: registered with the kernel.
  char* memory = nullptr;
  size_t memory_size = 0;
  abi::UringReqHeader* header = nullptr;
  char* payload = nullptr;
  iovec buffers[2] = {};

  enum class State { kKernel, kProcessing, kReplied, kDeferred, kRetired };
  absl::Mutex mu;
  State state ABSL_GUARDED_BY(mu) = State::kKernel;

  ~Entry() {
    if (memory != nullptr) munmap(memory, memory_size);
  }
};

// A queue: the kernel's queue `qid` (one per possible CPU), one io_uring all its entries' commands
// go through, and the threads that serve it. One thread, the leader, waits for completions and
// serves each request it takes itself, then commits the reply and waits again in one system
// call: no other thread is woken on the way. When the leader is stuck in a handler (a scan wait)
// for kTakeover, the watch thread makes a follower the leader, so the queue's other callers are
// still served. Any thread may submit (submit_mu): the leader commits the replies it gives, and
// the thread that gives a deferred reply (the lock waiter) commits that one.
struct UringTransport::Queue {
  int qid = 0;
  io_uring ring{};
  bool ring_open = false;
  absl::Mutex submit_mu;
  // Who waits for completions: one thread at a time, the leader, which also serves what it takes.
  absl::Mutex lead_mu;
  absl::CondVar promoted;
  int leader ABSL_GUARDED_BY(lead_mu) = -1;  // thread index; -1: the next follower to wake
  int idle_followers ABSL_GUARDED_BY(lead_mu) = 0;
  // Since when the leader serves a request; InfiniteFuture while it waits.
  absl::Time busy_since ABSL_GUARDED_BY(lead_mu) = absl::InfiniteFuture();
  bool done ABSL_GUARDED_BY(lead_mu) = false;  // stopped, or every entry retired
  std::vector<pthread_t> threads;              // made and joined under entries_mu_
  // Under the transport's entries_mu_.
  std::vector<std::unique_ptr<Entry>> entries;
  int live = 0;                              // entries not retired
  int deferred = 0;                          // holding a reply another thread owes
  std::optional<absl::Status> registration;  // thread 0's report, for Start
};

UringTransport::UringTransport(const Options& options) : options_(options) {}

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

void UringTransport::Run(Queue* queue, int index) {
  // Nothing here allocates with malloc until the thread serves: glibc gives every thread that
  // does an arena of its own (64 MiB of address space), and followers may never serve.
  char name[16];
  snprintf(name, sizeof(name), "sfs-uring-%d.%d", queue->qid, index);
  pthread_setname_np(pthread_self(), name);
  // The kernel puts a request on the queue of the CPU its caller runs on: serving it from that
  // CPU turns the wake-up into a switch on the same CPU. Best effort.
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (queue->qid < CPU_SETSIZE) {
    CPU_SET(queue->qid, &cpus);
    (void)sched_setaffinity(0, sizeof(cpus), &cpus);
  }
  // The request laid out for libfuse, apart from the ring's buffers: a reply overwrites the
  // payload while the handler may still read its arguments.
  const size_t request_size = kRequestPrefix + options_.payload_size;
  char* request = nullptr;  // mapped when the thread first serves
  std::vector<std::pair<Entry*, int>> backlog;
  if (index == 0) {
    request = static_cast<char*>(MapBuffer(request_size));
    {
      absl::MutexLock lock(&queue->lead_mu);
      queue->leader = 0;  // leads from the start: it registers, then waits for requests
    }
    absl::Status registered = request == nullptr
                                  ? absl::ResourceExhaustedError("cannot map a request buffer")
                                  : Register(queue, &backlog);
    absl::MutexLock lock(&entries_mu_);
    queue->registration = registered;
    if (!registered.ok()) {
      fprintf(stderr, "scopedfsd: io_uring queue %d: %s\n", queue->qid,
              std::string(registered.message()).c_str());
      absl::MutexLock lead_lock(&queue->lead_mu);
      queue->done = true;
      queue->promoted.SignalAll();
    }
  }
  for (;;) {
    {
      // Followers wait here until the leader is stuck in a handler (the watch hands the ring
      // to one of them) or the queue is done.
      absl::MutexLock lock(&queue->lead_mu);
      while (!queue->done && queue->leader != index) {
        if (queue->leader < 0) {
          queue->leader = index;
          break;
        }
        queue->idle_followers++;
        queue->promoted.Wait(&queue->lead_mu);
        queue->idle_followers--;
      }
      if (queue->done) break;
    }
    if (request == nullptr) request = static_cast<char*>(MapBuffer(request_size));
    if (request == nullptr) {
      fprintf(stderr, "scopedfsd: io_uring queue %d: cannot map a request buffer\n", queue->qid);
      absl::MutexLock lock(&queue->lead_mu);
      if (queue->leader == index) queue->leader = -1;
      queue->promoted.Signal();
      break;
    }
    Entry* entry = nullptr;
    int res = 0;
    if (!backlog.empty()) {
      std::tie(entry, res) = backlog.back();
      backlog.pop_back();
    } else {
      // Only the leader waits for completions; no lock is held meanwhile.
      io_uring_cqe* cqe = nullptr;
      int rc = io_uring_wait_cqe(&queue->ring, &cqe);
      if (rc == -EINTR) continue;
      uint64_t tag = kStopTag;
      if (rc < 0) {
        fprintf(stderr, "scopedfsd: io_uring queue %d: wait: %s\n", queue->qid, strerror(-rc));
      } else {
        tag = io_uring_cqe_get_data64(cqe);
        res = cqe->res;
        io_uring_cqe_seen(&queue->ring, cqe);
      }
      if (tag == kStopTag) {
        absl::MutexLock lock(&queue->lead_mu);
        queue->done = true;
        queue->promoted.SignalAll();
        break;
      }
      entry = reinterpret_cast<Entry*>(tag);
    }
    if (res < 0) {
      Retire(entry, res);
      continue;
    }
    // Serving, the leader may block (a scan wait, a slow lower filesystem): the watch then
    // makes a follower the leader, so the queue's other callers are still served.
    {
      absl::MutexLock lock(&queue->lead_mu);
      queue->busy_since = absl::Now();
    }
    if (watch_sleeping_.load()) WakeWatch();
    Serve(entry, request, request_size);
    {
      absl::MutexLock lock(&queue->lead_mu);
      if (queue->leader == index) queue->busy_since = absl::InfiniteFuture();
    }
  }
  if (request != nullptr) munmap(request, request_size);
}

void UringTransport::WakeWatch() {
  absl::MutexLock lock(&watch_mu_);
  watch_cv_.Signal();
}

void UringTransport::Watch() {
  pthread_setname_np(pthread_self(), "sfs-uring-watch");
  // No malloc here (see Run): the queues are walked in place.
  absl::MutexLock lock(&watch_mu_);
  int quiet = 0;
  while (!stopping_.load()) {
    bool busy = false;
    {
      absl::MutexLock entries_lock(&entries_mu_);
      const absl::Time now = absl::Now();
      for (auto& q : queues_) {
        bool promoted = false;
        {
          absl::MutexLock queue_lock(&q->lead_mu);
          if (q->busy_since == absl::InfiniteFuture()) continue;
          busy = true;
          if (now - q->busy_since >= kTakeover && q->idle_followers > 0) {
            // The first follower to wake leads; the old leader follows once free.
            q->leader = -1;
            q->busy_since = absl::InfiniteFuture();
            q->promoted.Signal();
            promoted = true;
          }
        }
        // The stuck leader holds an entry: one more keeps kMinFree free for the new leader.
        if (promoted && static_cast<int>(q->entries.size()) < options_.max_entries_per_queue) {
          (void)AddEntry(q.get(), /*submit=*/true);
        }
      }
    }
    quiet = busy ? 0 : quiet + 1;
    if (quiet < kQuietTicks) {
      watch_cv_.WaitWithTimeout(&watch_mu_, kTakeover);
      continue;
    }
    // Nothing served for a while: sleep until a leader starts serving (it wakes us), checking
    // once more after saying so, so no start is missed.
    watch_sleeping_.store(true);
    bool started = false;
    {
      absl::MutexLock entries_lock(&entries_mu_);
      for (auto& q : queues_) {
        absl::MutexLock queue_lock(&q->lead_mu);
        started = started || q->busy_since != absl::InfiniteFuture();
      }
    }
    if (!started && !stopping_.load()) watch_cv_.Wait(&watch_mu_);
    watch_sleeping_.store(false);
    quiet = 0;
  }
}

void UringTransport::Retire(Entry* entry, int res) {
  // ENOTCONN: the connection ended (unmount, abort) or the ring was cancelled.
  if (res != -ENOTCONN && res != -ECONNABORTED && !stopping_.load()) {
    fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: %s; entry retired\n", entry->queue->qid,
            entry->index, strerror(-res));
  }
  {
    absl::MutexLock lock(&entry->mu);
    if (entry->state == Entry::State::kRetired) return;  // counted once
    entry->state = Entry::State::kRetired;
  }
  absl::MutexLock lock(&entries_mu_);
  Queue* queue = entry->queue;
  if (--queue->live == 0) {
    absl::MutexLock lead_lock(&queue->lead_mu);
    queue->done = true;
    queue->promoted.SignalAll();
  }
}

void UringTransport::Serve(Entry* entry, char* request, size_t request_size) {
  abi::InHeader in;
  std::memcpy(&in, entry->header->in_out, sizeof(in));
  absl::StatusOr<size_t> assembled = uring::AssembleRequest(
      *entry->header, entry->payload, options_.payload_size, request, request_size);
  {
    absl::MutexLock lock(&entry->mu);
    entry->state = Entry::State::kProcessing;
  }
  if (!assembled.ok()) {
    // Answered, so the caller is not left waiting; the kernel wrote what we cannot read.
    fprintf(stderr, "scopedfsd: io_uring: %s; answered EIO\n",
            std::string(assembled.status().message()).c_str());
    uring::SetErrorReply(in.unique, -EIO, entry->header);
    Commit(entry, in.unique);
    return;
  }
  if (options_.on_request != nullptr) options_.on_request(options_.on_request_arg, in.opcode);
  if (options_.tmpfile_as_create && in.opcode == abi::kOpcodeTmpfile) {
    const uint32_t create = abi::kOpcodeCreate;
    std::memcpy(request + offsetof(abi::InHeader, opcode), &create, sizeof(create));
  }
  {
    absl::MutexLock lock(&held_mu_);
    held_[in.unique] = entry;
  }
  fuse_buf buf = {};
  buf.mem = request;
  buf.size = *assembled;
  fuse_session_process_buf(options_.se, &buf);
  // An interrupt that overtook this request (it comes through /dev/fuse) and that libfuse
  // answered EAGAIN, not having seen the request yet: the kernel would resend it for a /dev/fuse
  // request, but finds no ring request to resend it for, so it is handed to libfuse again now.
  bool interrupted;
  {
    absl::MutexLock lock(&held_mu_);
    interrupted = early_interrupts_.erase(in.unique) > 0;
  }
  if (interrupted) {
    struct {
      abi::InHeader header;
      uint64_t unique;  // fuse_interrupt_in
    } interrupt = {};
    interrupt.header = in;
    interrupt.header.len = sizeof(interrupt);
    interrupt.header.opcode = abi::kOpcodeInterrupt;
    interrupt.header.unique = in.unique | abi::kInterruptUniqueBit;
    interrupt.header.nodeid = 0;
    interrupt.header.total_extlen = 0;
    interrupt.unique = in.unique;
    fuse_buf ibuf = {};
    ibuf.mem = &interrupt;
    ibuf.size = sizeof(interrupt);
    fuse_session_process_buf(options_.se, &ibuf);
  }
  bool replied;
  {
    absl::MutexLock lock(&entry->mu);
    replied = entry->state == Entry::State::kReplied;
    if (!replied) entry->state = Entry::State::kDeferred;
  }
  if (replied) {
    Commit(entry, in.unique);
  } else {
    Deferred(entry->queue, true);  // Reply() commits it
  }
}

void UringTransport::Commit(Entry* entry, uint64_t unique) {
  {
    absl::MutexLock lock(&entry->mu);
    entry->state = Entry::State::kKernel;
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (absl::Status committed = Submit(entry, abi::kUringCmdCommitAndFetch, unique);
      !committed.ok()) {
    fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: commit: %s; entry retired\n",
            entry->queue->qid, entry->index, std::string(committed.message()).c_str());
    Retire(entry, -EIO);
  }
}

void UringTransport::Deferred(Queue* queue, bool deferred) {
  absl::MutexLock lock(&entries_mu_);
  if (!deferred) {
    queue->deferred--;
    return;
  }
  // The ops bound what they defer (Options::max_deferred); past it, the queue's depth no longer
  // proves that requests waiting in the kernel are fetched. Said (once per crossing), never
  // silent.
  if (++queue->deferred == options_.max_deferred + 1 && !stopping_.load()) {
    fprintf(stderr,
            "scopedfsd: io_uring queue %d: %d deferred replies, more than the %d it was sized "
            "for\n",
            queue->qid, queue->deferred, options_.max_deferred);
  }
}

bool UringTransport::Reply(const struct iovec* iov, int count, ssize_t* result) {
  if (count < 1 || iov[0].iov_len < sizeof(abi::OutHeader)) return false;
  abi::OutHeader out;
  std::memcpy(&out, iov[0].iov_base, sizeof(out));
  if (out.unique == 0) return false;  // a notification: /dev/fuse only
  if (stopping_.load()) return false;
  if ((out.unique & abi::kInterruptUniqueBit) != 0) {
    // libfuse's "try again" to an interrupt of a request it has not seen: remembered (bounded)
    // for the ring request it may be (Serve), and sent on, for a /dev/fuse request's sake.
    if (out.error == -EAGAIN) {
      absl::MutexLock lock(&held_mu_);
      if (early_interrupts_.size() >= kMaxEarlyInterrupts) early_interrupts_.clear();
      early_interrupts_.insert(out.unique & ~abi::kInterruptUniqueBit);
    }
    return false;
  }
  Entry* entry = nullptr;
  {
    absl::MutexLock lock(&held_mu_);
    auto it = held_.find(out.unique);
    if (it == held_.end()) return false;
    entry = it->second;
    held_.erase(it);
  }
  bool commit_here = false;
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
    // While the handler still runs, its thread commits once it returns; a deferred reply is
    // committed by the thread that gives it.
    commit_here = entry->state == Entry::State::kDeferred;
    if (!commit_here) entry->state = Entry::State::kReplied;
  }
  if (commit_here) {
    Deferred(entry->queue, false);
    Commit(entry, out.unique);
  }
  return true;
}

int UringTransport::entries() const {
  absl::MutexLock lock(&entries_mu_);
  int n = 0;
  for (const auto& q : queues_) n += static_cast<int>(q->entries.size());
  return n;
}

std::string UringTransport::Describe() const {
  return absl::StrCat("io_uring, ", options_.queues, " queues of ", options_.threads_per_queue,
                      " threads");
}

void UringTransport::Stop() {
  stopping_.store(true);
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof(one));
  }
  std::vector<pthread_t> threads;
  {
    absl::MutexLock lock(&entries_mu_);
    for (auto& q : queues_) {
      threads.insert(threads.end(), q->threads.begin(), q->threads.end());
      q->threads.clear();
      // Followers end without a leader to see the stop (a queue whose thread 0 never started).
      absl::MutexLock lead_lock(&q->lead_mu);
      q->done = true;
      q->promoted.SignalAll();
    }
  }
  for (pthread_t t : threads) pthread_join(t, nullptr);
  WakeWatch();
  if (watch_.joinable()) watch_.join();
  // Closing a ring cancels its pending commands. The entries' memory stays until the
  // destructor: a late reply may still look one up.
  absl::MutexLock lock(&entries_mu_);
  for (auto& q : queues_) {
    if (q->ring_open) io_uring_queue_exit(&q->ring);
    q->ring_open = false;
  }
  if (stop_fd_ >= 0) close(stop_fd_);
  stop_fd_ = -1;
}

UringTransport::~UringTransport() {
  Stop();
  absl::MutexLock lock(&entries_mu_);
  queues_.clear();
}

}  // namespace scopedfs::daemon
