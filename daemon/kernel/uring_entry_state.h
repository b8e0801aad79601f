// Where a ring entry is between the kernel and the daemon, and the one way it moves: MoveTo,
// checked against a table of the moves the transport makes (uring_entry_state.cc). The kernel
// checks its side the same way (fs/fuse/dev_uring.c: each step first checks the entry's state,
// warns once and fails the command when it is not the one expected).
#ifndef SCOPEDFS_DAEMON_KERNEL_URING_ENTRY_STATE_H_
#define SCOPEDFS_DAEMON_KERNEL_URING_ENTRY_STATE_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace scopedfs::daemon::uring {

enum class EntryState : uint8_t {
  kKernel,      // registered or committed: the kernel's until it completes with a request
  kProcessing,  // its request is being served; no reply yet
  kReplied,     // its reply is in its buffers, not yet committed
  kDeferred,    // its handler returned without a reply: another thread owes it (a lock wait)
  kRetired,     // the kernel will hand it nothing again (an error completion, a failed commit)
};
constexpr int kEntryStates = 5;

absl::string_view EntryStateName(EntryState state);

// The table: kKernel -> kProcessing (a request taken) or kRetired; kProcessing -> kReplied (a
// reply given while the handler runs, or an error reply to a request that cannot be laid out)
// or kDeferred (the handler returned without one); kDeferred -> kReplied (the owed reply given);
// kReplied -> kKernel (committed). kRetired is the end.
bool IsLegalMove(EntryState from, EntryState to);

// Illegal moves this process has made (each also logged; fatal in a debug build).
uint64_t IllegalMoves();

// An entry's state. Not thread-safe: the entry's mutex guards it.
class CheckedEntryState {
 public:
  EntryState get() const { return state_; }
  // Moves to `to`; false when the table has no such move. An illegal move is a bug of the
  // transport: it is logged (naming queue `qid`, entry `index`) and counted (IllegalMoves), and
  // aborts a debug build (!NDEBUG); an optimised build makes the move anyway and serves on.
  bool MoveTo(EntryState to, int qid, int index);

 private:
  EntryState state_ = EntryState::kKernel;
};

}  // namespace scopedfs::daemon::uring

#endif  // SCOPEDFS_DAEMON_KERNEL_URING_ENTRY_STATE_H_
