// A ring entry's states and the table of its legal moves (uring_entry_state.h).
#include "daemon/kernel/uring_entry_state.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace scopedfs::daemon::uring {
namespace {

constexpr bool kLegal[kEntryStates][kEntryStates] = {
    // to:  kKernel, kProcessing, kReplied, kDeferred, kRetired
    /* from kKernel */ {false, true, false, false, true},
    /* from kProcessing */ {false, false, true, true, false},
    /* from kReplied */ {true, false, false, false, false},
    /* from kDeferred */ {false, false, true, false, false},
    /* from kRetired */ {false, false, false, false, false},
};

std::atomic<uint64_t> illegal_moves{0};

}  // namespace

absl::string_view EntryStateName(EntryState state) {
  switch (state) {
    case EntryState::kKernel:
      return "kernel";
    case EntryState::kProcessing:
      return "processing";
    case EntryState::kReplied:
      return "replied";
    case EntryState::kDeferred:
      return "deferred";
    case EntryState::kRetired:
      return "retired";
  }
  return "?";
}

bool IsLegalMove(EntryState from, EntryState to) {
  return kLegal[static_cast<int>(from)][static_cast<int>(to)];
}

uint64_t IllegalMoves() { return illegal_moves.load(std::memory_order_relaxed); }

bool CheckedEntryState::MoveTo(EntryState to, int qid, int index) {
  const bool legal = IsLegalMove(state_, to);
  if (!legal) {
    illegal_moves.fetch_add(1, std::memory_order_relaxed);
    const absl::string_view from_name = EntryStateName(state_);
    const absl::string_view to_name = EntryStateName(to);
    fprintf(stderr, "scopedfsd: io_uring queue %d entry %d: illegal move from %.*s to %.*s\n", qid,
            index, static_cast<int>(from_name.size()), from_name.data(),
            static_cast<int>(to_name.size()), to_name.data());
#ifndef NDEBUG
    abort();
#endif
  }
  state_ = to;
  return legal;
}

}  // namespace scopedfs::daemon::uring
