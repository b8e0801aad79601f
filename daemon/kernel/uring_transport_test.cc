// The io_uring transport's pure parts: a ring entry's request laid out as /dev/fuse gives it, a
// reply copied into an entry (never truncated), an entry's checked states, and the queues' depth.
#include "daemon/kernel/uring_transport.h"

#include <sys/uio.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "daemon/kernel/uring_entry_state.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

abi::UringReqHeader Header(uint32_t len, uint64_t unique, absl::string_view op_in,
                           uint32_t payload_sz) {
  abi::UringReqHeader header{};
  abi::InHeader in{};
  in.len = len;
  in.opcode = 15;  // FUSE_READ
  in.unique = unique;
  std::memcpy(header.in_out, &in, sizeof(in));
  std::memcpy(header.op_in, op_in.data(), op_in.size());
  header.ring_ent_in_out.payload_sz = payload_sz;
  return header;
}

TEST(AssembleRequestTest, HeaderFirstArgumentThenPayload) {
  const std::string op_in(24, 'o');
  const std::string payload = "name\0";
  abi::UringReqHeader header =
      Header(sizeof(abi::InHeader) + 24 + payload.size(), 7, op_in, payload.size());
  std::vector<char> out(4096);
  absl::StatusOr<size_t> n =
      uring::AssembleRequest(header, payload.data(), payload.size(), out.data(), out.size());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, sizeof(abi::InHeader) + 24 + payload.size());
  EXPECT_EQ(std::memcmp(out.data(), header.in_out, sizeof(abi::InHeader)), 0);
  EXPECT_EQ(std::string(out.data() + sizeof(abi::InHeader), 24), op_in);
  EXPECT_EQ(std::string(out.data() + sizeof(abi::InHeader) + 24, payload.size()), payload);
}

TEST(AssembleRequestTest, NoFirstArgument) {  // LOOKUP: the name is all payload
  const std::string payload = "DCIM";
  abi::UringReqHeader header = Header(sizeof(abi::InHeader) + 4, 9, "", 4);
  std::vector<char> out(64);
  absl::StatusOr<size_t> n = uring::AssembleRequest(header, payload.data(), 4, out.data(), 64);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(std::string(out.data() + sizeof(abi::InHeader), 4), "DCIM");
}

TEST(AssembleRequestTest, RefusesSizesThatDoNotAddUp) {
  std::vector<char> out(4096);
  const std::string payload(64, 'p');
  // len shorter than header + payload.
  abi::UringReqHeader shorter = Header(sizeof(abi::InHeader) + 10, 1, "", 64);
  EXPECT_TRUE(absl::IsInvalidArgument(
      uring::AssembleRequest(shorter, payload.data(), 64, out.data(), out.size()).status()));
  // A first argument larger than op_in.
  abi::UringReqHeader big_op = Header(sizeof(abi::InHeader) + 129 + 64, 1, "", 64);
  EXPECT_TRUE(absl::IsInvalidArgument(
      uring::AssembleRequest(big_op, payload.data(), 64, out.data(), out.size()).status()));
  // A payload larger than the entry's buffer.
  abi::UringReqHeader over = Header(sizeof(abi::InHeader) + 64, 1, "", 64);
  EXPECT_TRUE(absl::IsInvalidArgument(
      uring::AssembleRequest(over, payload.data(), 32, out.data(), out.size()).status()));
  // More than the output holds.
  abi::UringReqHeader fits = Header(sizeof(abi::InHeader) + 64, 1, "", 64);
  EXPECT_TRUE(absl::IsInvalidArgument(
      uring::AssembleRequest(fits, payload.data(), 64, out.data(), 50).status()));
}

struct Reply {
  abi::OutHeader out{};
  std::string body;
  std::vector<iovec> iov;
  // libfuse's layout: the header, then the body in pieces.
  Reply(uint64_t unique, std::vector<std::string>* pieces) {
    for (const std::string& p : *pieces) body += p;
    out.len = static_cast<uint32_t>(sizeof(out) + body.size());
    out.unique = unique;
    iov.push_back({&out, sizeof(out)});
    for (std::string& p : *pieces) iov.push_back({p.data(), p.size()});
  }
};

