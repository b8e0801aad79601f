// The pieces of the io_uring transport its two files share (uring_transport.h says what the
// transport is): a ring entry, a queue, and what both the setup (uring_setup.cc) and the serving
// loop (uring_transport.cc) use. Internal to the uring_transport library.
#ifndef SCOPEDFS_DAEMON_KERNEL_URING_QUEUE_H_
#define SCOPEDFS_DAEMON_KERNEL_URING_QUEUE_H_

#include <liburing.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/kernel/uring_entry_state.h"
#include "daemon/kernel/uring_transport.h"

namespace scopedfs::daemon::uring_internal {

// The user data of the stop eventfd's read in every ring.
constexpr uint64_t kStopTag = ~uint64_t{0};
// Entries a queue has free beyond its deferred replies and its threads' requests.
constexpr int kMinFree = 2;

// Anonymous memory reserved but not committed until touched; nullptr on failure.
inline void* MapBuffer(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace scopedfs::daemon::uring_internal

namespace scopedfs::daemon {

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

  absl::Mutex mu;
  // Moved only through MoveTo, which checks each move (uring_entry_state.h).
  uring::CheckedEntryState state ABSL_GUARDED_BY(mu);
  void MoveTo(uring::EntryState to) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

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

inline void UringTransport::Entry::MoveTo(uring::EntryState to) {
  state.MoveTo(to, queue->qid, index);
}

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_KERNEL_URING_QUEUE_H_
