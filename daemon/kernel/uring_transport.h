// FUSE over io_uring: the daemon takes requests from per-CPU ring queues instead of read(2) on
// /dev/fuse and commits replies back into the ring, which spares the cross-CPU wake-up that is
// most of a /dev/fuse round trip here. Debian's libfuse 3.14 predates the protocol (libfuse added
// it in 3.18), so this is our own implementation of the kernel side's contract
// (include/uapi/linux/fuse.h, fs/fuse/dev_uring.c) over liburing, under libfuse's op dispatch:
// each request is laid out as /dev/fuse would give it and handed to fuse_session_process_buf, and
// the reply libfuse writes through the session's custom io is routed back here by its unique.
//
// What stays on /dev/fuse (the kernel's choice): FORGET, BATCH_FORGET and INTERRUPT, the INIT
// exchange, and notifications (unique 0), so the session's /dev/fuse reader keeps running.
//
// Per queue (one per possible CPU: the kernel puts a request on the queue of the CPU its caller
// runs on): one io_uring, ring entries (buffers registered with the kernel), and threads
// (sfs-uring-Q.T) pinned to that CPU, which take turns waiting for the ring and each serve the
// request they took. An entry holds one request from fetch to commit: a reply deferred to another
// thread (lock waits) is copied into its entry and committed by the thread that gives it. Each
// queue has more entries than the daemon ever defers replies (Options::max_deferred), so waits
// never leave a CPU's callers without an entry that commits and never hold a thread.
#ifndef SCOPEDFS_DAEMON_KERNEL_URING_TRANSPORT_H_
#define SCOPEDFS_DAEMON_KERNEL_URING_TRANSPORT_H_

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "daemon/abi/fuse_kernel_abi.h"

struct io_uring_sqe;

namespace scopedfs::daemon {

namespace uring {

// The request an entry holds, laid out as read(2) on /dev/fuse gives it (fuse_in_header, then
// the first argument from op_in, then the payload's `payload_sz` bytes), in `out`. Its size, or
// InvalidArgument when the sizes the kernel wrote do not add up or do not fit.
absl::StatusOr<size_t> AssembleRequest(const abi::UringReqHeader& header, const char* payload,
                                       size_t payload_capacity, char* out, size_t out_capacity);

// Copies a reply as libfuse hands it to writev (iov[0] begins with the fuse_out_header, whose
// len is the reply's whole length) into an entry: the header into in_out, the body into
// `payload`, its length into payload_sz. The bytes copied (what writev would return), or
// InvalidArgument for a malformed reply, or ResourceExhausted for a body larger than
// `payload_capacity`; then nothing is copied.
absl::StatusOr<size_t> CopyReply(const struct iovec* iov, int count, abi::UringReqHeader* header,
                                 char* payload, size_t payload_capacity);

// An error-only reply (`error` a negative errno) to `unique` in the entry.
void SetErrorReply(uint64_t unique, int error, abi::UringReqHeader* header);

// The number of CPUs the kernel may ever run on (/sys/devices/system/cpu/possible), which is how
// many queues the kernel expects: it serves nothing from the ring until each has an entry.
absl::StatusOr<int> PossibleCpus();

// Whether this process may set up the rings the protocol needs (IORING_SETUP_SQE128): a kernel
// without io_uring, io_uring_disabled, or a system-call filter says no.
absl::Status Probe();

// Once INIT was answered with FUSE_OVER_IO_URING the kernel holds requests back until every
// queue has an entry. When the ring cannot be set up after all, a registration the kernel must
// refuse (a queue that does not exist) makes it drop io_uring for the connection and serve
// through /dev/fuse again (fs/fuse/dev_uring.c: a failed FUSE_IO_URING_CMD_REGISTER clears it).
absl::Status FallBackToDevice(int fuse_fd);

// A FUSE_IO_URING command (`cmd`: REGISTER or COMMIT_AND_FETCH) for queue `qid` in a 128-byte
// submission, and a 128-byte submission cleared for another use.
void PrepareFuseCommand(io_uring_sqe* sqe, int fuse_fd, uint32_t cmd, uint16_t qid,
                        uint64_t commit_id);
void ClearSqe128(io_uring_sqe* sqe);

// Interrupts that overtook their ring request. An INTERRUPT comes through /dev/fuse and may reach
// libfuse before the ring request it names; libfuse then keeps it, and answers it EAGAIN when it
// meets another request first. The kernel resends such an interrupt for a /dev/fuse request but
// finds no ring request to resend it for, so the transport hands it to libfuse again itself:
// when the request is served (Checked), or at once if that has passed and its reply is still
// owed (Eagain's kDeliverNow: a lock wait). Bounded: at the bound the oldest interrupt of a
// request not being served goes (kDropped when every one left is). Not thread-safe: the
// transport calls it under one lock.
class EarlyInterrupts {
 public:
  enum class Action { kRemembered, kDeliverNow, kDropped };
  explicit EarlyInterrupts(size_t bound) : bound_(bound) {}
  // The request `unique` is handed to libfuse now.
  void Serving(uint64_t unique);
  // libfuse has returned from it: true if an interrupt of it was answered EAGAIN meanwhile and
  // must be handed to libfuse now (not once it is replied to).
  bool Checked(uint64_t unique);
  // Its reply is given: an interrupt of it is moot from now on.
  void Replied(uint64_t unique);
  // libfuse answered an interrupt of `unique` EAGAIN.
  Action Eagain(uint64_t unique);
  size_t remembered() const { return early_.size(); }