TEST(CopyReplyTest, HeaderAndBodyIntoTheEntry) {
  std::vector<std::string> pieces = {"hello ", "ring"};
  Reply reply(42, &pieces);
  abi::UringReqHeader header{};
  std::vector<char> payload(16, 'x');
  absl::StatusOr<size_t> n = uring::CopyReply(reply.iov.data(), static_cast<int>(reply.iov.size()),
                                              &header, payload.data(), payload.size());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, sizeof(abi::OutHeader) + 10);
  abi::OutHeader out;
  std::memcpy(&out, header.in_out, sizeof(out));
  EXPECT_EQ(out.unique, 42u);
  EXPECT_EQ(out.len, sizeof(abi::OutHeader) + 10);
  EXPECT_EQ(header.ring_ent_in_out.payload_sz, 10u);
  EXPECT_EQ(std::string(payload.data(), 10), "hello ring");
}

// A handler that read its reply's data straight into the entry's payload (ServingPayload)
// replies with that buffer: its bytes stay where they are, and what follows them is copied after.
TEST(CopyReplyTest, DataAlreadyInThePayloadStaysInPlace) {
  std::vector<char> payload(16, 'x');
  std::memcpy(payload.data(), "in place", 8);
  std::string tail = "!";
  abi::OutHeader out{};
  out.len = static_cast<uint32_t>(sizeof(out) + 9);
  out.unique = 7;
  std::vector<iovec> iov = {{&out, sizeof(out)}, {payload.data(), 8}, {tail.data(), 1}};
  abi::UringReqHeader header{};
  absl::StatusOr<size_t> n =
      uring::CopyReply(iov.data(), 3, &header, payload.data(), payload.size());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(header.ring_ent_in_out.payload_sz, 9u);
  EXPECT_EQ(std::string(payload.data(), 9), "in place!");
}

TEST(CopyReplyTest, ErrorReplyHasNoBody) {
  std::vector<std::string> none;
  Reply reply(5, &none);
  reply.out.error = -2;
  abi::UringReqHeader header{};
  header.ring_ent_in_out.payload_sz = 99;
  std::vector<char> payload(16);
  ASSERT_TRUE(uring::CopyReply(reply.iov.data(), 1, &header, payload.data(), 16).ok());
  EXPECT_EQ(header.ring_ent_in_out.payload_sz, 0u);
}

TEST(CopyReplyTest, OversizeIsAnErrorNeverATruncation) {
  std::vector<std::string> pieces = {std::string(17, 'b')};
  Reply reply(3, &pieces);
  abi::UringReqHeader header{};
  std::vector<char> payload(16, 'x');
  absl::StatusOr<size_t> n = uring::CopyReply(reply.iov.data(), 2, &header, payload.data(), 16);
  EXPECT_TRUE(absl::IsResourceExhausted(n.status())) << n.status();
  EXPECT_EQ(std::string(payload.data(), 16), std::string(16, 'x'));  // nothing copied
  EXPECT_EQ(header.ring_ent_in_out.payload_sz, 0u);
}

TEST(CopyReplyTest, RefusesMalformedReplies) {
  std::vector<std::string> pieces = {"abc"};
  Reply reply(3, &pieces);
  reply.out.len += 1;  // says more than it has
  abi::UringReqHeader header{};
  std::vector<char> payload(16);
  EXPECT_TRUE(absl::IsInvalidArgument(
      uring::CopyReply(reply.iov.data(), 2, &header, payload.data(), 16).status()));
  char tiny[4] = {};
  iovec short_iov = {tiny, sizeof(tiny)};
  EXPECT_TRUE(absl::IsInvalidArgument(
      uring::CopyReply(&short_iov, 1, &header, payload.data(), 16).status()));
}

TEST(SetErrorReplyTest, HeaderOnly) {
  abi::UringReqHeader header{};
  header.ring_ent_in_out.payload_sz = 7;
  uring::SetErrorReply(11, -5, &header);
  abi::OutHeader out;
  std::memcpy(&out, header.in_out, sizeof(out));
  EXPECT_EQ(out.unique, 11u);
  EXPECT_EQ(out.error, -5);
  EXPECT_EQ(out.len, sizeof(out));
  EXPECT_EQ(header.ring_ent_in_out.payload_sz, 0u);
}

