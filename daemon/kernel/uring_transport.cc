// FUSE over io_uring, serving (see uring_transport.h): the leader/follower loop of each queue,
// the watch that hands a stuck leader's ring on, requests laid out for libfuse, replies routed
// into their entries and committed, and the stop. Setting up is in uring_setup.cc.
#include "daemon/kernel/uring_transport.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/signals.h"
#include "daemon/kernel/after_reply.h"
#include "daemon/kernel/uring_queue.h"

namespace scopedfs::daemon {

namespace {

using uring::EntryState;
using uring_internal::kMinFree;
using uring_internal::kStopTag;
using uring_internal::MapBuffer;

// Room for the fuse_in_header and the largest first argument before a request's payload.
constexpr size_t kRequestPrefix = sizeof(abi::InHeader) + abi::kUringOpInSize;
// A leader serving one request this long hands the ring to a follower; the watch sleeps after
// kQuietTicks checks that found every leader waiting.
constexpr absl::Duration kTakeover = absl::Milliseconds(5);
constexpr int kQuietTicks = 40;

}  // namespace

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
  // The queues are walked in place: nothing here allocates with malloc (see Run) but AddEntry,
  // when a stuck leader's queue gets one more entry.
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
    if (entry->state.get() == EntryState::kRetired) return;  // counted once
    entry->MoveTo(EntryState::kRetired);
  }
  absl::MutexLock lock(&entries_mu_);
  Queue* queue = entry->queue;
  if (--queue->live == 0) {
    absl::MutexLock lead_lock(&queue->lead_mu);
    queue->done = true;
    queue->promoted.SignalAll();
  }
}

namespace {

// The payload buffer of the entry the calling thread is serving, and its size (ServingPayload).
struct ServingBuffer {
  char* payload = nullptr;
  size_t capacity = 0;
};
thread_local ServingBuffer serving;

}  // namespace

char* UringTransport::ServingPayload(size_t size) {
  return serving.payload != nullptr && size <= serving.capacity ? serving.payload : nullptr;
}

void UringTransport::Serve(Entry* entry, char* request, size_t request_size) {
  abi::InHeader in;
  std::memcpy(&in, entry->header->in_out, sizeof(in));
  absl::StatusOr<size_t> assembled = uring::AssembleRequest(
      *entry->header, entry->payload, options_.payload_size, request, request_size);
  {
    absl::MutexLock lock(&entry->mu);
    entry->MoveTo(EntryState::kProcessing);
  }
  if (!assembled.ok()) {
    // Answered, so the caller is not left waiting; the kernel wrote what we cannot read.
    fprintf(stderr, "scopedfsd: io_uring: %s; answered EIO\n",
            std::string(assembled.status().message()).c_str());
    {
      absl::MutexLock lock(&entry->mu);
      uring::SetErrorReply(in.unique, -EIO, entry->header);
      entry->MoveTo(EntryState::kReplied);
    }
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
    early_interrupts_.Serving(in.unique);
  }
  // What the request owes after its reply (after_reply.h) runs once the commit below is made.
  AfterReply after_commit;
  fuse_buf buf = {};
  buf.mem = request;
  buf.size = *assembled;
  serving = {entry->payload, options_.payload_size};
  fuse_session_process_buf(options_.se, &buf);
  serving = {};
  // An interrupt that overtook this request (it comes through /dev/fuse) and that libfuse
  // answered EAGAIN, not having seen the request yet: the kernel would resend it for a /dev/fuse
  // request, but finds no ring request to resend it for, so it is handed to libfuse again now.
  // One answered EAGAIN after this check is handed over by Reply (uring::EarlyInterrupts).
  bool interrupted;
  {
    absl::MutexLock lock(&held_mu_);
    interrupted = early_interrupts_.Checked(in.unique);
  }
  if (interrupted) Interrupt(in);
  bool replied;
  {
    absl::MutexLock lock(&entry->mu);
    replied = entry->state.get() == EntryState::kReplied;
    if (!replied) entry->MoveTo(EntryState::kDeferred);
  }
  if (replied) {
    Commit(entry, in.unique);
  } else {
    DeferredReplyOwed(entry->queue);  // Reply() commits it
  }
}

void UringTransport::Commit(Entry* entry, uint64_t unique) {
  {
    absl::MutexLock lock(&entry->mu);
    entry->MoveTo(EntryState::kKernel);
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (absl::Status committed = Submit(entry, abi::kUringCmdCommitAndFetch, unique);
      !committed.ok()) {
    fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: commit: %s; entry retired\n",
            entry->queue->qid, entry->index, std::string(committed.message()).c_str());
    Retire(entry, -EIO);
  }
}

void UringTransport::DeferredReplyOwed(Queue* queue) {
  absl::MutexLock lock(&entries_mu_);
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

void UringTransport::DeferredReplyGiven(Queue* queue) {
  absl::MutexLock lock(&entries_mu_);
  queue->deferred--;
}

void UringTransport::Interrupt(const abi::InHeader& request) {
  struct {
    abi::InHeader header;
    uint64_t unique;  // fuse_interrupt_in
  } interrupt = {};
  interrupt.header = request;
  interrupt.header.len = sizeof(interrupt);
  interrupt.header.opcode = abi::kOpcodeInterrupt;
  interrupt.header.unique = request.unique | abi::kInterruptUniqueBit;
  interrupt.header.nodeid = 0;
  interrupt.header.total_extlen = 0;
  interrupt.unique = request.unique;
  fuse_buf buf = {};
  buf.mem = &interrupt;
  buf.size = sizeof(interrupt);
  fuse_session_process_buf(options_.se, &buf);
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
      uint64_t unique = out.unique & ~abi::kInterruptUniqueBit;
      uring::EarlyInterrupts::Action action;
      {
        absl::MutexLock lock(&held_mu_);
        action = early_interrupts_.Eagain(unique);
      }
      if (action == uring::EarlyInterrupts::Action::kDeliverNow) {
        // Served and checked, its reply still owed (a lock wait): handed to libfuse now, from
        // this thread (libfuse sends the EAGAIN with no lock of its own held).
        abi::InHeader request = {};
        request.unique = unique;
        Interrupt(request);
      } else if (action == uring::EarlyInterrupts::Action::kDropped) {
        fprintf(stderr,
                "scopedfsd: io_uring: an interrupt of request %llu dropped: %zu interrupts of "
                "requests being served are remembered already\n",
                static_cast<unsigned long long>(unique), kMaxEarlyInterrupts);
      }
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
    early_interrupts_.Replied(out.unique);
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
    commit_here = entry->state.get() == EntryState::kDeferred;
    entry->MoveTo(EntryState::kReplied);
  }
  if (commit_here) {
    DeferredReplyGiven(entry->queue);
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