 private:
  const size_t bound_;
  // Interrupts answered EAGAIN, by the request's unique: ordered, so the oldest go first.
  absl::btree_set<uint64_t> early_;
  // Requests handed to libfuse whose reply is still owed: false until Checked.
  absl::flat_hash_map<uint64_t, bool> checked_;
};

}  // namespace uring

class UringTransport {
 public:
  struct Options {
    fuse_session* se = nullptr;
    int fuse_fd = -1;
    int queues = 0;  // the kernel's queue count (uring::PossibleCpus)
    // Threads serving each queue (0: 8).
    int threads_per_queue = 0;
    // The most replies the ops ever leave to another thread at once (lock waits:
    // FileLocks::kMaxWaiters), all of which may come from one CPU's queue. Each queue starts with
    // that many entries, one per thread and two more (set by Create): keep it small, as each
    // entry reserves a buffer of payload_size.
    int max_deferred = 0;
    int entries_per_queue = 0;
    int max_entries_per_queue = 0;  // with one more per leader stuck in a handler (Watch)
    // The connection's max payload: max(8 KiB, max_write, max_pages * page size).
    size_t payload_size = 0;
    // FUSE_TMPFILE is handed to libfuse as FUSE_CREATE, as the session's /dev/fuse reads do
    // under POSIX semantics (fuse_session.cc says why).
    bool tmpfile_as_create = false;
    // Called with the opcode of every request taken from the ring, before it is served (the
    // request counters, as the session's /dev/fuse reads count theirs); null: not called.
    void (*on_request)(void* arg, uint32_t opcode) = nullptr;
    void* on_request_arg = nullptr;
  };

  // A transport that serves nothing yet. InvalidArgument for incomplete options.
  static absl::StatusOr<std::unique_ptr<UringTransport>> Create(const Options& options);
  // Registers every entry of every queue (FUSE_IO_URING_CMD_REGISTER); requests may reach
  // Reply() from then on, so the session routes replies here before this is called. Call once
  // the INIT reply with FUSE_OVER_IO_URING is written: until then the kernel refuses
  // registration, and from then on it holds requests back until every queue has an entry. An
  // error says why the ring could not be set up; then nothing of it is left running.
  absl::Status Start();
  ~UringTransport();  // Stop()
  UringTransport(const UringTransport&) = delete;
  UringTransport& operator=(const UringTransport&) = delete;