using Action = uring::EarlyInterrupts::Action;

// The interrupt overtook its request: libfuse answers it EAGAIN before the request is served, and
// Serve hands it to libfuse once the request is.
TEST(EarlyInterruptsTest, AnInterruptBeforeItsRequestIsHandedOverWhenItIsServed) {
  uring::EarlyInterrupts interrupts(8);
  EXPECT_EQ(interrupts.Eagain(9), Action::kRemembered);
  interrupts.Serving(9);
  EXPECT_TRUE(interrupts.Checked(9));
  EXPECT_EQ(interrupts.remembered(), 0u);
}

// libfuse's EAGAIN reaches the transport after Serve checked: the request waits for its reply
// (a lock wait), so the interrupt must be handed over at once, or it is lost (the kernel resends
// no interrupt of a ring request).
TEST(EarlyInterruptsTest, AnEagainAfterTheCheckIsDeliveredWhileTheReplyIsOwed) {
  uring::EarlyInterrupts interrupts(8);
  interrupts.Serving(7);
  EXPECT_FALSE(interrupts.Checked(7));
  EXPECT_EQ(interrupts.Eagain(7), Action::kDeliverNow);
  EXPECT_EQ(interrupts.remembered(), 0u);
}

// Once the reply is given the interrupt is moot: nothing is handed over.
TEST(EarlyInterruptsTest, AnEagainAfterTheReplyIsNotDelivered) {
  uring::EarlyInterrupts interrupts(8);
  interrupts.Serving(7);
  EXPECT_FALSE(interrupts.Checked(7));
  interrupts.Replied(7);
  EXPECT_NE(interrupts.Eagain(7), Action::kDeliverNow);
  interrupts.Serving(8);
  interrupts.Replied(8);  // replied while libfuse still ran its handler
  EXPECT_EQ(interrupts.Eagain(8), Action::kRemembered);
  EXPECT_FALSE(interrupts.Checked(8));
  // 7's stays remembered (a request replied to is not told from one not served yet) and is the
  // first to go at the bound.
  EXPECT_EQ(interrupts.remembered(), 1u);
}

// At the bound the oldest interrupts of requests not being served go; one of a request being
// served stays.
TEST(EarlyInterruptsTest, TheBoundKeepsInterruptsOfRequestsBeingServed) {
  uring::EarlyInterrupts interrupts(4);
  interrupts.Serving(100);
  ASSERT_EQ(interrupts.Eagain(100), Action::kRemembered);
  for (uint64_t unique = 1; unique <= 10; ++unique) interrupts.Eagain(unique);
  EXPECT_LE(interrupts.remembered(), 4u);
  EXPECT_TRUE(interrupts.Checked(100)) << "a live interrupt was dropped at the bound";
  // The newest of the others are the ones kept.
  interrupts.Serving(10);
  EXPECT_TRUE(interrupts.Checked(10));
  interrupts.Serving(1);
  EXPECT_FALSE(interrupts.Checked(1));
}

// Every remembered interrupt is of a request being served: a new one is dropped, and says so.
TEST(EarlyInterruptsTest, ABoundFullOfLiveInterruptsDropsTheNewOne) {
  uring::EarlyInterrupts interrupts(2);
  for (uint64_t unique : {5, 6}) {
    interrupts.Serving(unique);
    ASSERT_EQ(interrupts.Eagain(unique), Action::kRemembered);
  }
  EXPECT_EQ(interrupts.Eagain(7), Action::kDropped);
  EXPECT_TRUE(interrupts.Checked(5));
  EXPECT_TRUE(interrupts.Checked(6));
}

using uring::CheckedEntryState;
using uring::EntryState;

constexpr EntryState kAllStates[] = {EntryState::kKernel, EntryState::kProcessing,
                                     EntryState::kReplied, EntryState::kDeferred,
                                     EntryState::kRetired};

// The moves the transport makes, and no other: a reply given while the handler runs, one
// deferred to another thread, an entry retired.
TEST(EntryStateTest, TheTableHoldsExactlyTheTransportsMoves) {
  const std::pair<EntryState, EntryState> legal[] = {
      {EntryState::kKernel, EntryState::kProcessing},
      {EntryState::kKernel, EntryState::kRetired},
      {EntryState::kProcessing, EntryState::kReplied},
      {EntryState::kProcessing, EntryState::kDeferred},
      {EntryState::kDeferred, EntryState::kReplied},
      {EntryState::kReplied, EntryState::kKernel},
  };
  for (EntryState from : kAllStates) {
    for (EntryState to : kAllStates) {
      bool expected = false;
      for (const auto& [f, t] : legal) expected = expected || (f == from && t == to);
      EXPECT_EQ(uring::IsLegalMove(from, to), expected)
          << uring::EntryStateName(from) << " -> " << uring::EntryStateName(to);
    }
  }
}

TEST(EntryStateTest, LegalRoundTripsAreNotCounted) {
  const uint64_t before = uring::IllegalMoves();
  CheckedEntryState state;
  EXPECT_EQ(state.get(), EntryState::kKernel);
  // Replied while the handler runs, committed by the thread that served it.
  EXPECT_TRUE(state.MoveTo(EntryState::kProcessing, 0, 0));
  EXPECT_TRUE(state.MoveTo(EntryState::kReplied, 0, 0));
  EXPECT_TRUE(state.MoveTo(EntryState::kKernel, 0, 0));
  // Deferred (a lock wait), replied and committed by the thread that gives the reply.
  EXPECT_TRUE(state.MoveTo(EntryState::kProcessing, 0, 0));
  EXPECT_TRUE(state.MoveTo(EntryState::kDeferred, 0, 0));
  EXPECT_TRUE(state.MoveTo(EntryState::kReplied, 0, 0));
  EXPECT_TRUE(state.MoveTo(EntryState::kKernel, 0, 0));
  // An error completion.
  EXPECT_TRUE(state.MoveTo(EntryState::kRetired, 0, 0));
  EXPECT_EQ(state.get(), EntryState::kRetired);
  EXPECT_EQ(uring::IllegalMoves(), before);
}

// A reply committed twice, a request served by an entry the kernel holds, a retired entry's
// reuse: each is caught (fatal in a debug build; logged and counted in an optimised one).
TEST(EntryStateTest, AnIllegalMoveIsCaught) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  const uint64_t before = uring::IllegalMoves();
  CheckedEntryState state;  // kKernel
  EXPECT_DEBUG_DEATH(state.MoveTo(EntryState::kReplied, 3, 7),
                     "queue 3 entry 7: illegal move from kernel to replied");
  CheckedEntryState retired;
  ASSERT_TRUE(retired.MoveTo(EntryState::kRetired, 0, 1));
  EXPECT_DEBUG_DEATH(retired.MoveTo(EntryState::kProcessing, 0, 1),
                     "illegal move from retired to processing");
#ifdef NDEBUG
  EXPECT_EQ(uring::IllegalMoves(), before + 2);
#else
  EXPECT_EQ(uring::IllegalMoves(), before);  // the moves died in children
#endif
}

// The kernel hands a request that finds every entry of its queue taken only to an entry that
// commits: deferred replies (lock waits) must never be able to take them all, even all on one
// queue, nor leave a thread without an entry.
TEST(TransportTest, EveryQueueIsDeeperThanTheRepliesDeferred) {
  UringTransport::Options options;
  options.se = reinterpret_cast<fuse_session*>(1);  // Create only checks the options
  options.fuse_fd = 0;
  options.queues = 2;
  options.payload_size = 8192;
  options.threads_per_queue = 8;
  options.max_deferred = 1024;
  absl::StatusOr<std::unique_ptr<UringTransport>> transport = UringTransport::Create(options);
  ASSERT_TRUE(transport.ok()) << transport.status();
  EXPECT_GT((*transport)->entries_per_queue(), 1024 + 8);
  options.max_deferred = -1;
  EXPECT_FALSE(UringTransport::Create(options).ok());
}

TEST(PossibleCpusTest, AtLeastOne) {
  absl::StatusOr<int> cpus = uring::PossibleCpus();
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_GE(*cpus, 1);
}

}  // namespace
}  // namespace scopedfs::daemon