  // For the session's writev: when iov is the reply to a request taken from the ring, copies it
  // into that request's entry, commits it (or leaves that to the thread still running its
  // handler), sets *result to what writev would return (-1 with errno EMSGSIZE for a reply
  // larger than the entry, which the kernel then gets as EIO) and returns true. False for
  // anything else (requests read from /dev/fuse, notifications): those go to /dev/fuse.
  bool Reply(const struct iovec* iov, int count, ssize_t* result);

  // The payload buffer of the ring entry whose request the calling thread is serving (inside
  // Serve's call of the handler), if `size` bytes fit in it; else null (a /dev/fuse request, a
  // thread serving none, a reply larger than the entry). A handler may write its reply's data
  // there and reply with that pointer: the kernel wrote the request's own payload there, but
  // Serve copied the request out before the handler ran, and Reply copies nothing onto itself.
  // The buffer is the entry's until the reply is committed: a handler that replies from another
  // thread must not use it.
  static char* ServingPayload(size_t size);

  // Ends every queue's threads and closes the rings. Call after the mount is gone or with the
  // session's loop ended: requests still in the ring are then answered by the kernel's abort.
  void Stop();

  int queues() const { return options_.queues; }
  // The entries each queue registers at Start (Options::entries_per_queue).
  int entries_per_queue() const { return options_.entries_per_queue; }
  int entries() const;
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  // "io_uring, 2 queues of 8 threads".
  std::string Describe() const;

 private:
  struct Entry;
  struct Queue;
  explicit UringTransport(const Options& options);
  // A new entry of `queue`, registered at once when `submit` (else by Register).
  absl::Status AddEntry(Queue* queue, bool submit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(entries_mu_);
  absl::Status AddThread(Queue* queue, int index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(entries_mu_);
  absl::Status Register(Queue* queue, std::vector<std::pair<Entry*, int>>* backlog);
  absl::Status Submit(Entry* entry, uint32_t cmd, uint64_t commit_id);
  void Run(Queue* queue, int index);
  // Hands a queue's ring to a follower when its leader is stuck serving (see Queue).
  void Watch();
  void WakeWatch();
  void Serve(Entry* entry, char* request, size_t request_size);
  // Hands libfuse an INTERRUPT of `request` (a ring request whose interrupt it answered EAGAIN).
  void Interrupt(const abi::InHeader& request);
  void Commit(Entry* entry, uint64_t unique);
  void Retire(Entry* entry, int res);
  // An entry's handler returned without its reply, which another thread now owes: counted, and
  // said past Options::max_deferred. DeferredReplyGiven: that reply came, the count goes down.
  void DeferredReplyOwed(Queue* queue);
  void DeferredReplyGiven(Queue* queue);

  // Interrupts remembered for requests not served yet; past this many (a kernel that interrupts
  // requests we never see), the oldest are forgotten (uring::EarlyInterrupts).
  static constexpr size_t kMaxEarlyInterrupts = 1024;

  Options options_;
  int stop_fd_ = -1;  // an eventfd every ring polls: written, the queues' threads end
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> requests_{0};
  // Lock order: watch_mu_, entries_mu_, then a queue's lead_mu or submit_mu, or an entry's mu.
  // held_mu_ is a leaf, never held with another.
  absl::Mutex watch_mu_;
  absl::CondVar watch_cv_;
  std::atomic<bool> watch_sleeping_{false};
  std::thread watch_;
  mutable absl::Mutex entries_mu_;
  std::vector<std::unique_ptr<Queue>> queues_ ABSL_GUARDED_BY(entries_mu_);
  absl::Mutex held_mu_;
  // The requests entries hold now, by unique: at most one per entry.
  absl::flat_hash_map<uint64_t, Entry*> held_ ABSL_GUARDED_BY(held_mu_);
  // Interrupts libfuse answered EAGAIN before it saw their request (Serve, Reply).
  uring::EarlyInterrupts early_interrupts_ ABSL_GUARDED_BY(held_mu_);
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_KERNEL_URING_TRANSPORT_H_
